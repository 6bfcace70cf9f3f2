"""Time a kernel against the number of distinct branch paths its warps take (warp divergence).

Each thread runs one of 32 paths chosen by ``sel[i]``. Every path has the SAME length and the
same kinds of operations: a balanced five-level decision tree on the bits of ``sel`` (five tests
for every path, none for an if/elif chain whose later arms test more), then a loop of ``iters``
iterations of FMA_PER_ITER dependent float32 multiply-adds whose constants differ per path (so
the paths are different code the compiler cannot merge). "divergent": lane l of every warp takes
path ``l % P``, so each warp executes P paths one after another; "uniform": whole warps take path
``warp % P``, the same work per thread with no divergence inside a warp. The model
T_warp = sum of T_p predicts time ~ P for "divergent" (all T_p equal) and flat for "uniform".
CUDA events, after a warm-up, median of repeats; the SM clock is sampled during the timed
launches (benchenv.ClockSampler): "sm_clock" per row and for the whole run. Writes
``gpulab/data/results/divergence_paths.json``; skips without a GPU.

``python benchmarks/divergence_paths.py sass`` prints the kernel's SASS instruction counts (needs
nvdisasm); ``python benchmarks/divergence_paths.py ncu`` launches the divergent kernel once per P
(for Nsight Compute; ``benchmarks/ncu_runs.py divergence`` runs it and records the counters).

Run: ``python benchmarks/divergence_paths.py``
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
OUT = os.path.join(RESULTS_DIR, "divergence_paths.json")
PATHS = [1, 2, 4, 8, 16, 32]
ITERS = [64, 256]
NCU_ITERS = 64
FMA_PER_ITER = 5
LEVELS = 5  # 2**5 = 32 paths
N = 1 << 22
BLOCK = 256
REPEATS = 15


def constants(k: int, j: int) -> tuple[float, float]:
    """Multiplier and addend of FMA j on path k: distinct per path, |c| < 1 so v stays finite."""
    return 0.5 + 0.01 * k + 0.001 * j, 0.25 - 0.002 * k - 0.0001 * j


def kernel_source(levels: int = LEVELS) -> str:
    """Python source of the kernel: a balanced if/else tree on the bits of p (``levels`` tests
    on every path), each leaf a loop of FMA_PER_ITER dependent FMAs with its own constants."""
    lines = [
        "def kern(out, x, sel, iters):",
        "    i = cuda.grid(1)",
        "    if i < x.shape[0]:",
        "        v = x[i]",
        "        p = sel[i]",
    ]

    def tree(depth, prefix, indent):
        pad = " " * indent
        if depth == levels:
            lines.append(f"{pad}for it in range(iters):")
            for j in range(FMA_PER_ITER):
                c, d = constants(prefix, j)
                lines.append(f"{pad}    v = v * float32({c!r}) + float32({d!r})")
            return
        bit = levels - 1 - depth
        lines.append(f"{pad}if p & {1 << bit}:")
        tree(depth + 1, prefix | (1 << bit), indent + 4)
        lines.append(f"{pad}else:")
        tree(depth + 1, prefix, indent + 4)

    tree(0, 0, 8)
    lines.append("        out[i] = v")
    return "\n".join(lines) + "\n"


def reference(x, sel, iters):
    """What the kernel computes, in numpy float32 (the CPU check)."""
    import numpy as np

    v = x.astype(np.float32).copy()
    for k in np.unique(sel):
        m = sel == k
        w = v[m]
        for _ in range(iters):
            for j in range(FMA_PER_ITER):
                c, d = constants(int(k), j)
                w = w * np.float32(c) + np.float32(d)
        v[m] = w
    return v


def build():
    """The compiled numba kernel (module-level name ``kern``)."""
    from numba import cuda, float32
    import linecache

    src, name = kernel_source(), "<divergence_paths_kernel>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)  # inspect can read it
    ns = {"cuda": cuda, "float32": float32}
    exec(compile(src, name, "exec"), ns)
    return cuda.jit("void(float32[:], float32[:], int32[:], int32)", fastmath=False)(ns["kern"])


def selector(P: int, mode: str, n: int = N):
    """Path of each thread: lane % P ("divergent") or warp % P ("uniform")."""
    import numpy as np

    i = np.arange(n)
    return ((i % 32) % P if mode == "divergent" else (i // 32) % P).astype(np.int32)


def sass_counts(kern) -> dict:
    """Counts of a few SASS opcodes in the compiled kernel (FFMA should be 32 paths x 5 x unroll)."""
    import re

    sass = kern.inspect_sass()
    text = sass if isinstance(sass, str) else "\n".join(sass.values())
    ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", text)
    counts = {}
    for op in ops:
        base = op.split(".")[0]
        counts[base] = counts.get(base, 0) + 1
    return {
        "instructions": len(ops),
        "FFMA": counts.get("FFMA", 0),
        "BRA": counts.get("BRA", 0),
        "BSSY": counts.get("BSSY", 0),
        "BSYNC": counts.get("BSYNC", 0),
        "SEL": counts.get("SEL", 0),
        "FSEL": counts.get("FSEL", 0),
        "LOP3": counts.get("LOP3", 0),
        "all": dict(sorted(counts.items())),
    }, text


def main() -> int:
    from benchenv import gpu_present

    if not gpu_present():
        print("divergence_paths: no CUDA GPU available; skipped (nothing written)")
        return 0
    from numba import cuda
    import numpy as np
    from benchenv import ClockSampler, environment, out_path

    kern = build()
    rng = np.random.default_rng(0)
    xh = rng.random(N, dtype=np.float32)
    x = cuda.to_device(xh)
    out = cuda.device_array(N, np.float32)
    grid = (N + BLOCK - 1) // BLOCK
    mode_arg = sys.argv[1] if len(sys.argv) > 1 else "time"
    if mode_arg == "ncu":
        for P in PATHS:
            kern[grid, BLOCK](out, x, cuda.to_device(selector(P, "divergent")), NCU_ITERS)
        cuda.synchronize()
        return 0
    # correctness on a slice against numpy
    sel_h = selector(32, "divergent")
    kern[grid, BLOCK](out, x, cuda.to_device(sel_h), 8)
    got = out.copy_to_host()[:4096]
    want = reference(xh[:4096], sel_h[:4096], 8)
    rel_err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
    try:
        counts, text = sass_counts(kern)
    except Exception as e:  # noqa: BLE001 - no nvdisasm: time anyway, say why SASS is missing
        counts, text = {"error": repr(e)[:300]}, ""
    if mode_arg == "sass":
        print(text)
        print(counts)
        return 0
    rows = []
    clk = ClockSampler().__enter__()
    for iters in ITERS:
        for mode in ("divergent", "uniform"):
            for P in PATHS:
                sel = cuda.to_device(selector(P, mode))
                kern[grid, BLOCK](out, x, sel, iters)  # warm-up
                cuda.synchronize()
                times = []
                for _ in range(REPEATS):
                    e0, e1 = cuda.event(), cuda.event()
                    with clk.timed():
                        e0.record()
                        kern[grid, BLOCK](out, x, sel, iters)
                        e1.record()
                        e1.synchronize()
                    times.append(e0.elapsed_time(e1))
                rows.append(
                    {
                        "iters": iters,
                        "mode": mode,
                        "paths": P,
                        "ms_median": float(np.median(times)),
                        "ms_min": float(np.min(times)),
                        "repeats": REPEATS,
                        "sum_Tp_prediction": P if mode == "divergent" else 1,
                        "sm_clock": clk.take(),
                    }
                )
    for r in rows:
        base = next(
            b for b in rows if b["iters"] == r["iters"] and b["mode"] == r["mode"] and b["paths"] == 1
        )
        r["ratio_to_1_path"] = r["ms_median"] / base["ms_median"]
    clk.__exit__(None, None, None)
    env = environment()
    result = {
        "script": "benchmarks/divergence_paths.py",
        "environment": env,
        "date_utc": env["date_utc"],
        "device": env["gpu"],
        "compute_capability": env["compute_capability"],
        "numba": env["numba"],
        "python": env["python"],
        "n_threads": N,
        "block": BLOCK,
        "fma_per_iter": FMA_PER_ITER,
        "tests_per_path": LEVELS,
        "method": (
            "every path: 5 branch tests (balanced tree on the bits of sel), then "
            "iters x 5 dependent float32 FMAs with per-path constants; CUDA events, "
            f"median of {REPEATS} after a warm-up"
        ),
        "max_rel_err_vs_numpy": rel_err,
        "sass": counts,
        "rows": rows,
        "sm_clock": clk.whole_run(),
    }
    path = out_path(OUT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print("SASS:", {k: v for k, v in counts.items() if k != "all"})
    for r in rows:
        print(
            f"iters={r['iters']:4d} {r['mode']:9s} P={r['paths']:2d} "
            f"{r['ms_median']:.3f} ms  x{r['ratio_to_1_path']:.2f}"
        )
    print("->", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
