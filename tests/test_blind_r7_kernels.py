"""Round 7's blind kernels (benchmarks/blind_r7/kernels.py) compute what they claim: each runs on
gpulab's SIMT simulator at a small size against a numpy reference. Only the simulator runs here,
never the performance model (the round's predictions are made once, by its own script)."""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import gpulab


sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from blind_runner import kernels_of  # noqa: E402

K = kernels_of("blind_r7")

R = np.random.default_rng(7)
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
f32 = lambda *s: R.random(s, dtype=np.float32)  # noqa: E731


def _run(kernel, grid, block, *args):
    gpulab.launch(kernel, grid, block, *args, backend="sim", max_steps=50_000_000, timeout_s=120)


# ---- shared-memory loops in few blocks -------------------------------------------------------
def case_smem_jacobi_tile_4blocks():
    x = f32(2, 32, 32)
    out = np.zeros_like(x)
    _run(K.smem_jacobi_tile_4blocks, 2, (32, 32), out, x, 3)
    ref = x.astype(np.float64)
    for _ in range(3):
        p = np.pad(ref, ((0, 0), (1, 1), (1, 1)))
        ref = 0.25 * (p[:, :-2, 1:-1] + p[:, 2:, 1:-1] + p[:, 1:-1, :-2] + p[:, 1:-1, 2:])
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def case_smem_ring_rotate_2blocks():
    x = f32(512)
    out = np.zeros_like(x)
    _run(K.smem_ring_rotate_2blocks, 2, 256, out, x, 4)
    ref = x.astype(np.float64).reshape(2, 256)
    for k in range(4):
        ref = 0.5 * (ref + np.roll(ref, -(k + 1), axis=1))
    np.testing.assert_allclose(out, ref.ravel(), rtol=1e-5)


def case_one_block_oddeven_sort():
    x = f32(1024)
    d = x.copy()
    _run(K.one_block_oddeven_sort, 1, 512, d)
    np.testing.assert_array_equal(d, np.sort(x))


# ---- 64-bit integer arithmetic ---------------------------------------------------------------
def case_xorshift64star_sum():
    s = R.integers(0, 1 << 63, 64, dtype=np.uint64)
    out = np.zeros_like(s)
    _run(K.xorshift64star_sum, 1, 64, out, s, 5)
    ref = []
    for v in s.tolist():
        x, acc = v | 1, 0
        for _ in range(5):
            x ^= x >> 12
            x = (x ^ (x << 25)) & M64
            x ^= x >> 27
            acc = (acc + (((x * 0x2545F4914F6CDD1D) & M64) >> 40)) & M64
        ref.append(acc)
    np.testing.assert_array_equal(out, np.array(ref, np.uint64))


def case_reverse_digits_i64():
    x = np.concatenate([[1, 10, 1200, 987654321], R.integers(1, 10**18, 60)])
    out = np.zeros_like(x)
    _run(K.reverse_digits_i64, 1, 64, out, x)
    np.testing.assert_array_equal(out, [int(str(int(v))[::-1]) for v in x])


def case_modinv_ext_euclid():
    m = 1_000_000_007
    a = np.concatenate([[1, 2, m, 2 * m], R.integers(1, 10**12, 60)])
    out = np.zeros_like(a)
    _run(K.modinv_ext_euclid, 1, 64, out, a, m)
    ref = [pow(int(v), -1, m) if int(v) % m else -1 for v in a]
    np.testing.assert_array_equal(out, ref)


def case_hash_combine_cols():
    cols = R.integers(0, 1 << 62, (8, 100))
    out = np.zeros(100, np.uint64)
    _run(K.hash_combine_cols, 1, 128, out, cols)
    ref = []
    for i in range(100):
        h = 0
        for c in range(8):
            h ^= (int(cols[c, i]) + 0x9E3779B97F4A7C15 + ((h << 6) & M64) + (h >> 2)) & M64
        ref.append(h)
    np.testing.assert_array_equal(out, np.array(ref, np.uint64))


