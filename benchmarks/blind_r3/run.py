"""Round 3 blind test of gpulab.predict (protocol: benchmarks/blind_r3/README.md).

    python benchmarks/blind_r3/run.py predict   # CPU: gpulab.predict(..., gpu="H200") per case -> blind_r3.json
    python benchmarks/blind_r3/run.py gpu       # on the H200, under ncu (NCU_COMMAND): each case twice
    python benchmarks/blind_r3/run.py merge CSV CASES  # attach ncu's figures to the committed predictions

Results go through gpulab.results (``blind_r3.json`` in its results folder). The predictions are
committed before the kernels run on a GPU; ``merge`` never changes them.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from kernels import cases, make_args  # noqa: E402

NAME = "blind_r3"
METRICS = (
    "gpu__time_duration.sum,launch__registers_per_thread,sm__cycles_elapsed.avg.per_second,"
    "smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio"
)
NCU_COMMAND = (
    "ncu --clock-control none --print-units base --csv --log-file ncu_blind_r3.csv "
    f"--metrics {METRICS} python benchmarks/blind_r3/run.py gpu"
)


def _out():
    from gpulab import results

    p = results.path(NAME)
    return str(p) if p else str(results.roots()[-1] / f"{NAME}.json")


def _load():
    p = _out()
    return json.load(open(p)) if os.path.exists(p) else {}


def _save(res):
    with open(_out(), "w") as f:
        json.dump(res, f, indent=1)


def _commit():
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()


def predict_main(only=None):
    """gpulab.predict on every case exactly as a reader calls it (registers from ptxas)."""
    import gpulab
    from gpulab.perf import sass

    ok, why = sass.available()
    rows = {}
    for c in cases():
        if only and c["name"] not in only:
            continue
        t0 = time.perf_counter()
        try:
            p = gpulab.predict(c["kernel"], c["grid"], c["block"], *make_args(c), gpu="H200")
        except Exception as exc:  # noqa: BLE001 - a case the model cannot predict is recorded as such
            rows[c["name"]] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            print(c["name"], rows[c["name"]], flush=True)
            continue
        rows[c["name"]] = {
            "predicted_s": p.time_s,
            "limiter": p.limiter,
            "registers": p.occupancy["registers_per_thread"],
            "inst_executed": p.metrics["smsp__inst_executed.sum"],
            "threads_per_inst": p.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"],
            "sampling_error": p.sampling["relative_error"],
            "wall_s": round(time.perf_counter() - t0, 2),
        }
        print(c["name"], rows[c["name"]], flush=True)
    res = _load()
    prev = res.get("predicted", {}).get("cases", {})
    res["predicted"] = {
        "command": "python benchmarks/blind_r3/run.py predict",
        "model_commit": _commit(),
        "sass": "ptxas/nvdisasm used" if ok else f"no SASS: {why}",
        "cpu": f"{os.cpu_count()} cores (shared)",
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cases": {**prev, **rows},
    }
    _save(res)


def gpu_main(cases_out):
    """Launch every case twice (the first compiles); record which ran, in launch order."""
    from numba import cuda

    from benchenv import environment

    done = []
    for c in cases():
        try:
            args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in make_args(c)]
            for _ in range(2):
                c["kernel"][c["grid"], c["block"]](*args)
            cuda.synchronize()
            done.append({"name": c["name"], "kernel": c["kernel"].py_func.__name__, "ok": True})
        except Exception as exc:  # noqa: BLE001 - record and go on
            done.append({"name": c["name"], "ok": False, "error": f"{type(exc).__name__}: {exc}"})
            print("FAILED", c["name"], exc, flush=True)
    with open(cases_out, "w") as f:
        json.dump({"environment": environment(), "cases": done}, f, indent=1)


def merge(csv_path, cases_path):
    """ncu's figures of each case's second launch beside its committed prediction."""
    from benchenv import ncu_clock
    from ncu_runs import parse

    CLOCK_METRIC = "sm__cycles_elapsed.avg.per_second"

    launches = parse(csv_path)
    record = json.load(open(cases_path))
    ran = [d for d in record["cases"] if d["ok"]]
    if len(launches) != 2 * len(ran):
        raise SystemExit(f"{len(launches)} launches profiled for {len(ran)} cases (expected 2 each)")
    res = _load()
    pred = res["predicted"]["cases"]
    rows = {}
    for k, d in enumerate(ran):
        name, vals, _ = launches[2 * k + 1]
        if d["kernel"] not in name:
            raise SystemExit(f"launch {2 * k + 1} is {name!r}, expected kernel {d['kernel']}")
        p = pred.get(d["name"], {})
        t = vals["gpu__time_duration.sum"] * 1e-9
        row = {**vals, "measured_s": t}
        if CLOCK_METRIC in vals:  # the launch's SM clock as every GPU result records it
            row["sm_clock"] = ncu_clock([vals[CLOCK_METRIC]])
        if "predicted_s" in p:
            row["ratio"] = p["predicted_s"] / t
            row["registers_match"] = p["registers"] == vals.get("launch__registers_per_thread")
            mi = vals.get("smsp__inst_executed.sum")
            row["inst_ratio"] = p["inst_executed"] / mi if mi else None
            mt = vals.get("smsp__thread_inst_executed_per_inst_executed.ratio")
            row["threads_per_inst_ratio"] = p["threads_per_inst"] / mt if mt else None
        rows[d["name"]] = row
    scored = {n: r for n, r in rows.items() if "ratio" in r}
    errs = [abs(r["ratio"] - 1) for r in scored.values()]
    res["measured"] = {
        "command": NCU_COMMAND,
        "environment": record["environment"],
        "failed": [d for d in record["cases"] if not d["ok"]],
        "cases": rows,
    }
    clocks = [r[CLOCK_METRIC] for r in rows.values() if CLOCK_METRIC in r]
    if clocks:
        res["measured"]["sm_clock"] = ncu_clock(clocks)
    res["summary"] = {
        "cases": len(scored),
        "median_abs_error": float(np.median(errs)) if errs else None,
        "outside_2x": [n for n, r in scored.items() if not 0.5 <= r["ratio"] <= 2],
        "registers_match": sum(bool(r["registers_match"]) for r in scored.values()),
        "inst_within_10pct": sum(
            r["inst_ratio"] is not None and abs(r["inst_ratio"] - 1) <= 0.1 for r in scored.values()
        ),
        "threads_per_inst_within_10pct": sum(
            r["threads_per_inst_ratio"] is not None and abs(r["threads_per_inst_ratio"] - 1) <= 0.1
            for r in scored.values()
        ),
        "clock_hz_median": float(
            np.median([r.get("sm__cycles_elapsed.avg.per_second", 0) for r in rows.values()])
        ),
        "worst": max(scored, key=lambda n: abs(math.log(scored[n]["ratio"]))) if scored else None,
    }
    _save(res)
    print(json.dumps(res["summary"], indent=1))
    for n, r in scored.items():
        print(
            f"{n:30s} meas {r['measured_s'] * 1e6:9.1f} us  pred/meas {r['ratio']:.2f}  "
            f"regs {'ok' if r['registers_match'] else 'DIFF'}  inst {r['inst_ratio'] or 0:.2f}  "
            f"tpi {r['threads_per_inst_ratio'] or 0:.2f}"
        )


def recheck_main():
    """The model as it is now on the same cases, beside the recorded times: NOT blind (the model
    may have been revised after the blind result was seen); kept apart from "predicted"."""
    import gpulab

    res = _load()
    meas = res["measured"]["cases"]
    rows = {}
    for c in cases():
        if c["name"] not in meas:
            continue
        t0 = time.perf_counter()
        try:
            p = gpulab.predict(c["kernel"], c["grid"], c["block"], *make_args(c), gpu="H200")
        except Exception as exc:  # noqa: BLE001
            rows[c["name"]] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            continue
        m = meas[c["name"]]
        rows[c["name"]] = {
            "predicted_s": p.time_s,
            "ratio": p.time_s / m["measured_s"],
            "inst_ratio": p.metrics["smsp__inst_executed.sum"] / m["smsp__inst_executed.sum"],
            "limiter": p.limiter_key,
            "wall_s": round(time.perf_counter() - t0, 2),
        }
        print(c["name"], rows[c["name"]], flush=True)
    ok = [r for r in rows.values() if "ratio" in r]
    res["after_revision"] = {
        "command": "python benchmarks/blind_r3/run.py recheck",
        "model_commit": _commit(),
        "note": "not blind: predicted after the blind result was seen",
        "median_abs_error": float(np.median([abs(r["ratio"] - 1) for r in ok])),
        "outside_2x": [n for n, r in rows.items() if "ratio" in r and not 0.5 <= r["ratio"] <= 2],
        "inst_within_10pct": sum(abs(r["inst_ratio"] - 1) <= 0.1 for r in ok),
        "cases": rows,
    }
    _save(res)
    print({k: v for k, v in res["after_revision"].items() if k != "cases"})


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "predict"
    if mode == "predict":
        predict_main(set(sys.argv[2:]) or None)
    elif mode == "gpu":
        gpu_main(os.environ.get("PERF_CASES_OUT", "blind_r3_cases.json"))
    elif mode == "merge":
        merge(sys.argv[2], sys.argv[3])
    elif mode == "recheck":
        recheck_main()
    else:
        raise SystemExit(f"unknown mode {mode!r}: predict, gpu or merge")
