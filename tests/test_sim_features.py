"""The kernel language the book uses runs on gpulab's simulator with numba's semantics."""

import math

import numpy as np
import pytest
from numba import cuda, float32, int32

import gpulab


def run(kernel, grid, block, *args, **kw):
    return gpulab.launch(kernel, grid, block, *args, backend="sim", **kw)


@cuda.jit
def index_3d(out):
    x = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    y = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    z = cuda.threadIdx.z + cuda.blockIdx.z * cuda.blockDim.z
    gx, gy, gz = cuda.gridsize(3)
    if x < out.shape[2] and y < out.shape[1] and z < out.shape[0]:
        out[z, y, x] = x + 10 * y + 100 * z + 1000 * (gx + gy + gz)


def test_3d_indices_and_gridsize():
    out = np.zeros((3, 5, 7), np.int64)
    run(index_3d, (2, 2, 2), (4, 3, 2), out)
    z, y, x = np.indices(out.shape)
    assert np.array_equal(out, x + 10 * y + 100 * z + 1000 * (8 + 6 + 4))


@cuda.jit
def grid2(out):
    x, y = cuda.grid(2)
    if y < out.shape[0] and x < out.shape[1]:
        out[y][x] = cuda.laneid + 100 * cuda.warpsize


def test_grid2_chained_indexing_and_laneid():
    out = np.zeros((6, 9), np.int64)
    run(grid2, (3, 2), (4, 4), out)
    # lane = linear thread index in block mod 32; 16 threads per block -> lane < 16
    ty, tx = np.indices(out.shape)
    lane = ((ty % 4) * 4 + (tx % 4)) % 32
    assert np.array_equal(out, lane + 3200)


@cuda.jit
def control(out, n):
    i = cuda.grid(1)
    if i >= n:
        return
    acc = 0
    k = 0
    while True:
        k += 1
        if k % 3 == 0:
            continue
        elif k > i % 7:
            break
        else:
            acc += k
    for j in range(i % 4, i % 9, 2):
        acc += 100 * j
    out[i] = acc


def test_control_flow_matches_python():
    n = 90
    out = np.zeros(n, np.int64)
    run(control, 1, 128, out, n)
    expected = []
    for i in range(n):
        acc, k = 0, 0
        while True:
            k += 1
            if k % 3 == 0:
                continue
            elif k > i % 7:
                break
            else:
                acc += k
        for j in range(i % 4, i % 9, 2):
            acc += 100 * j
        expected.append(acc)
    assert out.tolist() == expected


@cuda.jit(device=True)
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@cuda.jit
def uses_device(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = clamp(a[i], float32(-1.0), float32(1.0)) if a[i] != 0 else 7


def test_device_function_with_early_returns_and_ifexp():
    a = np.linspace(-3, 3, 50).astype(np.float32)
    a[10] = 0
    out = np.zeros_like(a)
    run(uses_device, 2, 32, out, a)
    exp = np.clip(a, -1, 1)
    exp[10] = 7
    assert np.array_equal(out, exp)


@cuda.jit
def local_and_const(out, table):
    c = cuda.const.array_like(table)
    loc = cuda.local.array(4, int32)
    i = cuda.grid(1)
    for k in range(4):
        loc[k] = c[(i + k) % 4] * (k + 1)
    s = 0
    for k in range(4):
        s += loc[k]
    out[i] = s


def test_local_and_const_arrays_are_per_thread():
    table = np.array([1, 2, 3, 4], np.int32)
    out = np.zeros(40, np.int64)
    run(local_and_const, 1, 40, out, table)
    exp = [sum(table[(i + k) % 4] * (k + 1) for k in range(4)) for i in range(40)]
    assert out.tolist() == exp


@cuda.jit
def dyn_shared(out, a):
    sh = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = sh[cuda.blockDim.x - 1 - t]


def test_dynamic_shared_memory_reverses_each_block():
    a = np.arange(128, dtype=np.float32)
    out = np.zeros_like(a)
    run(dyn_shared, 2, 64, out, a, shared_bytes=64 * 4)
    assert np.array_equal(out, a.reshape(2, 64)[:, ::-1].ravel())


@cuda.jit
def votes(out):
    t = cuda.threadIdx.x
    c = cuda.syncthreads_count(int(t % 3 == 0))  # numba's predicate is an int, not a bool
    a = cuda.syncthreads_and(int(t < 1000))
    o = cuda.syncthreads_or(int(t == 5))
    out[t, 0] = c
    out[t, 1] = a
    out[t, 2] = o
    out[t, 3] = cuda.ballot_sync(0xFFFFFFFF, t % 2 == 1)
    out[t, 4] = cuda.all_sync(0xFFFFFFFF, t < 40)
    out[t, 5] = cuda.any_sync(0xFFFFFFFF, t == 33)
    cuda.syncwarp()
    if t % 4 == 0:
        out[t, 6] = cuda.activemask()


def test_block_and_warp_votes():
    out = np.zeros((64, 7), np.int64)
    run(votes, 1, 64, out)
    t = np.arange(64)
    assert (out[:, 0] == 22).all() and (out[:, 1] == 1).all() and (out[:, 2] == 1).all()
    assert (out[:, 3] == 0xAAAAAAAA - (1 << 32)).all()  # ballot is int32 in numba (and on an H200)
    assert out[:32, 4].all() and not out[32:, 4].any()
    assert not out[:32, 5].any() and out[32:, 5].all()
    assert (out[t % 4 == 0, 6] == 0x11111111).all()


@cuda.jit
def shuffles(out, a):
    t = cuda.threadIdx.x
    v = a[t]
    out[0, t] = cuda.shfl_sync(0xFFFFFFFF, v, 3)
    out[1, t] = cuda.shfl_up_sync(0xFFFFFFFF, v, 2)
    out[2, t] = cuda.shfl_down_sync(0xFFFFFFFF, v, 5)
    out[3, t] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)
    out[4, t] = cuda.shfl_sync(0xFFFFFFFF, v, t + 1)