# ---- scatters, gathers, atomics --------------------------------------------------------------
def case_scatter_rows_by_index():
    x = f32(16, 64)
    d = R.permutation(16).astype(np.int32)
    out = np.zeros_like(x)
    _run(K.scatter_rows_by_index, 2, 256, out, x, d)
    ref = np.zeros_like(x)
    ref[d] = x
    np.testing.assert_array_equal(out, ref)


def case_atomic_max_random_bins():
    k = R.integers(0, 32, 512).astype(np.int32)
    v = f32(512)
    best = np.zeros(32, np.float32)
    _run(K.atomic_max_random_bins, 2, 256, best, k, v)
    ref = np.zeros(32, np.float32)
    np.maximum.at(ref, k, v)
    np.testing.assert_array_equal(best, ref)


def case_embedding_bag_sum8():
    table = f32(50, 128)
    ids = R.integers(0, 50, (8, 8)).astype(np.int32)
    out = np.zeros((8, 128), np.float32)
    _run(K.embedding_bag_sum8, (1, 2), (128, 4), out, table, ids)
    np.testing.assert_allclose(out, table[ids].sum(1), rtol=1e-5)


def case_atomic_add_i64_4slots():
    x = R.integers(-(1 << 40), 1 << 40, 512)
    out = np.zeros(4, np.int64)
    _run(K.atomic_add_i64_4slots, 2, 256, out, x)
    np.testing.assert_array_equal(out, x.reshape(-1, 4).sum(0))


def case_atomic_add_f64_2slots():
    x = R.random(512)
    out = np.zeros(2)
    _run(K.atomic_add_f64_2slots, 2, 256, out, x)
    np.testing.assert_allclose(out, x.reshape(-1, 2).sum(0), rtol=1e-12)


def case_block_sum_shared_atomic_f64():
    x = R.random(700)
    out = np.zeros(1)
    _run(K.block_sum_shared_atomic_f64, 3, 256, out, x)
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-12)


def case_argmin_packed_i64():
    x = R.integers(-1000, 1000, 600).astype(np.int32)
    x[[17, 400]] = -5000  # a tie: the lower index wins
    best = np.array([np.iinfo(np.int64).max], np.int64)
    _run(K.argmin_packed_i64, 3, 256, best, x)
    assert best[0] >> 32 == -5000 and best[0] & M32 == 17


