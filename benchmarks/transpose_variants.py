"""Padded-transpose variants on a GPU, to pick the one chapter 06 ships (writes JSON).

The padded transpose of `gpulab.kernels.transpose` moves one float32 per thread per step with
a bounds check each step. This script times tile shapes (TILE x ROWS threads, TILE/ROWS
elements per thread) and a variant that skips the per-element bounds checks for whole tiles,
against the best copy, with CUDA events after a warm-up (same timer as bandwidth.py, which
samples the SM clock inside every timed region: "sm_clock" per variant and for the whole run).

    python benchmarks/transpose_variants.py
"""

from gpulab.results import RESULTS_DIR
import json
import os
import sys

import numpy as np
from numba import cuda, float32

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def make(TILE, ROWS, checked=True):
    PAD = TILE + 1

    @cuda.jit
    def transpose(out, a):
        tile = cuda.shared.array((TILE, PAD), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        x = cuda.blockIdx.x * TILE + tx
        y = cuda.blockIdx.y * TILE + ty
        full = (cuda.blockIdx.x + 1) * TILE <= a.shape[1] and (cuda.blockIdx.y + 1) * TILE <= a.shape[0]
        if full or not checked:
            for j in range(0, TILE, ROWS):
                tile[ty + j, tx] = a[y + j, x]
        else:
            for j in range(0, TILE, ROWS):
                if x < a.shape[1] and y + j < a.shape[0]:
                    tile[ty + j, tx] = a[y + j, x]
        cuda.syncthreads()
        xo = cuda.blockIdx.y * TILE + tx
        yo = cuda.blockIdx.x * TILE + ty
        if full or not checked:
            for j in range(0, TILE, ROWS):
                out[yo + j, xo] = tile[tx, ty + j]
        else:
            for j in range(0, TILE, ROWS):
                if xo < a.shape[0] and yo + j < a.shape[1]:
                    out[yo + j, xo] = tile[tx, ty + j]

    return transpose


def main():
    from benchenv import ClockSampler, environment, gpu_present, out_path

    if not gpu_present():
        print("SKIP: no GPU")
        return
    import bandwidth
    from bandwidth import clock_record, time_kernel

    bandwidth.CLOCK = ClockSampler().__enter__()  # time_kernel samples the clock while it times

    side = 16384
    a = cuda.to_device(np.random.default_rng(0).random((side, side), dtype=np.float32))
    out = cuda.device_array((side, side), np.float32)
    nbytes = 2 * a.size * 4
    res = {"environment": environment(), "side": side, "variants": {}}
    import torch

    ta = torch.empty(side * side, dtype=torch.float32, device="cuda")
    tb = torch.empty_like(ta)
    ms = time_kernel(lambda: tb.copy_(ta))
    res["torch_copy_GBps"] = nbytes / ms / 1e6
    res["torch_copy_sm_clock"] = clock_record()
    ref = None
    for TILE, ROWS in ((32, 8), (32, 4), (64, 16), (64, 8), (64, 4), (64, 2), (96, 4)):
        k = make(TILE, ROWS)
        grid = (side // TILE, side // TILE)
        ms = time_kernel(lambda: k[grid, (TILE, ROWS)](out, a))
        if ref is None:  # contiguous once, so each check below is a straight compare
            ref = np.ascontiguousarray(a.copy_to_host().T)
        ok = bool(np.array_equal(out.copy_to_host(), ref))
        res["variants"][f"{TILE}x{ROWS}"] = {
            "ms": ms,
            "GBps": nbytes / ms / 1e6,
            "correct": ok,
            "sm_clock": clock_record(),
        }
        print(f"{TILE}x{ROWS}: {nbytes / ms / 1e6:7.0f} GB/s  correct={ok}", flush=True)
    print(f"torch copy: {res['torch_copy_GBps']:.0f} GB/s")
    bandwidth.CLOCK.__exit__(None, None, None)
    res["sm_clock"] = bandwidth.CLOCK.whole_run()
    path = out_path(os.path.join(RESULTS_DIR, "transpose_variants.json"))
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
