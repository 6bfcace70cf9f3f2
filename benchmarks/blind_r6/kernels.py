"""Round 6 blind set for gpulab.predict: kernels written while the model was being revised, none of
them seen by the model or its authors before its predictions were committed (protocol:
benchmarks/blind_r6/README.md).

The kinds rounds 3-5 found hard, in new shapes: shared-memory loops in few blocks, 64-bit integer
arithmetic (splitmix64, LCG walks, modular powers, integer Newton square roots, FNV hashes, ``%``
by a runtime modulus), random scatters, small batched matmuls in shared memory, a ping-pong block
scan, a naive matmul of a tall shape, global atomics on few addresses, loops that diverge at two
paths and loops that branch per warp. Beside them what students write: 1-D/2-D/3-D stencils of
new shapes, a work-efficient (Blelloch) scan, log-softmax and online softmax rows, batched GEMM,
sorted gathers and float64 scatters, a Julia set, a float64 RK4 integrator, shared min/max
atomics, transcendentals, float16 and int8, rectangular and batched transposes, a grid of two
blocks, a one-block scan, a 5x5 convolution with a halo, warp-per-row normalisation, a column
cumulative sum and a stream compaction on one counter.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, float64, int32, int64, uint64

FULL = 0xFFFFFFFF


# ---- shared-memory loops in few blocks -------------------------------------------------------
@cuda.jit(cache=True)
def smem_relax_8blocks(out, x, iters):
    s = cuda.shared.array(258, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 256 + t
    s[t + 1] = x[i]
    if t == 0:
        s[0] = 0.0
        s[257] = 0.0
    cuda.syncthreads()
    for _ in range(iters):
        v = float32(0.25) * s[t] + float32(0.5) * s[t + 1] + float32(0.25) * s[t + 2]
        cuda.syncthreads()
        s[t + 1] = v
        cuda.syncthreads()
    out[i] = s[t + 1]


@cuda.jit(cache=True)
def one_block_scan_i64(out, x):
    buf = cuda.shared.array(1024, int64)
    t = cuda.threadIdx.x
    carry = int64(0)
    for base in range(0, x.size, 1024):
        buf[t] = x[base + t]
        cuda.syncthreads()
        off = 1
        while off < 1024:
            v = buf[t]
            if t >= off:
                v += buf[t - off]
            cuda.syncthreads()
            buf[t] = v
            cuda.syncthreads()
            off *= 2
        out[base + t] = buf[t] + carry
        carry += buf[1023]
        cuda.syncthreads()


# ---- 64-bit integer arithmetic ---------------------------------------------------------------
@cuda.jit(cache=True)
def splitmix64_rounds(out, seeds, rounds):
    i = cuda.grid(1)
    if i < seeds.size:
        z = seeds[i]
        for _ in range(rounds):
            z = z + uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
            z = z ^ (z >> uint64(31))
        out[i] = z


@cuda.jit(cache=True)
def modpow_i64(out, base, exp, m):
    i = cuda.grid(1)
    if i < out.size:
        b = base[i] % m
        e = exp[i]
        r = 1
        while e > 0:
            if e & 1:
                r = r * b % m
            b = b * b % m
            e >>= 1
        out[i] = r


@cuda.jit(cache=True)
def isqrt_newton_i64(out, x):
    i = cuda.grid(1)
    if i < x.size:
        n = x[i]
        r = n
        if n > 1:
            y = (r + 1) // 2
            while y < r:
                r = y
                y = (r + n // r) // 2
        out[i] = r


@cuda.jit(cache=True)
def fnv1a_rows(out, words):
    r = cuda.grid(1)
    if r < words.shape[0]:
        h = 2166136261
        for j in range(words.shape[1]):
            h = ((h ^ words[r, j]) * 16777619) & 0xFFFFFFFF
        out[r] = h


@cuda.jit(cache=True)
def lcg64_walk(pos, seeds, steps):
    i = cuda.grid(1)
    if i < seeds.size:
        s = seeds[i]
        p = 0
        for _ in range(steps):
            s = s * uint64(6364136223846793005) + uint64(1442695040888963407)
            if s >> uint64(63):
                p += 1
            else:
                p -= 1
        pos[i] = p


@cuda.jit(cache=True)
def bucket_mod_atomic(counts, keys, nb):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.add(counts, keys[i] % nb, 1)


# ---- scatters, gathers, atomics --------------------------------------------------------------
@cuda.jit(cache=True)
def scatter_perm_f64(out, x, perm):
    i = cuda.grid(1)
    if i < x.size:
        out[perm[i]] = 2.0 * x[i]


@cuda.jit(cache=True)
def gather_sorted_idx_f64(out, x, idx):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[idx[i]] + 1.0


@cuda.jit(cache=True)
def scatter_add_bins_f64(hist, keys, w):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.add(hist, keys[i], w[i])


@cuda.jit(cache=True)
def atomic_add_8_slots(out, x):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, i & 7, x[i])


@cuda.jit(cache=True)
def compact_positive_atomic(out, count, x):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if v > 0:
            k = cuda.atomic.add(count, 0, 1)
            out[k] = v


@cuda.jit(cache=True)
def block_minmax_shared_atomic(mn, mx, x):
    smin = cuda.shared.array(1, int32)
    smax = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        smin[0] = 2147483647
        smax[0] = -2147483648
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        cuda.atomic.min(smin, 0, v)
        cuda.atomic.max(smax, 0, v)
    cuda.syncthreads()
    if t == 0:
        cuda.atomic.min(mn, 0, smin[0])
        cuda.atomic.max(mx, 0, smax[0])


# ---- matmuls ---------------------------------------------------------------------------------
@cuda.jit(cache=True)
def batched_gemm12_shared(c, a, b):
    sa = cuda.shared.array((12, 12), float32)
    sb = cuda.shared.array((12, 12), float32)
    m = cuda.blockIdx.x
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sa[ty, tx] = a[m, ty, tx]
    sb[ty, tx] = b[m, ty, tx]
    cuda.syncthreads()
    s = float32(0.0)
    for k in range(12):
        s += sa[ty, k] * sb[k, tx]
    c[m, ty, tx] = s


@cuda.jit(cache=True)
def batched_gemm32_block(c, a, b):
    sa = cuda.shared.array((32, 32), float32)
    sb = cuda.shared.array((32, 32), float32)
    m = cuda.blockIdx.x
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sa[ty, tx] = a[m, ty, tx]
    sb[ty, tx] = b[m, ty, tx]
    cuda.syncthreads()
    s = float32(0.0)
    for k in range(32):
        s += sa[ty, k] * sb[k, tx]
    c[m, ty, tx] = s


@cuda.jit(cache=True)
def matmul_naive_tall(c, a, b):
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        s = float32(0.0)
        for k in range(a.shape[1]):
            s += a[row, k] * b[k, col]
        c[row, col] = s


# ---- scans -----------------------------------------------------------------------------------
@cuda.jit(cache=True)
def scan_pingpong_1024_i32(out, x):
    buf = cuda.shared.array((2, 1024), int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[0, t] = x[i]
    cuda.syncthreads()
    src = 0
    off = 1
    while off < 1024:
        v = buf[src, t]
        if t >= off:
            v += buf[src, t - off]
        buf[1 - src, t] = v
        cuda.syncthreads()
        src = 1 - src
        off *= 2
    out[i] = buf[src, t]


@cuda.jit(cache=True)
def blelloch_scan_512(out, x):
    s = cuda.shared.array(512, float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * 512
    s[2 * t] = x[base + 2 * t]
    s[2 * t + 1] = x[base + 2 * t + 1]
    off = 1
    d = 256
    while d > 0:
        cuda.syncthreads()
        if t < d:
            ai = off * (2 * t + 1) - 1
            bi = off * (2 * t + 2) - 1
            s[bi] += s[ai]
        off *= 2
        d //= 2
    if t == 0:
        s[511] = 0.0
    d = 1
    while d < 512:
        off //= 2
        cuda.syncthreads()
        if t < d:
            ai = off * (2 * t + 1) - 1
            bi = off * (2 * t + 2) - 1
            tmp = s[ai]
            s[ai] = s[bi]
            s[bi] += tmp
        d *= 2
    cuda.syncthreads()
    out[base + 2 * t] = s[2 * t]
    out[base + 2 * t + 1] = s[2 * t + 1]


@cuda.jit(cache=True)
def colwise_cumsum(out, x):
    c = cuda.grid(1)
    if c < x.shape[1]:
        s = float32(0.0)
        for r in range(x.shape[0]):
            s += x[r, c]
            out[r, c] = s


# ---- divergence ------------------------------------------------------------------------------
@cuda.jit(cache=True)
def branch_halfwarp_loops(out, x, n):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if i % 32 < 16:
            for _ in range(n):
                v = v * float32(0.999) + float32(0.5)
        else:
            for _ in range(n):
                v = math.sqrt(v + float32(1.0))
        out[i] = v


@cuda.jit(cache=True)
def branch_warp_uniform_loop(out, x, n):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if (i // 32) % 2 == 0:
            for _ in range(n):
                v = v * float32(0.999) + float32(0.5)
        else:
            for _ in range(n):
                v = math.sqrt(v + float32(1.0))
        out[i] = v


# ---- stencils --------------------------------------------------------------------------------
@cuda.jit(cache=True)
def stencil1d_r4_shared(out, x):
    s = cuda.shared.array(264, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    s[t + 4] = x[i]
    if t < 4:
        s[t] = x[i - 4] if i >= 4 else float32(0.0)
        s[t + 260] = x[i + 256] if i + 256 < n else float32(0.0)
    cuda.syncthreads()
    v = float32(0.2) * s[t + 4]
    for k in range(1, 5):
        v += float32(0.1) * (s[t + 4 - k] + s[t + 4 + k])
    out[i] = v


@cuda.jit(cache=True)
def laplace9_2d(out, u):
    x, y = cuda.grid(2)
    h, w = u.shape
    if 0 < x < w - 1 and 0 < y < h - 1:
        edge = u[y, x - 1] + u[y, x + 1] + u[y - 1, x] + u[y + 1, x]
        corner = u[y - 1, x - 1] + u[y - 1, x + 1] + u[y + 1, x - 1] + u[y + 1, x + 1]
        out[y, x] = (float32(4.0) * edge + corner - float32(20.0) * u[y, x]) * float32(1.0 / 6.0)


@cuda.jit(cache=True)
def stencil3d_r2_star(out, u):
    x, y, z = cuda.grid(3)
    n = u.shape[0]
    if 1 < x < n - 2 and 1 < y < n - 2 and 1 < z < n - 2:
        s = float32(-7.5) * u[z, y, x]
        for d in range(1, 3):
            wgt = float32(4.0 / 3.0) if d == 1 else float32(-1.0 / 12.0)
            s += wgt * (u[z, y, x - d] + u[z, y, x + d] + u[z, y - d, x] + u[z, y + d, x])
            s += wgt * (u[z - d, y, x] + u[z + d, y, x])
        out[z, y, x] = s


@cuda.jit(cache=True)
def conv5x5_shared_halo(out, img, w):
    tile = cuda.shared.array((20, 20), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0 = cuda.blockIdx.x * 16 - 2
    y0 = cuda.blockIdx.y * 16 - 2
    h, wd = img.shape
    for k in range(ty * 16 + tx, 400, 256):
        yy = y0 + k // 20
        xx = x0 + k % 20
        v = float32(0.0)
        if 0 <= yy < h and 0 <= xx < wd:
            v = img[yy, xx]
        tile[k // 20, k % 20] = v
    cuda.syncthreads()
    s = float32(0.0)
    for dy in range(5):
        for dx in range(5):
            s += w[dy, dx] * tile[ty + dy, tx + dx]
    out[y0 + 2 + ty, x0 + 2 + tx] = s


# ---- rows: softmax, normalisation ------------------------------------------------------------
@cuda.jit(cache=True)
def log_softmax_block_row(out, x):
    sh = cuda.shared.array(256, float32)
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = x.shape[1]
    m = float32(-3.0e38)
    for j in range(t, n, 256):
        m = max(m, x[row, j])
    sh[t] = m
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            sh[t] = max(sh[t], sh[t + h])
        cuda.syncthreads()
        h //= 2
    m = sh[0]
    cuda.syncthreads()
    s = float32(0.0)
    for j in range(t, n, 256):
        s += math.exp(x[row, j] - m)
    sh[t] = s
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            sh[t] += sh[t + h]
        cuda.syncthreads()
        h //= 2
    lse = m + math.log(sh[0])
    for j in range(t, n, 256):
        out[row, j] = x[row, j] - lse


@cuda.jit(cache=True)
def softmax_online_thread_row(out, x):
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = float32(-3.0e38)
        s = float32(0.0)
        for j in range(x.shape[1]):
            v = x[r, j]
            if v > m:
                s = s * math.exp(m - v) + float32(1.0)
                m = v
            else:
                s += math.exp(v - m)
        inv = float32(1.0) / s
        for j in range(x.shape[1]):
            out[r, j] = math.exp(x[r, j] - m) * inv


@cuda.jit(cache=True)
def l2_normalize_warp_rows(out, x):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < x.shape[0]:
        s = float32(0.0)
        for j in range(lane, x.shape[1], 32):
            v = x[row, j]
            s += v * v
        for off in (16, 8, 4, 2, 1):
            s += cuda.shfl_xor_sync(FULL, s, off)
        inv = float32(1.0) / math.sqrt(s + float32(1e-12))
        for j in range(lane, x.shape[1], 32):
            out[row, j] = x[row, j] * inv


# ---- data-dependent loops, float64, transcendentals ------------------------------------------
@cuda.jit(cache=True)
def julia_f32(out, cr, ci, max_iter):
    px, py = cuda.grid(2)
    h, w = out.shape
    if px < w and py < h:
        zr = float32(-1.6) + float32(3.2) * float32(px) / float32(w)
        zi = float32(-1.2) + float32(2.4) * float32(py) / float32(h)
        k = 0
        while k < max_iter and zr * zr + zi * zi < float32(4.0):
            zr, zi = zr * zr - zi * zi + cr, float32(2.0) * zr * zi + ci
            k += 1
        out[py, px] = k


@cuda.jit(cache=True)
def rk4_damped_f64(out, x0, v0, steps, dt):
    i = cuda.grid(1)
    if i < x0.size:
        x = x0[i]
        v = v0[i]
        k2 = 4.0 + 0.5 * (i % 7)
        c = 0.1
        for _ in range(steps):
            a1 = -k2 * x - c * v
            x2 = x + 0.5 * dt * v
            v2 = v + 0.5 * dt * a1
            a2 = -k2 * x2 - c * v2
            x3 = x + 0.5 * dt * v2
            v3 = v + 0.5 * dt * a2
            a3 = -k2 * x3 - c * v3
            x4 = x + dt * v3
            v4 = v + dt * a3
            a4 = -k2 * x4 - c * v4
            x = x + dt / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
            v = v + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        out[i] = x


@cuda.jit(cache=True)
def softplus_tanh_f32(out, x):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.tanh(v) * math.log1p(math.exp(v))


@cuda.jit  # not cache=True: numba cannot pickle a float16 kernel's linked library (round 5)
def half_horner3(out, x, c0, c1, c2, c3):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = ((c3 * v + c2) * v + c1) * v + c0


@cuda.jit(cache=True)
def int8_requant(out, acc, scale, zp):
    i = cuda.grid(1)
    if i < acc.size:
        q = int32(math.floor(float32(acc[i]) * scale + float32(0.5))) + zp
        out[i] = min(max(q, -128), 127)


@cuda.jit(cache=True)
def two_block_poly_stride(out, x):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        v = x[i]
        out[i] = ((float32(0.3) * v - float32(1.1)) * v + float32(0.7)) * v + float32(2.0)


# ---- transposes ------------------------------------------------------------------------------
@cuda.jit(cache=True)
def transpose_f64_rect_shared(out, a):
    tile = cuda.shared.array((16, 17), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * 16, cuda.blockIdx.y * 16
    tile[ty, tx] = a[by + ty, bx + tx]
    cuda.syncthreads()
    out[bx + ty, by + tx] = tile[tx, ty]


@cuda.jit(cache=True)
def transpose_batched_naive(out, a):
    x, y, b = cuda.grid(3)
    if b < a.shape[0] and y < a.shape[1] and x < a.shape[2]:
        out[b, x, y] = a[b, y, x]


def _sorted_idx(r, n, size):
    return np.sort(r.integers(0, size, n)).astype(np.int32)


def cases():
    """[dict(name, kernel, grid, block, args (rng -> list), shared_bytes)], in launch order."""
    g = lambda n, b=256: ((n + b - 1) // b,)  # noqa: E731
    f32 = lambda r, *s: r.random(s, dtype=np.float32)  # noqa: E731
    M20, M22, M23, M24, M25 = 1 << 20, 1 << 22, 1 << 23, 1 << 24, 1 << 25
    C = [
        (
            "smem_relax_8blocks",
            smem_relax_8blocks,
            (8,),
            256,
            lambda r: [np.zeros(2048, np.float32), f32(r, 2048), 4000],
        ),
        (
            "one_block_scan_i64",
            one_block_scan_i64,
            (1,),
            1024,
            lambda r: [np.zeros(1 << 16, np.int64), r.integers(-1000, 1000, 1 << 16)],
        ),
        (
            "splitmix64_rounds",
            splitmix64_rounds,
            g(M22),
            256,
            lambda r: [np.zeros(M22, np.uint64), r.integers(0, 1 << 63, M22, dtype=np.uint64), 16],
        ),
        (
            "modpow_i64",
            modpow_i64,
            g(M20),
            256,
            lambda r: [
                np.zeros(M20, np.int64),
                r.integers(2, 1 << 40, M20),
                r.integers(0, 1 << 20, M20),
                1_000_003,
            ],
        ),
        (
            "isqrt_newton_i64",
            isqrt_newton_i64,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.int64), r.integers(0, 1 << 62, M20)],
        ),
        (
            "fnv1a_rows",
            fnv1a_rows,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.int64), r.integers(0, 1 << 32, (M20, 16), dtype=np.uint32)],
        ),
        (
            "lcg64_walk",
            lcg64_walk,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.int64), r.integers(0, 1 << 63, M20, dtype=np.uint64), 256],
        ),
        (
            "bucket_mod_atomic",
            bucket_mod_atomic,
            g(M22),
            256,
            lambda r: [np.zeros(97, np.int32), r.integers(0, 1 << 40, M22), 97],
        ),
        (
            "scatter_perm_f64",
            scatter_perm_f64,
            g(M23),
            256,
            lambda r: [np.zeros(M23), r.random(M23), r.permutation(M23).astype(np.int32)],
        ),
        (
            "gather_sorted_idx_f64",
            gather_sorted_idx_f64,
            g(M23),
            256,
            lambda r: [np.zeros(M23), r.random(M24), _sorted_idx(r, M23, M24)],
        ),
        (
            "scatter_add_bins_f64",
            scatter_add_bins_f64,
            g(M22),
            256,
            lambda r: [np.zeros(65536), r.integers(0, 65536, M22).astype(np.int32), r.random(M22)],
        ),
        (
            "atomic_add_8_slots",
            atomic_add_8_slots,
            g(1 << 21),
            256,
            lambda r: [np.zeros(8, np.float32), f32(r, 1 << 21)],
        ),
        (
            "compact_positive_atomic",
            compact_positive_atomic,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.float32), np.zeros(1, np.int32), f32(r, M20) - 0.5],
        ),
        (
            "block_minmax_shared_atomic",
            block_minmax_shared_atomic,
            g(M24),
            256,
            lambda r: [
                np.array([2147483647], np.int32),
                np.array([-2147483648], np.int32),
                r.integers(-(1 << 30), 1 << 30, M24).astype(np.int32),
            ],
        ),
        (
            "batched_gemm12_shared",
            batched_gemm12_shared,
            (65536,),
            (12, 12),
            lambda r: [np.zeros((65536, 12, 12), np.float32), f32(r, 65536, 12, 12), f32(r, 65536, 12, 12)],
        ),
        (
            "batched_gemm32_block",
            batched_gemm32_block,
            (8192,),
            (32, 32),
            lambda r: [np.zeros((8192, 32, 32), np.float32), f32(r, 8192, 32, 32), f32(r, 8192, 32, 32)],
        ),
        (
            "matmul_naive_tall",
            matmul_naive_tall,
            (128 // 16, 4096 // 16),
            (16, 16),
            lambda r: [np.zeros((4096, 128), np.float32), f32(r, 4096, 512), f32(r, 512, 128)],
        ),
        (
            "scan_pingpong_1024_i32",
            scan_pingpong_1024_i32,
            g(M24, 1024),
            1024,
            lambda r: [np.zeros(M24, np.int32), r.integers(0, 100, M24).astype(np.int32)],
        ),
        (
            "blelloch_scan_512",
            blelloch_scan_512,
            (M23 // 512,),
            256,
            lambda r: [np.zeros(M23, np.float32), f32(r, M23)],
        ),
        (
            "colwise_cumsum",
            colwise_cumsum,
            g(8192),
            256,
            lambda r: [np.zeros((1024, 8192), np.float32), f32(r, 1024, 8192)],
        ),
        (
            "branch_halfwarp_loops",
            branch_halfwarp_loops,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.float32), f32(r, M20), 512],
        ),
        (
            "branch_warp_uniform_loop",
            branch_warp_uniform_loop,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.float32), f32(r, M20), 512],
        ),
        (
            "stencil1d_r4_shared",
            stencil1d_r4_shared,
            g(M24),
            256,
            lambda r: [np.zeros(M24, np.float32), f32(r, M24)],
        ),
        (
            "laplace9_2d",
            laplace9_2d,
            (4096 // 16, 4096 // 16),
            (16, 16),
            lambda r: [np.zeros((4096, 4096), np.float32), f32(r, 4096, 4096)],
        ),
        (
            "stencil3d_r2_star",
            stencil3d_r2_star,
            (256 // 64, 256 // 4, 256),
            (64, 4, 1),
            lambda r: [np.zeros((256, 256, 256), np.float32), f32(r, 256, 256, 256)],
        ),
        (
            "conv5x5_shared_halo",
            conv5x5_shared_halo,
            (4096 // 16, 4096 // 16),
            (16, 16),
            lambda r: [np.zeros((4096, 4096), np.float32), f32(r, 4096, 4096), f32(r, 5, 5)],
        ),
        (
            "log_softmax_block_row",
            log_softmax_block_row,
            (8192,),
            256,
            lambda r: [np.zeros((8192, 2048), np.float32), f32(r, 8192, 2048) * 8],
        ),
        (
            "softmax_online_thread_row",
            softmax_online_thread_row,
            g(1 << 17),
            256,
            lambda r: [np.zeros((1 << 17, 64), np.float32), f32(r, 1 << 17, 64) * 8],
        ),
        (
            "l2_normalize_warp_rows",
            l2_normalize_warp_rows,
            g(65536 * 32),
            256,
            lambda r: [np.zeros((65536, 256), np.float32), f32(r, 65536, 256)],
        ),
        (
            "julia_f32",
            julia_f32,
            (2048 // 16, 2048 // 16),
            (16, 16),
            lambda r: [np.zeros((2048, 2048), np.int32), np.float32(-0.8), np.float32(0.156), 200],
        ),
        (
            "rk4_damped_f64",
            rk4_damped_f64,
            g(M20),
            256,
            lambda r: [np.zeros(M20), r.random(M20), r.random(M20), 64, 0.01],
        ),
        (
            "softplus_tanh_f32",
            softplus_tanh_f32,
            g(M24),
            256,
            lambda r: [np.zeros(M24, np.float32), f32(r, M24) * 8 - 4],
        ),
        (
            "half_horner3",
            half_horner3,
            g(M25),
            256,
            lambda r: [
                np.zeros(M25, np.float16),
                f32(r, M25).astype(np.float16),
                np.float16(0.5),
                np.float16(-1.25),
                np.float16(0.75),
                np.float16(0.125),
            ],
        ),
        (
            "int8_requant",
            int8_requant,
            g(M25),
            256,
            lambda r: [
                np.zeros(M25, np.int8),
                r.integers(-40000, 40000, M25).astype(np.int32),
                np.float32(1.0 / 256),
                3,
            ],
        ),
        (
            "two_block_poly_stride",
            two_block_poly_stride,
            (2,),
            128,
            lambda r: [np.zeros(1 << 18, np.float32), f32(r, 1 << 18)],
        ),
        (
            "transpose_f64_rect_shared",
            transpose_f64_rect_shared,
            (2048 // 16, 4096 // 16),
            (16, 16),
            lambda r: [np.zeros((2048, 4096)), r.random((4096, 2048))],
        ),
        (
            "transpose_batched_naive",
            transpose_batched_naive,
            (384 // 32, 512 // 8, 64),
            (32, 8, 1),
            lambda r: [np.zeros((64, 384, 512), np.float32), f32(r, 64, 512, 384)],
        ),
    ]
    return [dict(name=n, kernel=k, grid=gr, block=b, args=a, shared_bytes=0) for n, k, gr, b, a in C]


def make_args(case):
    """The case's arguments, the same on every machine (seeded by the case's name)."""
    seed = sum(ord(ch) * (k + 1) for k, ch in enumerate(case["name"]))
    return case["args"](np.random.default_rng(seed))
