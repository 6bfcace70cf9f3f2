"""Kernels the simulator was not written against, in the style of a course, its students and the
numba-cuda docs: each result is checked against a numpy reference computed here (and, where the
kernel uses nothing Numba's simulator lacks, against Numba's simulator too)."""

import math

import numpy as np
import pytest
from numba import complex64, cuda, float32, float64, int32, uint32, uint64
from numba.cuda.random import (
    init_xoroshiro128p_states_cpu,
    xoroshiro128p_dtype,
    xoroshiro128p_uniform_float32,
)

import gpulab
from gpulab import errors, metrics


def _int32(bits):
    """Lane bits as the signed int32 numba returns for ballot_sync and match_any_sync (an H200
    gives the same: tests/test_sim_bits_vs_h200.py)."""
    return bits - (1 << 32) if bits >= 1 << 31 else bits


def sim(kernel, grid, block, *args, **kw):
    return gpulab.launch(kernel, grid, block, *args, backend="sim", **kw)


def both(kernel, grid, block, *arrays, **kw):
    """Run on gpulab's simulator and on Numba's, each on its own copy; return both outputs."""
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    gpulab.launch(kernel, grid, block, *a1, backend="sim", **kw)
    gpulab.launch(kernel, grid, block, *a2, backend="numba-sim", **kw)
    return a1, a2


# ---------------------------------------------------------------- indexing: 1-D, 2-D, 3-D


@cuda.jit
def add2d(out, a, b):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] + 2 * b[i, j]


def test_grid2_bounds_checked_add():
    a = np.arange(20 * 13, dtype=np.float32).reshape(20, 13)
    b = np.ones_like(a)
    s, r = both(add2d, (3, 2), (8, 8), np.zeros_like(a), a, b)
    assert np.array_equal(s[0], a + 2 * b) and np.array_equal(r[0], s[0])


@cuda.jit
def linear3d(out):
    x, y, z = cuda.grid(3)
    nx, ny, nz = cuda.gridsize(3)
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        out[x, y, z] = x + nx * (y + ny * z)


def test_grid3_and_gridsize3():
    out = np.full((7, 4, 5), -1, np.int64)
    sim(linear3d, (2, 1, 3), (4, 4, 2), out)
    nx, ny = 8, 4
    x, y, z = np.indices(out.shape)
    assert np.array_equal(out, x + nx * (y + ny * z))


@cuda.jit
def manual_index(out):
    tid = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    bid = cuda.blockIdx.x + cuda.blockIdx.y * cuda.gridDim.x
    nthreads = cuda.blockDim.x * cuda.blockDim.y
    g = bid * nthreads + tid
    if g < out.size:
        out[g] = g * 10 + cuda.gridDim.x * cuda.gridDim.y


def test_block_and_grid_dim_arithmetic():
    out = np.zeros(90, np.int32)
    sim(manual_index, (2, 3), (4, 4), out)
    assert np.array_equal(out, np.arange(90) * 10 + 6)


@cuda.jit
def saxpy_stride(out, x, y, alpha):
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for i in range(start, x.shape[0], step):
        out[i] = alpha * x[i] + y[i]


def test_grid_stride_loop_covers_more_than_the_grid():
    x = np.linspace(0, 1, 1000).astype(np.float32)
    y = np.arange(1000, dtype=np.float32)
    s, r = both(saxpy_stride, 2, 32, np.zeros_like(x), x, y, np.float32(3.0))
    assert np.allclose(s[0], 3 * x + y) and np.array_equal(s[0], r[0])


@cuda.jit
def scale2d_stride(a, f):
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for i in range(x0, a.shape[0], sx):
        for j in range(y0, a.shape[1], sy):
            a[i, j] *= f


def test_grid_stride_loop_2d():
    a = np.arange(50 * 30, dtype=np.float64).reshape(50, 30)
    want = a * 1.5
    sim(scale2d_stride, (2, 2), (8, 4), a, 1.5)
    assert np.array_equal(a, want)


@cuda.jit
def block_stride_sum(out, a):
    # one block sums a row with a block-stride loop, then thread 0 adds the partials
    partial = cuda.shared.array(64, float64)
    row = cuda.blockIdx.x
    acc = 0.0
    for j in range(cuda.threadIdx.x, a.shape[1], cuda.blockDim.x):
        acc += a[row, j]
    partial[cuda.threadIdx.x] = acc
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        total = 0.0
        for t in range(cuda.blockDim.x):
            total += partial[t]
        out[row] = total


def test_block_stride_loop_row_sums():
    a = np.random.default_rng(1).random((5, 300))
    out = np.zeros(5)
    sim(block_stride_sum, 5, 64, out, a)
    assert np.allclose(out, a.sum(axis=1))


# ---------------------------------------------------------------- device functions


@cuda.jit(device=True)
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@cuda.jit(device=True)
def minmax_pair(a, b):
    if a < b:
        return a, b
    return b, a


@cuda.jit(device=True)
def store_twice(out, i, v):
    out[i] = 2 * v


@cuda.jit(device=True)
def sq(x):
    return x * x


@cuda.jit(device=True)
def norm2(x, y):
    return math.sqrt(sq(x) + sq(y))


@cuda.jit
def device_calls(out, lo_hi, a, b):
    i = cuda.grid(1)
    if i >= a.shape[0]:
        return
    lo, hi = minmax_pair(a[i], b[i])
    lo_hi[i, 0] = lo
    lo_hi[i, 1] = hi
    store_twice(out, i, clamp(a[i], -1.0, 1.0) + norm2(a[i], b[i]))


def test_device_functions_with_and_without_results_and_tuples():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=45), rng.normal(size=45)
    out, lh = np.zeros(45), np.zeros((45, 2))
    s, r = both(device_calls, 2, 32, out, lh, a, b)
    assert np.allclose(s[0], 2 * (np.clip(a, -1, 1) + np.hypot(a, b)))
    assert np.array_equal(s[1], np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1))
    assert np.allclose(s[0], r[0]) and np.array_equal(s[1], r[1])


@cuda.jit(device=True)
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


@cuda.jit
def recursive(out):
    out[0] = fact(5)


def test_recursion_is_rejected_with_a_clear_message():
    with pytest.raises(errors.GpulabError) as info:
        sim(recursive, 1, 1, np.zeros(1, np.int64))
    assert "recurs" in str(info.value).lower()


# ---------------------------------------------------------------- local, shared, const memory


@cuda.jit
def sort_local(out, a):
    i = cuda.grid(1)
    if i >= a.shape[0]:
        return
    buf = cuda.local.array(6, int32)
    for k in range(6):
        buf[k] = (a[i] * (k + 3)) % 7
    for p in range(6):
        for q in range(5 - p):
            if buf[q] > buf[q + 1]:
                t = buf[q]
                buf[q] = buf[q + 1]
                buf[q + 1] = t
    for k in range(6):
        out[i, k] = buf[k]


def test_local_array_bubble_sort():
    a = np.arange(40, dtype=np.int32)
    out = np.zeros((40, 6), np.int32)
    sim(sort_local, 2, 32, out, a)
    want = np.sort((a[:, None] * (np.arange(6) + 3)) % 7, axis=1)
    assert np.array_equal(out, want)


TILE = 32
TILE_PAD = TILE + 1  # numba needs the shape as constants: a global, not TILE + 1 in the call


@cuda.jit
def transpose_padded(out, a):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile[ty, tx] = a[cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx]
    cuda.syncthreads()
    out[cuda.blockIdx.x * TILE + ty, cuda.blockIdx.y * TILE + tx] = tile[tx, ty]


@cuda.jit
def transpose_unpadded(out, a):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile[ty, tx] = a[cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx]
    cuda.syncthreads()
    out[cuda.blockIdx.x * TILE + ty, cuda.blockIdx.y * TILE + tx] = tile[tx, ty]


