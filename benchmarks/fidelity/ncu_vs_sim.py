"""gpulab's simulator against Nsight Compute on the book's kernels, launch for launch.

On a GPU machine with ncu on the PATH, everything in one command (profiles the launches of
``kernels.py`` into ncu_h200.csv, then compares and writes ncu_h200_compare.txt and
gpulab/data/results/fidelity.json):
    python benchmarks/fidelity/ncu_vs_sim.py all
The same in steps:
    ncu --clock-control none --csv --log-file ncu.csv \
        --metrics $(python benchmarks/fidelity/ncu_vs_sim.py metrics) \
        python benchmarks/fidelity/ncu_vs_sim.py gpu
Anywhere (no GPU needed), to compare and write gpulab/data/results/fidelity.json:
    python benchmarks/fidelity/ncu_vs_sim.py compare ncu.csv
``all`` also records where it ran (benchenv.environment() plus ncu's version) under the key
"environment", as every results file does; ``compare`` keeps the "environment" block already in
fidelity.json only when told the CSV came from that run (``--keep-env``), and otherwise writes none.
"""

from gpulab.results import RESULTS_DIR
import contextlib
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE.parent))

import kernels  # noqa: E402

import gpulab  # noqa: E402
from gpulab import metrics as M  # noqa: E402

NAMES = [n for n in M.ALL_NAMES]
EXACT = [
    M.GLOBAL_REQUESTS["ld"],
    M.GLOBAL_REQUESTS["st"],
    M.GLOBAL_SECTORS["ld"],
    M.GLOBAL_SECTORS["st"],
    M.SHARED_WAVEFRONTS["ld"],
    M.SHARED_WAVEFRONTS["st"],
    M.SHARED_BANK_CONFLICTS["ld"],
    M.SHARED_BANK_CONFLICTS["st"],
    M.SHARED_INSTRUCTIONS["ld"],
    M.SHARED_INSTRUCTIONS["st"],
]


def run_gpu():
    for case in kernels.cases():
        gpulab.launch(case.kernel, case.grid, case.block, *case.make(), backend="gpu")


def run_sim():
    out = {}
    for case in kernels.cases():
        rep = gpulab.launch(case.kernel, case.grid, case.block, *case.make(), backend="sim")
        out[case.name] = {k: rep.metrics.get(k) for k in NAMES}
    return out


def _number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def parse_ncu(path):
    """Launch-ordered list of (kernel name, {metric: value}) from ncu's --csv log."""
    rows = list(csv.reader(l for l in Path(path).read_text().splitlines() if l.startswith('"')))
    head, body = rows[0], rows[1:]
    col = {h: k for k, h in enumerate(head)}
    launches = {}
    for r in body:
        key = int(r[col["ID"]])
        name = r[col["Kernel Name"]]
        launches.setdefault(key, (name, {}))[1][r[col["Metric Name"]]] = _number(r[col["Metric Value"]])
    return [launches[k] for k in sorted(launches)]


def compare(path):
    hw = parse_ncu(path)
    cs = kernels.cases()
    if len(hw) != len(cs):
        raise SystemExit(f"ncu profiled {len(hw)} launches, expected {len(cs)}")
    sim = run_sim()
    result, mismatches = {}, 0
    for case, (kname, hm) in zip(cs, hw):
        assert case.kernel.py_func.__name__ in kname, (case.name, kname)
        sm = sim[case.name]
        rows = {}
        for name in NAMES:
            h, s = hm.get(name), sm.get(name)
            rows[name] = {"ncu": h, "sim": s}
        exact_ok = all(rows[n]["ncu"] == rows[n]["sim"] for n in EXACT if rows[n]["ncu"] is not None)
        derived = {}
        for op in ("ld", "st"):
            for label, num, den in (
                ("sectors_per_request", M.GLOBAL_SECTORS[op], M.GLOBAL_REQUESTS[op]),
                ("wavefronts_per_shared_inst", M.SHARED_WAVEFRONTS[op], M.SHARED_INSTRUCTIONS[op]),
            ):
                for who, m in (("ncu", hm), ("sim", sm)):
                    d = m.get(den) or 0
                    derived.setdefault(f"{label}_{op}", {})[who] = (m.get(num) or 0) / d if d else None
        ratio_ok = all(v["ncu"] == v["sim"] for v in derived.values())
        mismatches += not ratio_ok
        result[case.name] = {
            "kernel": kname[:80],
            "counters": rows,
            "ratios": derived,
            "exact_counters_equal": exact_ok,
            "ratios_equal": ratio_ok,
        }
    return result, mismatches


