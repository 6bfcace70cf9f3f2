"""The compiled-code model against the H200 figures already recorded (not blind: development).

    python benchmarks/perf_sass_check.py registers  # ptxas registers vs launch__registers_per_thread
    python benchmarks/perf_sass_check.py predict [NAME ...]  # time, inst, threads/inst vs ncu
    python benchmarks/perf_sass_check.py ladder     # threads/inst and inst on the divergence ladder

Cases and measurements: benchmarks/perf_model.py and perf_blind.py (their recorded ncu runs,
read through gpulab.results). Writes perf_sass_check.json next to them.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _sets():
    """[(set name, cases(), make_args, measured cases dict)]."""
    from gpulab import results

    import perf_blind
    import perf_model

    out = []
    for name, mod in (("perf_model", perf_model), ("perf_blind", perf_blind)):
        rec = results.load(name) or {}
        out.append((name, mod.cases(), mod.make_args, rec.get("measured", {}).get("cases", {})))
    return out


def _save(key, value):
    from gpulab import results

    p = results.path("perf_sass_check") or (results.roots()[-1] / "perf_sass_check.json")
    res = json.load(open(p)) if os.path.exists(p) else {}
    res[key] = value
    with open(p, "w") as f:
        json.dump(res, f, indent=1)


def registers_main():
    from gpulab.perf import sass

    rows = {}
    for set_name, cs, make_args, meas in _sets():
        for c in cs:
            m = meas.get(c["name"], {}).get("launch__registers_per_thread")
            if m is None:
                continue
            try:
                ks = sass.compile_sass(c["kernel"], sass.argtypes_of(make_args(c)), "sm_90")
                r = ks.launch_registers
            except sass.SassUnavailable as e:
                r = f"error: {str(e)[:200]}"
            rows[f"{set_name}/{c['name']}"] = {"ptxas": r, "h200": m, "match": r == m}
            print(
                f"{set_name}/{c['name']:34s} ptxas {r}  H200 {m:g}  {'ok' if r == m else 'DIFF'}", flush=True
            )
    n = sum(r["match"] for r in rows.values())
    print(f"{n} of {len(rows)} match")
    _save(
        "registers", {"command": "python benchmarks/perf_sass_check.py registers", "match": n, "cases": rows}
    )


def predict_main(only):
    import gpulab

    rows = {}
    for set_name, cs, make_args, meas in _sets():
        for c in cs:
            if only and c["name"] not in only:
                continue
            m = meas.get(c["name"])
            if not m:
                continue
            t0 = time.perf_counter()
            p = gpulab.predict(
                c["kernel"],
                c["grid"],
                c["block"],
                *make_args(c),
                gpu="H200",
                shared_bytes=c.get("shared_bytes", 0),
            )
            t = m["gpu__time_duration.sum"] * 1e-9
            mi = m.get("smsp__inst_executed.sum")
            mt = m.get("smsp__thread_inst_executed_per_inst_executed.ratio")
            r = {
                "ratio": p.time_s / t,
                "inst_ratio": p.metrics["smsp__inst_executed.sum"] / mi if mi else None,
                "tpi_pred": p.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"],
                "tpi_meas": mt,
                "limiter": p.limiter_key,
                "wall_s": round(time.perf_counter() - t0, 1),
            }
            rows[f"{set_name}/{c['name']}"] = r
            print(
                f"{set_name}/{c['name']:30s} t {r['ratio']:.2f} inst {r['inst_ratio'] or 0:.2f} "
                f"tpi {r['tpi_pred']:.1f}/{mt or 0:.1f} {r['limiter']} {r['wall_s']}s",
                flush=True,
            )
    errs = [abs(r["ratio"] - 1) for r in rows.values()]
    print("median", np.median(errs), "outside 2x", sum(not 0.5 <= r["ratio"] <= 2 for r in rows.values()))
    if not only:
        _save(
            "predict",
            {
                "command": "python benchmarks/perf_sass_check.py predict",
                "median_abs_error": float(np.median(errs)),
                "cases": rows,
            },
        )


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "registers"
    if mode == "registers":
        registers_main()
    elif mode == "predict":
        predict_main(set(sys.argv[2:]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
