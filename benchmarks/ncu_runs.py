"""Run a benchmark under Nsight Compute and record its counters into gpulab/data/results/.

    python benchmarks/ncu_runs.py divergence   # -> divergence_paths.json["ncu"]
    python benchmarks/ncu_runs.py strided      # -> strided_copy.json["ncu"]
    python benchmarks/ncu_runs.py launch       # -> launch_overhead.json["launch_parts"]["numba"]
    python benchmarks/ncu_runs.py stalls       # -> stall_reasons.json

Each runs ``ncu --clock-control none --print-units base --csv --metrics ... python <script> ...``
(clocks left as found; base units: bytes, ns), keeps the raw CSV next to the JSON's folder
under $NCU_LOG_DIR (default /tmp), and merges the per-launch counters into the results file.
Metric names are checked first against ``ncu --query-metrics``; unknown ones are left out and
listed under "metrics_unavailable". Needs ncu and a GPU.
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
RESULTS = RESULTS_DIR
NCU = os.environ.get("NCU", "ncu")
PY = sys.executable

sys.path.insert(0, os.path.dirname(HERE))
from gpulab import metrics as M  # noqa: E402

# counters gpulab also counts go by their names in gpulab.metrics; the rest are GPU-only
DIVERGENCE = [
    M.THREADS_PER_INST,
    M.INST_EXECUTED,
    "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
    M.THREAD_INST_EXECUTED,
    "smsp__thread_inst_executed_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_inst_executed_op_branch.sum",
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
]
STRIDED = [
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__sectors_read.sum",
    M.GLOBAL_SECTORS["ld"],
    M.GLOBAL_REQUESTS["ld"],
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
]
LAUNCH = ["gpu__time_duration.sum", "sm__cycles_elapsed.max", "sm__cycles_elapsed.avg.per_second"]
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active"
STALL_EXTRA = [
    "smsp__average_warp_latency_per_inst_issued.ratio",
    M.INST_EXECUTED,
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
]


def known_metrics() -> set[str] | None:
    """Base metric names ncu knows for this GPU (None when the list cannot be read)."""
    try:
        out = subprocess.run([NCU, "--query-metrics"], capture_output=True, text=True, timeout=120)
    except Exception:  # noqa: BLE001
        return None
    names = set(re.findall(r"^([a-z0-9]+__[a-z0-9_]+)\s", out.stdout, flags=re.M))
    return names if len(names) > 100 else None


def usable(metrics, known):
    """(metrics ncu knows, metrics it does not): a name is known when its base (without the
    .sum/.ratio/.avg... rollup) is listed."""
    if known is None:
        return list(metrics), []
    ok, bad = [], []
    for m in metrics:
        (ok if m.split(".")[0] in known else bad).append(m)
    return ok, bad


def _num(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text


def parse(path):
    """Launch-ordered [(kernel name, {metric: value}, {metric: unit})] from ncu's --csv log."""
    lines = [ln for ln in open(path).read().splitlines() if ln.startswith('"')]
    rows = list(csv.reader(lines))
    head, body = rows[0], rows[1:]
    c = {h: k for k, h in enumerate(head)}
    launches = {}
    for r in body:
        key = int(r[c["ID"]])
        name, vals, units = launches.setdefault(key, (r[c["Kernel Name"]], {}, {}))
        vals[r[c["Metric Name"]]] = _num(r[c["Metric Value"]])
        units[r[c["Metric Name"]]] = r[c["Metric Unit"]]
    return [launches[k] for k in sorted(launches)]


def profile(tag, metrics, argv, known=None):
    """Run ncu on ``python argv`` collecting ``metrics``; the parsed launches, the command and
    the metrics left out. When ncu refuses the list, retry with those --query-metrics lists."""
    try:
        return (*_profile(tag, metrics, argv), [])
    except SystemExit:
        ok, bad = usable(metrics, known)
        if not bad:
            raise
        print("retrying without", bad)
        return (*_profile(tag, ok, argv), bad)


