"""Round 7 blind set for gpulab.predict: kernels written while the model was being revised, none of
them seen by the model or its authors before its predictions were committed (protocol:
benchmarks/blind_r7/README.md).

The kinds rounds 3-6 found hard, in new shapes: shared-memory loops in few blocks (a 2-D Jacobi tile
in four blocks, a ring rotation in two, an odd-even sort in one), 64-bit integer arithmetic
(xorshift64*, digit reversal by ``//`` and ``%`` 10, an extended Euclid inverse, a hash combine over
columns), random scatters (rows through an index, float32 atomic max on random bins), small batched
matmuls in shared memory (20x20, and 16x16 with a K of 64 staged in chunks), a double-buffered scan
of four values per thread, naive matmuls of new shapes (wide float32, square float64), global atomics
on few addresses (int64 on four, float64 on two), loops that diverge at two paths (odd and even
lanes with different trip counts) and one path (per block, float64). Beside them what students
write: 1-D/2-D/3-D stencils, a float64 Kogge-Stone scan, warp log-softmax in float64, a causal
softmax, a batched GEMM without shared memory, an embedding bag, row scatters, CRC-32 and
one-at-a-time hashes, Collatz peaks, a burning-ship fractal, Newton's method on z^3 - 1, a logistic
map and Kahan row sums in float64, shared float64 atomics, a packed int64 argmin, transcendentals (erf, atan2, cosh, pow, log2),
float16 and int8, tiled and in-place transposes, a one-block series and a three-block stride loop.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, float64, int32, int64, uint32, uint64

FULL = 0xFFFFFFFF


# ---- shared-memory loops in few blocks -------------------------------------------------------
@cuda.jit(cache=True)
def smem_jacobi_tile_4blocks(out, x, iters):
    """Each of 4 blocks relaxes its own 32x32 tile (fixed zero border) in shared memory."""
    s = cuda.shared.array((34, 34), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    b = cuda.blockIdx.x
    for k in range(ty * 32 + tx, 34 * 34, 1024):
        s[k // 34, k % 34] = float32(0.0)
    cuda.syncthreads()
    s[ty + 1, tx + 1] = x[b, ty, tx]
    cuda.syncthreads()
    for _ in range(iters):
        v = float32(0.25) * (s[ty, tx + 1] + s[ty + 2, tx + 1] + s[ty + 1, tx] + s[ty + 1, tx + 2])
        cuda.syncthreads()
        s[ty + 1, tx + 1] = v
        cuda.syncthreads()
    out[b, ty, tx] = s[ty + 1, tx + 1]


@cuda.jit(cache=True)
def smem_ring_rotate_2blocks(out, x, iters):
    """Two blocks; each step every thread adds its right neighbour's value (mod 256) in shared memory."""
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 256 + t
    s[t] = x[i]
    cuda.syncthreads()
    for k in range(iters):
        v = float32(0.5) * (s[t] + s[(t + k + 1) % 256])
        cuda.syncthreads()
        s[t] = v
        cuda.syncthreads()
    out[i] = s[t]


@cuda.jit(cache=True)
def one_block_oddeven_sort(data):
    """Odd-even transposition sort of 1024 float32 in one block of 512 threads."""
    s = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    s[2 * t] = data[2 * t]
    s[2 * t + 1] = data[2 * t + 1]
    cuda.syncthreads()
    for phase in range(1024):
        j = 2 * t + (phase & 1)
        if j + 1 < 1024:
            a = s[j]
            b = s[j + 1]
            if a > b:
                s[j] = b
                s[j + 1] = a
        cuda.syncthreads()
    data[2 * t] = s[2 * t]
    data[2 * t + 1] = s[2 * t + 1]


# ---- 64-bit integer arithmetic ---------------------------------------------------------------
@cuda.jit(cache=True)
def xorshift64star_sum(out, seeds, steps):
    i = cuda.grid(1)
    if i < seeds.size:
        x = seeds[i] | uint64(1)
        acc = uint64(0)
        for _ in range(steps):
            x ^= x >> uint64(12)
            x ^= x << uint64(25)
            x ^= x >> uint64(27)
            acc += (x * uint64(0x2545F4914F6CDD1D)) >> uint64(40)
        out[i] = acc