def test_2d_shared_tile_transpose_counts_by_hand():
    a = np.arange(64 * 96, dtype=np.float32).reshape(64, 96)
    warps = 6 * 32  # 3 x 2 blocks of 32 x 32 threads, one warp per tile row
    for kernel, read_wavefronts in ((transpose_padded, 1), (transpose_unpadded, 32)):
        out = np.zeros((96, 64), np.float32)
        rep = sim(kernel, (3, 2), (TILE, TILE), out, a)
        assert np.array_equal(out, a.T)
        m = rep.metrics
        # a warp's row store tile[ty, 0..31]: 32 consecutive words, one per bank: one wavefront;
        # its column read tile[0..31, ty]: words 33*tx + ty (padded) fall in 32 distinct banks,
        # words 32*tx + ty (unpadded) all in bank ty: 32 wavefronts, 31 of them conflicts
        assert m[metrics.SHARED_WAVEFRONTS["st"]] == warps
        assert m[metrics.SHARED_WAVEFRONTS["ld"]] == warps * read_wavefronts
        assert m[metrics.SHARED_BANK_CONFLICTS["ld"]] == warps * (read_wavefronts - 1)
        assert m[metrics.SHARED_BANK_CONFLICTS["st"]] == 0
        # global: each warp reads and writes 32 consecutive float32 = 128 bytes = 4 sectors
        assert m[metrics.GLOBAL_REQUESTS["ld"]] == m[metrics.GLOBAL_REQUESTS["st"]] == warps
        assert m[metrics.GLOBAL_SECTORS["ld"]] == m[metrics.GLOBAL_SECTORS["st"]] == 4 * warps
        assert rep.warp_efficiency == 1.0


def test_constant_expression_in_a_shared_shape_is_refused_with_the_fix():
    @cuda.jit
    def bad(out):
        tile = cuda.shared.array((TILE, TILE + 1), float32)
        tile[0, 0] = 1.0
        out[0] = tile[0, 0]

    with pytest.raises(errors.GpulabError) as info:
        sim(bad, 1, 1, np.zeros(1, np.float32))
    assert "TILE + 1" in str(info.value) and "TILE_PAD = TILE + 1" in str(info.value)


@cuda.jit
def reverse_dynamic(a):
    buf = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    base = cuda.blockIdx.x * n
    buf[t] = a[base + t]
    cuda.syncthreads()
    a[base + t] = buf[n - 1 - t]


def test_dynamic_shared_memory_sized_at_launch():
    a = np.arange(96, dtype=np.float32)
    want = a.reshape(3, 32)[:, ::-1].ravel()
    s, r = both(reverse_dynamic, 3, 32, a, shared_bytes=32 * 4)
    assert np.array_equal(s[0], want) and np.array_equal(r[0], want)


