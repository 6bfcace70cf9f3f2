"""Reduction benchmarks for chapter 08; writes gpulab/data/results/reduction.json.

Measured in one run, on float32, with GPU events around 20 back-to-back calls after a warm-up
(median of 7), so that numba's host-side launch overhead overlaps the GPU work:
  * per-block sums, shared-memory tree (seed 000's 'SM 6.0' kernel, 9 barriers per 256-thread
    block) against warp shuffles (1 barrier), across input sizes;
  * a full-device sum (grid-stride loop, 4 loads in flight per thread, shuffle block reduce,
    one atomic per block; 4- and 8-byte loads; a sweep of grid sizes) against cupy.sum and
    torch.sum of the same device buffer (zero-copy), as effective bandwidth = bytes read / time.
    The goal set in the chapter: at least 90% of the library's bandwidth.
Every result is checked against a float64 sum on the host before it is reported. The SM clock
is sampled during every timed loop (benchenv.ClockSampler): "sm_clock" beside every timing and
for the whole run.
Without a GPU it prints SKIP and exits 0 without touching the results file.

Run:  python benchmarks/reduction.py            (about a minute on an H200)
      python benchmarks/reduction.py --quick    (smaller sizes, for a smoke test)
"""

from gpulab.results import RESULTS_DIR
import argparse
import json
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from numba import cuda  # noqa: E402

import benchenv  # noqa: E402
from benchenv import environment, gpu_present  # noqa: E402

OUT = os.path.join(RESULTS_DIR, "reduction.json")
CLOCK = None  # a benchenv.ClockSampler, set by main(): samples the SM clock inside timed loops


def time_launches(fn, record, elapsed, sync, reps=7, inner=20, warmup=3):
    """Per-launch milliseconds: median over ``reps`` of ``inner`` back-to-back calls of fn()
    between two GPU events, so the host's launch overhead overlaps the GPU's work. Also returns
    the host's microseconds per call: when the GPU time is not clearly above it, the figure
    measures launch overhead, not the kernel (flagged as launch_bound). With a CLOCK, the SM
    clock sampled during these repetitions ("sm_clock")."""
    for _ in range(warmup):
        fn()
    sync()
    gpu, host = [], []
    with benchenv.timed(CLOCK):
        for _ in range(reps):
            start, stop = record(), None
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            host.append((time.perf_counter() - t0) / inner * 1e6)
            stop = record()
            gpu.append(elapsed(start, stop) / inner)
    ms, host_us = float(np.median(gpu)), float(np.median(host))
    info = {"host_us_per_call": host_us, "launch_bound": ms * 1e3 < 1.5 * host_us}
    if CLOCK is not None:
        info["sm_clock"] = CLOCK.take()
    return ms, info


def _numba_event():
    e = cuda.event()
    e.record()
    return e


def _numba_elapsed(a, b):
    b.synchronize()
    return cuda.event_elapsed_time(a, b)


def time_kernel(fn, **kw):
    """time_launches with numba's CUDA events: (ms per launch, timing details)."""
    return time_launches(fn, _numba_event, _numba_elapsed, cuda.synchronize, **kw)


def rel_err(got, want):
    return abs(float(got) - want) / max(abs(want), 1e-30)


def bench_block_sums(res, sizes, block=256):
    """Per-block partial sums: tree (seed's baseline) vs shuffle, same grid, same output."""
    from gpulab.kernels import warp

    rows = []
    rng = np.random.default_rng(0)
    for n in sizes:
        h = rng.random(n, dtype=np.float32)
        want = float(h.astype(np.float64).sum())
        x = cuda.to_device(h)
        grid = math.ceil(n / block)
        row = {"n": n, "bytes": 4 * n, "block": block, "grid": grid}
        for name, kern in (("tree", warp.block_sum_tree), ("shuffle", warp.block_sum_shfl)):
            out = cuda.device_array(grid, np.float32)
            ms, info = time_kernel(lambda: kern[grid, block](x, out))
            got = out.copy_to_host().astype(np.float64).sum()
            row[name] = {"ms": ms, "GBps": 4 * n / ms / 1e6, "rel_err": rel_err(got, want), **info}
            out = None  # free the device memory before the next size
        row["shuffle_over_tree"] = row["tree"]["ms"] / row["shuffle"]["ms"]
        rows.append(row)
        flag = " (launch-bound)" if row["tree"]["launch_bound"] or row["shuffle"]["launch_bound"] else ""
        print(
            f"  n=2^{int(math.log2(n)):2d}: tree {row['tree']['GBps']:8.1f} GB/s, "
            f"shuffle {row['shuffle']['GBps']:8.1f} GB/s, speed-up {row['shuffle_over_tree']:.2f}x{flag}"
        )
        x = None  # free the device memory before the next size
    res["block_sums"] = rows