@cuda.jit(cache=True)
def reverse_digits_i64(out, x):
    i = cuda.grid(1)
    if i < x.size:
        n = x[i]
        r = 0
        while n > 0:
            r = r * 10 + n % 10
            n //= 10
        out[i] = r


@cuda.jit(cache=True)
def modinv_ext_euclid(out, a, m):
    i = cuda.grid(1)
    if i < a.size:
        r0 = m
        r1 = a[i] % m
        t0 = 0
        t1 = 1
        while r1 != 0:
            q = r0 // r1
            r0, r1 = r1, r0 - q * r1
            t0, t1 = t1, t0 - q * t1
        if r0 != 1:
            out[i] = -1
        else:
            out[i] = t0 % m


@cuda.jit(cache=True)
def hash_combine_cols(out, cols):
    i = cuda.grid(1)
    if i < cols.shape[1]:
        h = uint64(0)
        for c in range(cols.shape[0]):
            v = uint64(cols[c, i])
            h ^= v + uint64(0x9E3779B97F4A7C15) + (h << uint64(6)) + (h >> uint64(2))
        out[i] = h


# ---- scatters, gathers, atomics --------------------------------------------------------------
@cuda.jit(cache=True)
def scatter_rows_by_index(out, x, dst):
    """A warp per source row of 64 float32, written to row dst[r] (a random permutation)."""
    w = cuda.grid(1) // 32
    lane = cuda.laneid
    if w < x.shape[0]:
        d = dst[w]
        out[d, lane] = x[w, lane]
        out[d, lane + 32] = x[w, lane + 32]


@cuda.jit(cache=True)
def atomic_max_random_bins(best, keys, vals):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.max(best, keys[i], vals[i])


@cuda.jit(cache=True)
def embedding_bag_sum8(out, table, ids):
    """out[b, :] = sum of 8 rows of the table; a thread per (bag, column) of a 128-wide table."""
    col, b = cuda.grid(2)
    if b < ids.shape[0] and col < table.shape[1]:
        s = float32(0.0)
        for k in range(8):
            s += table[ids[b, k], col]
        out[b, col] = s


@cuda.jit(cache=True)
def atomic_add_i64_4slots(out, x):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, i & 3, x[i])


@cuda.jit(cache=True)
def atomic_add_f64_2slots(out, x):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, i & 1, x[i])


@cuda.jit(cache=True)
def block_sum_shared_atomic_f64(total, x):
    acc = cuda.shared.array(1, float64)
    t = cuda.threadIdx.x
    if t == 0:
        acc[0] = 0.0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(acc, 0, x[i])
    cuda.syncthreads()
    if t == 0:
        cuda.atomic.add(total, 0, acc[0])


@cuda.jit(cache=True)
def argmin_packed_i64(best, x):
    """Global argmin: (value as int32 << 32) | index in one int64, min in shared, then one global min."""
    sm = cuda.shared.array(1, int64)
    t = cuda.threadIdx.x
    if t == 0:
        sm[0] = 9223372036854775807
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        key = (int64(x[i]) << 32) | int64(i)
        cuda.atomic.min(sm, 0, key)
    cuda.syncthreads()
    if t == 0:
        cuda.atomic.min(best, 0, sm[0])


# ---- matmuls ---------------------------------------------------------------------------------
@cuda.jit(cache=True)
def batched_gemm20_shared(c, a, b):
    sa = cuda.shared.array((20, 20), float32)
    sb = cuda.shared.array((20, 20), float32)
    m = cuda.blockIdx.x
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sa[ty, tx] = a[m, ty, tx]
    sb[ty, tx] = b[m, ty, tx]
    cuda.syncthreads()
    s = float32(0.0)
    for k in range(20):
        s += sa[ty, k] * sb[k, tx]
    c[m, ty, tx] = s