def test_shuffle_semantics_per_warp():
    a = np.arange(64, dtype=np.float32) * 2
    out = np.zeros((5, 64), np.float32)
    rep = run(shuffles, 1, 64, out, a)
    lane, base = np.arange(64) % 32, np.arange(64) // 32 * 32
    assert np.array_equal(out[0], a[base + 3])
    assert np.array_equal(out[1], np.where(lane >= 2, a[np.arange(64) - 2], a))
    assert np.array_equal(out[2], np.where(lane < 27, a[np.minimum(np.arange(64) + 5, 63)], a))
    assert np.array_equal(out[3], a[base + (lane ^ 1)])
    assert np.array_equal(out[4], a[base + (lane + 1) % 32])
    assert rep.shuffles and rep.shuffles[0]["kind"] == "shfl_sync"


@cuda.jit
def atomics(counters, hist, olds, keys):
    i = cuda.grid(1)
    if i < keys.shape[0]:
        olds[i] = cuda.atomic.add(counters, 0, 1)
        cuda.atomic.add(hist, keys[i], 1)
        cuda.atomic.max(counters, 1, i)
        cuda.atomic.min(counters, 2, i)
        cuda.atomic.sub(counters, 3, 2)
        cuda.atomic.exch(counters, 4, i)
        cuda.atomic.cas(counters, 5, i, i + 1)


def test_atomics_under_contention_return_distinct_old_values():
    n = 300
    keys = (np.arange(n) * 7 % 5).astype(np.int64)
    counters = np.zeros(6, np.int64)
    counters[2] = 10**6
    hist = np.zeros(5, np.int64)
    olds = np.zeros(n, np.int64)
    run(atomics, 3, 128, counters, hist, olds, keys)
    assert sorted(olds.tolist()) == list(range(n))  # each thread saw a distinct old value
    assert counters[0] == n and counters[1] == n - 1 and counters[2] == 0
    assert counters[3] == -2 * n and 0 <= counters[4] < n
    assert counters[5] == n  # cas chain 0->1->...->n
    assert np.array_equal(hist, np.bincount(keys, minlength=5))


@cuda.jit
def typed(out32, out64, a):
    i = cuda.grid(1)
    x = a[i]
    out32[i] = x * x  # float32 * float32 stays float32
    out64[i] = x * 0.1  # a float literal is float64 in numba
    s = 0.0
    s += x


def test_float32_stays_float32_and_literals_are_float64():
    a = (np.arange(32, dtype=np.float32) + np.float32(0.1)).astype(np.float32)
    o32, o64 = np.zeros(32, np.float64), np.zeros(32, np.float64)
    run(typed, 1, 32, o32, o64, a)
    assert np.array_equal(o32, (a * a).astype(np.float64))  # rounded to float32
    assert np.array_equal(o64, a.astype(np.float64) * 0.1)


@cuda.jit
def mathy(out, a):
    i = cuda.grid(1)
    x = a[i]
    out[i, 0] = math.sqrt(x)
    out[i, 1] = math.floor(x * 3.7)
    out[i, 2] = min(x, 2.0) + max(x, 1.0, 0.5)
    out[i, 3] = abs(-x) + int(x * 2.6)
    out[i, 4] = math.exp(-x) + math.sin(x) * math.cos(x) + math.tanh(x)
    out[i, 5] = 1 if not (x > 1.0 and x < 3.0) else 2
    out[i, 6] = a.shape[0] + len(a)


def test_math_and_builtins():
    a = np.linspace(0, 4, 32)
    out = np.zeros((32, 7))
    run(mathy, 1, 32, out, a)
    assert np.allclose(out[:, 0], np.sqrt(a))
    assert np.array_equal(out[:, 1], np.floor(a * 3.7))
    assert np.allclose(out[:, 2], np.minimum(a, 2) + np.maximum(a, 1))
    assert np.array_equal(out[:, 3], a + np.trunc(a * 2.6))
    assert np.allclose(out[:, 4], np.exp(-a) + np.sin(a) * np.cos(a) + np.tanh(a))
    assert np.array_equal(out[:, 5], np.where((a > 1) & (a < 3), 2, 1))
    assert (out[:, 6] == 64).all()


