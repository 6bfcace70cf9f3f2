"""Time a kernel against the number of distinct branch paths its warps take (warp divergence).

Each thread runs one of 32 structurally different loop bodies (ITERS iterations of fused
multiply-adds), chosen by ``sel[i]``. "divergent": lane l of every warp takes path ``l % P``, so
each warp executes P paths one after another; "uniform": whole warps take path ``warp % P``, the
same amount of work per thread with no divergence inside a warp. The model T_warp = sum of T_p
predicts time ~ P for "divergent" and flat for "uniform". CUDA events, after a warm-up, median of
repeats. Writes ``benchmarks/results/divergence_paths.json``; skips without a GPU.

Run: ``python benchmarks/divergence_paths.py``
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results", "divergence_paths.json")
PATHS = [1, 2, 4, 8, 16, 32]
ITERS = [64, 256]
N = 1 << 22
BLOCK = 256
REPEATS = 15


def kernel_source(n_paths: int = 32) -> str:
    """32 if/elif branches, each a loop whose body (chosen by the bits of k) differs."""
    lines = ["def kern(out, x, sel, iters):", "    i = cuda.grid(1)",
             "    if i < x.shape[0]:", "        v = x[i]", "        p = sel[i]"]
    for k in range(n_paths):
        lines.append(f"        {'if' if k == 0 else 'elif'} p == {k}:")
        lines.append("            for it in range(iters):")
        for j in range(5):
            c = 0.5 + 0.01 * k + 0.001 * j
            d = 0.25 - 0.002 * k
            if (k >> j) & 1:
                lines.append(f"                v = v * v * {c:.4f} + {d:.4f}")
            else:
                lines.append(f"                v = v * {c:.4f} + {d:.4f}")
    lines.append("        out[i] = v")
    return "\n".join(lines) + "\n"


def main() -> int:
    try:
        from numba import cuda
        ok = cuda.is_available()
    except Exception:                            # pragma: no cover
        ok = False
    if not ok:
        print("divergence_paths: no CUDA GPU available; skipped (nothing written)")
        return 0
    import numpy as np
    import numba

    ns = {"cuda": cuda}
    exec(compile(kernel_source(), "<divergence_paths>", "exec"), ns)
    kern = cuda.jit("void(float32[:], float32[:], int32[:], int32)")(ns["kern"])
    dev = cuda.get_current_device()
    rng = np.random.default_rng(0)
    x = cuda.to_device(rng.random(N, dtype=np.float32))
    out = cuda.device_array(N, np.float32)
    i = np.arange(N)
    grid = (N + BLOCK - 1) // BLOCK
    rows = []
    for iters in ITERS:
        for mode in ("divergent", "uniform"):
            for P in PATHS:
                sel_h = ((i % 32) % P if mode == "divergent" else (i // 32) % P).astype(np.int32)
                sel = cuda.to_device(sel_h)
                kern[grid, BLOCK](out, x, sel, iters)          # warm-up
                cuda.synchronize()
                times = []
                for _ in range(REPEATS):
                    e0, e1 = cuda.event(), cuda.event()
                    e0.record()
                    kern[grid, BLOCK](out, x, sel, iters)
                    e1.record()
                    e1.synchronize()
                    times.append(cuda.event_elapsed_time(e0, e1))
                rows.append({"iters": iters, "mode": mode, "paths": P,
                             "ms_median": float(np.median(times)),
                             "ms_min": float(np.min(times)), "repeats": REPEATS})
    for r in rows:
        base = next(b for b in rows if b["iters"] == r["iters"] and b["mode"] == r["mode"]
                    and b["paths"] == 1)
        r["ratio_to_1_path"] = r["ms_median"] / base["ms_median"]
    result = {"script": "benchmarks/divergence_paths.py",
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "device": dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name),
              "compute_capability": list(dev.compute_capability),
              "numba": numba.__version__, "python": platform.python_version(),
              "n_threads": N, "block": BLOCK, "rows": rows}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(result, f, indent=1)
    for r in rows:
        print(f"iters={r['iters']:4d} {r['mode']:9s} P={r['paths']:2d} "
              f"{r['ms_median']:.3f} ms  x{r['ratio_to_1_path']:.2f}")
    print("->", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