@cuda.jit(cache=True)
def batched_gemm16_k64_chunks(c, a, b):
    """C[m] (16x16) = A[m] (16x64) @ B[m] (64x16), K staged through shared memory 16 at a time."""
    sa = cuda.shared.array((16, 16), float32)
    sb = cuda.shared.array((16, 16), float32)
    m = cuda.blockIdx.x
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s = float32(0.0)
    for k0 in range(0, 64, 16):
        sa[ty, tx] = a[m, ty, k0 + tx]
        sb[ty, tx] = b[m, k0 + ty, tx]
        cuda.syncthreads()
        for k in range(16):
            s += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[m, ty, tx] = s


@cuda.jit(cache=True)
def batched_gemm_global_naive(c, a, b):
    """A batch of 64x64 products, a thread per output, no shared memory."""
    col, row, m = cuda.grid(3)
    if m < c.shape[0] and row < c.shape[1] and col < c.shape[2]:
        s = float32(0.0)
        for k in range(a.shape[2]):
            s += a[m, row, k] * b[m, k, col]
        c[m, row, col] = s


@cuda.jit(cache=True)
def matmul_naive_wide(c, a, b):
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        s = float32(0.0)
        for k in range(a.shape[1]):
            s += a[row, k] * b[k, col]
        c[row, col] = s


@cuda.jit(cache=True)
def matmul_naive_f64_sq(c, a, b):
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        s = 0.0
        for k in range(a.shape[1]):
            s += a[row, k] * b[k, col]
        c[row, col] = s


