"""The checks of the kernels readers write (chapters 06, 07, 09): a correct kernel passes on fresh
random inputs; the wrong kernels a class actually writes fail, for the reason the message gives."""

import numpy as np
import pytest
from numba import cuda, float32

from gpulab.checks import mma_fragments, tiling, tree_reduction
from gpulab.kernels import matmul as kmm, reduce as kred, transpose as ktr

TILE = 16
T32 = 32
T33 = 33
ROWS = 8
GROUP = 256

# --------------------------------------------------------------------------- tiled matmul


@cuda.jit
def mm_good(c, a, b):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range((a.shape[1] + TILE - 1) // TILE):
        ka, kb = t * TILE + tx, t * TILE + ty
        sa[ty, tx] = a[row, ka] if row < a.shape[0] and ka < a.shape[1] else 0.0
        sb[ty, tx] = b[kb, col] if kb < b.shape[0] and col < b.shape[1] else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def mm_half_tiled(c, a, b):
    """Only A staged; B read from global memory for every product."""
    sa = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range((a.shape[1] + TILE - 1) // TILE):
        ka = t * TILE + tx
        sa[ty, tx] = a[row, ka] if row < a.shape[0] and ka < a.shape[1] else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            if t * TILE + k < b.shape[0] and col < b.shape[1]:
                acc += sa[ty, k] * b[t * TILE + k, col]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def mm_no_zero_fill(c, a, b):
    """Partial tiles keep the previous tile's values (no else branch)."""
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range((a.shape[1] + TILE - 1) // TILE):
        ka, kb = t * TILE + tx, t * TILE + ty
        if row < a.shape[0] and ka < a.shape[1]:
            sa[ty, tx] = a[row, ka]
        if kb < b.shape[0] and col < b.shape[1]:
            sb[ty, tx] = b[kb, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def mm_off_by_one(c, a, b):
    """Guards with <= instead of <."""
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range((a.shape[1] + TILE - 1) // TILE):
        ka, kb = t * TILE + tx, t * TILE + ty
        sa[ty, tx] = a[row, ka] if row <= a.shape[0] and ka <= a.shape[1] else 0.0
        sb[ty, tx] = b[kb, col] if kb <= b.shape[0] and col <= b.shape[1] else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def mm_hard_coded(c, a, b):
    """Assumes K = 16*2 tiles and no edges (the sizes of the chapter's example)."""
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range(1):
        sa[ty, tx] = a[row, t * TILE + tx]
        sb[ty, tx] = b[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc


HALF = 8


@cuda.jit
def mm_coarse(c, a, b):
    """16 x 8 threads per 16 x 16 tile of C: each thread computes rows ty and ty + 8."""
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc0 = float32(0.0)
    acc1 = float32(0.0)
    for t in range((a.shape[1] + TILE - 1) // TILE):
        k = t * TILE + tx
        for h in range(2):
            r = row + h * HALF
            sa[ty + h * HALF, tx] = a[r, k] if r < a.shape[0] and k < a.shape[1] else 0.0
            kb = t * TILE + ty + h * HALF
            sb[ty + h * HALF, tx] = b[kb, col] if kb < b.shape[0] and col < b.shape[1] else 0.0
        cuda.syncthreads()
        for kk in range(TILE):
            acc0 += sa[ty, kk] * sb[kk, tx]
            acc1 += sa[ty + HALF, kk] * sb[kk, tx]
        cuda.syncthreads()
    if col < c.shape[1]:
        if row < c.shape[0]:
            c[row, col] = acc0
        if row + HALF < c.shape[0]:
            c[row + HALF, col] = acc1


@cuda.jit
def mm_coarse_naive(c, a, b):
    """Two outputs per thread, but straight from global memory."""
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for h in range(2):
        r = row + h * HALF
        if r < c.shape[0] and col < c.shape[1]:
            acc = float32(0.0)
            for k in range(a.shape[1]):
                acc += a[r, k] * b[k, col]
            c[r, col] = acc


def test_tiled_matmul_two_outputs_per_thread():
    res = tiling.check_tiled_matmul(mm_coarse, block=(TILE, HALF))
    assert res, res.message
    res = tiling.check_tiled_matmul(mm_coarse_naive, block=(TILE, HALF))
    assert not res and "global load requests" in res.message
    res = tiling.check_tiled_matmul(kmm.matmul_tiled, block=(TILE, HALF))  # half the rows missing
    assert not res


def test_tiled_matmul_accepts_textbook_and_library_kernel():
    for k in (mm_good, kmm.matmul_tiled):
        res = tiling.check_tiled_matmul(k)
        assert res, res.message
        assert "untiled" in res.message


@pytest.mark.parametrize(
    "kernel, reason",
    [
        (kmm.matmul_naive, "global load requests"),
        (mm_half_tiled, "global load requests"),
        (kmm.matmul_tiled_one_barrier, ""),  # race (or out of bounds on edges)
        (mm_no_zero_fill, "C[|Uninitialised"),  # stale or never-written tile elements
        (mm_off_by_one, "out-of-bounds"),
        (mm_hard_coded, ""),
    ],
)
def test_tiled_matmul_rejects(kernel, reason):
    res = tiling.check_tiled_matmul(kernel)
    assert not res, f"{kernel.py_func.__name__} passed: {res.message}"
    assert any(r in res.message for r in reason.split("|")), res.message


def test_tiled_matmul_missing_second_barrier_is_a_race():
    @cuda.jit
    def no_second_barrier(c, a, b):
        sa = cuda.shared.array((TILE, TILE), float32)
        sb = cuda.shared.array((TILE, TILE), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        acc = float32(0.0)
        for t in range((a.shape[1] + TILE - 1) // TILE):
            ka, kb = t * TILE + tx, t * TILE + ty
            sa[ty, tx] = a[row, ka] if row < a.shape[0] and ka < a.shape[1] else 0.0
            sb[ty, tx] = b[kb, col] if kb < b.shape[0] and col < b.shape[1] else 0.0
            cuda.syncthreads()
            for k in range(TILE):
                acc += sa[ty, k] * sb[k, tx]
        if row < c.shape[0] and col < c.shape[1]:
            c[row, col] = acc

    res = tiling.check_tiled_matmul(no_second_barrier)
    assert not res and "race" in res.message


def test_matmul_load_bound_is_exact_for_the_textbook_kernel():
    import gpulab
    from gpulab import metrics

    m, k, n = 32, 48, 32
    rng = np.random.default_rng()
    rep = gpulab.launch(
        kmm.matmul_tiled,
        kmm.grid_for(m, n),
        (16, 16),
        np.zeros((m, n), np.float32),
        rng.random((m, k), dtype=np.float32),
        rng.random((k, n), dtype=np.float32),
        backend="sim",
    )
    assert rep.metrics[metrics.GLOBAL_REQUESTS["ld"]] == tiling.matmul_load_bound(m, k, n, 16)


# --------------------------------------------------------------------------- padded transpose


@cuda.jit
def tr_swizzled(out, a):
    """Conflict-free without padding: XOR swizzle of the column index."""
    tile = cuda.shared.array((T32, T32), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T32 + tx
    y = cuda.blockIdx.y * T32 + ty
    for j in range(0, T32, ROWS):
        if x < a.shape[1] and y + j < a.shape[0]:
            tile[ty + j, tx ^ (ty + j)] = a[y + j, x]
    cuda.syncthreads()
    xo = cuda.blockIdx.y * T32 + tx
    yo = cuda.blockIdx.x * T32 + ty
    for j in range(0, T32, ROWS):
        if xo < a.shape[0] and yo + j < a.shape[1]:
            out[yo + j, xo] = tile[tx, (ty + j) ^ tx]


@cuda.jit
def tr_transposed_store(out, a):
    """The column access moved to the store side, unpadded: a 32-way conflict on stores."""
    tile = cuda.shared.array((T32, T32), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T32 + tx
    y = cuda.blockIdx.y * T32 + ty
    for j in range(0, T32, ROWS):
        if x < a.shape[1] and y + j < a.shape[0]:
            tile[tx, ty + j] = a[y + j, x]
    cuda.syncthreads()
    xo = cuda.blockIdx.y * T32 + tx
    yo = cuda.blockIdx.x * T32 + ty
    for j in range(0, T32, ROWS):
        if xo < a.shape[0] and yo + j < a.shape[1]:
            out[yo + j, xo] = tile[ty + j, tx]


@cuda.jit
def tr_square_only(out, a):
    """Padded, but guards with the wrong dimension (works only for square matrices)."""
    tile = cuda.shared.array((T32, T33), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T32 + tx
    y = cuda.blockIdx.y * T32 + ty
    for j in range(0, T32, ROWS):
        if x < a.shape[1] and y + j < a.shape[0]:
            tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    xo = cuda.blockIdx.y * T32 + tx
    yo = cuda.blockIdx.x * T32 + ty
    for j in range(0, T32, ROWS):
        if xo < a.shape[1] and yo + j < a.shape[0]:
            out[yo + j, xo] = tile[tx, ty + j]


def test_transpose_accepts_padded_and_swizzled():
    for k in (ktr.transpose_padded, tr_swizzled):
        res = tiling.check_padded_transpose(k)
        assert res, res.message


@pytest.mark.parametrize(
    "kernel, reason",
    [
        (ktr.transpose_naive, "sectors per global store"),
        (ktr.transpose_shared, "bank conflicts on loads"),
        (tr_transposed_store, "bank conflicts on stores"),
        (tr_square_only, ""),
    ],
)
def test_transpose_rejects(kernel, reason):
    res = tiling.check_padded_transpose(kernel)
    assert not res, f"{kernel.py_func.__name__} passed: {res.message}"
    assert reason in res.message


# --------------------------------------------------------------------------- tree reduction


@cuda.jit
def red_good(partial, values):
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def red_add_on_load(partial, values):
    """Each thread adds two values while loading (half the threads have work in round one)."""
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    half = cuda.blockDim.x // 2
    v = float32(0.0)
    if t < half:
        if i < values.shape[0]:
            v += values[i]
        if i + half < values.shape[0]:
            v += values[i + half]
    s[t] = v
    cuda.syncthreads()
    stride = half // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0] + s[1] * 0.0


@cuda.jit
def red_no_barrier(partial, values):
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = GROUP // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def red_two_barriers(partial, values):
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = GROUP // 2
    while stride > 0:
        v = float32(0.0)
        if t < stride:
            v = s[t] + s[t + stride]
        cuda.syncthreads()
        if t < stride:
            s[t] = v
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def red_serial(partial, values):
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    if t == 0:
        acc = float32(0.0)
        for k in range(GROUP):
            acc += s[k]
        partial[cuda.blockIdx.x] = acc


@cuda.jit
def red_atomic(partial, values):
    s = cuda.shared.array(1, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t == 0:
        s[0] = 0.0
    cuda.syncthreads()
    if i < values.shape[0]:
        cuda.atomic.add(s, 0, values[i])
    cuda.syncthreads()
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def red_unguarded(partial, values):
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i]
    cuda.syncthreads()
    stride = GROUP // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def red_no_zero_fill(partial, values):
    """Threads past the end store nothing, so the tree reads whatever shared memory held."""
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < values.shape[0]:
        s[t] = values[i]
    cuda.syncthreads()
    stride = GROUP // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def red_whole_array(partial, values):
    """Hard-codes one block: every block sums from index 0."""
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    s[t] = values[t] if t < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = GROUP // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def red_two_per_thread(partial, values):
    """Each block of 256 threads sums 512 values: two added per thread while loading."""
    s = cuda.shared.array(GROUP, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 2 * GROUP + t
    v = float32(0.0)
    if i < values.shape[0]:
        v = values[i]
    if i + GROUP < values.shape[0]:
        v += values[i + GROUP]
    s[t] = v
    cuda.syncthreads()
    stride = GROUP // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


def test_tree_reduce_two_values_per_thread():
    res = tree_reduction.check_tree_reduce(red_two_per_thread, items_per_thread=2)
    assert res, res.message
    res = tree_reduction.check_tree_reduce(red_good, items_per_thread=2)  # sums only half
    assert not res and "partial[" in res.message
    res = tree_reduction.check_tree_reduce(red_two_per_thread)  # sums two segments
    assert not res


def test_tree_reduce_accepts_textbook_variants():
    for k in (red_good, red_add_on_load, kred.reduce_sum):
        res = tree_reduction.check_tree_reduce(k)
        assert res, res.message
    assert tree_reduction.check_tree_reduce(red_good, block=64)


@pytest.mark.parametrize(
    "kernel, reason",
    [
        (red_no_barrier, "race"),
        (kred.reduce_sum_barrier_in_if, "stopped"),
        (red_two_barriers, "syncthreads per block"),
        (red_serial, "loads per block"),
        (red_atomic, "atomic"),
        (red_unguarded, "out-of-bounds"),
        (red_whole_array, "partial["),
        (red_no_zero_fill, "partial[|Uninitialised"),
    ],
)
def test_tree_reduce_rejects(kernel, reason):
    res = tree_reduction.check_tree_reduce(kernel)
    assert not res, f"{kernel.py_func.__name__} passed: {res.message}"
    assert any(r in res.message for r in reason.split("|")), res.message


def test_tree_bounds_match_the_textbook_kernel():
    import gpulab
    from gpulab import metrics

    rep = gpulab.launch(
        kred.reduce_sum, 4, GROUP, np.zeros(4, np.float32), np.ones(4 * GROUP, np.float32), backend="sim"
    )
    assert rep.barriers == tree_reduction.tree_barriers(GROUP) == 9
    loads = rep.metrics[metrics.GLOBAL_REQUESTS["ld"]] + rep.metrics[metrics.SHARED_INSTRUCTIONS["ld"]]
    assert loads / 4 <= tree_reduction.tree_load_bound(GROUP) < GROUP


# --------------------------------------------------------------------------- mma fragments


@cuda.jit
def frag_a_good(frag, m):
    lane = cuda.threadIdx.x
    g, t = lane // 4, lane % 4
    r0, c0 = cuda.blockIdx.y * 16, cuda.blockIdx.x * 16
    for i in range(8):
        row = g + 8 * ((i // 2) % 2)
        col = 2 * t + i % 2 + 8 * (i // 4)
        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = m[r0 + row, c0 + col]


@cuda.jit
def frag_a_swapped(frag, m):
    lane = cuda.threadIdx.x
    g, t = lane // 4, lane % 4
    r0, c0 = cuda.blockIdx.y * 16, cuda.blockIdx.x * 16
    for i in range(8):
        row = g + 8 * ((i // 2) % 2)
        col = 2 * t + i % 2 + 8 * (i // 4)
        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = m[r0 + col, c0 + row]


@cuda.jit
def frag_a_halves_swapped(frag, m):
    """a2,a3 and a4,a5 exchanged (rows +8 and cols +8 mixed up)."""
    lane = cuda.threadIdx.x
    g, t = lane // 4, lane % 4
    r0, c0 = cuda.blockIdx.y * 16, cuda.blockIdx.x * 16
    for i in range(8):
        row = g + 8 * (i // 4)
        col = 2 * t + i % 2 + 8 * ((i // 2) % 2)
        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = m[r0 + row, c0 + col]


@cuda.jit
def frag_a_one_tile(frag, m):
    """Ignores blockIdx: every block loads tile (0, 0)."""
    lane = cuda.threadIdx.x
    g, t = lane // 4, lane % 4
    for i in range(8):
        row = g + 8 * ((i // 2) % 2)
        col = 2 * t + i % 2 + 8 * (i // 4)
        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = m[row, col]


@cuda.jit
def frag_a_lane0(frag, m):
    """Lane 0 copies the whole warp's fragments."""
    if cuda.threadIdx.x == 0:
        r0, c0 = cuda.blockIdx.y * 16, cuda.blockIdx.x * 16
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for i in range(8):
                row = g + 8 * ((i // 2) % 2)
                col = 2 * t + i % 2 + 8 * (i // 4)
                frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = m[r0 + row, c0 + col]


@cuda.jit
def frag_c_good(frag, m):
    lane = cuda.threadIdx.x
    r0, c0 = cuda.blockIdx.y * 16, cuda.blockIdx.x * 8
    for i in range(4):
        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = m[
            r0 + lane // 4 + 8 * (i // 2), c0 + 2 * (lane % 4) + i % 2
        ]


@cuda.jit
def frag_b_good(frag, m):
    lane = cuda.threadIdx.x
    r0, c0 = cuda.blockIdx.y * 16, cuda.blockIdx.x * 8
    for i in range(4):
        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = m[
            r0 + 2 * (lane % 4) + i % 2 + 8 * (i // 2), c0 + lane // 4
        ]


def test_fragment_load_accepts_correct_kernels():
    for op, k in (("A", frag_a_good), ("B", frag_b_good), ("C", frag_c_good)):
        res = mma_fragments.check_fragment_load(k, op)
        assert res, res.message


@pytest.mark.parametrize(
    "kernel, op, reason",
    [
        (frag_a_swapped, "A", ""),  # out of bounds on non-square tiles or "swapped"
        (frag_a_halves_swapped, "A", "PTX layout puts"),
        (frag_a_one_tile, "A", "tile ("),
        (frag_a_lane0, "A", "requests per warp"),
        (frag_c_good, "A", ""),  # the C layout is not A's
        (frag_b_good, "C", ""),  # B's layout transposed is not C's
    ],
)
def test_fragment_load_rejects(kernel, op, reason):
    res = mma_fragments.check_fragment_load(kernel, op)
    assert not res, f"{kernel.py_func.__name__} passed: {res.message}"
    assert reason in res.message


def test_fragment_swap_is_named():
    res = mma_fragments.check_fragment_load(frag_a_swapped, "A")
    assert "swapped" in res.message or "out-of-bounds" in res.message


def test_fragments_feed_mma():
    """What the reference builds is what the emulated mma.sync needs: D = A B + C."""
    from gpulab.models import mma

    rng = np.random.default_rng()
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    fa = mma_fragments.fragment_reference(a, "A")[0, 0]
    fb = mma_fragments.fragment_reference(b, "B")[0, 0]
    d = mma.store_fragments(mma.mma_sync_m16n8k16(fa, fb, np.zeros((32, 4), np.float32)), "D")
    assert np.allclose(d, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