@cuda.jit
def dynamic_too_small(a):
    buf = cuda.shared.array(0, dtype=float32)
    buf[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    a[cuda.threadIdx.x] = buf[cuda.threadIdx.x]


def test_dynamic_shared_memory_overrun_is_reported():
    with pytest.raises(errors.GpulabError) as info:
        sim(dynamic_too_small, 1, 32, np.zeros(32, np.float32), shared_bytes=16 * 4)
    assert "buf" in str(info.value) or "shared" in str(info.value)


WEIGHTS = np.array([0.25, 0.5, 0.25], dtype=np.float32)


@cuda.jit
def blur_const(out, a):
    w = cuda.const.array_like(WEIGHTS)
    i = cuda.grid(1)
    if 1 <= i < a.shape[0] - 1:
        out[i] = w[0] * a[i - 1] + w[1] * a[i] + w[2] * a[i + 1]
    elif i == 0 or i == a.shape[0] - 1:
        out[i] = a[i]


def test_const_array_like_stencil():
    a = np.random.default_rng(3).random(70).astype(np.float32)
    s, r = both(blur_const, 3, 32, np.zeros_like(a), a)
    want = a.copy()
    want[1:-1] = 0.25 * a[:-2] + 0.5 * a[1:-1] + 0.25 * a[2:]
    assert np.allclose(s[0], want) and np.array_equal(s[0], r[0])


# ---------------------------------------------------------------- control flow


@cuda.jit
def collatz(steps, start, cap):
    i = cuda.grid(1)
    if i >= start.shape[0]:
        return
    n = start[i]
    k = 0
    while n != 1:
        if k >= cap:
            k = -1
            break
        if n % 2 == 0:
            n //= 2
            k += 1
            continue
        n = 3 * n + 1
        k += 1
    steps[i] = k


def _collatz(n, cap):
    k = 0
    while n != 1:
        if k >= cap:
            return -1
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return k


def test_while_with_break_and_continue_diverges_per_lane():
    start = np.arange(1, 65, dtype=np.int64)
    out = np.zeros(64, np.int64)
    rep = sim(collatz, 2, 32, out, start, 50)
    assert out.tolist() == [_collatz(int(n), 50) for n in start]
    assert rep.warp_efficiency < 1.0


@cuda.jit
def classify(out, a):
    i = cuda.grid(1)
    if i >= a.shape[0]:
        return
    v = a[i]
    if v < 0:
        if v < -10:
            out[i] = -2
            return
        out[i] = -1
        return
    elif v == 0:
        out[i] = 0
    else:
        if v % 2 == 0:
            out[i] = 2 if v > 10 else 1
            return
        out[i] = 3
    out[i] += 100


def test_nested_ifs_with_early_returns():
    a = np.arange(-20, 25, dtype=np.int32)
    out = np.zeros_like(a)
    s, r = both(classify, 2, 32, out, a)
    want = np.where(
        a < -10,
        -2,
        np.where(a < 0, -1, np.where(a == 0, 100, np.where(a % 2 == 0, np.where(a > 10, 2, 1), 103))),
    )
    assert np.array_equal(s[0], want) and np.array_equal(r[0], want)


@cuda.jit
def for_else(out, a, target):
    i = cuda.grid(1)
    if i < a.shape[0]:
        found = -1
        for k in range(a.shape[1]):
            if a[i, k] == target:
                found = k
                break
        else:
            found = 99
        out[i] = found


def test_for_else_and_break():
    a = np.arange(40, dtype=np.int64).reshape(8, 5) % 7
    out = np.zeros(8, np.int64)
    sim(for_else, 1, 32, out, a, 3)
    want = [int(np.argmax(r == 3)) if (r == 3).any() else 99 for r in a]
    assert out.tolist() == want


@cuda.jit
def countdown(out):
    i = cuda.grid(1)
    s = 0
    for k in range(i, -1, -3):
        s += k
    out[i] = s


def test_range_with_negative_step():
    out = np.zeros(40, np.int64)
    sim(countdown, 2, 20, out)
    assert out.tolist() == [sum(range(i, -1, -3)) for i in range(40)]


# ---------------------------------------------------------------- integer and float arithmetic


@cuda.jit
def divmod_signed(q, r, q32, r32, a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        x = int32(a[i])
        y = int32(b[i])
        q32[i] = x // y
        r32[i] = x % y


def test_floor_division_and_modulo_of_negatives_follow_python():
    a = np.array([7, -7, 7, -7, 0, -1, 13, -13, 5, -5], np.int64)
    b = np.array([2, 2, -2, -2, 3, 4, -5, 5, 5, -5], np.int64)
    q, r, q32, r32 = (
        np.zeros(10, np.int64),
        np.zeros(10, np.int64),
        np.zeros(10, np.int32),
        np.zeros(10, np.int32),
    )
    s, ref = both(divmod_signed, 1, 32, q, r, q32, r32, a, b)
    assert np.array_equal(s[0], a // b) and np.array_equal(s[1], a % b)
    assert np.array_equal(s[2], a // b) and np.array_equal(s[3], a % b)
    for x, y in zip(s, ref):
        assert np.array_equal(x, y)


@cuda.jit
def hash_u32(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        h = uint32(a[i])
        h ^= h >> uint32(16)
        h *= uint32(0x45D9F3B)
        h ^= h >> uint32(16)
        out[i] = h


def test_uint32_hash_computes_at_64_bits_as_numba_types_it():
    """numba types uint32 >> uint32 as uint64, so `h` is 64-bit after the first line and the
    multiply does not wrap at 32 bits: the high bits come back down with the second shift."""
    a = np.arange(100, 164, dtype=np.uint32)
    out = np.zeros(64, np.uint32)
    sim(hash_u32, 2, 32, out, a)
    h = a.astype(np.uint64)
    h ^= h >> np.uint64(16)
    h *= np.uint64(0x45D9F3B)
    h ^= h >> np.uint64(16)
    assert np.array_equal(out, (h & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    wrapped32 = a ^ (a >> 16)
    wrapped32 = wrapped32 * np.uint32(0x45D9F3B)
    wrapped32 ^= wrapped32 >> 16
    assert not np.array_equal(out, wrapped32)  # what 32-bit arithmetic would have given


@cuda.jit
def promotions(out, a32, u32):
    i = cuda.grid(1)
    if i < a32.shape[0]:
        out[i, 0] = (a32[i] + a32[i]) // 2  # the midpoint of two int32 does not overflow
        out[i, 1] = u32[i] - 1  # uint32 - int64 is int64: -1 for 0
        out[i, 2] = int32(a32[i]) * int32(3)  # int32 * int32 is int64 in numba
        x = uint32(a32[i])
        out[i, 3] = x * x
        out[i, 4] = cuda.atomic.add(a32, i, 2**31 - 1)  # the old value; the array wraps


def test_integer_arithmetic_widens_to_64_bits_and_stores_truncate():
    a = np.array([2**31 - 1, 2**30 + 5, -7, 0], np.int32)
    u = np.array([0, 1, 2**32 - 1, 5], np.uint32)
    out = np.zeros((4, 5), np.int64)
    a0 = a.copy()
    sim(promotions, 1, 4, out, a, u)
    w = a0.astype(np.int64)
    assert out[:, 0].tolist() == w.tolist()
    assert out[:, 1].tolist() == (u.astype(np.int64) - 1).tolist()
    assert out[:, 2].tolist() == (w * 3).tolist()
    assert out[:, 3].tolist() == [
        int(v) ** 2 % 2**64 - (2**64 if int(v) ** 2 % 2**64 >= 2**63 else 0) for v in w.astype(np.uint32)
    ]
    assert out[:, 4].tolist() == w.tolist()
    assert a.tolist() == ((w + 2**31 - 1 + 2**31) % 2**32 - 2**31).tolist()


@cuda.jit
def bit_ops(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        x = a[i]
        out[i, 0] = x << 3
        out[i, 1] = x >> 2
        out[i, 2] = x & 0x5A
        out[i, 3] = x | 0x100
        out[i, 4] = x ^ -1
        out[i, 5] = ~x


def test_bit_operations_on_int32():
    a = np.arange(-16, 16, dtype=np.int32) * 37
    out = np.zeros((32, 6), np.int32)
    s, r = both(bit_ops, 1, 32, out, a)
    want = np.stack([a << 3, a >> 2, a & 0x5A, a | 0x100, a ^ -1, ~a], axis=1)
    assert np.array_equal(s[0], want) and np.array_equal(r[0], want)


@cuda.jit
def math_funcs(out, x, y):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i, 0] = math.sqrt(math.fabs(x[i]))
        out[i, 1] = math.exp(x[i] / 4)
        out[i, 2] = math.sin(x[i])
        out[i, 3] = math.floor(x[i])
        out[i, 4] = math.pow(math.fabs(x[i]), 1.5)
        out[i, 5] = math.atan2(y[i], x[i])
        out[i, 6] = 1.0 if math.isnan(y[i]) else 0.0
        out[i, 7] = 1.0 if math.isinf(y[i]) else 0.0
        out[i, 8] = math.ceil(x[i]) + math.trunc(-x[i])
        out[i, 9] = math.log(1.0 + math.fabs(x[i])) + math.cos(y[i] if not math.isnan(y[i]) else 0.0)


def test_math_functions_float64():
    x = np.linspace(-3.7, 4.2, 40)
    y = np.linspace(2, -2, 40)
    y[3], y[7], y[9] = np.nan, np.inf, -np.inf
    out = np.zeros((40, 10))
    sim(math_funcs, 2, 32, out, x, y)
    with np.errstate(invalid="ignore"):
        want = np.stack(
            [
                np.sqrt(abs(x)),
                np.exp(x / 4),
                np.sin(x),
                np.floor(x),
                abs(x) ** 1.5,
                np.arctan2(y, x),
                np.isnan(y) * 1.0,
                np.isinf(y) * 1.0,
                np.ceil(x) + np.trunc(-x),
                np.log1p(abs(x)) + np.cos(np.where(np.isnan(y), 0, y)),
            ],
            axis=1,
        )
    assert np.allclose(out, want, equal_nan=True)


@cuda.jit
def math_f32(out, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        out[i] = math.sqrt(v) + math.exp(-v) * float32(2.0)


def test_math_functions_float32_round_like_float32():
    x = np.linspace(0.1, 5, 33).astype(np.float32)
    out = np.zeros(33, np.float32)
    s, r = both(math_f32, 2, 32, out, x)
    assert np.allclose(s[0], np.sqrt(x) + np.exp(-x) * 2, rtol=1e-6)
    assert np.allclose(s[0], r[0], rtol=1e-6)


@cuda.jit
def minmaxabs(out, a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i, 0] = min(a[i], b[i])
        out[i, 1] = max(a[i], b[i], 0)
        out[i, 2] = abs(a[i] - b[i])
        out[i, 3] = min(abs(a[i]), 5)


def test_min_max_abs_builtins():
    a = np.arange(-16, 16, dtype=np.int64)
    b = (np.arange(32, dtype=np.int64) * 7) % 11 - 5
    out = np.zeros((32, 4), np.int64)
    s, r = both(minmaxabs, 1, 32, out, a, b)
    want = np.stack(
        [np.minimum(a, b), np.maximum(np.maximum(a, b), 0), abs(a - b), np.minimum(abs(a), 5)], axis=1
    )
    assert np.array_equal(s[0], want) and np.array_equal(r[0], want)


@cuda.jit
def mixed_types(out, a32, b64, f):
    i = cuda.grid(1)
    if i < a32.shape[0]:
        s = a32[i] + b64[i]  # int32 + int64 -> int64
        out[i] = s * f + a32[i] / 3  # true division gives float64


def test_int32_int64_float_mix():
    a = np.arange(-10, 30, dtype=np.int32)
    b = np.arange(40, dtype=np.int64) * 1_000_000_000
    out = np.zeros(40)
    sim(mixed_types, 2, 32, out, a, b, 0.5)
    assert np.allclose(out, (a.astype(np.int64) + b) * 0.5 + a / 3)


@cuda.jit
def f16_scale(out, a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i] * b[i] + a[i]


def test_float16_arrays():
    a = np.linspace(-2, 2, 40).astype(np.float16)
    b = np.linspace(1, 3, 40).astype(np.float16)
    out = np.zeros(40, np.float16)
    sim(f16_scale, 2, 32, out, a, b)
    assert np.allclose(out.astype(np.float32), (a * b + a).astype(np.float32), atol=2e-3)


@cuda.jit
def complex_rotate(out, z, theta):
    i = cuda.grid(1)
    if i < z.shape[0]:
        w = complex64(math.cos(theta) + 1j * math.sin(theta))
        out[i] = z[i] * w + z[i].conjugate()
        out[i] += abs(z[i])


def test_complex64_arithmetic():
    z = (np.arange(20) + 1j * np.arange(20)[::-1]).astype(np.complex64)
    out = np.zeros(20, np.complex64)
    sim(complex_rotate, 1, 32, out, z, 0.3)
    w = np.complex64(np.cos(0.3) + 1j * np.sin(0.3))
    assert np.allclose(out, z * w + np.conj(z) + abs(z), rtol=1e-5)


@cuda.jit
def bool_mask(out, flags, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        flags[i] = a[i] > 0 and a[i] % 3 != 0
        out[i] = 1 if flags[i] else 0
        if not flags[i]:
            out[i] -= 5


def test_boolean_arrays():
    a = np.arange(-10, 30, dtype=np.int64)
    flags, out = np.zeros(40, np.bool_), np.zeros(40, np.int64)
    s, r = both(bool_mask, 2, 32, out, flags, a)
    want = (a > 0) & (a % 3 != 0)
    assert np.array_equal(s[1], want) and np.array_equal(s[0], np.where(want, 1, -5))
    assert np.array_equal(r[0], s[0])


@cuda.jit
def attributes(out, a, b):
    i = cuda.grid(1)
    if i == 0:
        out[0] = a.shape[0]
        out[1] = a.shape[1]
        out[2] = a.size
        out[3] = a.ndim
        out[4] = b.ndim
        out[5] = b.size
        out[6] = b[-1]
        out[7] = a[-1, -2]
        out[8] = len(b)


def test_array_attributes_and_negative_indices():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    b = np.arange(5, dtype=np.int64) * 3
    out = np.zeros(9, np.int64)
    s, r = both(attributes, 1, 32, out, a, b)
    assert s[0].tolist() == [3, 4, 12, 2, 1, 5, 12, 10, 5] and np.array_equal(r[0], s[0])


@cuda.jit
def row_views(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        tail = row[1:]
        s = 0.0
        for k in range(tail.shape[0]):
            s += tail[k]
        out[i] = s + row[0] * 100


def test_slicing_views_inside_a_kernel():
    a = np.arange(24, dtype=np.float64).reshape(6, 4)
    out = np.zeros(6)
    s, r = both(row_views, 1, 32, out, a)
    assert np.array_equal(s[0], a[:, 1:].sum(axis=1) + 100 * a[:, 0]) and np.array_equal(r[0], s[0])


@cuda.jit
def tuple_arg(out, shape, scale):
    i = cuda.grid(1)
    h, w = shape
    if i < h * w:
        out[i] = (i // w) * scale[0] + (i % w) * scale[1]


def test_tuple_arguments():
    out = np.zeros(12, np.float64)
    sim(tuple_arg, 1, 32, out, (3, 4), (10.0, 1.0))
    assert out.tolist() == [r * 10.0 + c for r in range(3) for c in range(4)]


# ---------------------------------------------------------------- atomics


@cuda.jit
def atomics_int(out, old, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        v = a[i]
        cuda.atomic.add(out, 0, v)
        cuda.atomic.max(out, 1, v)
        cuda.atomic.min(out, 2, v)
        cuda.atomic.and_(out, 3, v | 0x100)
        cuda.atomic.or_(out, 4, v & 0xF0)
        cuda.atomic.xor(out, 5, v)
        old[i] = cuda.atomic.add(out, 6, 1)  # ticket: every old value is distinct


def test_integer_atomics_and_returned_old_values():
    a = (np.arange(50, dtype=np.int32) * 37) % 301 - 100
    out = np.array([0, -(2**31), 2**31 - 1, -1, 0, 0, 0], np.int32)
    old = np.zeros(50, np.int32)
    sim(atomics_int, 2, 32, out, old, a)
    x = 0
    for v in a:
        x ^= int(v)
    want = [
        a.sum(),
        a.max(),
        a.min(),
        np.bitwise_and.reduce(a | 0x100),
        np.bitwise_or.reduce(a & 0xF0),
        x,
        50,
    ]
    assert out.tolist() == [int(w) for w in want]
    assert sorted(old.tolist()) == list(range(50))


@cuda.jit
def atomics_float(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        cuda.atomic.add(out, 0, a[i])
        cuda.atomic.max(out, 1, a[i])
        cuda.atomic.min(out, 2, a[i])


def test_float_atomics():
    a = np.linspace(-3, 5, 70)
    out = np.array([0.0, -np.inf, np.inf])
    s, r = both(atomics_float, 3, 32, out, a)
    assert np.isclose(s[0][0], a.sum()) and s[0][1] == 5 and s[0][2] == -3
    assert np.allclose(s[0], r[0])


@cuda.jit
def hist2d(h, x, y):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.add(h, (x[i] % h.shape[0], y[i] % h.shape[1]), 1)


def test_atomic_add_with_2d_index():
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 100, 200), rng.integers(0, 100, 200)
    h = np.zeros((4, 5), np.int64)
    sim(hist2d, 7, 32, h, x, y)
    want = np.zeros((4, 5), np.int64)
    np.add.at(want, (x % 4, y % 5), 1)
    assert np.array_equal(h, want)


@cuda.jit
def atomic_inc_dec(counters, n):
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.inc(counters, 0, uint32(9))  # wraps to 0 after 9
        cuda.atomic.dec(counters, 1, uint32(5))  # 0 (or > 5) wraps to 5


def test_atomic_inc_and_dec_wrap():
    c = np.array([0, 3], np.uint32)
    sim(atomic_inc_dec, 1, 32, c, 23)
    inc, dec = 0, 3
    for _ in range(23):
        inc = 0 if inc >= 9 else inc + 1
        dec = 5 if dec == 0 or dec > 5 else dec - 1
    assert c.tolist() == [inc, dec]


@cuda.jit
def spin_lock_sum(total, lock, a):
    # one thread per block takes the lock (a whole warp spinning on it would deadlock pre-Volta)
    i = cuda.grid(1)
    partial = cuda.shared.array(1, float64)
    if cuda.threadIdx.x == 0:
        partial[0] = 0.0
    cuda.syncthreads()
    if i < a.shape[0]:
        cuda.atomic.add(partial, 0, a[i])
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        while cuda.atomic.cas(lock, 0, 0, 1) != 0:
            pass
        cuda.threadfence()
        total[0] += partial[0]
        cuda.threadfence()
        cuda.atomic.exch(lock, 0, 0)


def test_cas_lock_and_exch_unlock_on_numba_sim():
    a = np.arange(100, dtype=np.float64)
    total, lock = np.zeros(1), np.zeros(1, np.int32)
    gpulab.launch(spin_lock_sum, 4, 32, total, lock, a, backend="numba-sim")
    assert total[0] == a.sum() and lock[0] == 0


def test_lock_between_blocks_stops_with_the_lockstep_explained():
    """All blocks run in lockstep here: the lock holder waits at the end of the spin loop for the
    others, which wait for its release. The simulator cannot finish it and must say why."""
    a = np.arange(100, dtype=np.float64)
    with pytest.raises(errors.StepBudgetExceeded) as info:
        sim(spin_lock_sum, 4, 32, np.zeros(1), np.zeros(1, np.int32), a, max_steps=3000)
    text = str(info.value)
    assert "lockstep" in text and "block (0, 0, 0)" in text and "releasing a lock" in text


@cuda.jit
def compact(out, count, a):
    i = cuda.grid(1)
    if i < a.shape[0] and a[i] % 3 == 0:
        slot = cuda.atomic.add(count, 0, 1)
        out[slot] = a[i]


def test_stream_compaction_with_atomic_slots():
    a = np.arange(100, dtype=np.int64)
    out, count = np.full(100, -1, np.int64), np.zeros(1, np.int64)
    sim(compact, 4, 32, out, count, a)
    k = int(count[0])
    assert k == 34 and sorted(out[:k].tolist()) == list(range(0, 100, 3)) and (out[k:] == -1).all()


@cuda.jit
def shared_hist(h, data):
    local = cuda.shared.array(8, int32)
    t = cuda.threadIdx.x
    if t < 8:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(local, data[i] & 7, 1)
    cuda.syncthreads()
    if t < 8:
        cuda.atomic.add(h, t, local[t])


def test_shared_memory_histogram():
    d = (np.arange(300, dtype=np.int32) * 13) % 29
    h = np.zeros(8, np.int32)
    s, r = both(shared_hist, 5, 64, h, d)
    assert np.array_equal(s[0], np.bincount(d & 7, minlength=8)) and np.array_equal(r[0], s[0])


# ---------------------------------------------------------------- barriers with predicates


@cuda.jit
def barrier_votes(out, a):
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    v = a[cuda.grid(1)]
    n = cuda.syncthreads_count(int32(v > 0))  # numba takes an int predicate, not a bool
    all_pos = cuda.syncthreads_and(1 if v > 0 else 0)
    any_big = cuda.syncthreads_or(int32(v > 50))
    if t == 0:
        out[b, 0] = n
        out[b, 1] = all_pos
        out[b, 2] = any_big


def test_syncthreads_count_and_or():
    a = np.arange(-20, 108, dtype=np.int64)
    out = np.zeros((2, 3), np.int64)
    s, r = both(barrier_votes, 2, 64, out, a)
    blocks = a.reshape(2, 64)
    want = [[int((b > 0).sum()), int((b > 0).all()), int((b > 50).any())] for b in blocks]
    assert s[0].tolist() == want and np.array_equal(r[0], s[0])


@cuda.jit
def tree_reduce(out, a):
    sh = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.shape[0] else float32(0)
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


def test_shared_tree_reduction_with_while_halving():
    a = np.arange(300, dtype=np.float32)
    out = np.zeros(3, np.float32)
    rep = sim(tree_reduce, 3, 128, out, a)
    assert out.sum() == a.sum() and out[0] == a[:128].sum()
    # the tree halves the active lanes: efficiency is below one
    assert 0 < rep.warp_efficiency < 1


@cuda.jit
def tree_reduce_missing_sync(out, a):
    sh = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    s = 32
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


def test_missing_barrier_is_reported_as_a_race():
    with pytest.raises(errors.GpulabError) as info:
        sim(tree_reduce_missing_sync, 1, 64, np.zeros(1, np.float32), np.ones(64, np.float32))
    assert "race" in str(info.value).lower()


# ---------------------------------------------------------------- warp-level primitives


@cuda.jit
def warp_reduce_xor(out, a):
    i = cuda.grid(1)
    v = a[i]
    off = 16
    while off > 0:
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
        off //= 2
    out[i] = v


def test_butterfly_reduction_gives_every_lane_the_sum():
    a = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    sim(warp_reduce_xor, 2, 32, out, a)
    assert np.array_equal(out, np.repeat(a.reshape(2, 32).sum(axis=1), 32))


@cuda.jit
def warp_down_up(down, up, bcast, a):
    i = cuda.grid(1)
    v = a[i]
    d = v
    for off in (16, 8, 4, 2, 1):
        d += cuda.shfl_down_sync(0xFFFFFFFF, d, off)
    down[i] = d
    s = v
    k = 1
    while k < 32:
        n = cuda.shfl_up_sync(0xFFFFFFFF, s, k)
        if cuda.laneid >= k:
            s += n
        k *= 2
    up[i] = s
    bcast[i] = cuda.shfl_sync(0xFFFFFFFF, v, 5)


def test_shfl_down_reduce_shfl_up_scan_and_broadcast():
    a = (np.arange(64, dtype=np.float32) * 3) % 7
    down, up, bc = np.zeros(64, np.float32), np.zeros(64, np.float32), np.zeros(64, np.float32)
    sim(warp_down_up, 2, 32, down, up, bc, a)
    w = a.reshape(2, 32)
    assert down[0] == w[0].sum() and down[32] == w[1].sum()
    # lanes above 0 sum only the lanes at and above them that shfl_down reaches (out-of-range
    # lanes return their own value): check lane 31, which adds itself five times
    assert down[31] == 32 * w[0, 31]
    assert np.array_equal(up, np.cumsum(w, axis=1).ravel())
    assert np.array_equal(bc, np.repeat(w[:, 5], 32))


@cuda.jit
def votes(out, a):
    i = cuda.grid(1)
    lane = cuda.laneid
    p = a[i] > 0
    b = cuda.ballot_sync(0xFFFFFFFF, p)
    out[i, 0] = b
    out[i, 1] = cuda.any_sync(0xFFFFFFFF, a[i] > 100)
    out[i, 2] = cuda.all_sync(0xFFFFFFFF, a[i] > -100)
    out[i, 3] = cuda.popc(b & cuda.lanemask_lt())  # rank among the voting lanes
    out[i, 4] = cuda.activemask()
    out[i, 5] = lane + cuda.warpsize


def test_ballot_any_all_lanemask_popc_activemask():
    a = np.where(np.arange(64) % 3 == 0, 5, -5).astype(np.int64)
    a[40] = 200
    out = np.zeros((64, 6), np.int64)
    sim(votes, 2, 32, out, a)
    for w in range(2):
        p = a[32 * w : 32 * w + 32] > 0
        ballot = _int32(sum(1 << k for k in range(32) if p[k]))  # numba types ballot int32
        rows = out[32 * w : 32 * w + 32]
        assert (rows[:, 0] == ballot).all()
        assert (rows[:, 1] == int((a[32 * w : 32 * w + 32] > 100).any())).all()
        assert (rows[:, 2] == 1).all()
        assert rows[:, 3].tolist() == [int(p[:k].sum()) for k in range(32)]
        assert (rows[:, 4] == 0xFFFFFFFF).all()
    assert out[:, 5].tolist() == [k % 32 + 32 for k in range(64)]


@cuda.jit
def bits(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        x = a[i]
        out[i, 0] = cuda.popc(x)
        out[i, 1] = cuda.brev(x)
        out[i, 2] = cuda.clz(x)
        out[i, 3] = cuda.ffs(x)


def test_bit_intrinsics_on_uint32():
    a = np.array([0, 1, 2, 3, 0x80000000, 0xFFFFFFFF, 0x00F0F000, 12345678], np.uint32)
    out = np.zeros((8, 4), np.int64)
    sim(bits, 1, 32, out, a)
    for x, row in zip(a.tolist(), out.tolist()):
        brev = int(f"{x:032b}"[::-1], 2)
        clz = 32 - x.bit_length()
        ffs = (x & -x).bit_length()  # 1-based position of the lowest set bit, 0 for 0
        assert row == [bin(x).count("1"), brev, clz, ffs]


@cuda.jit
def divergent_ballot(out, n):
    i = cuda.grid(1)
    lane = cuda.laneid
    # each lane loops lane % 5 times; the mask of the loop body shrinks as lanes finish
    k = 0
    while k < lane % 5:
        m = cuda.activemask()
        if k == 0:
            out[i, 0] = m
        out[i, 1] = m  # the mask seen on the lane's last iteration
        k += 1
    if lane % 2 == 0:
        out[i, 2] = cuda.ballot_sync(cuda.activemask(), True)
    cuda.syncwarp()
    out[i, 3] = n


def test_activemask_inside_divergent_loops():
    out = np.zeros((32, 4), np.int64)
    sim(divergent_ballot, 1, 32, out, 7)
    lanes = np.arange(32)
    trips = lanes % 5
    for lane in range(32):
        if trips[lane]:
            assert out[lane, 0] == sum(1 << j for j in lanes if trips[j] >= 1)
            last = trips[lane] - 1  # iteration index k
            assert out[lane, 1] == sum(1 << j for j in lanes if trips[j] > last)
    evens = sum(1 << j for j in lanes if j % 2 == 0)
    assert (out[::2, 2] == evens).all() and (out[1::2, 2] == 0).all() and (out[:, 3] == 7).all()


@cuda.jit
def match_groups(out, a):
    i = cuda.grid(1)
    out[i, 0] = cuda.match_any_sync(0xFFFFFFFF, a[i])
    m, pred = cuda.match_all_sync(0xFFFFFFFF, a[i] // 100)
    out[i, 1] = m
    out[i, 2] = pred


def test_match_any_and_match_all():
    a = (np.arange(32) % 4).astype(np.int32)
    out = np.zeros((32, 3), np.int64)
    sim(match_groups, 1, 32, out, a)
    for lane in range(32):
        assert out[lane, 0] == _int32(sum(1 << j for j in range(32) if a[j] == a[lane]))
    assert (out[:, 1] == -1).all() and (out[:, 2] == 1).all()  # the full mask as int32


@cuda.jit
def warp_aggregated_append(out, count, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        keep = a[i] % 2 == 1
        if keep:
            active = cuda.activemask()
            leader = cuda.ffs(active) - 1
            n = cuda.popc(active)
            base = 0
            if cuda.laneid == leader:
                base = cuda.atomic.add(count, 0, n)
            base = cuda.shfl_sync(active, base, leader)
            rank = cuda.popc(active & cuda.lanemask_lt())
            out[base + rank] = a[i]


def test_warp_aggregated_atomics_append():
    a = np.arange(100, dtype=np.int64)
    out, count = np.full(100, -1, np.int64), np.zeros(1, np.int64)
    rep = sim(warp_aggregated_append, 4, 32, out, count, a)
    assert count[0] == 50 and sorted(out[:50].tolist()) == list(range(1, 100, 2))
    assert rep.metrics[metrics.GLOBAL_ATOM_INSTRUCTIONS] == 4  # one atomic per warp, not per lane


@cuda.jit
def shfl_wrong_mask(out, a):
    i = cuda.grid(1)
    if cuda.laneid < 16:
        out[i] = cuda.shfl_down_sync(0xFFFFFFFF, a[i], 1)


def test_full_mask_in_a_divergent_branch_is_reported():
    with pytest.raises(errors.GpulabError) as info:
        sim(shfl_wrong_mask, 1, 32, np.zeros(32), np.ones(32))
    assert "mask" in str(info.value).lower()


@cuda.jit
def selp_fma(out, a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i, 0] = cuda.selp(a[i] > b[i], a[i], b[i])
        out[i, 1] = cuda.fma(a[i], b[i], 1.0)
        out[i, 2] = cuda.cbrt(a[i] * a[i] * a[i])


def test_selp_fma_cbrt():
    a, b = np.linspace(-2, 2, 20), np.linspace(1, -1, 20)
    out = np.zeros((20, 3))
    sim(selp_fma, 1, 32, out, a, b)
    assert np.allclose(out, np.stack([np.maximum(a, b), a * b + 1, a], axis=1))


@cuda.jit(device=True)
def dot_views(x, y):
    s = 0.0
    for k in range(x.shape[0]):
        s += x[k] * y[k]
    return s


@cuda.jit
def slice_kinds(out, a, hist):
    i = cuda.grid(1)
    if i < a.shape[0]:
        col = a[:, i % a.shape[1]]
        window = a[i, i % 3 :]  # bounds that differ per thread
        back = a[i, ::-2]
        last2 = a[i][-2:]
        out[i, 0] = dot_views(a[i], a[0])
        out[i, 1] = col[i] + col[-1]
        out[i, 2] = window.shape[0] * 1000 + window[0]
        out[i, 3] = back[0] + back.size * 100
        out[i, 4] = last2[0] * last2[1]
        inner = a[1:-1, 1:][i % 4]
        out[i, 5] = inner[inner.shape[0] - 1] + a[1:, :].shape[0] * 10
        w = hist[2:]
        cuda.atomic.add(w, i % 3, 1)
        w[i % 3 + 3] = i  # a store through a view (one writer per element: i < 3 races)


def test_slices_per_thread_bounds_views_of_views_and_atomics_through_views():
    a = np.arange(6 * 5, dtype=np.float64).reshape(6, 5)
    out = np.zeros((6, 6))
    hist = np.zeros(8, np.int64)
    s, r = both(slice_kinds, 1, 3, out, a, hist)
    for got in (s, r):
        o, h = got[0][:3], got[2]
        rows = range(3)
        assert o[:, 0].tolist() == [float(a[i] @ a[0]) for i in rows]
        assert o[:, 1].tolist() == [a[i, i % 5] + a[-1, i % 5] for i in rows]
        assert o[:, 2].tolist() == [(5 - i % 3) * 1000 + a[i, i % 3] for i in rows]
        assert o[:, 3].tolist() == [a[i, -1] + 300 for i in rows]
        assert o[:, 4].tolist() == [a[i, -2] * a[i, -1] for i in rows]
        assert o[:, 5].tolist() == [a[1 + i % 4, -1] + 50 for i in rows]
        assert h.tolist() == [0, 0, 1, 1, 1, 0, 1, 2]


@cuda.jit
def past_the_slice(out, a):
    i = cuda.grid(1)
    head = a[:4]
    out[i] = head[i]


def test_index_past_a_slice_is_reported_even_inside_the_array():
    with pytest.raises(errors.OutOfBounds) as info:
        sim(past_the_slice, 1, 8, np.zeros(8), np.arange(8.0))
    assert "slice of `a`" in str(info.value) and "thread (4, 0, 0)" in str(info.value)


# ---------------------------------------------------------------- uint64, records, numba.cuda.random


@cuda.jit
def xorshift_by_thread(out, seed):
    i = cuda.grid(1)
    x = seed[0] ^ i  # uint64 ^ int64: int64 for numba (numpy would refuse)
    x = uint64(x) + uint32(1)
    for _ in range(3):
        x ^= x << 13  # a shift keeps the uint64 of its left side
        x ^= x >> 7
        x ^= x << 17
    out[i] = x
    out[i + 32] = (x >> uint32(60)) - 20  # uint64 - 20 is int64: negative, stored wrapped


def test_uint64_xorshift_mixed_with_thread_indices_follows_numba_rules():
    seed = np.array([0x9E3779B97F4A7C15], np.uint64)
    out = np.zeros(64, np.uint64)
    sim(xorshift_by_thread, 1, 32, out, seed)
    m = 2**64 - 1
    for i in range(32):
        x = (((int(seed[0]) ^ i) & m) + 1) & m
        for _ in range(3):
            x ^= (x << 13) & m
            x ^= x >> 7
            x ^= (x << 17) & m
        assert int(out[i]) == x
        assert int(out[i + 32]) == ((x >> 60) - 20) % 2**64


@cuda.jit
def draw_uniform(states, out):
    i = cuda.grid(1)
    for k in range(out.shape[1]):
        out[i, k] = xoroshiro128p_uniform_float32(states, i)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # Numba's simulator's
def test_numba_cuda_random_on_states_made_on_the_cpu():
    """numba.cuda.random's generator updates its record array of states in place: the draws
    advance, and agree with Numba's simulator."""
    outs = []
    for backend in ("sim", "numba-sim"):
        states = np.empty(8, dtype=xoroshiro128p_dtype)
        init_xoroshiro128p_states_cpu(states, 7, 0)
        out = np.zeros((8, 4), np.float32)
        gpulab.launch(draw_uniform, 1, 8, states, out, backend=backend)
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])
    assert len(np.unique(outs[0])) == outs[0].size and ((0 <= outs[0]) & (outs[0] < 1)).all()


POINT = np.dtype([("x", np.float64), ("y", np.float64), ("hits", np.int32)])


@cuda.jit
def move_points(pts, dx):
    i = cuda.grid(1)
    if i < pts.shape[0]:
        p = pts[i]
        p.x = p.x + dx
        p["y"] = p["y"] * 2
        if p.x > 2:
            p.hits += 1


def test_record_fields_by_name_and_attribute():
    pts = np.zeros(5, POINT)
    pts["x"] = np.arange(5)
    pts["y"] = 1.5
    s, r = both(move_points, 1, 32, pts, 0.5)
    assert s[0]["x"].tolist() == [0.5, 1.5, 2.5, 3.5, 4.5] and (s[0]["y"] == 3).all()
    assert s[0]["hits"].tolist() == [0, 0, 1, 1, 1]
    assert np.array_equal(s[0], r[0])


# ---------------------------------------------------------------- what numba accepts, and refuses


@cuda.jit(device=True)
def weighted(a, b, w=0.5):
    return w * a + (1 - w) * b


@cuda.jit
def small_python(out, flags, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        t = (1.0, 10.0, 100.0)
        out[i, 0] = t[i % 3]  # a tuple indexed per thread
        out[i, 1] = weighted(b=a[i], a=1.0)  # keywords and a default
        out[i, 2] = weighted(a[i], 0.0, w=0.25)
        out[i, 3] = flags[i] + flags[i]  # True + True is 2
        s = 0.0
        for k, v in enumerate((2.0, 3.0)):
            s += k * v
        out[i, 4] = s
        n = 0
        while n < 3:
            n += 1
        else:
            out[i, 5] = n


def test_tuple_indexing_keywords_bool_arithmetic_enumerate_while_else():
    a = np.arange(6, dtype=np.float64)
    flags = np.array([True, False, True, True, False, True])
    out = np.zeros((6, 6))
    sim(small_python, 1, 32, out, flags, a)
    i = np.arange(6)
    assert out[:, 0].tolist() == [(1.0, 10.0, 100.0)[k % 3] for k in i]
    assert np.allclose(out[:, 1], 0.5 + 0.5 * a) and np.allclose(out[:, 2], 0.25 * a)
    assert out[:, 3].tolist() == (2 * flags).tolist()
    assert (out[:, 4] == 3.0).all() and (out[:, 5] == 3).all()


@cuda.jit
def builds_a_list(out):
    vals = [1.0, 2.0]
    out[0] = vals[0]


@cuda.jit
def returns_a_value(out):
    out[0] = 1.0
    return 5


@cuda.jit
def calls_numpy(out):
    tmp = np.zeros(4)
    out[0] = tmp[0]


@cuda.jit
def local_shape_from_argument(out, n):
    buf = cuda.local.array(n, float32)
    buf[0] = 1.0
    out[0] = buf[0]


@pytest.mark.parametrize(
    "kernel,args,says",
    [
        (builds_a_list, (), "list"),
        (returns_a_value, (), "return 5"),
        (calls_numpy, (), "np.zeros"),
        (local_shape_from_argument, (4,), "compile-time constant"),
    ],
)
def test_what_numba_refuses_is_refused_naming_the_line(kernel, args, says):
    with pytest.raises(errors.GpulabError) as info:
        sim(kernel, 1, 1, np.zeros(1), *args)
    text = str(info.value)
    assert f"kernel `{kernel.__name__}`" in text and says in text
    assert info.value.line is not None


# ---------------------------------------------------------------- fp16, grid sync, dynamic shared views


@cuda.jit
def half_ops(out, cmp, a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i, 0] = cuda.fp16.hfma(a[i], b[i], a[i])
        out[i, 1] = cuda.fp16.hadd(a[i], cuda.fp16.hmul(b[i], b[i]))
        out[i, 2] = cuda.fp16.hmax(cuda.fp16.hneg(a[i]), cuda.fp16.habs(b[i]))
        out[i, 3] = cuda.fp16.hsqrt(cuda.fp16.habs(a[i]))
        cmp[i] = cuda.fp16.hlt(a[i], b[i])


def test_cuda_fp16_rounds_each_result_to_half():
    a = np.linspace(-1, 1, 9).astype(np.float16)
    b = np.linspace(0, 2, 9).astype(np.float16)
    out, cmp = np.zeros((9, 4), np.float16), np.zeros(9, np.bool_)
    sim(half_ops, 1, 32, out, cmp, a, b)
    f = a.astype(np.float64), b.astype(np.float64)
    assert np.array_equal(out[:, 0], (f[0] * f[1] + f[0]).astype(np.float16))  # fused: one rounding
    assert np.array_equal(out[:, 1], a + b * b)  # float16 numpy: a rounding per operation
    assert np.array_equal(out[:, 2], np.maximum(-a, abs(b)))
    assert np.array_equal(out[:, 3], np.sqrt(abs(a)))
    assert np.array_equal(cmp, a < b)


@cuda.jit
def two_phase(out, shifted):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    out[i] = i * 10
    g.sync()
    shifted[i] = out[(i + cuda.blockDim.x) % out.shape[0]]


@cuda.jit
def two_phase_unsynced(out, shifted):
    i = cuda.grid(1)
    out[i] = i * 10
    shifted[i] = out[(i + cuda.blockDim.x) % out.shape[0]]


def test_grid_sync_orders_blocks_and_its_absence_is_a_race():
    out, shifted = np.zeros(96, np.int64), np.zeros(96, np.int64)
    sim(two_phase, 3, 32, out, shifted)
    assert np.array_equal(shifted, np.roll(np.arange(96) * 10, -32))
    with pytest.raises(errors.GlobalMemoryRace):
        sim(two_phase_unsynced, 3, 32, np.zeros(96, np.int64), shifted)


@cuda.jit
def half_grid_sync(out):
    i = cuda.grid(1)
    if cuda.blockIdx.x == 0:
        cuda.cg.this_grid().sync()
    out[i] = i


def test_grid_sync_in_a_branch_is_reported():
    with pytest.raises(errors.BarrierDivergence) as info:
        sim(half_grid_sync, 2, 32, np.zeros(64))
    assert "grid.sync()" in str(info.value)


@cuda.jit
def split_dynamic(out, a, n):
    sh = cuda.shared.array(0, float32)
    xs = sh[:n]  # two arrays carved out of one dynamic allocation
    ys = sh[n:]
    t = cuda.threadIdx.x
    xs[t] = a[t]
    ys[t] = a[t] * 2
    cuda.syncthreads()
    out[t] = xs[n - 1 - t] + ys[t]


def test_dynamic_shared_memory_split_by_slicing():
    a = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    rep = sim(split_dynamic, 1, 32, out, a, 32, shared_bytes=64 * 4)
    assert np.array_equal(out, a[::-1] + 2 * a)
    # through the views, the shared accesses are still counted: 2 stores and 2 loads per warp
    assert rep.metrics[metrics.SHARED_INSTRUCTIONS["st"]] == 2
    assert rep.metrics[metrics.SHARED_INSTRUCTIONS["ld"]] == 2
    assert rep.bank_conflicts() == 0


TPB = 8


@cuda.jit
def matmul_tiled(c, a, b):
    sa = cuda.shared.array((TPB, TPB), float32)
    sb = cuda.shared.array((TPB, TPB), float32)
    x, y = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    acc = float32(0.0)
    for t in range((a.shape[1] + TPB - 1) // TPB):
        sa[ty, tx] = a[y, t * TPB + tx] if y < a.shape[0] and t * TPB + tx < a.shape[1] else 0
        sb[ty, tx] = b[t * TPB + ty, x] if x < b.shape[1] and t * TPB + ty < b.shape[0] else 0
        cuda.syncthreads()
        for k in range(TPB):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if y < c.shape[0] and x < c.shape[1]:
        c[y, x] = acc


def test_tiled_matmul_with_ragged_edges():
    rng = np.random.default_rng(5)
    a, b = rng.random((19, 13)).astype(np.float32), rng.random((13, 11)).astype(np.float32)
    c = np.zeros((19, 11), np.float32)
    s, r = both(matmul_tiled, (2, 3), (TPB, TPB), c, a, b)
    assert np.allclose(s[0], a @ b, rtol=1e-5) and np.array_equal(s[0], r[0])


@cuda.jit
def blelloch_scan(out, a):
    temp = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    n = 64
    temp[2 * t] = a[2 * t]
    temp[2 * t + 1] = a[2 * t + 1]
    off = 1
    d = n >> 1
    while d > 0:
        cuda.syncthreads()
        if t < d:
            temp[off * (2 * t + 2) - 1] += temp[off * (2 * t + 1) - 1]
        off *= 2
        d >>= 1
    if t == 0:
        temp[n - 1] = 0
    d = 1
    while d < n:
        off >>= 1
        cuda.syncthreads()
        if t < d:
            ai = off * (2 * t + 1) - 1
            bi = off * (2 * t + 2) - 1
            x = temp[ai]
            temp[ai] = temp[bi]
            temp[bi] += x
        d *= 2
    cuda.syncthreads()
    out[2 * t] = temp[2 * t]
    out[2 * t + 1] = temp[2 * t + 1]


def test_blelloch_exclusive_scan():
    a = (np.arange(64) % 5).astype(np.int32)
    out = np.zeros(64, np.int32)
    sim(blelloch_scan, 1, 32, out, a)
    assert np.array_equal(out, np.concatenate([[0], np.cumsum(a)[:-1]]))


@cuda.jit
def half_warp_reduce(out, a):
    i = cuda.grid(1)
    if cuda.laneid < 16:
        v = a[i]
        for off in (8, 4, 2, 1):
            v += cuda.shfl_down_sync(0xFFFF, v, off)
        if cuda.laneid == 0:
            out[0] = v


def test_shuffle_from_outside_the_member_mask_is_reported_with_a_usable_fix():
    with pytest.raises(errors.WarpMaskError) as info:
        sim(half_warp_reduce, 1, 32, np.zeros(1), np.arange(32.0))
    assert "lane 16" in str(info.value) and "min(lane + off, last_member)" in str(info.value)


# ---------------------------------------------------------------- counters, by hand


@cuda.jit
def quarter_warp_store(out):
    i = cuda.grid(1)
    if cuda.laneid < 8:
        out[i] = 1.0


def test_warp_execution_efficiency_of_a_quarter_warp_branch():
    rep = sim(quarter_warp_store, 2, 64, np.zeros(128))
    # per warp: `i = ...` (32 lanes), the `if` (32 lanes), the store (8 lanes)
    assert rep.metrics[metrics.THREADS_PER_INST] == pytest.approx((32 + 32 + 8) / 3)
    assert rep.warp_efficiency == pytest.approx(72 / 96)
    # 8 float64 stores = 64 contiguous bytes from an aligned start: 2 sectors, one request
    assert rep.metrics[metrics.GLOBAL_REQUESTS["st"]] == 4
    assert rep.metrics[metrics.GLOBAL_SECTORS["st"]] == 4 * 2


@cuda.jit
def shared_f64_strided(out, stride):
    sh = cuda.shared.array(64, float64)
    t = cuda.threadIdx.x
    sh[t] = t
    sh[t + 32] = t
    cuda.syncthreads()
    out[t] = sh[(t * stride) % 64]


@pytest.mark.parametrize(
    "stride,wavefronts,conflicts",
    [
        # the ideal is the distinct bytes the warp reads / 128, rounded up (metrics.py)
        (1, 2, 0),  # doubles t: words 2t, 2t+1, each bank twice; 256 distinct bytes: ideal 2
        (2, 4, 2),  # doubles 2t: words 4t, 4t+1; bank 0 holds words 0, 32, 64, 96; ideal 2
        (4, 4, 3),  # doubles 4t mod 64, 16 distinct (t and t + 16 share one): words 8k, 8k+1;
        # bank 0 holds words 0, 32, 64, 96; 128 distinct bytes: ideal 1
        (32, 2, 1),  # doubles 0 and 32: words 0, 1, 64, 65; banks 0 and 1 hold two each; ideal 1
        (0, 1, 0),  # every lane reads double 0: a broadcast
    ],
)
def test_shared_float64_wavefronts_by_hand(stride, wavefronts, conflicts):
    rep = sim(shared_f64_strided, 1, 32, np.zeros(32), stride)
    m = rep.metrics
    assert m[metrics.SHARED_WAVEFRONTS["ld"]] == wavefronts
    assert m[metrics.SHARED_BANK_CONFLICTS["ld"]] == conflicts
    # the two stores: 32 consecutive doubles each, 2 wavefronts, no conflict
    assert m[metrics.SHARED_WAVEFRONTS["st"]] == 4 and m[metrics.SHARED_BANK_CONFLICTS["st"]] == 0


def test_row_index_from_threadidx_x_is_uncoalesced_sectors_by_hand():
    """add2d takes i (the row) from x, the fastest thread index: a warp of an (8, 8) block holds
    8 rows x 4 columns, so its 32 float32 loads of `a` touch 8 row segments of 4 floats."""
    h, w = 20, 13
    a = np.arange(h * w, dtype=np.float32).reshape(h, w)
    rep = sim(add2d, (3, 2), (8, 8), np.zeros_like(a), a, np.ones_like(a))
    requests, sectors = 0, 0
    for bx in range(3):
        for by in range(2):
            for warp in range(2):
                chunks = set()
                for lane in range(32):
                    tx, ty = lane % 8, warp * 4 + lane // 8
                    i, j = bx * 8 + tx, by * 8 + ty
                    if i < h and j < w:
                        chunks.add((i * w + j) * 4 // 32)  # 256-byte aligned base: same sectors
                if chunks:
                    requests, sectors = requests + 1, sectors + len(chunks)
    m = rep.metrics
    assert m[metrics.GLOBAL_REQUESTS["ld"]] == 2 * requests  # a and b
    assert m[metrics.GLOBAL_SECTORS["ld"]] == 2 * sectors
    assert m[metrics.GLOBAL_REQUESTS["st"]] == requests and m[metrics.GLOBAL_SECTORS["st"]] == sectors
    assert sectors / requests > 6  # far from the 4 of a coalesced warp


@cuda.jit
def literal_promotions(out, x, a):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i, 0] = x[i] / 3  # float32 / int literal is float64 in numba
        out[i, 1] = np.int32(a[i]) * np.int32(3)  # numpy's casts widen like numba's
        buf = cuda.local.array(2, np.int32)  # and still name a dtype
        buf[0] = a[i]
        out[i, 2] = buf[0] + np.float32(0.5)


def test_int_literals_and_numpy_casts_type_as_in_numba():
    x = np.linspace(0.1, 1, 8).astype(np.float32)
    a = np.full(8, 2**30, np.int64)
    out = np.zeros((8, 3))
    sim(literal_promotions, 1, 8, out, x, a)
    assert np.array_equal(out[:, 0], x.astype(np.float64) / 3)
    assert (out[:, 1] == 3 * 2**30).all() and (out[:, 2] == 2**30 + 0.5).all()