def _profile(tag, metrics, argv):
    log = os.path.join(os.environ.get("NCU_LOG_DIR", "/tmp"), f"ncu_{tag}.csv")
    cmd = [
        NCU,
        "--clock-control",
        "none",
        "--print-units",
        "base",
        "--csv",
        "--log-file",
        log,
        "--metrics",
        ",".join(metrics),
        PY,
    ] + argv
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
    if proc.returncode != 0:
        raise SystemExit(f"ncu failed ({proc.returncode}): {' '.join(cmd)}")
    cmd_text = " ".join(cmd).replace(PY, "python")
    return parse(log), cmd_text


def _update(name, fn):
    path = os.path.join(RESULTS, f"{name}.json")
    res = json.load(open(path)) if os.path.exists(path) else {}
    fn(res)
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print("updated", path)


def _clock(rows):
    """The SM clock record of the profiled launches (benchenv.ncu_clock), when ncu measured it;
    each row gets its own launch's record ("sm_clock") too."""
    from benchenv import ncu_clock

    key = "sm__cycles_elapsed.avg.per_second"
    for r in rows:
        if isinstance(r.get(key), float):
            r["sm_clock"] = ncu_clock([r[key]])
    xs = [r[key] for r in rows if isinstance(r.get(key), float)]
    return ncu_clock(xs) if xs else None


