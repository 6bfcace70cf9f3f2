"""Strided copy out[i] = a[i * stride] past stride 8 (chapter 05); writes
gpulab/data/results/strided_copy.json.

The same number of loads (N_LOADS float32, one per thread, gpulab.kernels.memory.copy_strided) for
strides 1..64: time (CUDA events, median) and GB/s of USEFUL bytes (4 B read + 4 B written per
element). ``python benchmarks/strided_copy.py ncu`` launches each stride once for Nsight Compute;
``benchmarks/ncu_runs.py strided`` records, per stride, dram__bytes_read.sum per load (what HBM
delivers per useful 4 B) and l1tex sectors per request (what the SM asks L1 for per warp load).
The SM clock is sampled during the timed launches (benchenv.ClockSampler): "sm_clock" per stride
and for the whole run. Skips without a GPU.

Run: ``python benchmarks/strided_copy.py``
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
OUT = os.path.join(RESULTS_DIR, "strided_copy.json")
STRIDES = [1, 2, 4, 8, 16, 32, 64]
N_LOADS = 1 << 24  # 64 MiB of useful float32 per launch; stride 64 spans 4 GiB
BLOCK = 256
REPEATS = 15


def main() -> int:
    from benchenv import gpu_present

    if not gpu_present():
        print("SKIP: no CUDA GPU visible; strided_copy.json untouched")
        return 0
    from numba import cuda
    from gpulab.kernels.memory import copy_strided
    from benchenv import ClockSampler, environment, out_path

    a = cuda.to_device(np.arange(N_LOADS * max(STRIDES), dtype=np.float32))
    out = cuda.device_array(N_LOADS, np.float32)
    grid = N_LOADS // BLOCK
    if len(sys.argv) > 1 and sys.argv[1] == "ncu":
        for s in STRIDES:
            copy_strided[grid, BLOCK](out, a, s)
        cuda.synchronize()
        return 0
    rows = []
    clk = ClockSampler().__enter__()
    for s in STRIDES:
        copy_strided[grid, BLOCK](out, a, s)
        cuda.synchronize()
        check = out[:1024].copy_to_host()
        ok = bool(np.array_equal(check, (np.arange(1024) * s).astype(np.float32)))
        ts = []
        for _ in range(REPEATS):
            e0, e1 = cuda.event(), cuda.event()
            with clk.timed():
                e0.record()
                copy_strided[grid, BLOCK](out, a, s)
                e1.record()
                e1.synchronize()
            ts.append(e0.elapsed_time(e1) / 1e3)
        t = float(np.median(ts))
        rows.append(
            {
                "stride": s,
                "time_s": t,
                "useful_GBps": 8 * N_LOADS / t / 1e9,
                "span_bytes": 4 * N_LOADS * s,
                "correct": ok,
                "sm_clock": clk.take(),
            }
        )
        print(f"stride {s:3d}: {t * 1e3:8.3f} ms  {8 * N_LOADS / t / 1e9:8.1f} GB/s useful")
    res = {
        "environment": environment(),
        "n_loads": N_LOADS,
        "block": BLOCK,
        "method": (
            "out[i] = a[i*stride], one float32 per thread, N loads per launch; CUDA "
            f"events, median of {REPEATS}; useful bytes = 8 per element (read + write)"
        ),
        "rows": rows,
        "sm_clock": clk.whole_run(),
    }
    clk.__exit__(None, None, None)
    path = out_path(OUT)
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
