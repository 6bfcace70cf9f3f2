"""The book's kernels (gpulab.kernels) on gpulab's simulator: right answers and the counts the
chapters quote (sectors per request, wavefronts, global loads), against numpy references."""

import numpy as np
import pytest

import gpulab
from gpulab import images, metrics
from gpulab.checks import memory as ch05, shared as ch06, patterns as ch07
from gpulab.errors import BarrierDivergence, OutOfBounds
from gpulab.kernels import histogram, image, matmul, memory, reduce, transpose

from numba import cuda, float32

RNG = np.random.default_rng(42)
W33 = 33


@cuda.jit
def row_sums_padded(out, a):
    """The chapter 06 exercise's solution: one column of padding."""
    tile = cuda.shared.array((32, W33), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * 32
    if row0 + ty < a.shape[0]:
        tile[ty, tx] = a[row0 + ty, tx]
    else:
        tile[ty, tx] = 0.0
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(32):
            s += tile[tx, k]
        if row0 + tx < a.shape[0]:
            out[row0 + tx] = s


@cuda.jit
def row_sums_no_shared(out, a):
    """Right answer without shared memory: the check must refuse it (the task keeps the tile)."""
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r = cuda.blockIdx.x * 32 + tx
    if ty == 0 and r < a.shape[0]:
        s = float32(0.0)
        for k in range(32):
            s += a[r, k]
        out[r] = s


LD_REQ, LD_SEC = metrics.GLOBAL_REQUESTS["ld"], metrics.GLOBAL_SECTORS["ld"]


def run(kernel, grid, block, *args):
    return gpulab.launch(kernel, grid, block, *args, backend="sim")


@pytest.mark.parametrize("stride,spr", [(1, 4), (2, 8), (4, 16), (8, 32), (16, 32)])
def test_strided_copy(stride, spr):
    n = 512
    a = RNG.random(n * stride, dtype=np.float32)
    out = np.zeros(n, np.float32)
    rep = run(memory.copy_strided, n // 128, 128, out, a, stride)
    assert np.array_equal(out, a[::stride])
    assert rep.sectors_per_request("ld") == spr
    assert rep.sectors_per_request("st") == 4


@pytest.mark.parametrize("offset,spr", [(0, 4), (1, 5), (7, 5), (8, 4)])
def test_offset_copy(offset, spr):
    n = 512
    a = RNG.random(n + 32, dtype=np.float32)
    out = np.zeros(n, np.float32)
    rep = run(memory.copy_offset, n // 128, 128, out, a, offset)
    assert np.array_equal(out, a[offset : offset + n])
    assert rep.sectors_per_request("ld") == spr


def test_gather_random_and_constant_memory():
    n = 256
    a = RNG.random(1 << 20, dtype=np.float32)
    idx = RNG.integers(0, a.size, n)
    out = np.zeros(n, np.float32)
    rep = run(memory.gather, 2, 128, out, a, idx)
    assert np.array_equal(out, a[idx])
    # idx itself is 8-byte and coalesced (8 sectors); the gathered loads touch ~32 sectors
    loads = {acc["array"]: acc["sectors"] for acc in rep.accesses if acc["op"] == "ld"}
    assert loads["idx"] == 8 and loads["a"] >= 30
    x = RNG.random(n, dtype=np.float32)
    c = memory.POLY
    want = ((c[3] * x + c[2]) * x + c[1]) * x + c[0]
    rep_c = run(memory.poly_const, 2, 128, out, x)
    assert np.allclose(out, want)
    rep_g = run(memory.poly_global, 2, 128, out, x, c.copy())
    assert np.allclose(out, want)
    # same arithmetic; the global version adds 4 one-sector loads per warp for the coefficients
    assert rep_g.metrics[LD_REQ] == 5 * rep_c.metrics[LD_REQ]


def test_scale_orders_and_ch05_check():
    a = RNG.random((64, 64), dtype=np.float32)
    out = np.zeros_like(a)
    rep = run(memory.scale_rows_wrong_order, (2, 8), (32, 8), out, a, np.float32(2))
    assert np.allclose(out, 2 * a) and rep.sectors_per_request("ld") == 32
    rep = run(memory.scale_rows, (2, 8), (32, 8), out, a, np.float32(2))
    assert np.allclose(out, 2 * a) and rep.sectors_per_request("ld") == 4
    assert not ch05.check_scale(memory.scale_rows_wrong_order)
    assert ch05.check_scale(memory.scale_rows)


@pytest.mark.parametrize("shape", [(64, 64), (40, 70)])
def test_transposes(shape):
    a = RNG.random(shape, dtype=np.float32)
    reps = {}
    for k in (transpose.transpose_naive, transpose.transpose_shared, transpose.transpose_padded):
        out = np.zeros(shape[::-1], np.float32)
        reps[k.py_func.__name__] = run(k, transpose.grid_for(shape), (32, 8), out, a)
        assert np.array_equal(out, a.T)
    if shape == (64, 64):
        assert reps["transpose_naive"].sectors_per_request("st") == 32
        assert reps["transpose_shared"].sectors_per_request("st") == 4
        assert reps["transpose_shared"].wavefronts_per_instruction("ld") == 32
        assert reps["transpose_padded"].wavefronts_per_instruction("ld") == 1
        assert reps["transpose_padded"].bank_conflicts() == 0


def test_row_sums_conflicts_and_ch06_check():
    a = RNG.random((64, 32), dtype=np.float32)
    out = np.zeros(64, np.float32)
    rep = run(transpose.row_sums_shared, (2,), (32, 32), out, a)
    assert np.allclose(out, a.sum(axis=1), rtol=1e-5)
    assert rep.wavefronts_per_instruction("ld") == 32
    assert not ch06.check_row_sums(transpose.row_sums_shared)
    assert ch06.check_row_sums(row_sums_padded)
    assert not ch06.check_row_sums(row_sums_no_shared)


def test_matmul_naive_vs_tiled_loads():
    a = RNG.random((64, 48), dtype=np.float32)
    b = RNG.random((48, 64), dtype=np.float32)
    c = np.zeros((64, 64), np.float32)
    naive = run(matmul.matmul_naive, matmul.grid_for(64, 64), (16, 16), c, a, b)
    assert np.allclose(c, a @ b, rtol=1e-4)
    c[:] = 0
    tiled = run(matmul.matmul_tiled, matmul.grid_for(64, 64), (16, 16), c, a, b)
    assert np.allclose(c, a @ b, rtol=1e-4)
    # every thread loads 2K values naively; a tile is loaded once per TILE threads' worth
    assert naive.metrics[LD_REQ] == 64 * 64 // 32 * 2 * 48
    assert naive.metrics[LD_REQ] == matmul.TILE * tiled.metrics[LD_REQ]
    assert tiled.bank_conflicts() == 0


def test_matmul_ragged_sizes():
    a = RNG.random((20, 35), dtype=np.float32)
    b = RNG.random((35, 18), dtype=np.float32)
    for k in (matmul.matmul_naive, matmul.matmul_tiled):
        c = np.zeros((20, 18), np.float32)
        run(k, matmul.grid_for(20, 18), (16, 16), c, a, b)
        assert np.allclose(c, a @ b, rtol=1e-4)


def test_invert_guard_and_ch07_check():
    img = images.test_image(47, 61)
    out = np.zeros_like(img)
    run(image.invert_contrast, image.dispatch(61, 47), (8, 8), out, img, np.float32(1.5))
    assert np.allclose(out, ch07.invert_reference(img, np.float32(1.5)), atol=1e-6)
    with pytest.raises(OutOfBounds):
        run(image.invert_contrast_unguarded, image.dispatch(61, 47), (8, 8), out, img, np.float32(1.5))
    assert ch07.check_invert(image.invert_contrast, image.dispatch)
    assert not ch07.check_invert(image.invert_contrast_unguarded, image.dispatch)
    assert not ch07.check_invert(image.invert_contrast, lambda w, h: (w // 8, h // 8))


def test_blur_naive_and_tiled():
    g = images.grey(images.test_image(48, 64))
    want = images.box_blur_reference(g, image.R)
    o1, o2 = np.zeros_like(g), np.zeros_like(g)
    grid = image.dispatch(64, 48, image.TILE)
    naive = run(image.blur_naive, grid, (16, 16), o1, g)
    tiled = run(image.blur_tiled, grid, (16, 16), o2, g)
    assert np.allclose(o1, want, atol=1e-5) and np.allclose(o2, want, atol=1e-5)
    warps = grid[0] * grid[1] * 8
    assert naive.metrics[LD_REQ] == warps * 81
    assert tiled.metrics[LD_REQ] < naive.metrics[LD_REQ] / 20


def test_reduction_and_barrier_bug():
    v = RNG.random(3000, dtype=np.float32)
    part = np.zeros(12, np.float32)
    run(reduce.reduce_sum, 12, reduce.GROUP, part, v)
    assert np.isclose(part.sum(), v.sum(), rtol=1e-5)
    with pytest.raises(BarrierDivergence):
        run(reduce.reduce_sum_barrier_in_if, 12, reduce.GROUP, part, v)


def test_blur_bank_conflicts_and_rows_variant():
    g = images.grey(images.test_image(64, 64))
    want = images.box_blur_reference(g, image.R)
    o = np.zeros_like(g)
    sq = run(image.blur_tiled, image.dispatch(64, 64, image.TILE), (16, 16), o, g)
    assert sq.wavefronts_per_instruction("ld") == 2  # two tile rows 24 words apart per warp
    o[:] = 0
    rows = run(image.blur_tiled_rows, (2, 8), (image.ROWS_X, image.ROWS_Y), o, g)
    assert np.allclose(o, want, atol=1e-5)
    assert rows.wavefronts_per_instruction("ld") == 1 and rows.bank_conflicts() == 0


def test_blur_ragged_image():
    g = images.grey(images.test_image(21, 37))
    o = np.zeros_like(g)
    run(image.blur_tiled, image.dispatch(37, 21, image.TILE), (16, 16), o, g)
    assert np.allclose(o, images.box_blur_reference(g, image.R), atol=1e-5)
    o[:] = 0
    run(image.blur_tiled_rows, (2, 3), (image.ROWS_X, image.ROWS_Y), o, g)
    assert np.allclose(o, images.box_blur_reference(g, image.R), atol=1e-5)


def test_histograms():
    d = RNG.integers(0, 256, 5000).astype(np.uint8)
    for k in (histogram.histogram_global, histogram.histogram_shared):
        h = np.zeros(256, np.int32)
        run(k, 4, histogram.BLOCK, h, d)
        assert np.array_equal(h, np.bincount(d, minlength=256))


def test_wide_padded_transpose_is_correct_and_conflict_free():
    import gpulab
    from gpulab.kernels import transpose as T

    for shape in ((128, 64), (100, 70)):  # whole tiles, and ragged edges
        a = np.random.default_rng(1).random(shape, dtype=np.float32)
        out = np.zeros(shape[::-1], np.float32)
        rep = gpulab.launch(
            T.transpose_padded_wide, T.grid_for_wide(shape), (T.TILE_WIDE, T.ROWS_WIDE), out, a, backend="sim"
        )
        assert np.array_equal(out, a.T)
        assert rep.bank_conflicts() == 0
        assert rep.sectors_per_request("ld") == 4 or shape == (100, 70)


def test_report_counts_atomics_per_memory_space():
    """4096 samples: one global atomic each, or one shared atomic each plus one global per
    non-empty bin per block (what chapter 07 prints)."""
    import gpulab

    data = (np.arange(4096) % 256).astype(np.uint8)
    reps = {}
    for k in (histogram.histogram_global, histogram.histogram_shared):
        h = np.zeros(histogram.BINS, np.int32)
        reps[k] = gpulab.launch(k, 4, histogram.BLOCK, h, data, backend="sim")
    assert reps[histogram.histogram_global].atomics == {"global": 4096}
    # every block sees all 256 values (4096 / 4 blocks, cycling through 0..255)
    assert reps[histogram.histogram_shared].atomics == {"shared": 4096, "global": 4 * 256}