def _ncu_version():
    try:
        return (
            subprocess.run([NCU, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
        )
    except Exception:  # noqa: BLE001
        return None


def divergence(known):
    from divergence_paths import NCU_ITERS, PATHS

    launches, cmd, bad = profile("divergence", DIVERGENCE, ["benchmarks/divergence_paths.py", "ncu"], known)
    assert len(launches) == len(PATHS), f"{len(launches)} launches profiled, expected {len(PATHS)}"
    rows = [
        {"paths": p, "iters": NCU_ITERS, "mode": "divergent", **vals}
        for p, (_, vals, _) in zip(PATHS, launches)
    ]
    for r in rows:
        r["inst_executed_ratio_to_1_path"] = r.get(M.INST_EXECUTED, 0) / max(
            rows[0].get(M.INST_EXECUTED, 1), 1
        )
    _update(
        "divergence_paths",
        lambda res: res.__setitem__(
            "ncu",
            {
                "command": cmd,
                "ncu": _ncu_version(),
                "metrics_unavailable": bad,
                "rows": rows,
                "sm_clock": _clock(rows),
            },
        ),
    )


def strided(known):
    from strided_copy import N_LOADS, STRIDES

    launches, cmd, bad = profile("strided", STRIDED, ["benchmarks/strided_copy.py", "ncu"], known)
    assert len(launches) == len(STRIDES)
    rows = []
    for s, (_, v, _) in zip(STRIDES, launches):
        row = {"stride": s, **v}
        if "dram__bytes_read.sum" in v:
            row["dram_bytes_read_per_load"] = v["dram__bytes_read.sum"] / N_LOADS
        if "lts__t_sectors_srcunit_tex_op_read.sum" in v:
            row["l2_bytes_read_per_load"] = 32 * v["lts__t_sectors_srcunit_tex_op_read.sum"] / N_LOADS
        req = v.get(M.GLOBAL_REQUESTS["ld"])
        if req:
            row["l1_sectors_per_request"] = v[M.GLOBAL_SECTORS["ld"]] / req
        rows.append(row)
    _update(
        "strided_copy",
        lambda res: res.__setitem__(
            "ncu",
            {
                "command": cmd,
                "ncu": _ncu_version(),
                "metrics_unavailable": bad,
                "n_loads": N_LOADS,
                "rows": rows,
                "sm_clock": _clock(rows),
            },
        ),
    )


def launch(known):
    launches, cmd, bad = profile("launch", LAUNCH, ["benchmarks/launch_overhead.py", "ncu"], known)
    ts = sorted(v["gpu__time_duration.sum"] for _, v, _ in launches)
    block = {
        "command": cmd,
        "ncu": _ncu_version(),
        "launches": len(ts),
        "metrics_unavailable": bad,
        "gpu_time_duration_s_median": ts[len(ts) // 2] * 1e-9,
        "gpu_time_duration_s_min": ts[0] * 1e-9,
        "unit_check": launches[0][2].get("gpu__time_duration.sum"),
        "sm_clock": _clock([dict(v) for _, v, _ in launches]),
    }

    def put(res):
        res.setdefault("launch_parts", {}).setdefault("numba", {})["ncu_gpu_time_duration"] = block

    _update("launch_overhead", put)


def stalls(known):
    from stall_reasons import EXPECTED
    from benchenv import environment

    if known is None:
        reasons = [
            "long_scoreboard",
            "barrier",
            "mio_throttle",
            "short_scoreboard",
            "wait",
            "math_pipe_throttle",
            "not_selected",
            "selected",
            "lg_throttle",
            "no_instruction",
            "dispatch_stall",
            "membar",
            "branch_resolving",
            "drain",
            "sleeping",
            "imc_miss",
            "tex_throttle",
            "misc",
        ]
    else:
        reasons = sorted(
            {
                m[len(STALL_PREFIX) : -len(STALL_SUFFIX)]
                for m in known
                if m.startswith(STALL_PREFIX)
                and m.endswith(STALL_SUFFIX)
                and not m.endswith("_not_issued" + STALL_SUFFIX)
            }
        )
    metrics = [f"{STALL_PREFIX}{r}{STALL_SUFFIX}.ratio" for r in reasons] + STALL_EXTRA
    launches, cmd, bad = profile("stalls", metrics, ["benchmarks/stall_reasons.py", "ncu"], known)
    assert len(launches) == len(EXPECTED), f"{len(launches)} launches, expected {len(EXPECTED)}"
    kernels = {}
    for (name, built_for), (kname, v, _) in zip(EXPECTED, launches):
        stall = {
            m[len(STALL_PREFIX) : -len(STALL_SUFFIX) - len(".ratio")]: x
            for m, x in v.items()
            if m.startswith(STALL_PREFIX) and isinstance(x, float)
        }
        total = sum(x for r, x in stall.items() if r not in ("selected",))
        top = sorted(stall, key=lambda r: -stall[r])
        kernels[name] = {
            "kernel_name_ncu": kname,
            "built_for": built_for,
            "stalls_per_issue": stall,
            "share_of_stalls": {r: (x / total if total else None) for r, x in stall.items()},
            "top_reason": top[0] if top else None,
            "built_for_is_top": bool(top) and top[0] == built_for,
            "other": {m: x for m, x in v.items() if not m.startswith(STALL_PREFIX)},
        }
        kernels[name]["sm_clock"] = _clock([dict(v)])
    res = {
        "environment": environment(),
        "ncu_command": cmd,
        "ncu": _ncu_version(),
        "metrics_unavailable": bad,
        "method": (
            "each kernel of gpulab/kernels/stalls.py launched once under ncu "
            "(--clock-control none); stalls_per_issue[r] = smsp__average_warps_issue_"
            "stalled_<r>_per_issue_active.ratio: warps stalled for reason r per issued "
            "instruction; share = that over the sum of all reasons except 'selected'"
        ),
        "kernels": kernels,
        "sm_clock": _clock([dict(v) for _, v, _ in launches]),
    }
    with open(os.path.join(RESULTS, "stall_reasons.json"), "w") as f:
        json.dump(res, f, indent=1)
    for n, k in kernels.items():
        print(
            n,
            "top:",
            k["top_reason"],
            {r: round(x, 2) for r, x in sorted(k["stalls_per_issue"].items(), key=lambda t: -t[1])[:4]},
        )


def main() -> int:
    what = sys.argv[1:] or ["divergence", "strided", "launch", "stalls"]
    known = known_metrics()
    print("ncu knows", "?" if known is None else len(known), "metrics")
    fails = 0
    for w in what:
        try:
            {"divergence": divergence, "strided": strided, "launch": launch, "stalls": stalls}[w](known)
        except (Exception, SystemExit) as e:  # noqa: BLE001 - record and go on to the next
            fails += 1
            print(f"ncu_runs {w} FAILED: {e!r}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
