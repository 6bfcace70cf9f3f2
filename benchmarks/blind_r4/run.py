"""Round 4 blind test of gpulab.predict (protocol: benchmarks/blind_r4/README.md).

    python benchmarks/blind_r4/run.py predict        # CPU: gpulab.predict(..., gpu="H200") -> blind_r4.json
    python benchmarks/blind_r4/run.py gpu OUT_DIR    # H200: CUDA-event times (median of REPS launches),
                                                     # the SM clock (ClockSampler), registers from the
                                                     # driver -> OUT_DIR/blind_r4_gpu.json
    python benchmarks/blind_r4/run.py regs           # H200, under ncu (NCU_COMMAND): each case once
    python benchmarks/blind_r4/run.py merge OUT_DIR  # the device's figures beside the committed predictions

The predictions are committed before any kernel of the set runs on a GPU; ``merge`` never
changes them. The ``gpu`` and ``regs`` modes import neither gpulab nor anything beyond numba.
"""

from __future__ import annotations

import csv
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

NAME = "blind_r4"
REPS = 7  # timed launches per case (after one that compiles and warms up)
SPIN_NS = 300_000  # a sleeping kernel ahead of each timed launch hides numba's host-side launch cost
NCU_COMMAND = (
    "ncu --clock-control none --print-units base --csv --log-file ncu_regs.csv "
    "--metrics launch__registers_per_thread python benchmarks/blind_r4/run.py regs"
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


def _git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=HERE).stdout.strip()


def predict_main(only=None):
    """gpulab.predict on every case exactly as a reader calls it (registers from ptxas)."""
    import gpulab
    from gpulab.perf import sass

    ok, why = sass.available()
    rows, failed = {}, []
    for c in cases():
        if only and c["name"] not in only:
            continue
        t0 = time.perf_counter()
        try:
            p = gpulab.predict(c["kernel"], c["grid"], c["block"], *make_args(c), gpu="H200")
        except Exception as exc:  # noqa: BLE001 - a case the model cannot predict is recorded as such
            rows[c["name"]] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            failed.append(c["name"])
            print(c["name"], rows[c["name"]], flush=True)
            continue
        rows[c["name"]] = {
            "predicted_s": p.time_s,
            "limiter": p.limiter_key,
            "registers": p.occupancy["registers_per_thread"],
            "inst_executed": p.metrics["smsp__inst_executed.sum"],
            "threads_per_inst": p.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"],
            "sampling_error": p.sampling["relative_error"],
            "wall_s": round(time.perf_counter() - t0, 2),
        }
        print(c["name"], rows[c["name"]], flush=True)
    res = _load()
    prev = res.get("predicted", {}).get("cases", {})
    load = os.getloadavg()
    res["predicted"] = {
        "command": "python benchmarks/blind_r4/run.py predict",
        "model_commit": _git("rev-parse", "HEAD"),
        "model_files_commit": _git("log", "-1", "--format=%H", "--", ":/gpulab/perf"),
        "working_tree": _git("status", "--porcelain", "--", ":/gpulab/perf") or "clean",
        "sass": "ptxas/nvdisasm used" if ok else f"no SASS: {why}",
        "cpu": f"{os.cpu_count()} cores (shared); load average {load[0]:.1f} at the end",
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "failed_to_predict": sorted(set(failed) | {n for n, r in prev.items() if "error" in r} - set(rows)),
        "cases": {**prev, **rows},
    }
    _save(res)


def _regs_of(kernel):
    """Registers per thread of the kernel's (only) compiled overload, from the driver (None
    where numba cannot say, as under its CUDA simulator)."""
    try:
        r = kernel.get_regs_per_thread()
        if isinstance(r, dict):
            r = next(iter(r.values())) if len(r) == 1 else max(r.values())
        return int(r)
    except Exception:  # noqa: BLE001 - a missing count is recorded as missing
        return None


def gpu_main(out_dir):
    """Time every case with CUDA events: one launch to compile and warm up, then REPS launches,
    each behind a sleeping kernel so the event brackets the kernel and not numba's host work."""
    from numba import cuda

    from benchenv import ClockSampler, environment

    @cuda.jit
    def spin(ns):
        for _ in range(ns // 1000):
            cuda.nanosleep(1000)

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "blind_r4_gpu.json")
    done = {}
    rec = {"environment": environment(), "reps": REPS, "spin_ns": SPIN_NS, "cases": done}
    try:
        spin[1, 1](SPIN_NS)
        cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - without it the events also hold numba's host work
        rec["spin_ns"] = 0
        rec["spin_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        print("no sleeping kernel:", rec["spin_error"], flush=True)
    t_start = time.perf_counter()
    with ClockSampler() as clk:
        for c in cases():
            t0 = time.perf_counter()
            try:
                args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in make_args(c)]
                launch = c["kernel"][c["grid"], c["block"]]
                launch(*args)  # compiles
                cuda.synchronize()
                ms = []
                with clk.timed():
                    for _ in range(REPS):
                        e0, e1 = cuda.event(), cuda.event()
                        if rec["spin_ns"]:
                            spin[1, 1](SPIN_NS)
                        e0.record()
                        launch(*args)
                        e1.record()
                        e1.synchronize()
                        ms.append(e0.elapsed_time(e1))
                done[c["name"]] = {
                    "kernel": c["kernel"].py_func.__name__,
                    "ok": True,
                    "measured_s": float(np.median(ms)) * 1e-3,
                    "event_ms": ms,
                    "registers_driver": _regs_of(c["kernel"]),
                    "sm_clock": clk.take(),
                    "wall_s": round(time.perf_counter() - t0, 2),
                }
                del args
            except Exception as exc:  # noqa: BLE001 - record and go on
                done[c["name"]] = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            print(c["name"], {k: v for k, v in done[c["name"]].items() if k != "event_ms"}, flush=True)
            with open(path, "w") as f:  # after every case: a run cut short keeps what it measured
                json.dump(rec, f, indent=1)
        rec["sm_clock_all"] = {"samples_MHz": list(clk.all_samples)}
    rec["wall_s"] = round(time.perf_counter() - t_start, 1)
    with open(path, "w") as f:
        json.dump(rec, f, indent=1)


