"""Pointer-chase latency ladder on the GPU (chapter 05); writes benchmarks/results/latency.json.

One thread follows j = a[j] through a random cycle of nodes 128 bytes apart, so every load
depends on the previous one and nothing overlaps: time / steps is the load-to-use latency of
whichever level holds the working set (small: L1, a few MB: L2, a GiB: HBM, TLB misses
included). A shared-memory chase gives the shared-memory rung. Cycles are derived from the
device's maximum SM clock, so they are an estimate if the clock ran lower.
Without a GPU it prints SKIP and exits 0.

Run:  python benchmarks/latency.py            (under a minute on an H200)
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from numba import cuda, int32  # noqa: E402

from bandwidth import environment, gpu_present  # noqa: E402

SHARED_NODES = 1024


@cuda.jit
def chase_global(a, steps, out):
    """Follow j = a[j] for ``steps`` dependent loads; store j so the loop is not removed."""
    j = 0
    for _ in range(steps):
        j = a[j]
    out[0] = j


@cuda.jit
def chase_shared(a, steps, out):
    """The same chase inside a 4 KB shared-memory array (one thread)."""
    s = cuda.shared.array(SHARED_NODES, int32)
    for i in range(SHARED_NODES):
        s[i] = a[i]
    j = 0
    for _ in range(steps):
        j = s[j]
    out[0] = j


def cycle(n_nodes, spacing, rng):
    """int32 array where node k*spacing points to the next node of one random cycle."""
    order = rng.permutation(n_nodes)
    a = np.zeros(n_nodes * spacing, dtype=np.int32)
    nxt = np.roll(order, -1)
    a[order * spacing] = nxt * spacing
    return a


def time_chase(kern, a_dev, steps, out):
    kern[1, 1](a_dev, 1000, out)
    cuda.synchronize()
    res = []
    for s in (steps, 2 * steps):         # difference of two lengths removes the launch overhead
        start, stop = cuda.event(), cuda.event()
        start.record()
        kern[1, 1](a_dev, s, out)
        stop.record()
        stop.synchronize()
        res.append(start.elapsed_time(stop))
    return (res[1] - res[0]) * 1e6 / steps   # ns per load


def main():
    if not gpu_present():
        print("SKIP: no CUDA GPU visible; nothing measured, results file untouched.")
        return 0
    rng = np.random.default_rng(0)
    dev = cuda.get_current_device()
    clock_ghz = dev.CLOCK_RATE / 1e6
    out = cuda.device_array(1, np.int32)
    rows = []
    for size in (8 << 10, 64 << 10, 512 << 10, 4 << 20, 32 << 20, 256 << 20, 1 << 30):
        nodes = size // 128
        a = cuda.to_device(cycle(nodes, 32, rng))
        steps = 200_000 if size < (1 << 20) else 50_000
        ns = time_chase(chase_global, a, steps, out)
        rows.append({"working_set_bytes": size, "ns": ns, "cycles_at_max_clock": ns * clock_ghz})
        del a
    a = cuda.to_device(cycle(SHARED_NODES, 1, rng))
    ns = time_chase(chase_shared, a, 200_000, out)
    res = {"environment": environment(), "max_sm_clock_GHz": clock_ghz, "global": rows,
           "shared": {"ns": ns, "cycles_at_max_clock": ns * clock_ghz}}
    path = os.environ.get("GPULAB_BENCH_OUT") or os.path.join(HERE, "results", "latency.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=2)
    print(json.dumps(res, indent=2))
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
