"""Round 4 blind set for gpulab.predict: kernels written after round 3 was measured, none of them
seen by the model while it was revised (protocol: benchmarks/blind_r4/README.md).

New shapes and classes beside round 3's: ordinary elementwise code with plain Python arithmetic,
float64 stencils, separable and 2-D convolutions, CSR sparse matrix-vector products (thread and
warp per row), layer norm and log-sum-exp per row, a 32x32-tile matmul on a rectangle, AoS/SoA
and complex (interleaved) layouts, bilinear resampling, lookup tables, uint32 hashes, xorshift
Monte Carlo, gcd and trial-division loops, Newton iterations in float64, atomic max, medium-
contention float atomics, cross-entropy with a per-row gather, block reversal in shared memory.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, int32, uint32

N = 1 << 24
SMS = 132
FULL = 0xFFFFFFFF


@cuda.jit(cache=True)
def vector_add(c, a, b):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit(cache=True)
def relu_scale(out, x, alpha):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = v * alpha if v > 0 else 0.0


@cuda.jit(cache=True)
def saxpy_f64_few_blocks(y, a, x):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        y[i] = a * x[i] + y[i]


@cuda.jit(cache=True)
def gelu_tanh(out, x):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = 0.5 * v * (1.0 + math.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))


@cuda.jit(cache=True)
def conv1d_k7(out, x, w):
    i = cuda.grid(1)
    n = x.shape[0]
    if i >= 3 and i < n - 3:
        s = 0.0
        for k in range(7):
            s += w[k] * x[i + k - 3]
        out[i] = s


@cuda.jit(cache=True)
def conv2d_3x3_global(out, img, w):
    x, y = cuda.grid(2)
    h, wd = img.shape
    if 1 <= x < wd - 1 and 1 <= y < h - 1:
        s = float32(0.0)
        for dy in range(3):
            for dx in range(3):
                s += w[dy, dx] * img[y + dy - 1, x + dx - 1]
        out[y, x] = s


@cuda.jit(cache=True)
def sobel_u8(out, img):
    x, y = cuda.grid(2)
    h, w = img.shape
    if 0 < x < w - 1 and 0 < y < h - 1:
        gx = (
            -int32(img[y - 1, x - 1])
            + int32(img[y - 1, x + 1])
            - 2 * int32(img[y, x - 1])
            + 2 * int32(img[y, x + 1])
            - int32(img[y + 1, x - 1])
            + int32(img[y + 1, x + 1])
        )
        gy = (
            -int32(img[y - 1, x - 1])
            - 2 * int32(img[y - 1, x])
            - int32(img[y - 1, x + 1])
            + int32(img[y + 1, x - 1])
            + 2 * int32(img[y + 1, x])
            + int32(img[y + 1, x + 1])
        )
        out[y, x] = math.sqrt(float32(gx * gx + gy * gy))


@cuda.jit(cache=True)
def box_blur_shared_r2(out, img):
    tile = cuda.shared.array((20, 20), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0 = cuda.blockIdx.x * 16 - 2
    y0 = cuda.blockIdx.y * 16 - 2
    h, w = img.shape
    for yy in range(ty, 20, 16):
        for xx in range(tx, 20, 16):
            gx = min(max(x0 + xx, 0), w - 1)
            gy = min(max(y0 + yy, 0), h - 1)
            tile[yy, xx] = img[gy, gx]
    cuda.syncthreads()
    s = float32(0.0)
    for dy in range(5):
        for dx in range(5):
            s += tile[ty + dy, tx + dx]
    x = cuda.blockIdx.x * 16 + tx
    y = cuda.blockIdx.y * 16 + ty
    if x < w and y < h:
        out[y, x] = s / 25.0


@cuda.jit(cache=True)
def gauss_rows_f32(out, img):
    x, y = cuda.grid(2)
    h, w = img.shape
    if x < w and y < h:
        s = float32(0.0)
        for k in range(-4, 5):
            xx = min(max(x + k, 0), w - 1)
            s += img[y, xx] * math.exp(-float32(k * k) / float32(8.0))
        out[y, x] = s


@cuda.jit(cache=True)
def heat2d_f64(out, u, alpha):
    x, y = cuda.grid(2)
    n = u.shape[0]
    if 0 < x < n - 1 and 0 < y < n - 1:
        out[y, x] = u[y, x] + alpha * (u[y, x - 1] + u[y, x + 1] + u[y - 1, x] + u[y + 1, x] - 4.0 * u[y, x])


@cuda.jit(cache=True)
def transpose_tile32x8(out, a):
    tile = cuda.shared.array((32, 33), float32)
    bx = cuda.blockIdx.x * 32
    by = cuda.blockIdx.y * 32
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for j in range(0, 32, 8):
        tile[ty + j, tx] = a[by + ty + j, bx + tx]
    cuda.syncthreads()
    for j in range(0, 32, 8):
        out[bx + ty + j, by + tx] = tile[tx, ty + j]


@cuda.jit(cache=True)
def matmul_tile32_rect(c, a, b):
    sa = cuda.shared.array((32, 32), float32)
    sb = cuda.shared.array((32, 32), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * 32 + ty
    col = cuda.blockIdx.x * 32 + tx
    acc = float32(0.0)
    for t in range(a.shape[1] // 32):
        sa[ty, tx] = a[row, t * 32 + tx]
        sb[ty, tx] = b[t * 32 + ty, col]
        cuda.syncthreads()
        for k in range(32):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc


@cuda.jit(cache=True)
def matvec_shared_x(y, a, x):
    xs = cuda.shared.array(1024, float32)
    row = cuda.grid(1)
    ncol = a.shape[1]
    acc = float32(0.0)
    for base in range(0, ncol, 1024):
        for j in range(cuda.threadIdx.x, 1024, cuda.blockDim.x):
            xs[j] = x[base + j]
        cuda.syncthreads()
        if row < a.shape[0]:
            for j in range(1024):
                acc += a[row, base + j] * xs[j]
        cuda.syncthreads()
    if row < a.shape[0]:
        y[row] = acc


@cuda.jit(cache=True)
def gemv_columns_coalesced(y, a, x):
    col = cuda.grid(1)
    if col < a.shape[1]:
        acc = float32(0.0)
        for r in range(a.shape[0]):
            acc += a[r, col] * x[r]
        y[col] = acc


@cuda.jit(cache=True)
def spmv_csr_thread_row(y, indptr, indices, data, x):
    row = cuda.grid(1)
    if row < y.shape[0]:
        s = float32(0.0)
        for k in range(indptr[row], indptr[row + 1]):
            s += data[k] * x[indices[k]]
        y[row] = s


@cuda.jit(cache=True)
def spmv_csr_warp_row(y, indptr, indices, data, x):
    gid = cuda.grid(1)
    row = gid // 32
    lane = cuda.laneid
    if row < y.shape[0]:
        s = float32(0.0)
        for k in range(indptr[row] + lane, indptr[row + 1], 32):
            s += data[k] * x[indices[k]]
        off = 16
        while off > 0:
            s += cuda.shfl_down_sync(FULL, s, off)
            off //= 2
        if lane == 0:
            y[row] = s


@cuda.jit(cache=True)
def layernorm_row_block(out, x, eps):
    sh = cuda.shared.array(256, float32)
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = x.shape[1]
    s = float32(0.0)
    for j in range(t, n, 256):
        s += x[row, j]
    sh[t] = s
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            sh[t] += sh[t + h]
        cuda.syncthreads()
        h //= 2
    mean = sh[0] / n
    cuda.syncthreads()
    q = float32(0.0)
    for j in range(t, n, 256):
        d = x[row, j] - mean
        q += d * d
    sh[t] = q
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            sh[t] += sh[t + h]
        cuda.syncthreads()
        h //= 2
    inv = float32(1.0) / math.sqrt(sh[0] / n + eps)
    for j in range(t, n, 256):
        out[row, j] = (x[row, j] - mean) * inv


@cuda.jit(cache=True)
def logsumexp_warp_row(out, x):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < x.shape[0]:
        m = float32(-1e30)
        for j in range(lane, x.shape[1], 32):
            m = max(m, x[row, j])
        for off in (16, 8, 4, 2, 1):
            m = max(m, cuda.shfl_xor_sync(FULL, m, off))
        s = float32(0.0)
        for j in range(lane, x.shape[1], 32):
            s += math.exp(x[row, j] - m)
        for off in (16, 8, 4, 2, 1):
            s += cuda.shfl_xor_sync(FULL, s, off)
        if lane == 0:
            out[row] = m + math.log(s)


@cuda.jit(cache=True)
def cross_entropy_rows(loss, logits, labels):
    row = cuda.grid(1)
    if row < logits.shape[0]:
        m = logits[row, 0]
        for j in range(1, logits.shape[1]):
            m = max(m, logits[row, j])
        s = float32(0.0)
        for j in range(logits.shape[1]):
            s += math.exp(logits[row, j] - m)
        cuda.atomic.add(loss, 0, m + math.log(s) - logits[row, labels[row]])


@cuda.jit(cache=True)
def atomic_max_single(out, x):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.max(out, 0, x[i])


@cuda.jit(cache=True)
def atomic_add_1024_bins_f32(hist, keys, w):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.add(hist, keys[i] % 1024, w[i])


@cuda.jit(cache=True)
def block_max_then_atomic(out, x):
    sh = cuda.shared.array(256, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = x[i] if i < x.size else -2147483647
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            sh[t] = max(sh[t], sh[t + s])
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.max(out, 0, sh[0])


@cuda.jit(cache=True)
def degree_count_edges(deg, src):
    i = cuda.grid(1)
    if i < src.size:
        cuda.atomic.add(deg, src[i], 1)


@cuda.jit(cache=True)
def murmur3_u32(out, keys):
    i = cuda.grid(1)
    if i < keys.size:
        h = uint32(keys[i])
        h ^= h >> uint32(16)
        h *= uint32(0x85EBCA6B)
        h ^= h >> uint32(13)
        h *= uint32(0xC2B2AE35)
        h ^= h >> uint32(16)
        out[i] = h


@cuda.jit(cache=True)
def xorshift_pi(counts, iters):
    i = cuda.grid(1)
    s = uint32(i * 2654435761 + 1)
    inside = 0
    for k in range(iters):
        s ^= s << uint32(13)
        s ^= s >> uint32(17)
        s ^= s << uint32(5)
        x = float32(s) * float32(2.3283064e-10)
        s ^= s << uint32(13)
        s ^= s >> uint32(17)
        s ^= s << uint32(5)
        y = float32(s) * float32(2.3283064e-10)
        if x * x + y * y < float32(1.0):
            inside += 1
    counts[i] = inside


@cuda.jit(cache=True)
def gcd_pairs(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        while y != 0:
            x, y = y, x % y
        out[i] = x


@cuda.jit(cache=True)
def trial_division_prime(out, nums):
    i = cuda.grid(1)
    if i < nums.size:
        n = nums[i]
        prime = n > 1
        d = 2
        while d * d <= n:
            if n % d == 0:
                prime = False
                break
            d += 1
        out[i] = prime


@cuda.jit(cache=True)
def newton_sqrt_f64(out, x):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        g = v if v > 1.0 else 1.0
        it = 0
        while abs(g * g - v) > 1e-12 * v and it < 60:
            g = 0.5 * (g + v / g)
            it += 1
        out[i] = g


@cuda.jit(cache=True)
def complex_mul_interleaved(out, a, b):
    i = cuda.grid(1)
    if i < out.shape[0] // 2:
        ar = a[2 * i]
        ai = a[2 * i + 1]
        br = b[2 * i]
        bi = b[2 * i + 1]
        out[2 * i] = ar * br - ai * bi
        out[2 * i + 1] = ar * bi + ai * br


@cuda.jit(cache=True)
def aos_to_soa4(xs, ys, zs, ws, aos):
    i = cuda.grid(1)
    if i < xs.size:
        xs[i] = aos[i, 0]
        ys[i] = aos[i, 1]
        zs[i] = aos[i, 2]
        ws[i] = aos[i, 3]


@cuda.jit(cache=True)
def bilinear_resize(out, img):
    x, y = cuda.grid(2)
    oh, ow = out.shape
    ih, iw = img.shape
    if x < ow and y < oh:
        fx = (x + 0.5) * iw / ow - 0.5
        fy = (y + 0.5) * ih / oh - 0.5
        x0 = max(int(math.floor(fx)), 0)
        y0 = max(int(math.floor(fy)), 0)
        x1 = min(x0 + 1, iw - 1)
        y1 = min(y0 + 1, ih - 1)
        ax = fx - x0
        ay = fy - y0
        top = img[y0, x0] * (1 - ax) + img[y0, x1] * ax
        bot = img[y1, x0] * (1 - ax) + img[y1, x1] * ax
        out[y, x] = top * (1 - ay) + bot * ay


@cuda.jit(cache=True)
def lut_gather_u8(out, img, lut):
    i = cuda.grid(1)
    if i < img.size:
        out[i] = lut[img[i]]


@cuda.jit(cache=True)
def poly_coeffs_global(out, x, c):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        acc = float32(0.0)
        for k in range(c.size):
            acc = acc * v + c[k]
        out[i] = acc


@cuda.jit(cache=True)
def reverse_blocks_shared(out, x):
    sh = cuda.shared.array(512, float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * 512
    sh[t] = x[base + t]
    cuda.syncthreads()
    out[x.size - base - 512 + t] = sh[511 - t]


@cuda.jit(cache=True)
def softmax_naive_thread_row(out, x):
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = x[r, 0]
        for j in range(x.shape[1]):
            if x[r, j] > m:
                m = x[r, j]
        s = 0.0
        for j in range(x.shape[1]):
            s += math.exp(x[r, j] - m)
        for j in range(x.shape[1]):
            out[r, j] = math.exp(x[r, j] - m) / s


@cuda.jit(cache=True)
def pairwise_dist_tile(d, p, q):
    i, j = cuda.grid(2)
    if i < p.shape[0] and j < q.shape[0]:
        dx = p[i, 0] - q[j, 0]
        dy = p[i, 1] - q[j, 1]
        dz = p[i, 2] - q[j, 2]
        d[i, j] = math.sqrt(dx * dx + dy * dy + dz * dz)


@cuda.jit(cache=True)
def strided_f64_copy4(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[4 * i]


def _csr(r, rows, cols, mean_nnz):
    """A random CSR matrix: row lengths Poisson(mean_nnz), columns uniform."""
    lens = r.poisson(mean_nnz, rows).astype(np.int32)
    indptr = np.zeros(rows + 1, np.int32)
    np.cumsum(lens, out=indptr[1:])
    nnz = int(indptr[-1])
    return indptr, r.integers(0, cols, nnz).astype(np.int32), r.random(nnz, dtype=np.float32)


def cases():
    """[dict(name, kernel, grid, block, args (rng -> list), shared_bytes)], in launch order."""
    g = lambda n, b=256: ((n + b - 1) // b,)  # noqa: E731
    f32 = lambda r, n: r.random(n, dtype=np.float32)  # noqa: E731
    n2 = 4096
    C = [
        ("vector_add", vector_add, g(N), 256, lambda r: [np.zeros(N, np.float32), f32(r, N), f32(r, N)]),
        (
            "relu_scale",
            relu_scale,
            g(N, 128),
            128,
            lambda r: [np.zeros(N, np.float32), f32(r, N) - 0.5, 1.5],
        ),
        (
            "saxpy_f64_few_blocks",
            saxpy_f64_few_blocks,
            (SMS * 2,),
            256,
            lambda r: [r.random(1 << 22), 2.0, r.random(1 << 22)],
        ),
        ("gelu_tanh", gelu_tanh, g(N), 256, lambda r: [np.zeros(N, np.float32), f32(r, N) * 4 - 2]),
        (
            "conv1d_k7",
            conv1d_k7,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), f32(r, N), f32(r, 7)],
        ),
        (
            "conv2d_3x3_global",
            conv2d_3x3_global,
            (n2 // 32, n2 // 8),
            (32, 8),
            lambda r: [
                np.zeros((n2, n2), np.float32),
                r.random((n2, n2), dtype=np.float32),
                r.random((3, 3), dtype=np.float32),
            ],
        ),
        (
            "sobel_u8",
            sobel_u8,
            (n2 // 16, n2 // 16),
            (16, 16),
            lambda r: [np.zeros((n2, n2), np.float32), r.integers(0, 256, (n2, n2)).astype(np.uint8)],
        ),
        (
            "box_blur_shared_r2",
            box_blur_shared_r2,
            (n2 // 16, n2 // 16),
            (16, 16),
            lambda r: [np.zeros((n2, n2), np.float32), r.random((n2, n2), dtype=np.float32)],
        ),
        (
            "gauss_rows_f32",
            gauss_rows_f32,
            (n2 // 64, n2 // 4),
            (64, 4),
            lambda r: [np.zeros((n2, n2), np.float32), r.random((n2, n2), dtype=np.float32)],
        ),
        (
            "heat2d_f64",
            heat2d_f64,
            (n2 // 32, n2 // 8),
            (32, 8),
            lambda r: [np.zeros((n2, n2)), r.random((n2, n2)), 0.1],
        ),
        (
            "transpose_tile32x8",
            transpose_tile32x8,
            (n2 // 32, 2048 // 32),
            (32, 8),
            lambda r: [np.zeros((n2, 2048), np.float32), r.random((2048, n2), dtype=np.float32)],
        ),
        (
            "matmul_tile32_rect",
            matmul_tile32_rect,
            (1024 // 32, 2048 // 32),
            (32, 32),
            lambda r: [
                np.zeros((2048, 1024), np.float32),
                r.random((2048, 512), dtype=np.float32),
                r.random((512, 1024), dtype=np.float32),
            ],
        ),
        (
            "matvec_shared_x",
            matvec_shared_x,
            g(8192, 128),
            128,
            lambda r: [np.zeros(8192, np.float32), r.random((8192, 2048), dtype=np.float32), f32(r, 2048)],
        ),
        (
            "gemv_columns_coalesced",
            gemv_columns_coalesced,
            g(8192, 128),
            128,
            lambda r: [np.zeros(8192, np.float32), r.random((2048, 8192), dtype=np.float32), f32(r, 2048)],
        ),
        (
            "spmv_csr_thread_row",
            spmv_csr_thread_row,
            g(1 << 18),
            256,
            lambda r: [np.zeros(1 << 18, np.float32), *_csr(r, 1 << 18, 1 << 18, 16), f32(r, 1 << 18)],
        ),
        (
            "spmv_csr_warp_row",
            spmv_csr_warp_row,
            g((1 << 16) * 32),
            256,
            lambda r: [np.zeros(1 << 16, np.float32), *_csr(r, 1 << 16, 1 << 18, 64), f32(r, 1 << 18)],
        ),
        (
            "layernorm_row_block",
            layernorm_row_block,
            (4096,),
            256,
            lambda r: [np.zeros((4096, 2048), np.float32), r.random((4096, 2048), dtype=np.float32), 1e-5],
        ),
        (
            "logsumexp_warp_row",
            logsumexp_warp_row,
            g(16384 * 32),
            256,
            lambda r: [np.zeros(16384, np.float32), r.random((16384, 512), dtype=np.float32)],
        ),
        (
            "cross_entropy_rows",
            cross_entropy_rows,
            g(65536, 128),
            128,
            lambda r: [
                np.zeros(1, np.float32),
                r.random((65536, 100), dtype=np.float32),
                r.integers(0, 100, 65536).astype(np.int32),
            ],
        ),
        (
            "atomic_max_single",
            atomic_max_single,
            g(1 << 22),
            256,
            lambda r: [np.zeros(1, np.int32), r.integers(0, 1 << 30, 1 << 22).astype(np.int32)],
        ),
        (
            "atomic_add_1024_bins_f32",
            atomic_add_1024_bins_f32,
            g(1 << 22),
            256,
            lambda r: [
                np.zeros(1024, np.float32),
                r.integers(0, 1 << 20, 1 << 22).astype(np.int32),
                f32(r, 1 << 22),
            ],
        ),
        (
            "block_max_then_atomic",
            block_max_then_atomic,
            g(N),
            256,
            lambda r: [np.zeros(1, np.int32), r.integers(0, 1 << 30, N).astype(np.int32)],
        ),
        (
            "degree_count_edges",
            degree_count_edges,
            g(1 << 22),
            256,
            lambda r: [np.zeros(1 << 16, np.int32), r.zipf(1.5, 1 << 22).astype(np.int32) % (1 << 16)],
        ),
        (
            "murmur3_u32",
            murmur3_u32,
            g(N),
            256,
            lambda r: [np.zeros(N, np.uint32), r.integers(0, 1 << 31, N).astype(np.uint32)],
        ),
        ("xorshift_pi", xorshift_pi, (SMS * 16,), 256, lambda r: [np.zeros(SMS * 16 * 256, np.int32), 256]),
        (
            "gcd_pairs",
            gcd_pairs,
            g(1 << 22),
            256,
            lambda r: [
                np.zeros(1 << 22, np.int32),
                r.integers(1, 1 << 20, 1 << 22).astype(np.int32),
                r.integers(1, 1 << 20, 1 << 22).astype(np.int32),
            ],
        ),
        (
            "trial_division_prime",
            trial_division_prime,
            g(1 << 20),
            256,
            lambda r: [np.zeros(1 << 20, np.bool_), r.integers(2, 1 << 16, 1 << 20).astype(np.int32)],
        ),
        (
            "newton_sqrt_f64",
            newton_sqrt_f64,
            g(1 << 22),
            256,
            lambda r: [np.zeros(1 << 22), r.random(1 << 22) * 1e6],
        ),
        (
            "complex_mul_interleaved",
            complex_mul_interleaved,
            g(N // 2),
            256,
            lambda r: [np.zeros(N, np.float32), f32(r, N), f32(r, N)],
        ),
        (
            "aos_to_soa4",
            aos_to_soa4,
            g(1 << 22),
            256,
            lambda r: [
                np.zeros(1 << 22, np.float32),
                np.zeros(1 << 22, np.float32),
                np.zeros(1 << 22, np.float32),
                np.zeros(1 << 22, np.float32),
                r.random((1 << 22, 4), dtype=np.float32),
            ],
        ),
        (
            "bilinear_resize",
            bilinear_resize,
            (4096 // 32, 4096 // 8),
            (32, 8),
            lambda r: [np.zeros((4096, 4096), np.float32), r.random((2048, 2048), dtype=np.float32)],
        ),
        (
            "lut_gather_u8",
            lut_gather_u8,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), r.integers(0, 256, N).astype(np.uint8), f32(r, 256)],
        ),
        (
            "poly_coeffs_global",
            poly_coeffs_global,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), f32(r, N), f32(r, 16)],
        ),
        (
            "reverse_blocks_shared",
            reverse_blocks_shared,
            (N // 512,),
            512,
            lambda r: [np.zeros(N, np.float32), f32(r, N)],
        ),
        (
            "softmax_naive_thread_row",
            softmax_naive_thread_row,
            g(32768, 128),
            128,
            lambda r: [np.zeros((32768, 64), np.float32), r.random((32768, 64), dtype=np.float32)],
        ),
        (
            "pairwise_dist_tile",
            pairwise_dist_tile,
            (4096 // 16, 4096 // 16),
            (16, 16),
            lambda r: [
                np.zeros((4096, 4096), np.float32),
                r.random((4096, 3), dtype=np.float32),
                r.random((4096, 3), dtype=np.float32),
            ],
        ),
        (
            "strided_f64_copy4",
            strided_f64_copy4,
            g(1 << 22),
            256,
            lambda r: [np.zeros(1 << 22), r.random(1 << 24)],
        ),
    ]
    return [dict(name=n, kernel=k, grid=gr, block=b, args=a, shared_bytes=0) for n, k, gr, b, a in C]


def make_args(case):
    """The case's arguments, the same on every machine (seeded by the case's name)."""
    seed = sum(ord(ch) * (k + 1) for k, ch in enumerate(case["name"]))
    return case["args"](np.random.default_rng(seed))
