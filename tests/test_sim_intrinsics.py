"""Report.intrinsics counts warp-level executions of each cuda.* call (graders rely on it)."""

import numpy as np
from numba import cuda

import gpulab


@cuda.jit
def warp_sum_shuffles(a, out):
    i = cuda.grid(1)
    v = a[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def warp_sum_lane0_loop(a, out):
    i = cuda.grid(1)
    if cuda.laneid == 0:
        s = 0.0
        for k in range(32):
            s += a[i + k]
        out[i // 32] = s


@cuda.jit
def mixed(a, out):
    i = cuda.grid(1)
    if i < 40:  # two warps of block 0 (lanes 0-31 and 32-39)
        b = cuda.ballot_sync(cuda.activemask(), a[i] > 0)
        out[i] = cuda.shfl_xor_sync(cuda.activemask(), b, 1)
    cuda.syncthreads()


def test_shuffles_counted_per_warp_instruction():
    a = np.ones(128, np.float32)
    out = np.zeros(1, np.float32)
    rep = gpulab.launch(warp_sum_shuffles, 2, 64, a, out, backend="sim")
    assert out[0] == 128
    # 5 shuffle steps x 4 warps; one warp-level atomic per warp (only lane 0 active)
    assert rep.intrinsics["shfl_down_sync"] == 20
    assert rep.intrinsics["atomic.add"] == 4
    assert rep.intrinsics["grid"] == 4
    assert "shfl_xor_sync" not in rep.intrinsics


def test_serial_loop_has_no_shuffles():
    a = np.ones(64, np.float32)
    out = np.zeros(2, np.float32)
    rep = gpulab.launch(warp_sum_lane0_loop, 1, 64, a, out, backend="sim")
    assert np.all(out == 32)
    assert not any(k.startswith("shfl") for k in rep.intrinsics)


def test_partial_masks_count_warps_with_an_active_lane():
    a = np.arange(-5, 123, dtype=np.int32)
    out = np.zeros(128, np.uint32)
    rep = gpulab.launch(mixed, 2, 64, a, out, backend="sim")
    assert rep.intrinsics["ballot_sync"] == 2  # warps 0 and 1 of block 0 only
    assert rep.intrinsics["activemask"] == 4  # called twice by each of those warps
    assert rep.intrinsics["shfl_xor_sync"] == 2
    assert rep.intrinsics["syncthreads"] == 4  # every warp of both blocks