def regs_main():
    """Launch every case once (under ncu: one launch-level metric, no replay of counters)."""
    from numba import cuda

    for c in cases():
        try:  # registers depend on the argument types only: zeros of the same arrays are enough
            args = [
                cuda.to_device(np.zeros_like(a)) if isinstance(a, np.ndarray) else a for a in make_args(c)
            ]
            c["kernel"][c["grid"], c["block"]](*args)
            cuda.synchronize()
            print("launched", c["name"], flush=True)
        except Exception as exc:  # noqa: BLE001
            print("FAILED", c["name"], exc, flush=True)


def parse_ncu(path):
    """Launch-ordered [(kernel name, registers per thread)] from ncu's --csv log."""
    lines = [ln for ln in open(path).read().splitlines() if ln.startswith('"')]
    if not lines:
        return []
    rows = list(csv.reader(lines))
    head, body = rows[0], rows[1:]
    c = {h: k for k, h in enumerate(head)}
    out = {}
    for r in body:
        if r[c["Metric Name"]] == "launch__registers_per_thread":
            out[int(r[c["ID"]])] = (r[c["Kernel Name"]], int(float(r[c["Metric Value"]].replace(",", ""))))
    return [out[k] for k in sorted(out)]


def merge(out_dir):
    """The device's figures beside the committed predictions; the summary the book quotes."""
    g = json.load(open(os.path.join(out_dir, "blind_r4_gpu.json")))
    ncu_path = os.path.join(out_dir, "ncu_regs.csv")
    ncu = parse_ncu(ncu_path) if os.path.exists(ncu_path) else []
    names = [c["name"] for c in cases()]
    kern = {c["name"]: c["kernel"].py_func.__name__ for c in cases()}
    ncu_regs, left = {}, list(ncu)
    for n in names:  # in launch order; no kernel's name holds another's (mangled or demangled)
        k = next((j for j, (kn, _) in enumerate(left) if kern[n] in kn), None)
        if k is not None:
            ncu_regs[n] = left.pop(k)
    res = _load()
    pred = res["predicted"]["cases"]
    rows = {}
    for n, d in g["cases"].items():
        if not d.get("ok"):
            continue
        row = {k: v for k, v in d.items() if k not in ("ok",)}
        if n in ncu_regs:
            row["registers_measured"] = ncu_regs[n][1]
            row["registers_source"] = "ncu launch__registers_per_thread"
        else:
            row["registers_measured"] = d.get("registers_driver")
            row["registers_source"] = "driver (cuFuncGetAttribute NUM_REGS via numba)"
        p = pred.get(n, {})
        if "predicted_s" in p:
            row["ratio"] = p["predicted_s"] / d["measured_s"]
            row["registers_match"] = p["registers"] == row["registers_measured"]
        rows[n] = row
    scored = {n: r for n, r in rows.items() if "ratio" in r}
    errs = [abs(r["ratio"] - 1) for r in scored.values()]
    clocks = [r["sm_clock"]["median_MHz"] for r in rows.values() if r.get("sm_clock")]
    res["measured"] = {
        "command": "python benchmarks/blind_r4/run.py gpu OUT (CUDA events, median of "
        f"{g['reps']} launches); registers: {NCU_COMMAND}",
        "environment": g["environment"],
        "failed": {n: d.get("error") for n, d in g["cases"].items() if not d.get("ok")},
        "not_run": [n for n in names if n not in g["cases"]],
        "cases": rows,
    }
    res["summary"] = {
        "cases": len(scored),
        "median_abs_error": float(np.median(errs)) if errs else None,
        "outside_2x": [n for n, r in scored.items() if not 0.5 <= r["ratio"] <= 2],
        "registers_match": sum(bool(r["registers_match"]) for r in scored.values()),
        "registers_from_ncu": sum(r["registers_source"].startswith("ncu") for r in scored.values()),
        "clock_MHz_median": float(np.median(clocks)) if clocks else None,
        "worst": max(scored, key=lambda n: abs(math.log(scored[n]["ratio"]))) if scored else None,
        "timing": "CUDA events around each launch behind a sleeping kernel, median of "
        f"{g['reps']} launches after a warm-up launch (not ncu's gpu__time_duration)",
    }
    _save(res)
    print(json.dumps(res["summary"], indent=1))
    for n, r in sorted(scored.items(), key=lambda kv: kv[1]["ratio"]):
        print(
            f"{n:28s} meas {r['measured_s'] * 1e6:9.1f} us  pred/meas {r['ratio']:.2f}  "
            f"regs {pred[n]['registers']}/{r['registers_measured']}  {pred[n]['limiter']}"
        )


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "predict"
    if mode == "predict":
        predict_main(set(sys.argv[2:]) or None)
    elif mode == "gpu":
        gpu_main(sys.argv[2] if len(sys.argv) > 2 else ".")
    elif mode == "regs":
        regs_main()
    elif mode == "merge":
        merge(sys.argv[2])
    else:
        raise SystemExit(f"unknown mode {mode!r}: predict, gpu, regs or merge")
