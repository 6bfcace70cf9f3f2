"""Round 5 blind set for gpulab.predict: kernels written after round 4 was measured, none of them
seen by the model while it was revised (protocol: benchmarks/blind_r5/README.md).

New shapes and classes beside rounds 3 and 4: a 27-point 3-D box stencil, a leapfrog wave
stencil, segmented and block scans with warp shuffles, radix-sort passes (digit histogram and
local-rank scatter), a global bitonic step, ELL, COO and DIA sparse products, embedding and
locally shuffled gathers, shared-memory atomics on one address, int8 dot products and int8
images, float16 arithmetic, transcendental-heavy float32 and float64 code, a block-per-row
matrix-vector product, a tall-skinny one, a grid of 4 blocks, a kernel of one block, padded and
strided layouts, an AoS particle update, warp bitonic sorts and argmax by shuffles, hash-table
probes, a 2-D histogram, per-thread 3x3 inverses, row-wise cumulative sums, popcounts and a
float64 tiled matmul.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, float64, int32, uint32

N = 1 << 24
SMS = 132
FULL = 0xFFFFFFFF


@cuda.jit(cache=True)
def box27_3d(out, u):
    x, y, z = cuda.grid(3)
    n = u.shape[0]
    if 0 < x < n - 1 and 0 < y < n - 1 and 0 < z < n - 1:
        s = float32(0.0)
        for dz in range(-1, 2):
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    s += u[z + dz, y + dy, x + dx]
        out[z, y, x] = s * float32(1.0 / 27.0)


@cuda.jit(cache=True)
def wave2d_leapfrog(unew, u, uold, c2):
    x, y = cuda.grid(2)
    h, w = u.shape
    if 0 < x < w - 1 and 0 < y < h - 1:
        lap = u[y, x - 1] + u[y, x + 1] + u[y - 1, x] + u[y + 1, x] - 4 * u[y, x]
        unew[y, x] = 2 * u[y, x] - uold[y, x] + c2 * lap


@cuda.jit(cache=True)
def segmented_scan_warp(out, x, heads):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    f = heads[i]
    off = 1
    while off < 32:
        nv = cuda.shfl_up_sync(FULL, v, off)
        nf = cuda.shfl_up_sync(FULL, f, off)
        if lane >= off and f == 0:
            v += nv
            f = nf
        off *= 2
    out[i] = v


@cuda.jit(cache=True)
def block_scan_shfl512(out, x):
    warp_sums = cuda.shared.array(16, float32)
    t = cuda.threadIdx.x
    lane = t % 32
    wid = t // 32
    i = cuda.grid(1)
    v = x[i]
    for off in (1, 2, 4, 8, 16):
        n = cuda.shfl_up_sync(FULL, v, off)
        if lane >= off:
            v += n
    if lane == 31:
        warp_sums[wid] = v
    cuda.syncthreads()
    if wid == 0:
        s = warp_sums[lane] if lane < 16 else float32(0.0)
        for off in (1, 2, 4, 8):
            n = cuda.shfl_up_sync(FULL, s, off)
            if lane >= off:
                s += n
        if lane < 16:
            warp_sums[lane] = s
    cuda.syncthreads()
    if wid > 0:
        v += warp_sums[wid - 1]
    out[i] = v


@cuda.jit(cache=True)
def radix_digit_hist16(counts, keys, shift):
    h = cuda.shared.array(16, int32)
    t = cuda.threadIdx.x
    if t < 16:
        h[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < keys.size:
        d = (keys[i] >> shift) & uint32(15)
        cuda.atomic.add(h, d, 1)
    cuda.syncthreads()
    if t < 16:
        counts[t, cuda.blockIdx.x] = h[t]


@cuda.jit(cache=True)
def radix_scatter_local(out, keys, shift):
    h = cuda.shared.array(16, int32)
    start = cuda.shared.array(16, int32)
    t = cuda.threadIdx.x
    if t < 16:
        h[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    k = keys[i]
    d = (k >> shift) & uint32(15)
    rank = cuda.atomic.add(h, d, 1)
    cuda.syncthreads()
    if t == 0:
        acc = 0
        for b in range(16):
            start[b] = acc
            acc += h[b]
    cuda.syncthreads()
    out[cuda.blockIdx.x * cuda.blockDim.x + start[d] + rank] = k


@cuda.jit(cache=True)
def bitonic_step_global(out, x, j, k):
    i = cuda.grid(1)
    p = i ^ j
    if i < x.size:
        a = x[i]
        b = x[p]
        up = (i & k) == 0
        lo = i < p
        if (a > b) == (up == lo):
            out[i] = b
        else:
            out[i] = a


@cuda.jit(cache=True)
def ell_spmv_colmajor(y, cols, vals, x):
    row = cuda.grid(1)
    nrows = y.shape[0]
    if row < nrows:
        s = float32(0.0)
        for k in range(cols.shape[0]):
            c = cols[k, row]
            if c >= 0:
                s += vals[k, row] * x[c]
        y[row] = s


@cuda.jit(cache=True)
def coo_spmv_atomic(y, rows, cols, vals, x):
    k = cuda.grid(1)
    if k < vals.size:
        cuda.atomic.add(y, rows[k], vals[k] * x[cols[k]])


@cuda.jit(cache=True)
def dia_spmv_5(y, diags, offsets, x):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        s = float32(0.0)
        for d in range(5):
            j = i + offsets[d]
            if 0 <= j < n:
                s += diags[d, i] * x[j]
        y[i] = s


@cuda.jit(cache=True)
def embedding_gather(out, table, ids):
    c, r = cuda.grid(2)
    if r < ids.size and c < table.shape[1]:
        out[r, c] = table[ids[r], c]


@cuda.jit(cache=True)
def gather_local_perm(out, x, perm):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[perm[i]] * 2.0


@cuda.jit(cache=True)
def shared_atomic_sum_f32(total, x):
    acc = cuda.shared.array(1, float32)
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
def int8_dot16(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        s = 0
        for k in range(16):
            s += int32(a[i, k]) * int32(b[i, k])
        out[i] = s


@cuda.jit  # not cache=True: numba cannot pickle a float16 kernel's linked library (Run B)
def half_axpby(out, x, y, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + b * y[i]


@cuda.jit(cache=True)
def black_scholes_f32(call, put, s, k, t, r, v):
    i = cuda.grid(1)
    if i < s.size:
        sq = v * math.sqrt(t[i])
        d1 = (math.log(s[i] / k[i]) + (r + float32(0.5) * v * v) * t[i]) / sq
        d2 = d1 - sq
        n1 = float32(0.5) * (float32(1.0) + math.erf(d1 * float32(0.70710678)))
        n2 = float32(0.5) * (float32(1.0) + math.erf(d2 * float32(0.70710678)))
        disc = k[i] * math.exp(-r * t[i])
        call[i] = s[i] * n1 - disc * n2
        put[i] = disc * (float32(1.0) - n2) - s[i] * (float32(1.0) - n1)


@cuda.jit(cache=True)
def polar_f32(rad, ang, xs, ys):
    i = cuda.grid(1)
    if i < xs.size:
        x = xs[i]
        y = ys[i]
        rad[i] = math.hypot(x, y)
        ang[i] = math.atan2(y, x)


@cuda.jit(cache=True)
def lgamma_f64(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.lgamma(x[i])


@cuda.jit(cache=True)
def logistic_f64(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 1.0 / (1.0 + math.exp(-x[i]))


@cuda.jit(cache=True)
def gemv_block_row(y, a, x):
    sh = cuda.shared.array(256, float32)
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    s = float32(0.0)
    for j in range(t, a.shape[1], 256):
        s += a[row, j] * x[j]
    sh[t] = s
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            sh[t] += sh[t + h]
        cuda.syncthreads()
        h //= 2
    if t == 0:
        y[row] = sh[0]


@cuda.jit(cache=True)
def tall_skinny_matvec8(y, a, x):
    i = cuda.grid(1)
    if i < y.size:
        s = float32(0.0)
        for k in range(8):
            s += a[i, k] * x[k]
        y[i] = s


@cuda.jit(cache=True)
def four_block_sum(total, x):
    sh = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    s = float32(0.0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        s += x[i]
    sh[t] = s
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            sh[t] += sh[t + h]
        cuda.syncthreads()
        h //= 2
    if t == 0:
        cuda.atomic.add(total, 0, sh[0])


@cuda.jit(cache=True)
def one_block_hist64(hist, x):
    h = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    if t < 64:
        h[t] = 0
    cuda.syncthreads()
    for i in range(t, x.size, cuda.blockDim.x):
        cuda.atomic.add(h, x[i] & 63, 1)
    cuda.syncthreads()
    if t < 64:
        hist[t] = h[t]


@cuda.jit(cache=True)
def padded_rows_scale(out, x, width, s):
    c, r = cuda.grid(2)
    if r < x.shape[0] and c < width:
        out[r, c] = x[r, c] * s


@cuda.jit(cache=True)
def add_rowmajor_wrong_index(c, a, b):
    i, j = cuda.grid(2)  # i (fast across threads) walks rows of a row-major array
    if i < a.shape[0] and j < a.shape[1]:
        c[i, j] = a[i, j] + b[i, j]


@cuda.jit(cache=True)
def particles_aos_step(p, dt):
    i = cuda.grid(1)
    if i < p.shape[0]:
        vx = p[i, 3] + p[i, 6] * dt
        vy = p[i, 4] + p[i, 7] * dt
        vz = p[i, 5] - 9.81 * dt
        p[i, 0] += vx * dt
        p[i, 1] += vy * dt
        p[i, 2] += vz * dt
        p[i, 3] = vx
        p[i, 4] = vy
        p[i, 5] = vz


@cuda.jit(cache=True)
def warp_bitonic32(out, x):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    k = 2
    while k <= 32:
        j = k // 2
        while j > 0:
            o = cuda.shfl_xor_sync(FULL, v, j)
            up = (lane & k) == 0
            lower = (lane & j) == 0
            v = min(v, o) if up == lower else max(v, o)
            j //= 2
        k *= 2
    out[i] = v


@cuda.jit(cache=True)
def warp_argmax_rows(out, x):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < x.shape[0]:
        best = float32(-1e30)
        idx = 0
        for j in range(lane, x.shape[1], 32):
            v = x[row, j]
            if v > best:
                best = v
                idx = j
        for off in (16, 8, 4, 2, 1):
            ob = cuda.shfl_down_sync(FULL, best, off)
            oi = cuda.shfl_down_sync(FULL, idx, off)
            if ob > best or (ob == best and oi < idx):
                best = ob
                idx = oi
        if lane == 0:
            out[row] = idx


@cuda.jit(cache=True)
def hash_probe_linear(found, table_keys, table_vals, queries):
    i = cuda.grid(1)
    if i < queries.size:
        q = queries[i]
        mask = uint32(table_keys.size - 1)
        h = (q * uint32(2654435761)) & mask
        v = -1
        while True:
            k = table_keys[h]
            if k == q:
                v = table_vals[h]
                break
            if k == uint32(0xFFFFFFFF):
                break
            h = (h + uint32(1)) & mask
        found[i] = v


@cuda.jit(cache=True)
def rgb_to_gray_u8(gray, rgb):
    x, y = cuda.grid(2)
    if y < rgb.shape[0] and x < rgb.shape[1]:
        r = int32(rgb[y, x, 0])
        g = int32(rgb[y, x, 1])
        b = int32(rgb[y, x, 2])
        gray[y, x] = (77 * r + 150 * g + 29 * b + 128) >> 8


@cuda.jit(cache=True)
def hist2d_64x64_global(hist, xs, ys):
    i = cuda.grid(1)
    if i < xs.size:
        bx = min(int32(xs[i] * float32(64.0)), 63)
        by = min(int32(ys[i] * float32(64.0)), 63)
        cuda.atomic.add(hist, (by, bx), 1)


@cuda.jit(cache=True)
def mat3_inverse(out, m):
    i = cuda.grid(1)
    if i < m.shape[0]:
        a, b, c = m[i, 0], m[i, 1], m[i, 2]
        d, e, f = m[i, 3], m[i, 4], m[i, 5]
        g, h, k = m[i, 6], m[i, 7], m[i, 8]
        c0 = e * k - f * h
        c1 = f * g - d * k
        c2 = d * h - e * g
        inv = float32(1.0) / (a * c0 + b * c1 + c * c2)
        out[i, 0] = c0 * inv
        out[i, 1] = (c * h - b * k) * inv
        out[i, 2] = (b * f - c * e) * inv
        out[i, 3] = c1 * inv
        out[i, 4] = (a * k - c * g) * inv
        out[i, 5] = (c * d - a * f) * inv
        out[i, 6] = c2 * inv
        out[i, 7] = (b * g - a * h) * inv
        out[i, 8] = (a * e - b * d) * inv


@cuda.jit(cache=True)
def row_cumsum_thread(out, x):
    r = cuda.grid(1)
    if r < x.shape[0]:
        s = float32(0.0)
        for j in range(x.shape[1]):
            s += x[r, j]
            out[r, j] = s


@cuda.jit(cache=True)
def popcount_rows(out, words):
    r = cuda.grid(1)
    if r < words.shape[0]:
        n = 0
        for j in range(words.shape[1]):
            n += cuda.popc(words[r, j])
        out[r] = n


@cuda.jit(cache=True)
def matmul_tile16_f64(c, a, b):
    sa = cuda.shared.array((16, 16), float64)
    sb = cuda.shared.array((16, 16), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * 16 + ty
    col = cuda.blockIdx.x * 16 + tx
    acc = 0.0
    for t in range(a.shape[1] // 16):
        sa[ty, tx] = a[row, t * 16 + tx]
        sb[ty, tx] = b[t * 16 + ty, col]
        cuda.syncthreads()
        for kk in range(16):
            acc += sa[ty, kk] * sb[kk, tx]
        cuda.syncthreads()
    c[row, col] = acc


def _ell(r, rows, cols, width):
    """ELL arrays (width x rows, column-major as GPU codes store them): up to ``width`` entries
    per row, -1 for padding (row lengths uniform in [width/2, width])."""
    lens = r.integers(width // 2, width + 1, rows)
    c = r.integers(0, cols, (width, rows)).astype(np.int32)
    c[np.arange(width)[:, None] >= lens[None, :]] = -1
    return c, r.random((width, rows), dtype=np.float32)


def _hash_table(r, size, nkeys):
    """An open-addressing table (linear probing, empty = 0xFFFFFFFF) at load nkeys/size, and
    queries: half present keys, half absent."""
    keys = [0xFFFFFFFF] * size
    vals = [0] * size
    ins = r.choice(1 << 30, nkeys, replace=False).astype(np.uint32)
    mask = size - 1
    for n, q in enumerate(ins.tolist()):
        h = (q * 2654435761) & 0xFFFFFFFF & mask
        while keys[h] != 0xFFFFFFFF:
            h = (h + 1) & mask
        keys[h] = q
        vals[h] = n
    keys, vals = np.array(keys, np.uint32), np.array(vals, np.int32)
    nq = 1 << 22
    absent = (r.integers(1 << 30, 1 << 31, nq // 2)).astype(np.uint32)
    qs = np.concatenate([r.choice(ins, nq // 2), absent])
    r.shuffle(qs)
    return keys, vals, qs


def _local_perm(r, n, window):
    """A permutation that shuffles within consecutive windows of ``window`` elements."""
    p = np.arange(n, dtype=np.int32).reshape(-1, window)
    return r.permuted(p, axis=1).reshape(-1)


def cases():
    """[dict(name, kernel, grid, block, args (rng -> list), shared_bytes)], in launch order."""
    g = lambda n, b=256: ((n + b - 1) // b,)  # noqa: E731
    f32 = lambda r, *s: r.random(s, dtype=np.float32)  # noqa: E731
    n3, n2 = 256, 4096
    C = [
        (
            "box27_3d",
            box27_3d,
            (n3 // 32, n3 // 4, n3 // 2),
            (32, 4, 2),
            lambda r: [np.zeros((n3, n3, n3), np.float32), f32(r, n3, n3, n3)],
        ),
        (
            "wave2d_leapfrog",
            wave2d_leapfrog,
            (n2 // 32, n2 // 8),
            (32, 8),
            lambda r: [np.zeros((n2, n2), np.float32), f32(r, n2, n2), f32(r, n2, n2), np.float32(0.2)],
        ),
        (
            "segmented_scan_warp",
            segmented_scan_warp,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), f32(r, N), (r.random(N) < 0.1).astype(np.int32)],
        ),
        (
            "block_scan_shfl512",
            block_scan_shfl512,
            g(N, 512),
            512,
            lambda r: [np.zeros(N, np.float32), f32(r, N)],
        ),
        (
            "radix_digit_hist16",
            radix_digit_hist16,
            g(N),
            256,
            lambda r: [np.zeros((16, N // 256), np.int32), r.integers(0, 1 << 32, N, dtype=np.uint32), 4],
        ),
        (
            "radix_scatter_local",
            radix_scatter_local,
            g(N),
            256,
            lambda r: [np.zeros(N, np.uint32), r.integers(0, 1 << 32, N, dtype=np.uint32), 8],
        ),
        (
            "bitonic_step_global",
            bitonic_step_global,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), f32(r, N), 1024, 4096],
        ),
        (
            "ell_spmv_colmajor",
            ell_spmv_colmajor,
            g(1 << 20),
            256,
            lambda r: [np.zeros(1 << 20, np.float32), *_ell(r, 1 << 20, 1 << 20, 16), f32(r, 1 << 20)],
        ),
        (
            "coo_spmv_atomic",
            coo_spmv_atomic,
            g(1 << 22),
            256,
            lambda r: [
                np.zeros(1 << 18, np.float32),
                np.sort(r.integers(0, 1 << 18, 1 << 22)).astype(np.int32),
                r.integers(0, 1 << 18, 1 << 22).astype(np.int32),
                f32(r, 1 << 22),
                f32(r, 1 << 18),
            ],
        ),
        (
            "dia_spmv_5",
            dia_spmv_5,
            g(1 << 22),
            256,
            lambda r: [
                np.zeros(1 << 22, np.float32),
                f32(r, 5, 1 << 22),
                np.array([-2048, -1, 0, 1, 2048], np.int32),
                f32(r, 1 << 22),
            ],
        ),
        (
            "embedding_gather",
            embedding_gather,
            (1, 131072 // 8),
            (128, 8),
            lambda r: [
                np.zeros((131072, 128), np.float32),
                f32(r, 262144, 128),
                r.integers(0, 262144, 131072).astype(np.int32),
            ],
        ),
        (
            "gather_local_perm",
            gather_local_perm,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), f32(r, N), _local_perm(r, N, 4096)],
        ),
        (
            "shared_atomic_sum_f32",
            shared_atomic_sum_f32,
            g(1 << 22),
            256,
            lambda r: [np.zeros(1, np.float32), f32(r, 1 << 22)],
        ),
        (
            "int8_dot16",
            int8_dot16,
            g(1 << 22),
            256,
            lambda r: [
                np.zeros(1 << 22, np.int32),
                r.integers(-128, 128, (1 << 22, 16), dtype=np.int8),
                r.integers(-128, 128, (1 << 22, 16), dtype=np.int8),
            ],
        ),
        (
            "half_axpby",
            half_axpby,
            g(N),
            256,
            lambda r: [
                np.zeros(N, np.float16),
                f32(r, N).astype(np.float16),
                f32(r, N).astype(np.float16),
                np.float16(1.5),
                np.float16(-0.5),
            ],
        ),
        (
            "black_scholes_f32",
            black_scholes_f32,
            g(1 << 22),
            256,
            lambda r: [
                np.zeros(1 << 22, np.float32),
                np.zeros(1 << 22, np.float32),
                f32(r, 1 << 22) * 50 + 25,
                f32(r, 1 << 22) * 50 + 25,
                f32(r, 1 << 22) * 2 + 0.1,
                np.float32(0.03),
                np.float32(0.3),
            ],
        ),
        (
            "polar_f32",
            polar_f32,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), np.zeros(N, np.float32), f32(r, N) - 0.5, f32(r, N) - 0.5],
        ),
        (
            "lgamma_f64",
            lgamma_f64,
            g(1 << 22),
            256,
            lambda r: [np.zeros(1 << 22), r.random(1 << 22) * 20 + 0.5],
        ),
        (
            "logistic_f64",
            logistic_f64,
            g(1 << 23),
            256,
            lambda r: [np.zeros(1 << 23), r.random(1 << 23) * 8 - 4],
        ),
        (
            "gemv_block_row",
            gemv_block_row,
            (8192,),
            256,
            lambda r: [np.zeros(8192, np.float32), f32(r, 8192, 2048), f32(r, 2048)],
        ),
        (
            "tall_skinny_matvec8",
            tall_skinny_matvec8,
            g(1 << 22),
            256,
            lambda r: [np.zeros(1 << 22, np.float32), f32(r, 1 << 22, 8), f32(r, 8)],
        ),
        ("four_block_sum", four_block_sum, (4,), 256, lambda r: [np.zeros(1, np.float32), f32(r, 1 << 20)]),
        (
            "one_block_hist64",
            one_block_hist64,
            (1,),
            1024,
            lambda r: [np.zeros(64, np.int32), r.integers(0, 1 << 20, 1 << 18).astype(np.int32)],
        ),
        (
            "padded_rows_scale",
            padded_rows_scale,
            (n2 // 64, n2 // 4),
            (64, 4),
            lambda r: [np.zeros((n2, n2 + 96), np.float32), f32(r, n2, n2 + 96), n2, np.float32(1.5)],
        ),
        (
            "add_rowmajor_wrong_index",
            add_rowmajor_wrong_index,
            (2048 // 32, 2048 // 8),
            (32, 8),
            lambda r: [np.zeros((2048, 2048), np.float32), f32(r, 2048, 2048), f32(r, 2048, 2048)],
        ),
        (
            "particles_aos_step",
            particles_aos_step,
            g(1 << 22),
            256,
            lambda r: [f32(r, 1 << 22, 8), np.float32(0.01)],
        ),
        (
            "warp_bitonic32",
            warp_bitonic32,
            g(1 << 23),
            256,
            lambda r: [np.zeros(1 << 23, np.float32), f32(r, 1 << 23)],
        ),
        (
            "warp_argmax_rows",
            warp_argmax_rows,
            g(16384 * 32),
            256,
            lambda r: [np.zeros(16384, np.int32), f32(r, 16384, 1024)],
        ),
        (
            "hash_probe_linear",
            hash_probe_linear,
            g(1 << 22),
            256,
            lambda r: [np.zeros(1 << 22, np.int32), *_hash_table(r, 1 << 21, 1 << 20)],
        ),
        (
            "rgb_to_gray_u8",
            rgb_to_gray_u8,
            (n2 // 32, n2 // 8),
            (32, 8),
            lambda r: [np.zeros((n2, n2), np.uint8), r.integers(0, 256, (n2, n2, 3), dtype=np.uint8)],
        ),
        (
            "hist2d_64x64_global",
            hist2d_64x64_global,
            g(1 << 22),
            256,
            lambda r: [np.zeros((64, 64), np.int32), f32(r, 1 << 22), f32(r, 1 << 22) ** 2],
        ),
        (
            "mat3_inverse",
            mat3_inverse,
            g(1 << 21),
            128,
            lambda r: [
                np.zeros((1 << 21, 9), np.float32),
                f32(r, 1 << 21, 9) + np.eye(3, dtype=np.float32).ravel(),
            ],
        ),
        (
            "row_cumsum_thread",
            row_cumsum_thread,
            g(65536, 128),
            128,
            lambda r: [np.zeros((65536, 128), np.float32), f32(r, 65536, 128)],
        ),
        (
            "popcount_rows",
            popcount_rows,
            g(1 << 18, 128),
            128,
            lambda r: [np.zeros(1 << 18, np.int32), r.integers(0, 1 << 32, (1 << 18, 32), dtype=np.uint32)],
        ),
        (
            "matmul_tile16_f64",
            matmul_tile16_f64,
            (512 // 16, 512 // 16),
            (16, 16),
            lambda r: [np.zeros((512, 512)), r.random((512, 1024)), r.random((1024, 512))],
        ),
    ]
    return [dict(name=n, kernel=k, grid=gr, block=b, args=a, shared_bytes=0) for n, k, gr, b, a in C]


def make_args(case):
    """The case's arguments, the same on every machine (seeded by the case's name)."""
    seed = sum(ord(ch) * (k + 1) for k, ch in enumerate(case["name"]))
    return case["args"](np.random.default_rng(seed))
