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


def ladder_main():
    """Executed SASS per warp and threads per instruction on the divergence ladder (1-32 paths)
    and on the book's reductions, against the recorded Nsight Compute figures."""
    import linecache

    from numba import cuda, float32

    import divergence_paths as dp
    import perf_model
    from gpulab import metrics as M
    from gpulab import results
    from gpulab.perf import dynamic, engine, sass

    src, name = dp.kernel_source(), "<divergence_paths_kernel>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"cuda": cuda, "float32": float32}
    exec(compile(src, name, "exec"), ns)
    kern = ns["kern"]
    ks = sass.compile_sass(kern, "void(float32[:], float32[:], int32[:], int32)", "sm_90")
    st = dynamic.structure(kern)
    rec = results.load("divergence_paths")["ncu"]
    rec = eval(rec) if isinstance(rec, str) else rec  # noqa: S307 - our own recorded dict
    meas = {r["paths"]: r for r in rec["rows"]}
    warps_meas = dp.N // 32
    n = 8 * 256
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    rows = {}
    for P in dp.PATHS:
        c, _ = engine.sample_counts(
            kern,
            n // 256,
            256,
            (np.zeros(n, np.float32), x, dp.selector(P, "divergent", n), np.int32(dp.NCU_ITERS)),
        )
        E = {ln: v[M.INST_EXECUTED] for ln, v in c.lines.items()}
        T = {ln: v[M.THREAD_INST_EXECUTED] for ln, v in c.lines.items()}
        d = dynamic.count(ks, E, T, n // 32, st)
        m = meas[P]
        r = {
            "inst_per_warp": d.inst / (n // 32),
            "inst_per_warp_h200": m["smsp__inst_executed.sum"] / warps_meas,
            "threads_per_inst": d.threads_per_inst,
            "threads_per_inst_h200": m["smsp__thread_inst_executed_per_inst_executed.ratio"],
        }
        r["tpi_error"] = r["threads_per_inst"] / r["threads_per_inst_h200"] - 1
        r["inst_error"] = r["inst_per_warp"] / r["inst_per_warp_h200"] - 1
        rows[f"ladder_{P}_paths"] = r
        print(
            f"ladder {P:2d} paths: inst/warp {r['inst_per_warp']:.0f} vs {r['inst_per_warp_h200']:.0f}, "
            f"threads/inst {r['threads_per_inst']:.2f} vs {r['threads_per_inst_h200']:.2f}",
            flush=True,
        )
    import gpulab

    meas_pm = (results.load("perf_model") or {}).get("measured", {}).get("cases", {})
    for c in perf_model.cases():
        if c["name"] not in ("reduce_sum", "block_sum_tree", "block_sum_shfl", "device_sum"):
            continue
        m = meas_pm[c["name"]]
        p = gpulab.predict(
            c["kernel"],
            c["grid"],
            c["block"],
            *perf_model.make_args(c),
            gpu="H200",
            shared_bytes=c.get("shared_bytes", 0),
        )
        r = {
            "inst": p.metrics["smsp__inst_executed.sum"],
            "inst_h200": m["smsp__inst_executed.sum"],
            "threads_per_inst": p.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"],
            "threads_per_inst_h200": m["smsp__thread_inst_executed_per_inst_executed.ratio"],
        }
        r["tpi_error"] = r["threads_per_inst"] / r["threads_per_inst_h200"] - 1
        r["inst_error"] = r["inst"] / r["inst_h200"] - 1
        rows[c["name"]] = r
        print(
            f"{c['name']:16s} inst {r['inst']:.4g} vs {r['inst_h200']:.4g}, threads/inst "
            f"{r['threads_per_inst']:.2f} vs {r['threads_per_inst_h200']:.2f}",
            flush=True,
        )
    _save(
        "ladder",
        {
            "command": "python benchmarks/perf_sass_check.py ladder",
            "max_abs_tpi_error": max(abs(r["tpi_error"]) for r in rows.values()),
            "cases": rows,
        },
    )


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "registers"
    if mode == "registers":
        registers_main()
    elif mode == "predict":
        predict_main(set(sys.argv[2:]))
    elif mode == "ladder":
        ladder_main()
    else:
        raise SystemExit(f"unknown mode {mode!r}")
