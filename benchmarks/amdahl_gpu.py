"""Amdahl measured on a GPU (chapter 10); writes gpulab/data/results/amdahl_gpu.json.

One step of a pipeline = fixed host work (numpy, serial) + one kernel whose grid-stride loop
spreads a fixed amount of arithmetic over ``p`` blocks of 256 threads, then a synchronise.
``p`` is the parallelism we buy: one block runs on one SM, so up to the SM count p is "SMs in
use"; beyond it, extra blocks share SMs (more warps per SM hide more latency, up to the
occupancy limit). For each p: median wall time of a step (perf_counter), of the host part, and
of the kernel (CUDA events). The chapter fits T(p) = serial + parallel/p on two p's and checks
the fit on the others. The SM clock is sampled while each kernel runs (benchenv.ClockSampler):
"sm_clock" per row and for the whole sweep. Without a GPU it prints SKIP and exits 0 without
touching the results.

Run from the repository root:  python benchmarks/amdahl_gpu.py     (well under a minute)
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import os
import sys
import time

import numpy as np
from numba import cuda

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from benchenv import ClockSampler, environment, gpu_present, out_path  # noqa: E402

OUT = os.path.join(RESULTS_DIR, "amdahl_gpu.json")

N = 1 << 20  # elements
ITERS = 2048  # dependent multiply-adds per element
BLOCK = 256
HOST_N = 1 << 16  # floats sorted by the host each step
REPEATS = 9


@cuda.jit
def work(y, iters):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, y.size, stride):
        v = y[i]
        for _ in range(iters):
            v = v * 0.999 + 0.001
        y[i] = v


def main() -> int:
    if not gpu_present():
        print("SKIP: no CUDA GPU visible to numba; results file left untouched")
        return 0
    dev = cuda.get_current_device()
    n_sm = int(getattr(dev, "MULTIPROCESSOR_COUNT", 4))  # the fallback only serves smoke tests
    ps = sorted({1, 2, 4, 8, 16, 32, 64, n_sm // 2, n_sm, 2 * n_sm, 4 * n_sm, 8 * n_sm})
    rng = np.random.default_rng(0)
    host_data = rng.standard_normal(HOST_N).astype(np.float32)
    y = cuda.to_device(np.ones(N, np.float32))
    work[n_sm, BLOCK](y, ITERS)  # compile + warm up
    cuda.synchronize()

    def host_part():
        return np.sort(host_data).sum()

    rows = []
    clk = ClockSampler().__enter__()  # samples only inside clk.timed(): the kernel, not the host part
    for p in ps:
        steps, hosts, kernels = [], [], []
        for _ in range(REPEATS):
            s, e = cuda.event(), cuda.event()
            cuda.synchronize()
            t0 = time.perf_counter()
            host_part()
            t1 = time.perf_counter()
            with clk.timed():
                s.record()
                work[p, BLOCK](y, ITERS)
                e.record()
                e.synchronize()
            t2 = time.perf_counter()
            steps.append(t2 - t0)
            hosts.append(t1 - t0)
            kernels.append(s.elapsed_time(e) / 1e3)
        row = {
            "p": p,
            "step_s": float(np.median(steps)),
            "host_s": float(np.median(hosts)),
            "kernel_s": float(np.median(kernels)),
            "sm_clock": clk.take(),
        }
        rows.append(row)
        print(row)
    clk.__exit__(None, None, None)
    # n_sm: the SM count the sweep of p was built from (read by gpulab.plots.measured)
    res = {
        "env": {**environment(), "n_sm": n_sm},
        "config": {"N": N, "ITERS": ITERS, "BLOCK": BLOCK, "HOST_N": HOST_N, "REPEATS": REPEATS},
        "what": __doc__.strip().splitlines()[0],
        "rows": rows,
        "sm_clock": clk.whole_run(),
    }
    path = out_path(OUT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(res, fh, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
