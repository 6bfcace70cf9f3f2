"""Pointer-chase latency ladder on the GPU (chapters 01 and 05); writes gpulab/data/results/latency.json.

One thread follows j = a[j] around ONE random cycle through all nodes (nodes 128 bytes apart, so
every node is its own cache line), so every load depends on the previous one and nothing overlaps.
Each timed chase starts at a fresh random node, and the time per load is the DIFFERENCE of two
chases of L and 2L steps divided by L: the launch, the first misses and the clock reads cancel,
and a later chase does not re-walk the nodes the previous one just pulled into a cache (with a
working set larger than L2, L steps touch a small random part of the cycle). The SM clock is
sampled while the chases run (benchenv.ClockSampler) and recorded with every row, so cycles
convert at the clock the chase ran at, not the maximum. The level that holds
the working set sets the latency: L1 (tens of KiB), L2 (a few MiB to tens of MiB) or HBM (GiB,
TLB misses included: each node is on a random page). A shared-memory chase gives that rung.
Without a GPU it prints SKIP and exits 0.

Run:  python benchmarks/latency.py            (about a minute on an H200)
"""

from gpulab.results import RESULTS_DIR
import contextlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from numba import cuda, int32  # noqa: E402

SHARED_NODES = 1024
SPACING = 32  # int32 elements between nodes: 128 B, one line per node
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
SIZES = [
    16 * KiB,
    64 * KiB,
    128 * KiB,
    512 * KiB,
    2 * MiB,
    8 * MiB,
    16 * MiB,
    32 * MiB,
    64 * MiB,
    128 * MiB,
    256 * MiB,
    1 * GiB,
    2 * GiB,
    4 * GiB,
]
REPEATS = 7


@cuda.jit
def chase_global(a, start, steps, out):
    """Follow j = a[j] for ``steps`` dependent loads from node ``start``; store j so the loop stays."""
    j = start
    for _ in range(steps):
        j = a[j]
    out[0] = j


@cuda.jit
def chase_shared(a, start, steps, out):
    """The same chase inside a 4 KB shared-memory array (one thread)."""
    s = cuda.shared.array(SHARED_NODES, int32)
    for i in range(SHARED_NODES):
        s[i] = a[i]
    j = start
    for _ in range(steps):
        j = s[j]
    out[0] = j


def single_cycle(n_nodes, spacing, rng):
    """int32 array in which node k*spacing holds the index of the next node of one random cycle
    through all n_nodes nodes. Walking a random permutation in order and closing it gives a
    uniformly random cyclic permutation (the distribution of Sattolo's algorithm), vectorised."""
    order = rng.permutation(n_nodes).astype(np.int64)
    a = np.zeros(n_nodes * spacing, dtype=np.int32)
    a[order * spacing] = np.roll(order, -1) * spacing
    return a


def is_single_cycle(a, spacing):
    """True when following a from node 0 visits every node once before returning (CPU check)."""
    n = a.size // spacing
    j, seen = 0, 0
    for _ in range(n):
        j = int(a[j])
        seen += 1
        if j == 0:
            break
    return j == 0 and seen == n


def time_chase(kern, a_dev, n_nodes, spacing, steps, out, rng, clock=None):
    """ns per dependent load: median over REPEATS of (t(2L) - t(L)) / L, each chase from a fresh
    random node. With a benchenv.ClockSampler, the SM clock is sampled while the chases run."""
    kern[1, 1](a_dev, 0, 1000, out)
    cuda.synchronize()
    per = []
    for _ in range(REPEATS):
        t = {}
        for s in (steps, 2 * steps):
            start = int(rng.integers(n_nodes)) * spacing
            e0, e1 = cuda.event(), cuda.event()
            with clock.timed() if clock else contextlib.nullcontext():
                e0.record()
                kern[1, 1](a_dev, start, s, out)
                e1.record()
                e1.synchronize()
            t[s] = e0.elapsed_time(e1)
        per.append((t[2 * steps] - t[steps]) * 1e6 / steps)
    return float(np.median(per)), [float(x) for x in per]


def main():
    from benchenv import ClockSampler, clock_summary, environment, gpu_present

    if not gpu_present():
        print("SKIP: no CUDA GPU visible; nothing measured, results file untouched.")
        return 0
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    dev = cuda.get_current_device()
    clock_ghz = dev.CLOCK_RATE / 1e6
    out = cuda.device_array(1, np.int32)
    rows = []
    clk = ClockSampler().__enter__()
    for size in SIZES:
        nodes = size // (SPACING * 4)
        a = cuda.to_device(single_cycle(nodes, SPACING, rng))
        steps = 20_000 if size >= 64 * MiB else 50_000
        ns, each = time_chase(chase_global, a, nodes, SPACING, steps, out, rng, clk)
        sm_clock = clk.take()
        ghz_here = sm_clock["median_MHz"] / 1e3 if sm_clock else None
        rows.append(
            {
                "working_set_bytes": size,
                "nodes": nodes,
                "steps": steps,
                "ns": ns,
                "ns_each_repeat": each,
                "cycles_at_max_clock": ns * clock_ghz,
                "sm_clock": sm_clock,
                "cycles_at_measured_clock": ns * ghz_here if ghz_here else None,
            }
        )
        print(f"{size / KiB:>10.0f} KiB  {ns:7.1f} ns  clock {sm_clock}", flush=True)
        del a
    a = cuda.to_device(single_cycle(SHARED_NODES, 1, rng))
    ns, each = time_chase(chase_shared, a, SHARED_NODES, 1, 100_000, out, rng, clk)
    shared_clock = clk.take()
    clk.__exit__(None, None, None)
    print(f"shared  {ns:7.1f} ns  clock {shared_clock}")
    ladder_clock = clock_summary(clk.all_samples, clk.source) if clk.all_samples else None
    res = {
        "environment": environment(),
        "max_sm_clock_GHz": clock_ghz,
        "method": (
            "one thread, dependent loads j = a[j] over one random cycle through all "
            "nodes (128 B apart); each timed chase from a fresh random node; ns/load = "
            f"(t(2L) - t(L)) / L, median of {REPEATS}; CUDA events"
        ),
        "sm_clock": ladder_clock,
        "global": rows,
        "shared": {
            "ns": ns,
            "ns_each_repeat": each,
            "cycles_at_max_clock": ns * clock_ghz,
            "sm_clock": shared_clock,
            "cycles_at_measured_clock": ns * shared_clock["median_MHz"] / 1e3 if shared_clock else None,
        },
    }
    path = os.environ.get("GPULAB_BENCH_OUT") or os.path.join(RESULTS_DIR, "latency.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