# ---- scans -----------------------------------------------------------------------------------
@cuda.jit(cache=True)
def scan_dbuf_256x4(out, x):
    """Inclusive scan of 1024 float32 per block: 4 per thread serially, a double-buffered
    Hillis-Steele scan of the 256 thread sums, then each thread writes its 4 outputs."""
    buf = cuda.shared.array((2, 256), float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * 1024 + 4 * t
    v0 = x[base]
    v1 = v0 + x[base + 1]
    v2 = v1 + x[base + 2]
    v3 = v2 + x[base + 3]
    buf[0, t] = v3
    cuda.syncthreads()
    src = 0
    off = 1
    while off < 256:
        v = buf[src, t]
        if t >= off:
            v += buf[src, t - off]
        buf[1 - src, t] = v
        cuda.syncthreads()
        src = 1 - src
        off *= 2
    pre = float32(0.0)
    if t > 0:
        pre = buf[src, t - 1]
    out[base] = pre + v0
    out[base + 1] = pre + v1
    out[base + 2] = pre + v2
    out[base + 3] = pre + v3


@cuda.jit(cache=True)
def kogge_stone_f64_256(out, x):
    """Single-buffer Kogge-Stone inclusive scan of 256 float64 per block (two barriers a step)."""
    s = cuda.shared.array(256, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i]
    cuda.syncthreads()
    off = 1
    while off < 256:
        v = 0.0
        if t >= off:
            v = s[t - off]
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        off *= 2
    out[i] = s[t]


# ---- divergence ------------------------------------------------------------------------------
@cuda.jit(cache=True)
def branch_oddeven_lanes_unequal(out, x, n):
    """Odd and even lanes run different loops of n and 2n steps: two paths, unequal lengths."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if i & 1:
            for _ in range(2 * n):
                v = v * float32(0.75) + float32(0.25)
        else:
            for _ in range(n):
                v = math.exp(-v)
        out[i] = v


@cuda.jit(cache=True)
def branch_block_uniform_f64(out, x, n):
    """The branch is taken per block (one path in every warp), loops in float64."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if cuda.blockIdx.x % 3 == 0:
            for _ in range(n):
                v = v * 0.999 + 0.001
        else:
            for _ in range(n):
                v = 0.5 * (v + 2.0 / (v + 1.0))
        out[i] = v


# ---- stencils --------------------------------------------------------------------------------
@cuda.jit(cache=True)
def stencil1d_7pt_f64(out, x):
    i = cuda.grid(1)
    n = x.size
    if 3 <= i < n - 3:
        out[i] = (
            0.4 * x[i]
            + 0.2 * (x[i - 1] + x[i + 1])
            + 0.05 * (x[i - 2] + x[i + 2])
            + 0.05 * (x[i - 3] + x[i + 3])
        )


@cuda.jit(cache=True)
def stencil2d_cross_r2(out, u):
    x, y = cuda.grid(2)
    h, w = u.shape
    if 2 <= x < w - 2 and 2 <= y < h - 2:
        near = u[y, x - 1] + u[y, x + 1] + u[y - 1, x] + u[y + 1, x]
        far = u[y, x - 2] + u[y, x + 2] + u[y - 2, x] + u[y + 2, x]
        out[y, x] = float32(0.5) * u[y, x] + float32(0.1) * near + float32(0.025) * far


@cuda.jit(cache=True)
def stencil3d_19pt(out, u):
    x, y, z = cuda.grid(3)
    n = u.shape[0]
    if 0 < x < n - 1 and 0 < y < n - 1 and 0 < z < n - 1:
        face = u[z, y, x - 1] + u[z, y, x + 1] + u[z, y - 1, x] + u[z, y + 1, x]
        face += u[z - 1, y, x] + u[z + 1, y, x]
        edge = u[z, y - 1, x - 1] + u[z, y - 1, x + 1] + u[z, y + 1, x - 1] + u[z, y + 1, x + 1]
        edge += u[z - 1, y, x - 1] + u[z - 1, y, x + 1] + u[z + 1, y, x - 1] + u[z + 1, y, x + 1]
        edge += u[z - 1, y - 1, x] + u[z - 1, y + 1, x] + u[z + 1, y - 1, x] + u[z + 1, y + 1, x]
        out[z, y, x] = float32(-4.0) * u[z, y, x] + float32(1.0 / 3.0) * face + float32(1.0 / 6.0) * edge


# ---- rows: softmax ---------------------------------------------------------------------------
@cuda.jit(cache=True)
def log_softmax_warp_f64(out, x):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < x.shape[0]:
        m = -1.0e300
        for j in range(lane, x.shape[1], 32):
            m = max(m, x[row, j])
        for off in (16, 8, 4, 2, 1):
            m = max(m, cuda.shfl_xor_sync(FULL, m, off))
        s = 0.0
        for j in range(lane, x.shape[1], 32):
            s += math.exp(x[row, j] - m)
        for off in (16, 8, 4, 2, 1):
            s += cuda.shfl_xor_sync(FULL, s, off)
        lse = m + math.log(s)
        for j in range(lane, x.shape[1], 32):
            out[row, j] = x[row, j] - lse


@cuda.jit(cache=True)
def causal_softmax_warp(out, x):
    """Row r keeps columns 0..r (a causal mask): a warp per row, the rest written as zero."""
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < x.shape[0]:
        n = x.shape[1]
        m = float32(-3.0e38)
        for j in range(lane, row + 1, 32):
            m = max(m, x[row, j])
        for off in (16, 8, 4, 2, 1):
            m = max(m, cuda.shfl_xor_sync(FULL, m, off))
        s = float32(0.0)
        for j in range(lane, row + 1, 32):
            s += math.exp(x[row, j] - m)
        for off in (16, 8, 4, 2, 1):
            s += cuda.shfl_xor_sync(FULL, s, off)
        inv = float32(1.0) / s
        for j in range(lane, n, 32):
            if j <= row:
                out[row, j] = math.exp(x[row, j] - m) * inv
            else:
                out[row, j] = float32(0.0)


# ---- hashes ----------------------------------------------------------------------------------
@cuda.jit(cache=True)
def crc32_bitwise_rows(out, words):
    r = cuda.grid(1)
    if r < words.shape[0]:
        crc = uint32(0xFFFFFFFF)
        for j in range(words.shape[1]):
            crc ^= words[r, j]
            for _ in range(32):
                if crc & uint32(1):
                    crc = (crc >> uint32(1)) ^ uint32(0xEDB88320)
                else:
                    crc = crc >> uint32(1)
        out[r] = crc ^ uint32(0xFFFFFFFF)


@cuda.jit(cache=True)
def one_at_a_time_bytes(out, data):
    """Jenkins' one-at-a-time hash of each 32-byte row (uint8), in int64 masked to 32 bits."""
    r = cuda.grid(1)
    if r < data.shape[0]:
        h = 0
        for j in range(data.shape[1]):
            h = (h + data[r, j]) & 0xFFFFFFFF
            h = (h + (h << 10)) & 0xFFFFFFFF
            h ^= h >> 6
        h = (h + (h << 3)) & 0xFFFFFFFF
        h ^= h >> 11
        h = (h + (h << 15)) & 0xFFFFFFFF
        out[r] = h


# ---- data-dependent loops, float64, transcendentals ------------------------------------------
@cuda.jit(cache=True)
def collatz_peak_i64(out, start):
    i = cuda.grid(1)
    if i < start.size:
        n = start[i]
        peak = n
        while n != 1:
            if n % 2 == 0:
                n //= 2
            else:
                n = 3 * n + 1
            if n > peak:
                peak = n
        out[i] = peak


@cuda.jit(cache=True)
def burning_ship_f32(out, max_iter):
    px, py = cuda.grid(2)
    h, w = out.shape
    if px < w and py < h:
        cr = float32(-2.2) + float32(3.2) * float32(px) / float32(w)
        ci = float32(-2.0) + float32(3.0) * float32(py) / float32(h)
        zr = float32(0.0)
        zi = float32(0.0)
        k = 0
        while k < max_iter and zr * zr + zi * zi < float32(4.0):
            zr, zi = zr * zr - zi * zi + cr, float32(2.0) * abs(zr * zi) + ci
            k += 1
        out[py, px] = k


@cuda.jit(cache=True)
def newton_cubic_basins(out, iters_out, tol):
    """Newton's method on z^3 - 1 from each pixel (float32): which root and how many steps."""
    px, py = cuda.grid(2)
    h, w = out.shape
    if px < w and py < h:
        zr = float32(-2.0) + float32(4.0) * float32(px) / float32(w)
        zi = float32(-2.0) + float32(4.0) * float32(py) / float32(h)
        k = 0
        while k < 64:
            r2 = zr * zr - zi * zi
            i2 = float32(2.0) * zr * zi
            fr = r2 * zr - i2 * zi - float32(1.0)
            fi = r2 * zi + i2 * zr
            dr = float32(3.0) * r2
            di = float32(3.0) * i2
            den = dr * dr + di * di + float32(1e-30)
            qr = (fr * dr + fi * di) / den
            qi = (fi * dr - fr * di) / den
            zr -= qr
            zi -= qi
            k += 1
            if qr * qr + qi * qi < tol:
                break
        root = 0
        if zr < float32(0.0):
            root = 1 if zi > float32(0.0) else 2
        out[py, px] = root
        iters_out[py, px] = k


@cuda.jit(cache=True)
def logistic_map_f64(out, r, steps):
    i = cuda.grid(1)
    if i < r.size:
        v = 0.5
        rr = r[i]
        for _ in range(steps):
            v = rr * v * (1.0 - v)
        out[i] = v


@cuda.jit(cache=True)
def kahan_row_sum_f64(out, x):
    r = cuda.grid(1)
    if r < x.shape[0]:
        s = 0.0
        c = 0.0
        for j in range(x.shape[1]):
            y = x[r, j] - c
            t = s + y
            c = (t - s) - y
            s = t
        out[r] = s


@cuda.jit(cache=True)
def erf_atan2_mix(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.erf(x[i]) + math.atan2(y[i], x[i]) * math.cosh(float32(0.5) * y[i])


@cuda.jit(cache=True)
def pow_sqrt_log2_f64(out, x):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.pow(v, 1.7) + math.sqrt(v) * math.log2(v + 1.0)


@cuda.jit  # not cache=True: numba cannot pickle a float16 kernel's linked library (round 5)
def half_leaky_relu_scale(out, x, slope, scale):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        w = v * slope
        if w > v:  # 0 < slope < 1: the leaky part, for v < 0
            v = w
        out[i] = v * scale


@cuda.jit(cache=True)
def int8_saturating_add(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        s = int32(a[i]) + int32(b[i])
        out[i] = min(max(s, -128), 127)


# ---- transposes ------------------------------------------------------------------------------
@cuda.jit(cache=True)
def transpose_tile64x16(out, a):
    """A 64-wide, 16-high tile through shared memory (block 64x4, four rows per thread)."""
    tile = cuda.shared.array((16, 65), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * 64, cuda.blockIdx.y * 16
    for k in range(0, 16, 4):
        tile[ty + k, tx] = a[by + ty + k, bx + tx]
    cuda.syncthreads()
    # out is (W, H): out rows bx..bx+63, columns by..by+15; thread (tx, ty) covers 16 outputs
    lin = ty * 64 + tx
    for k in range(4):
        e = lin + k * 256
        orow = e // 16
        ocol = e % 16
        out[bx + orow, by + ocol] = tile[ocol, orow]


@cuda.jit(cache=True)
def transpose_inplace_swap(a):
    """In-place transpose of a square matrix: the thread of each (row < col) pair swaps the two."""
    col, row = cuda.grid(2)
    n = a.shape[0]
    if row < n and col < n and row < col:
        t = a[row, col]
        a[row, col] = a[col, row]
        a[col, row] = t


# ---- tiny grids, one block -------------------------------------------------------------------
@cuda.jit(cache=True)
def one_block_series_f64(out, terms):
    """One block of 64 threads: thread t sums terms of the alternating series for log(1 + x_t)."""
    t = cuda.threadIdx.x
    xv = 0.5 + t / 128.0
    s = 0.0
    p = xv
    for k in range(1, terms + 1):
        if k % 2 == 1:
            s += p / k
        else:
            s -= p / k
        p *= xv
    out[t] = s


@cuda.jit(cache=True)
def three_block_stride_clamp(out, x, lo, hi):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = min(max(float32(2.0) * x[i] - float32(1.0), lo), hi)


def _perm(r, n):
    return r.permutation(n).astype(np.int32)


def cases():
    """[dict(name, kernel, grid, block, args (rng -> list), shared_bytes)], in launch order."""
    g = lambda n, b=256: ((n + b - 1) // b,)  # noqa: E731
    f32 = lambda r, *s: r.random(s, dtype=np.float32)  # noqa: E731
    M19, M20, M21, M22, M23, M24, M25 = (1 << k for k in range(19, 26))
    C = [
        (
            "smem_jacobi_tile_4blocks",
            smem_jacobi_tile_4blocks,
            (4,),
            (32, 32),
            lambda r: [np.zeros((4, 32, 32), np.float32), f32(r, 4, 32, 32), 2000],
        ),
        (
            "smem_ring_rotate_2blocks",
            smem_ring_rotate_2blocks,
            (2,),
            256,
            lambda r: [np.zeros(512, np.float32), f32(r, 512), 5000],
        ),
        ("one_block_oddeven_sort", one_block_oddeven_sort, (1,), 512, lambda r: [f32(r, 1024)]),
        (
            "xorshift64star_sum",
            xorshift64star_sum,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.uint64), r.integers(0, 1 << 63, M20, dtype=np.uint64), 64],
        ),
        (
            "reverse_digits_i64",
            reverse_digits_i64,
            g(M22),
            256,
            lambda r: [np.zeros(M22, np.int64), r.integers(1, 10**18, M22)],
        ),
        (
            "modinv_ext_euclid",
            modinv_ext_euclid,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.int64), r.integers(1, 10**12, M20), 1_000_000_007],
        ),
        (
            "hash_combine_cols",
            hash_combine_cols,
            g(M22),
            256,
            lambda r: [np.zeros(M22, np.uint64), r.integers(0, 1 << 62, (8, M22))],
        ),
        (
            "scatter_rows_by_index",
            scatter_rows_by_index,
            g(M19 * 32),
            256,
            lambda r: [np.zeros((M19, 64), np.float32), f32(r, M19, 64), _perm(r, M19)],
        ),
        (
            "atomic_max_random_bins",
            atomic_max_random_bins,
            g(M24),
            256,
            lambda r: [np.zeros(M20, np.float32), r.integers(0, M20, M24).astype(np.int32), f32(r, M24)],
        ),
        (
            "embedding_bag_sum8",
            embedding_bag_sum8,
            (1, 65536 // 4),
            (128, 4),
            lambda r: [
                np.zeros((65536, 128), np.float32),
                f32(r, 100_000, 128),
                r.integers(0, 100_000, (65536, 8)).astype(np.int32),
            ],
        ),
        (
            "atomic_add_i64_4slots",
            atomic_add_i64_4slots,
            g(M21),
            256,
            lambda r: [np.zeros(4, np.int64), r.integers(-1000, 1000, M21)],
        ),
        ("atomic_add_f64_2slots", atomic_add_f64_2slots, g(M20), 256, lambda r: [np.zeros(2), r.random(M20)]),
        (
            "block_sum_shared_atomic_f64",
            block_sum_shared_atomic_f64,
            g(M21),
            256,
            lambda r: [np.zeros(1), r.random(M21)],
        ),
        (
            "argmin_packed_i64",
            argmin_packed_i64,
            g(M24),
            256,
            lambda r: [
                np.array([np.iinfo(np.int64).max], np.int64),
                r.integers(-(1 << 30), 1 << 30, M24).astype(np.int32),
            ],
        ),
        (
            "batched_gemm20_shared",
            batched_gemm20_shared,
            (32768,),
            (20, 20),
            lambda r: [np.zeros((32768, 20, 20), np.float32), f32(r, 32768, 20, 20), f32(r, 32768, 20, 20)],
        ),
        (
            "batched_gemm16_k64_chunks",
            batched_gemm16_k64_chunks,
            (16384,),
            (16, 16),
            lambda r: [np.zeros((16384, 16, 16), np.float32), f32(r, 16384, 16, 64), f32(r, 16384, 64, 16)],
        ),
        (
            "batched_gemm_global_naive",
            batched_gemm_global_naive,
            (2, 8, 512),
            (32, 8, 1),
            lambda r: [np.zeros((512, 64, 64), np.float32), f32(r, 512, 64, 64), f32(r, 512, 64, 64)],
        ),
        (
            "matmul_naive_wide",
            matmul_naive_wide,
            (4096 // 16, 256 // 16),
            (16, 16),
            lambda r: [np.zeros((256, 4096), np.float32), f32(r, 256, 1024), f32(r, 1024, 4096)],
        ),
        (
            "matmul_naive_f64_sq",
            matmul_naive_f64_sq,
            (512 // 16, 512 // 16),
            (16, 16),
            lambda r: [np.zeros((512, 512)), r.random((512, 512)), r.random((512, 512))],
        ),
        (
            "scan_dbuf_256x4",
            scan_dbuf_256x4,
            g(M24, 1024),
            256,
            lambda r: [np.zeros(M24, np.float32), f32(r, M24)],
        ),
        ("kogge_stone_f64_256", kogge_stone_f64_256, g(M23), 256, lambda r: [np.zeros(M23), r.random(M23)]),
        (
            "branch_oddeven_lanes_unequal",
            branch_oddeven_lanes_unequal,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.float32), f32(r, M20), 256],
        ),
        (
            "branch_block_uniform_f64",
            branch_block_uniform_f64,
            g(M20),
            256,
            lambda r: [np.zeros(M20), r.random(M20) + 0.5, 128],
        ),
        ("stencil1d_7pt_f64", stencil1d_7pt_f64, g(M24), 256, lambda r: [np.zeros(M24), r.random(M24)]),
        (
            "stencil2d_cross_r2",
            stencil2d_cross_r2,
            (4096 // 32, 4096 // 8),
            (32, 8),
            lambda r: [np.zeros((4096, 4096), np.float32), f32(r, 4096, 4096)],
        ),
        (
            "stencil3d_19pt",
            stencil3d_19pt,
            (256 // 32, 256 // 8, 256),
            (32, 8, 1),
            lambda r: [np.zeros((256, 256, 256), np.float32), f32(r, 256, 256, 256)],
        ),
        (
            "log_softmax_warp_f64",
            log_softmax_warp_f64,
            g(16384 * 32),
            256,
            lambda r: [np.zeros((16384, 512)), r.standard_normal((16384, 512))],
        ),
        (
            "causal_softmax_warp",
            causal_softmax_warp,
            g(4096 * 32),
            256,
            lambda r: [np.zeros((4096, 4096), np.float32), f32(r, 4096, 4096)],
        ),
        (
            "crc32_bitwise_rows",
            crc32_bitwise_rows,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.uint32), r.integers(0, 1 << 32, (M20, 8), dtype=np.uint32)],
        ),
        (
            "one_at_a_time_bytes",
            one_at_a_time_bytes,
            g(M21),
            256,
            lambda r: [np.zeros(M21, np.int64), r.integers(0, 256, (M21, 32), dtype=np.uint8)],
        ),
        (
            "collatz_peak_i64",
            collatz_peak_i64,
            g(M20),
            256,
            lambda r: [np.zeros(M20, np.int64), r.integers(1, 10**9, M20)],
        ),
        (
            "burning_ship_f32",
            burning_ship_f32,
            (2048 // 32, 2048 // 8),
            (32, 8),
            lambda r: [np.zeros((2048, 2048), np.int32), 256],
        ),
        (
            "newton_cubic_basins",
            newton_cubic_basins,
            (2048 // 32, 2048 // 8),
            (32, 8),
            lambda r: [np.zeros((2048, 2048), np.int32), np.zeros((2048, 2048), np.int32), np.float32(1e-12)],
        ),
        (
            "logistic_map_f64",
            logistic_map_f64,
            g(M20),
            256,
            lambda r: [np.zeros(M20), 2.5 + 1.5 * r.random(M20), 512],
        ),
        (
            "kahan_row_sum_f64",
            kahan_row_sum_f64,
            g(65536),
            256,
            lambda r: [np.zeros(65536), r.random((65536, 256))],
        ),
        (
            "erf_atan2_mix",
            erf_atan2_mix,
            g(M24),
            256,
            lambda r: [np.zeros(M24, np.float32), f32(r, M24) * 4 - 2, f32(r, M24) * 4 - 2],
        ),
        ("pow_sqrt_log2_f64", pow_sqrt_log2_f64, g(M23), 256, lambda r: [np.zeros(M23), r.random(M23) * 10]),
        (
            "half_leaky_relu_scale",
            half_leaky_relu_scale,
            g(M25),
            256,
            lambda r: [
                np.zeros(M25, np.float16),
                (f32(r, M25) * 2 - 1).astype(np.float16),
                np.float16(0.125),
                np.float16(1.5),
            ],
        ),
        (
            "int8_saturating_add",
            int8_saturating_add,
            g(1 << 26),
            256,
            lambda r: [
                np.zeros(1 << 26, np.int8),
                r.integers(-128, 128, 1 << 26).astype(np.int8),
                r.integers(-128, 128, 1 << 26).astype(np.int8),
            ],
        ),
        (
            "transpose_tile64x16",
            transpose_tile64x16,
            (8192 // 64, 4096 // 16),
            (64, 4),
            lambda r: [np.zeros((8192, 4096), np.float32), f32(r, 4096, 8192)],
        ),
        (
            "transpose_inplace_swap",
            transpose_inplace_swap,
            (8192 // 32, 8192 // 8),
            (32, 8),
            lambda r: [f32(r, 8192, 8192)],
        ),
        ("one_block_series_f64", one_block_series_f64, (1,), 64, lambda r: [np.zeros(64), 4000]),
        (
            "three_block_stride_clamp",
            three_block_stride_clamp,
            (3,),
            256,
            lambda r: [np.zeros(M19, np.float32), f32(r, M19), np.float32(-0.5), np.float32(0.75)],
        ),
    ]
    return [dict(name=n, kernel=k, grid=gr, block=b, args=a, shared_bytes=0) for n, k, gr, b, a in C]


def make_args(case):
    """The case's arguments, the same on every machine (seeded by the case's name)."""
    seed = sum(ord(ch) * (k + 1) for k, ch in enumerate(case["name"]))
    return case["args"](np.random.default_rng(seed))