# ---- matmuls ---------------------------------------------------------------------------------
def case_batched_gemm20_shared():
    a, b = f32(3, 20, 20), f32(3, 20, 20)
    c = np.zeros_like(a)
    _run(K.batched_gemm20_shared, 3, (20, 20), c, a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def case_batched_gemm16_k64_chunks():
    a, b = f32(2, 16, 64), f32(2, 64, 16)
    c = np.zeros((2, 16, 16), np.float32)
    _run(K.batched_gemm16_k64_chunks, 2, (16, 16), c, a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def case_batched_gemm_global_naive():
    a, b = f32(2, 40, 24), f32(2, 24, 36)
    c = np.zeros((2, 40, 36), np.float32)
    _run(K.batched_gemm_global_naive, (2, 5, 2), (32, 8, 1), c, a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def case_matmul_naive_wide():
    a, b = f32(20, 48), f32(48, 40)
    c = np.zeros((20, 40), np.float32)
    _run(K.matmul_naive_wide, (3, 2), (16, 16), c, a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def case_matmul_naive_f64_sq():
    a, b = R.random((24, 24)), R.random((24, 24))
    c = np.zeros((24, 24))
    _run(K.matmul_naive_f64_sq, (2, 2), (16, 16), c, a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


# ---- scans -----------------------------------------------------------------------------------
def case_scan_dbuf_256x4():
    x = f32(2048)
    out = np.zeros_like(x)
    _run(K.scan_dbuf_256x4, 2, 256, out, x)
    ref = np.cumsum(x.astype(np.float64).reshape(2, 1024), axis=1).ravel()
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def case_kogge_stone_f64_256():
    x = R.random(512)
    out = np.zeros_like(x)
    _run(K.kogge_stone_f64_256, 2, 256, out, x)
    np.testing.assert_allclose(out, np.cumsum(x.reshape(2, 256), axis=1).ravel(), rtol=1e-12)


# ---- divergence ------------------------------------------------------------------------------
def case_branch_oddeven_lanes_unequal():
    x = f32(64)
    out = np.zeros_like(x)
    _run(K.branch_oddeven_lanes_unequal, 1, 64, out, x, 5)
    ref = x.astype(np.float64)
    for i in range(64):
        v = float(x[i])
        for _ in range(10 if i & 1 else 5):
            v = v * 0.75 + 0.25 if i & 1 else math.exp(-v)
        ref[i] = v
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def case_branch_block_uniform_f64():
    x = R.random(4 * 64) + 0.5
    out = np.zeros_like(x)
    _run(K.branch_block_uniform_f64, 4, 64, out, x, 6)
    ref = x.copy()
    for i in range(x.size):
        v = x[i]
        for _ in range(6):
            v = v * 0.999 + 0.001 if (i // 64) % 3 == 0 else 0.5 * (v + 2.0 / (v + 1.0))
        ref[i] = v
    np.testing.assert_allclose(out, ref, rtol=1e-13)


# ---- stencils --------------------------------------------------------------------------------
def case_stencil1d_7pt_f64():
    x = R.random(500)
    out = np.zeros_like(x)
    _run(K.stencil1d_7pt_f64, 2, 256, out, x)
    ref = np.zeros_like(x)
    c = slice(3, -3)
    ref[c] = 0.4 * x[c] + 0.2 * (x[2:-4] + x[4:-2]) + 0.05 * (x[1:-5] + x[5:-1]) + 0.05 * (x[:-6] + x[6:])
    np.testing.assert_allclose(out, ref, rtol=1e-13)


def case_stencil2d_cross_r2():
    u = f32(20, 40)
    out = np.zeros_like(u)
    _run(K.stencil2d_cross_r2, (2, 3), (32, 8), out, u)
    ref = np.zeros_like(u)
    c = (slice(2, -2), slice(2, -2))
    near = u[2:-2, 1:-3] + u[2:-2, 3:-1] + u[1:-3, 2:-2] + u[3:-1, 2:-2]
    far = u[2:-2, :-4] + u[2:-2, 4:] + u[:-4, 2:-2] + u[4:, 2:-2]
    ref[c] = 0.5 * u[c] + 0.1 * near + 0.025 * far
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def case_stencil3d_19pt():
    n = 10
    u = f32(n, n, n)
    out = np.zeros_like(u)
    _run(K.stencil3d_19pt, (1, 2, n), (32, 8, 1), out, u)
    ref = np.zeros((n, n, n))
    p = u.astype(np.float64)
    for z in range(1, n - 1):
        for y in range(1, n - 1):
            for x in range(1, n - 1):
                nb = p[z - 1 : z + 2, y - 1 : y + 2, x - 1 : x + 2]
                d = np.abs(np.indices((3, 3, 3)) - 1).sum(0)
                ref[z, y, x] = -4 * p[z, y, x] + nb[d == 1].sum() / 3 + nb[d == 2].sum() / 6
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


# ---- rows: softmax ---------------------------------------------------------------------------
def case_log_softmax_warp_f64():
    x = R.standard_normal((5, 70))
    out = np.zeros_like(x)
    _run(K.log_softmax_warp_f64, 1, 256, out, x)
    m = x.max(1, keepdims=True)
    np.testing.assert_allclose(out, x - m - np.log(np.exp(x - m).sum(1, keepdims=True)), rtol=1e-12)


def case_causal_softmax_warp():
    n = 40
    x = f32(n, n)
    out = np.zeros_like(x)
    _run(K.causal_softmax_warp, 5, 256, out, x)
    ref = np.zeros((n, n))
    for r in range(n):
        e = np.exp(x[r, : r + 1] - x[r, : r + 1].max())
        ref[r, : r + 1] = e / e.sum()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-7)


# ---- hashes ----------------------------------------------------------------------------------
def _crc32(words):
    c = 0xFFFFFFFF
    for w in words:
        c ^= int(w)
        for _ in range(32):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def case_crc32_bitwise_rows():
    w = R.integers(0, 1 << 32, (64, 8), dtype=np.uint32)
    out = np.zeros(64, np.uint32)
    _run(K.crc32_bitwise_rows, 1, 64, out, w)
    np.testing.assert_array_equal(out, [_crc32(r) for r in w])
    import zlib  # the same CRC-32 as zlib's, on the words' little-endian bytes

    assert _crc32(w[0]) == zlib.crc32(w[0].astype("<u4").tobytes())


def case_one_at_a_time_bytes():
    d = R.integers(0, 256, (64, 32), dtype=np.uint8)
    out = np.zeros(64, np.int64)
    _run(K.one_at_a_time_bytes, 1, 64, out, d)
    ref = []
    for row in d.tolist():
        h = 0
        for b in row:
            h = (h + b) & M32
            h = (h + (h << 10)) & M32
            h ^= h >> 6
        h = (h + (h << 3)) & M32
        h ^= h >> 11
        ref.append((h + (h << 15)) & M32)
    np.testing.assert_array_equal(out, ref)


# ---- data-dependent loops, float64, transcendentals ------------------------------------------
def case_collatz_peak_i64():
    s = np.concatenate([[1, 2, 3, 7, 27], R.integers(1, 10**9, 59)])
    out = np.zeros_like(s)
    _run(K.collatz_peak_i64, 1, 64, out, s)
    ref = []
    for n in s.tolist():
        p = n
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            p = max(p, n)
        ref.append(p)
    np.testing.assert_array_equal(out, ref)
    assert out[4] == 9232  # 27's known peak


def case_burning_ship_f32():
    h, w = 16, 32
    out = np.zeros((h, w), np.int32)
    _run(K.burning_ship_f32, (1, 2), (32, 8), out, 50)
    ref = np.zeros((h, w), np.int32)
    for py in range(h):
        for px in range(w):
            cr = np.float32(-2.2) + np.float32(3.2) * np.float32(px) / np.float32(w)
            ci = np.float32(-2.0) + np.float32(3.0) * np.float32(py) / np.float32(h)
            zr = zi = np.float32(0)
            k = 0
            while k < 50 and zr * zr + zi * zi < 4:
                zr, zi = zr * zr - zi * zi + cr, np.float32(2) * abs(zr * zi) + ci
                k += 1
            ref[py, px] = k
    assert (out != ref).mean() < 0.05  # float32 rounding may move a pixel at the boundary by a step
    assert len(np.unique(out)) > 3


def case_newton_cubic_basins():
    h, w = 16, 32
    out = np.zeros((h, w), np.int32)
    its = np.zeros((h, w), np.int32)
    _run(K.newton_cubic_basins, (1, 2), (32, 8), out, its, np.float32(1e-12))
    ys, xs = np.mgrid[0:h, 0:w]
    z = (-2 + 4 * xs / w) + 1j * (-2 + 4 * ys / h)
    for _ in range(64):
        z = z - (z**3 - 1) / (3 * z**2 + 1e-30)
    ref = np.where(z.real < 0, np.where(z.imag > 0, 1, 2), 0)
    assert (out != ref).mean() < 0.05
    assert set(np.unique(out)) == {0, 1, 2} and its.min() >= 1 and its.max() <= 64


def case_logistic_map_f64():
    r = 2.5 + 1.5 * R.random(64)
    out = np.zeros(64)
    _run(K.logistic_map_f64, 1, 64, out, r, 20)
    v = np.full(64, 0.5)
    for _ in range(20):
        v = r * v * (1 - v)
    np.testing.assert_allclose(out, v, rtol=1e-9)


def case_kahan_row_sum_f64():
    x = R.random((64, 100))
    out = np.zeros(64)
    _run(K.kahan_row_sum_f64, 1, 64, out, x)
    np.testing.assert_allclose(out, [math.fsum(r) for r in x], rtol=1e-15)


def case_erf_atan2_mix():
    x, y = f32(256) * 4 - 2, f32(256) * 4 - 2
    out = np.zeros_like(x)
    _run(K.erf_atan2_mix, 1, 256, out, x, y)
    ref = [math.erf(a) + math.atan2(b, a) * math.cosh(0.5 * b) for a, b in zip(x.tolist(), y.tolist())]
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


def case_pow_sqrt_log2_f64():
    x = R.random(256) * 10
    out = np.zeros_like(x)
    _run(K.pow_sqrt_log2_f64, 1, 256, out, x)
    np.testing.assert_allclose(out, x**1.7 + np.sqrt(x) * np.log2(x + 1), rtol=1e-12)


def case_half_leaky_relu_scale():
    x = (f32(256) * 2 - 1).astype(np.float16)
    out = np.zeros_like(x)
    _run(K.half_leaky_relu_scale, 1, 256, out, x, np.float16(0.125), np.float16(1.5))
    xf = x.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), np.where(xf < 0, 0.125 * xf, xf) * 1.5, rtol=2e-3)


def case_int8_saturating_add():
    a = R.integers(-128, 128, 512).astype(np.int8)
    b = R.integers(-128, 128, 512).astype(np.int8)
    out = np.zeros_like(a)
    _run(K.int8_saturating_add, 2, 256, out, a, b)
    np.testing.assert_array_equal(out, np.clip(a.astype(np.int32) + b, -128, 127))
    assert out.min() == -128 and out.max() == 127


# ---- transposes ------------------------------------------------------------------------------
def case_transpose_tile64x16():
    a = f32(32, 128)
    out = np.zeros((128, 32), np.float32)
    _run(K.transpose_tile64x16, (2, 2), (64, 4), out, a)
    np.testing.assert_array_equal(out, a.T)


def case_transpose_inplace_swap():
    a = f32(40, 40)
    d = a.copy()
    _run(K.transpose_inplace_swap, (2, 5), (32, 8), d)
    np.testing.assert_array_equal(d, a.T)


# ---- tiny grids, one block -------------------------------------------------------------------
def case_one_block_series_f64():
    out = np.zeros(64)
    _run(K.one_block_series_f64, 1, 64, out, 400)
    xv = 0.5 + np.arange(64) / 128.0
    ref = [sum((-1) ** (k + 1) * v**k / k for k in range(1, 401)) for v in xv]
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    np.testing.assert_allclose(out[:8], np.log1p(xv[:8]), rtol=1e-10)


def case_three_block_stride_clamp():
    x = f32(2000)
    out = np.zeros_like(x)
    _run(K.three_block_stride_clamp, 3, 256, out, x, np.float32(-0.5), np.float32(0.75))
    np.testing.assert_allclose(out, np.clip(2 * x - 1, -0.5, 0.75), rtol=1e-6)


CHECKS = {n[5:]: f for n, f in sorted(globals().items()) if n.startswith("case_")}


def test_every_round7_kernel_has_a_check_and_its_full_size_args_match_its_launch():
    names = [c["name"] for c in K.cases()]
    assert len(names) == len(set(names)) >= 32
    assert sorted(names) == sorted(CHECKS)
    for c in K.cases():  # the kernel's own name is the case's: ncu's rows are matched by it
        assert c["kernel"].py_func.__name__ == c["name"]


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_round7_kernel_on_the_simulator(name):
    CHECKS[name]()