@cuda.jit
def half(out, a):
    i = cuda.grid(1)
    out[i] = a[i] + a[i]


def test_float16_arrays():
    a = np.linspace(0, 1000, 32).astype(np.float16)
    out = np.zeros(32, np.float16)
    run(half, 1, 32, out, a)
    assert np.array_equal(out, a + a)


@cuda.jit
def tuple_swap(out):
    i = cuda.grid(1)
    a, b = i, 2 * i
    a, b = b, a
    p = (a, b)
    out[i, 0] = p[0]
    out[i, 1] = p[1]


def test_tuples():
    out = np.zeros((32, 2), np.int64)
    run(tuple_swap, 1, 32, out)
    assert np.array_equal(out[:, 0], 2 * np.arange(32)) and np.array_equal(out[:, 1], np.arange(32))


def test_scalars_pass_by_value_and_arrays_update_in_place():
    @cuda.jit
    def scale(a, f, n):
        i = cuda.grid(1)
        if i < n:
            a[i] = a[i] * f
        f = 0.0

    a = np.arange(10, dtype=np.float64)
    f = 3.0
    run(scale, 1, 32, a, f, 10)
    assert np.array_equal(a, np.arange(10) * 3.0) and f == 3.0


def test_blocks_partial_warp_lanes_never_run():
    @cuda.jit
    def count(c):
        cuda.atomic.add(c, 0, 1)

    c = np.zeros(1, np.int64)
    rep = run(count, 3, 40, c)
    assert c[0] == 120
    # 2 warps per block of 40 threads; the second has 8 active lanes
    assert rep.warp_efficiency == pytest.approx((32 + 8) / 64)


def test_gpu_backend_without_gpu_says_so():
    if gpulab.gpu_available():
        pytest.skip("a GPU is present")
    with pytest.raises(gpulab.errors.BackendUnavailable, match="backend='sim'"):
        gpulab.launch(half, 1, 32, np.zeros(32, np.float16), np.zeros(32, np.float16), backend="gpu")


def test_auto_picks_sim_without_gpu():
    if gpulab.gpu_available():
        pytest.skip("a GPU is present")
    rep = gpulab.launch(half, 1, 32, np.zeros(32, np.float16), np.zeros(32, np.float16))
    assert rep.backend == "sim"


def test_print_one_line_per_active_thread(capsys):
    @cuda.jit
    def k(n):
        i = cuda.grid(1)
        if i < n:
            print("thread", i)

    run(k, 1, 32, 3)
    assert capsys.readouterr().out.splitlines() == ["thread 0", "thread 1", "thread 2"]


@cuda.jit
def matches(out, x):
    i = cuda.grid(1)
    out[i, 0] = cuda.match_any_sync(0xFFFFFFFF, x[i])
    m, p = cuda.match_all_sync(0xFFFFFFFF, x[i] // 100)
    out[i, 1] = m
    out[i, 2] = p


def test_match_any_and_all():
    x = (np.arange(32) % 3).astype(np.int64)
    out = np.zeros((32, 3), np.int64)
    run(matches, 1, 32, out, x)
    for i in range(32):  # int32 results, as numba types them (and as an H200 returns them)
        bits = sum(1 << j for j in range(32) if x[j] == x[i])
        assert out[i, 0] == (bits - (1 << 32) if bits >= 1 << 31 else bits)
    assert (out[:, 1] == -1).all() and out[:, 2].all()


def test_functions_imported_from_math_run_per_lane():
    """``from math import sin`` binds the function itself, not the module: it must still be
    evaluated for every lane (it used to reach Python's math.sin with an array)."""
    from math import exp, sin

    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = sin(x[i]) + exp(x[i])

    x = np.linspace(0, 1, 40).astype(np.float32)
    out = np.zeros_like(x)
    gpulab.launch(k, 1, 64, out, x, backend="sim")
    assert np.allclose(out, np.sin(x) + np.exp(x), rtol=1e-6)


def test_literal_arithmetic_in_a_shared_shape_is_accepted_like_numba():
    """CPython folds ``64 + 4`` to 68 before numba reads the bytecode, so numba accepts it."""

    @cuda.jit
    def k(out):
        s = cuda.shared.array((2, 64 + 4), float32)
        t = cuda.threadIdx.x
        s[0, t] = t
        cuda.syncthreads()
        out[t] = s[0, t] + s.shape[1]

    out = np.zeros(32, np.float32)
    gpulab.launch(k, 1, 32, out, backend="sim")
    assert out[3] == 3 + 68


def test_a_local_array_beyond_cuda_s_512_kib_per_thread_is_refused():
    from gpulab import errors

    @cuda.jit
    def k(out):
        big = cuda.local.array(1 << 20, float32)  # 4 MiB per thread
        big[0] = 1.0
        out[0] = big[0]

    with pytest.raises(errors.KernelError, match="512 KiB"):
        gpulab.launch(k, 1, 32, np.zeros(1, np.float32), backend="sim")
