"""Shared memory starts undefined: reading an element no thread of the block wrote is an error
naming the line, the thread and the element (as compute-sanitizer initcheck does for global
memory); the usual write → barrier → read patterns stay fine."""

import numpy as np
import pytest
from numba import cuda, float32, float64, int32

import gpulab
from gpulab import errors


def run(kernel, grid, block, *args, **kw):
    return gpulab.launch(kernel, grid, block, *args, backend="sim", **kw)


@cuda.jit
def reads_neighbour_never_written(out):
    sh = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    sh[t] = t  # 32 threads write sh[0..31] only
    cuda.syncthreads()
    out[t] = sh[t + 32]


@cuda.jit
def sum_of_unzeroed_tile(out, a):
    acc = cuda.shared.array(1, float32)
    t = cuda.threadIdx.x
    cuda.atomic.add(acc, 0, a[t])  # nobody zeroed acc[0]
    cuda.syncthreads()
    if t == 0:
        out[0] = acc[0]


@cuda.jit
def staged_tile(out, a):
    tile = cuda.shared.array((8, 33), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = tile[ty, 31 - tx]


@cuda.jit
def zero_then_atomics(hist, data):
    h = cuda.shared.array(16, int32)
    t = cuda.threadIdx.x
    if t < 16:
        h[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(h, data[cuda.grid(1)] % 16, 1)
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(hist, t, h[t])


@cuda.jit
def dynamic_aliasing(out):
    f = cuda.shared.array(0, float64)
    half = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    f[t] = 1.0  # writes bytes 8t .. 8t+7
    cuda.syncthreads()
    out[t] = half[2 * t] + half[2 * t + 1]  # the same bytes, through the float32 view
    out[t] = half[2 * t + 64]  # bytes 8t + 256...: never written


def test_reading_an_element_nobody_wrote_names_line_thread_and_element():
    with pytest.raises(errors.UninitializedRead) as e:
        run(reads_neighbour_never_written, 1, 32, np.zeros(32))
    err = e.value
    assert err.line == reads_neighbour_never_written.py_func.__code__.co_firstlineno + 6
    assert "`sh[32]`" in str(err) and "thread (0, 0, 0) of block (0, 0, 0)" in str(err)


def test_every_block_must_write_its_own_copy():
    @cuda.jit
    def only_block0_writes(out):
        sh = cuda.shared.array(32, float32)
        t = cuda.threadIdx.x
        if cuda.blockIdx.x == 0:
            sh[t] = 1.0
        cuda.syncthreads()
        out[cuda.grid(1)] = sh[t]

    with pytest.raises(errors.UninitializedRead, match="block \\(1, 0, 0\\)"):
        run(only_block0_writes, 2, 32, np.zeros(64))


def test_atomic_on_an_unzeroed_shared_element_is_an_uninitialised_read():
    with pytest.raises(errors.UninitializedRead, match="updates atomically `acc\\[0\\]`"):
        run(sum_of_unzeroed_tile, 1, 32, np.zeros(1, np.float32), np.ones(32, np.float32))


def test_write_barrier_read_patterns_are_fine():
    a = np.arange(8 * 32, dtype=np.float32).reshape(8, 32)
    out = np.zeros_like(a)
    run(staged_tile, 1, (32, 8), out, a)
    assert np.array_equal(out, a[:, ::-1])
    data = np.arange(256, dtype=np.int32)
    hist = np.zeros(16, np.int32)
    run(zero_then_atomics, 2, 128, hist, data)
    assert np.array_equal(hist, np.bincount(data % 16, minlength=16))


def test_dynamic_views_share_what_was_written_byte_by_byte():
    with pytest.raises(errors.UninitializedRead, match="half\\[64\\]|dynamic shared\\[64\\]"):
        run(dynamic_aliasing, 1, 32, np.zeros(32), shared_bytes=512)