def _library_sums(x, n):
    """cupy.sum and torch.sum of the same device buffer, timed like our kernels (their events)."""
    libs = {}
    try:
        import cupy as cp

        xc = cp.asarray(x)  # zero-copy through __cuda_array_interface__

        def rec():
            e = cp.cuda.Event()
            e.record()
            return e

        def el(a, b):
            b.synchronize()
            return cp.cuda.get_elapsed_time(a, b)

        ms, info = time_launches(lambda: xc.sum(), rec, el, cp.cuda.Device().synchronize)
        libs["cupy"] = {
            "version": cp.__version__,
            "ms": ms,
            "GBps": 4 * n / ms / 1e6,
            "value": float(xc.sum()),
            **info,
        }
        xc = None  # free the device memory before the next size
    except Exception as e:  # noqa: BLE001
        libs["cupy"] = {"error": repr(e)}
    try:
        import torch

        xt = torch.as_tensor(x, device="cuda")

        def rec():
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e

        def el(a, b):
            b.synchronize()
            return a.elapsed_time(b)

        ms, info = time_launches(lambda: torch.sum(xt), rec, el, torch.cuda.synchronize)
        libs["torch"] = {
            "version": torch.__version__,
            "ms": ms,
            "GBps": 4 * n / ms / 1e6,
            "value": float(torch.sum(xt)),
            **info,
        }
        xt = None  # free the device memory before the next size
    except Exception as e:  # noqa: BLE001
        libs["torch"] = {"error": repr(e)}
    return libs


def bench_device_sum(res, n):
    """Whole-array sum: our kernels (several launch shapes) against cupy and torch."""
    from gpulab.kernels import warp

    dev = cuda.get_current_device()
    sms = dev.MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(1)
    h = rng.random(n, dtype=np.float32)
    want = float(h.astype(np.float64).sum())
    x = cuda.to_device(h)
    h = None  # free the device memory before the next size
    out = cuda.device_array(1, np.float32)
    zero = np.zeros(1, np.float32)
    runs = []

    def one(label, kern, arr, grid, block):
        out.copy_to_device(zero)
        kern[grid, block](arr, out)
        got = float(out.copy_to_host()[0])
        ms, info = time_kernel(lambda: kern[grid, block](arr, out))  # out keeps adding up: timing only
        row = {
            "kernel": label,
            "grid": grid,
            "block": block,
            "blocks_per_sm": grid / sms,
            "ms": ms,
            "GBps": 4 * n / ms / 1e6,
            "rel_err": rel_err(got, want),
            **info,
        }
        runs.append(row)
        return row

    # the naive launch: a thread per element (grid = n / 256), so one atomic per 256 elements
    one("device_sum, one element per thread", warp.device_sum, x, math.ceil(n / 256), 256)
    xc = x.view(np.complex64)  # the same bytes as pairs: 8-byte loads
    for block in (256, 512, 1024):
        for per_sm in (1, 2, 4, 8, 16, 32):
            grid = sms * per_sm
            if grid * block > n:
                continue
            one("grid-stride, 4 x float32 loads in flight", warp.device_sum, x, grid, block)
            one("grid-stride, 4 x 8-byte loads in flight", warp.device_sum_pairs, xc, grid, block)
    ok = [r for r in runs if r["rel_err"] < 1e-4]
    best = max(ok, key=lambda r: r["GBps"]) if ok else None
    libs = _library_sums(x, n)
    for lib in libs.values():
        if "value" in lib:
            lib["rel_err"] = rel_err(lib["value"], want)
    res["device_sum"] = {
        "n": n,
        "bytes": 4 * n,
        "reference_float64": want,
        "runs": runs,
        "best": best,
        "libraries": libs,
    }
    for name, lib in libs.items():
        if best and "GBps" in lib:
            res["device_sum"][f"best_over_{name}"] = best["GBps"] / lib["GBps"]
    if best:
        print(f"  best: {best['kernel']} grid={best['grid']} block={best['block']}: {best['GBps']:.0f} GB/s")
    for name, lib in libs.items():
        print(f"  {name}: {lib.get('GBps', lib.get('error'))}")
    x = xc = out = None  # free the device memory before the next size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--out", default=benchenv.out_path(OUT))
    args = ap.parse_args()
    if not gpu_present():
        print("SKIP: no CUDA GPU visible to numba; results file left untouched")
        return 0
    global CLOCK
    CLOCK = benchenv.ClockSampler().__enter__()
    top = 24 if args.quick else 28
    res = {
        "script": "benchmarks/reduction.py",
        "environment": environment(),
        "method": "3 warm-up calls, then the median over 7 repetitions of 20 back-to-back calls "
        "between two CUDA events (numba's, cupy's or torch's), divided by 20; "
        "launch_bound marks timings not clearly above the host's time per call; "
        "float32 input uniform in [0,1); GB/s = 4 bytes x n / time; every result "
        "checked against a float64 host sum (rel_err)",
    }
    print(res["environment"])
    print("per-block sums, tree vs shuffle:")
    bench_block_sums(res, [2**k for k in range(16, top + 1, 2)])
    print(f"full-device sum of 2^{top} float32:")
    bench_device_sum(res, 2**top)
    CLOCK.__exit__(None, None, None)
    res["sm_clock"] = CLOCK.whole_run()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