def ncu_version():
    """The last line of ``ncu --version`` (e.g. "Version 2025.3.0.0 (build ...)"), None without ncu."""
    try:
        out = subprocess.run(["ncu", "--version"], capture_output=True, text=True, timeout=60)
        lines = out.stdout.strip().splitlines()
        return lines[-1].strip() if lines else None
    except (OSError, subprocess.SubprocessError):
        return None


def run_environment():
    """Where the GPU step ran: the record of benchmarks/benchenv.py, plus ncu's version and options."""
    from benchenv import environment

    env = environment()
    env["ncu"] = ncu_version()
    env["ncu_options"] = "--clock-control none"
    return env


def profile(csv_path):
    """Run this script's ``gpu`` step under Nsight Compute, writing its CSV log to ``csv_path``."""
    cmd = [
        "ncu",
        "--clock-control",
        "none",
        "--csv",
        "--log-file",
        str(csv_path),
        "--metrics",
        ",".join(NAMES),
        sys.executable,
        str(Path(__file__).resolve()),
        "gpu",
    ]
    print(" ".join(cmd))
    subprocess.run(cmd, check=True)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else "help"
    if cmd == "metrics":
        print(",".join(NAMES))
    elif cmd == "gpu":
        run_gpu()
    elif cmd == "all":
        env = run_environment()
        profile(HERE / "ncu_h200.csv")
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            report(HERE / "ncu_h200.csv", env)
        (HERE / "ncu_h200_compare.txt").write_text(text.getvalue())
        print(text.getvalue(), end="")
    elif cmd == "compare":
        env = None
        if "--keep-env" in sys.argv[3:]:
            old = RESULTS_DIR / "fidelity.json"
            env = json.loads(old.read_text()).get("environment") if old.is_file() else None
        report(sys.argv[2], env)
    else:
        print(__doc__)


def report(path, env=None):
    """Compare ncu's log at ``path`` with the simulator, write fidelity.json (with ``env`` under
    "environment" when given: where the GPU step ran), print the table."""
    result, bad = compare(path)
    out = RESULTS_DIR / "fidelity.json"
    record = ({"environment": env} if env else {}) | result
    out.write_text(json.dumps(record, indent=1) + "\n")
    w = max(len(k) for k in result)
    print(f"{'kernel':<{w}}  sect/req ld (ncu/sim)  st      wavefronts/inst ld   st      thr/inst (ncu/sim)")
    for k, r in result.items():
        d = r["ratios"]

        def f(key):
            a, b = d[key]["ncu"], d[key]["sim"]
            return (
                "-"
                if a is None and b is None
                else f"{a if a is None else round(a, 2)}/{b if b is None else round(b, 2)}"
            )

        t = r["counters"][M.THREADS_PER_INST]
        print(
            f"{k:<{w}}  {f('sectors_per_request_ld'):>10} {f('sectors_per_request_st'):>10}"
            f"  {f('wavefronts_per_shared_inst_ld'):>10} {f('wavefronts_per_shared_inst_st'):>10}"
            f"  {t['ncu']}/{round(t['sim'], 2)}   {'OK' if r['ratios_equal'] else 'DIFF'}"
        )
    print(f"{len(result) - bad}/{len(result)} kernels: per-request ratios equal")


if __name__ == "__main__":
    main()
