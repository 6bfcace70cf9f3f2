"""Round 3 blind set for gpulab.predict: 34 kernels written after the model of commit 4245e53
(SASS-counted instructions, ptxas registers), none of them seen by the model's calibration.

Kinds a student writes and the earlier rounds missed: stencils, block scans (one of them
double-buffered), softmax, small batched matmuls in shared memory, a naive and a tiled matmul,
random gathers and scatters, 64-bit integer hashes, data-dependent loops with // and %, float64,
global atomics on few addresses, divergent loops at 1-2 paths, a sort, an n-body step.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, float64, int32

N = 1 << 22
SMS = 132
FULL = 0xFFFFFFFF
TB = 256


@cuda.jit
def stencil3d_7pt(out, a):
    x, y, z = cuda.grid(3)
    n = a.shape[0]
    if 0 < x < n - 1 and 0 < y < n - 1 and 0 < z < n - 1:
        out[z, y, x] = 0.4 * a[z, y, x] + 0.1 * (
            a[z, y, x - 1]
            + a[z, y, x + 1]
            + a[z, y - 1, x]
            + a[z, y + 1, x]
            + a[z - 1, y, x]
            + a[z + 1, y, x]
        )


@cuda.jit
def jacobi2d_shared(out, a):
    t = cuda.shared.array((18, 18), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * 16 + tx
    y = cuda.blockIdx.y * 16 + ty
    n = a.shape[0]
    if x < n and y < n:
        t[ty + 1, tx + 1] = a[y, x]
        if tx == 0 and x > 0:
            t[ty + 1, 0] = a[y, x - 1]
        if tx == 15 and x < n - 1:
            t[ty + 1, 17] = a[y, x + 1]
        if ty == 0 and y > 0:
            t[0, tx + 1] = a[y - 1, x]
        if ty == 15 and y < n - 1:
            t[17, tx + 1] = a[y + 1, x]
    cuda.syncthreads()
    if 0 < x < n - 1 and 0 < y < n - 1:
        out[y, x] = 0.25 * (t[ty, tx + 1] + t[ty + 2, tx + 1] + t[ty + 1, tx] + t[ty + 1, tx + 2])


@cuda.jit
def scan_block_hillis(out, x):
    s = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.shape[0] else 0.0
    cuda.syncthreads()
    d = 1
    while d < 1024:
        v = s[t - d] if t >= d else 0.0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < out.shape[0]:
        out[i] = s[t]


@cuda.jit
def scan_block_double_buffer(out, x):
    a = cuda.shared.array(512, float32)
    b = cuda.shared.array(512, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    a[t] = x[i] if i < x.shape[0] else 0.0
    cuda.syncthreads()
    d = 1
    src = 0
    while d < 512:
        if src == 0:
            b[t] = a[t] + a[t - d] if t >= d else a[t]
        else:
            a[t] = b[t] + b[t - d] if t >= d else b[t]
        cuda.syncthreads()
        src = 1 - src
        d *= 2
    if i < out.shape[0]:
        out[i] = b[t] if src == 1 else a[t]


@cuda.jit
def softmax_block_row(out, x):
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    red = cuda.shared.array(256, float32)
    m = -1e30
    for c in range(t, cols, 256):
        m = max(m, x[row, c])
    red[t] = m
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            red[t] = max(red[t], red[t + s])
        cuda.syncthreads()
        s //= 2
    m = red[0]
    cuda.syncthreads()
    acc = float32(0.0)
    for c in range(t, cols, 256):
        acc += math.exp(x[row, c] - m)
    red[t] = acc
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            red[t] += red[t + s]
        cuda.syncthreads()
        s //= 2
    tot = red[0]
    for c in range(t, cols, 256):
        out[row, c] = math.exp(x[row, c] - m) / tot


@cuda.jit
def softmax_warp_row(out, x):
    w = cuda.grid(1) // 32
    lane = cuda.threadIdx.x % 32
    rows, cols = x.shape
    if w < rows:
        m = float32(-1e30)
        for c in range(lane, cols, 32):
            m = max(m, x[w, c])
        k = 16
        while k > 0:
            m = max(m, cuda.shfl_xor_sync(FULL, m, k))
            k //= 2
        s = float32(0.0)
        for c in range(lane, cols, 32):
            s += math.exp(x[w, c] - m)
        k = 16
        while k > 0:
            s += cuda.shfl_xor_sync(FULL, s, k)
            k //= 2
        for c in range(lane, cols, 32):
            out[w, c] = math.exp(x[w, c] - m) / s


@cuda.jit
def batched_gemm8_shared(c, a, b):
    sa = cuda.shared.array((8, 8), float32)
    sb = cuda.shared.array((8, 8), float32)
    m = cuda.blockIdx.x
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    sa[ty, tx] = a[m, ty, tx]
    sb[ty, tx] = b[m, ty, tx]
    cuda.syncthreads()
    acc = float32(0.0)
    for k in range(8):
        acc += sa[ty, k] * sb[k, tx]
    c[m, ty, tx] = acc


@cuda.jit
def batched_gemm16_shared(c, a, b):
    sa = cuda.shared.array((16, 16), float32)
    sb = cuda.shared.array((16, 16), float32)
    m = cuda.blockIdx.x
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    sa[ty, tx] = a[m, ty, tx]
    sb[ty, tx] = b[m, ty, tx]
    cuda.syncthreads()
    acc = float32(0.0)
    for k in range(16):
        acc += sa[ty, k] * sb[k, tx]
    c[m, ty, tx] = acc


@cuda.jit
def matmul_naive(c, a, b):
    row, col = cuda.grid(2)
    n = a.shape[0]
    if row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


@cuda.jit
def matmul_tiled16(c, a, b):
    sa = cuda.shared.array((16, 16), float32)
    sb = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * 16 + tx
    row = cuda.blockIdx.y * 16 + ty
    n = a.shape[0]
    acc = float32(0.0)
    for t in range(n // 16):
        sa[ty, tx] = a[row, t * 16 + tx]
        sb[ty, tx] = b[t * 16 + ty, col]
        cuda.syncthreads()
        for k in range(16):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc


@cuda.jit
def gather_random(out, x, idx):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = x[idx[i]]


@cuda.jit
def scatter_random(out, x, idx):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[idx[i]] = x[i]


@cuda.jit
def hash_int64(out, keys):
    i = cuda.grid(1)
    if i < keys.shape[0]:
        h = keys[i]
        for r in range(8):
            h = (h ^ (h >> 7)) * 40503 & 0xFFFFFFF
            h = (h + (h << 3)) & 0xFFFFFFF
        out[i] = h


@cuda.jit
def hash_mod_table(out, keys, size):
    i = cuda.grid(1)
    if i < keys.shape[0]:
        h = keys[i]
        slot = 0
        for r in range(4):
            h = (h * 31 + 17) & 0xFFFFFFFF
            slot += h % size
        out[i] = slot % size


@cuda.jit
def collatz_steps(out, start):
    i = cuda.grid(1)
    if i < start.shape[0]:
        v = start[i]
        s = 0
        while v != 1 and s < 500:
            if v % 2 == 0:
                v = v // 2
            else:
                v = 3 * v + 1
            s += 1
        out[i] = s


@cuda.jit
def digit_sum(out, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        s = 0
        while v > 0:
            s += v % 10
            v //= 10
        out[i] = s


@cuda.jit
def poly_horner_f64(out, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        acc = 0.0
        for k in range(16):
            acc = acc * v + (k + 1) * 0.01
        out[i] = acc


@cuda.jit
def dot_f64_grid_stride(out, x, y):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = 0.0
    for k in range(i, x.shape[0], stride):
        acc += x[k] * y[k]
    cuda.atomic.add(out, 0, acc)


@cuda.jit
def atomic_hist16(hist, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.add(hist, x[i] & 15, 1)


@cuda.jit
def atomic_one_counter_fewblocks(count, x):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(i, x.shape[0], stride):
        if x[k] > 0.5:
            cuda.atomic.add(count, 0, 1)


@cuda.jit
def shared_hist256(hist, x):
    h = cuda.shared.array(256, int32)
    t = cuda.threadIdx.x
    h[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(i, x.shape[0], stride):
        cuda.atomic.add(h, x[k] & 255, 1)
    cuda.syncthreads()
    cuda.atomic.add(hist, t, h[t])


@cuda.jit
def divergent_loop_2paths(out, x, n):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        if i % 2 == 0:
            for k in range(n):
                v = v * float32(0.999) + float32(0.001)
        else:
            for k in range(2 * n):
                v = v * float32(0.998) + float32(0.002)
        out[i] = v


@cuda.jit
def branch_in_loop(out, x, n):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for k in range(n):
            if v > float32(0.5):
                v = v * float32(0.7)
            else:
                v = v * float32(1.3) + float32(0.01)
        out[i] = v


@cuda.jit
def math_mix_f32(out, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        out[i] = math.sqrt(v) + math.exp(-v) * math.log(v + float32(1.0))


@cuda.jit
def row_sum_thread_per_row(out, a):
    r = cuda.grid(1)
    if r < a.shape[0]:
        s = float32(0.0)
        for c in range(a.shape[1]):
            s += a[r, c]
        out[r] = s


@cuda.jit
def col_sum_thread_per_col(out, a):
    c = cuda.grid(1)
    if c < a.shape[1]:
        s = float32(0.0)
        for r in range(a.shape[0]):
            s += a[r, c]
        out[c] = s


@cuda.jit
def reduce_shfl_atomic(out, x):
    i = cuda.grid(1)
    v = x[i] if i < x.shape[0] else float32(0.0)
    k = 16
    while k > 0:
        v += cuda.shfl_down_sync(FULL, v, k)
        k //= 2
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def clip_quantize(out, x, scale):
    i = cuda.grid(1)
    if i < x.shape[0]:
        q = int32(x[i] * scale)
        if q > 127:
            q = 127
        if q < -128:
            q = -128
        out[i] = q


@cuda.jit
def transpose_shared_padded(out, a):
    t = cuda.shared.array((32, 33), float32)
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    y = cuda.blockIdx.y * 32 + cuda.threadIdx.y
    for j in range(0, 32, 8):
        t[cuda.threadIdx.y + j, cuda.threadIdx.x] = a[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
    y = cuda.blockIdx.x * 32 + cuda.threadIdx.y
    for j in range(0, 32, 8):
        out[y + j, x] = t[cuda.threadIdx.x, cuda.threadIdx.y + j]


@cuda.jit
def warp_scan_shfl_up(out, x):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    v = x[i] if i < x.shape[0] else float32(0.0)
    d = 1
    while d < 32:
        u = cuda.shfl_up_sync(FULL, v, d)
        if lane >= d:
            v += u
        d *= 2
    if i < out.shape[0]:
        out[i] = v


@cuda.jit
def bitonic_sort_shared(data):
    s = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * 1024
    s[t] = data[base + t]
    cuda.syncthreads()
    k = 2
    while k <= 1024:
        j = k // 2
        while j > 0:
            p = t ^ j
            if p > t:
                up = (t & k) == 0
                a, b = s[t], s[p]
                if (a > b) == up:
                    s[t] = b
                    s[p] = a
            cuda.syncthreads()
            j //= 2
        k *= 2
    data[base + t] = s[t]


@cuda.jit
def nbody_tile(acc, pos):
    sp = cuda.shared.array((256, 3), float32)
    i = cuda.grid(1)
    n = pos.shape[0]
    px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
    ax = ay = az = float32(0.0)
    for tile in range(n // 256):
        j = tile * 256 + cuda.threadIdx.x
        sp[cuda.threadIdx.x, 0] = pos[j, 0]
        sp[cuda.threadIdx.x, 1] = pos[j, 1]
        sp[cuda.threadIdx.x, 2] = pos[j, 2]
        cuda.syncthreads()
        for k in range(256):
            dx = sp[k, 0] - px
            dy = sp[k, 1] - py
            dz = sp[k, 2] - pz
            r2 = dx * dx + dy * dy + dz * dz + float32(1e-3)
            inv = float32(1.0) / (r2 * math.sqrt(r2))
            ax += dx * inv
            ay += dy * inv
            az += dz * inv
        cuda.syncthreads()
    acc[i, 0] = ax
    acc[i, 1] = ay
    acc[i, 2] = az


@cuda.jit
def mandelbrot(out, width, max_iter):
    x, y = cuda.grid(2)
    if x < width and y < width:
        cr = float32(-2.0) + float32(2.5) * x / width
        ci = float32(-1.25) + float32(2.5) * y / width
        zr = float32(0.0)
        zi = float32(0.0)
        k = 0
        while k < max_iter and zr * zr + zi * zi < float32(4.0):
            zr, zi = zr * zr - zi * zi + cr, float32(2.0) * zr * zi + ci
            k += 1
        out[y, x] = k


@cuda.jit
def one_block_shared_loop(out, iters):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    s[t] = t * float32(0.001)
    cuda.syncthreads()
    acc = float32(0.0)
    for k in range(iters):
        acc += s[(t + k) % 256]
    out[t] = acc


@cuda.jit
def few_blocks_f64_reduce(out, x):
    s = cuda.shared.array(256, float64)
    t = cuda.threadIdx.x
    acc = 0.0
    for k in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        acc += x[k]
    s[t] = acc
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            s[t] += s[t + h]
        cuda.syncthreads()
        h //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def cases():
    """[dict(name, kernel, grid, block, args (rng -> list), shared_bytes)], in launch order."""
    g = lambda n, b=TB: ((n + b - 1) // b,)  # noqa: E731
    f32 = lambda r, n: r.random(n, dtype=np.float32)  # noqa: E731
    n3, n2, nm, nb = 256, 4096, 1024, 1 << 15
    C = [
        (
            "stencil3d_7pt",
            stencil3d_7pt,
            (n3 // 32, n3 // 4, n3),
            (32, 4, 1),
            lambda r: [np.zeros((n3, n3, n3), np.float32), r.random((n3, n3, n3), dtype=np.float32)],
        ),
        (
            "jacobi2d_shared",
            jacobi2d_shared,
            (n2 // 16, n2 // 16),
            (16, 16),
            lambda r: [np.zeros((n2, n2), np.float32), r.random((n2, n2), dtype=np.float32)],
        ),
        (
            "scan_block_hillis",
            scan_block_hillis,
            g(N, 1024),
            1024,
            lambda r: [np.zeros(N, np.float32), f32(r, N)],
        ),
        (
            "scan_block_double_buffer",
            scan_block_double_buffer,
            g(N, 512),
            512,
            lambda r: [np.zeros(N, np.float32), f32(r, N)],
        ),
        (
            "softmax_block_row",
            softmax_block_row,
            (8192,),
            256,
            lambda r: [np.zeros((8192, 1024), np.float32), r.random((8192, 1024), dtype=np.float32)],
        ),
        (
            "softmax_warp_row",
            softmax_warp_row,
            (8192 * 32 // 256,),
            256,
            lambda r: [np.zeros((8192, 1024), np.float32), r.random((8192, 1024), dtype=np.float32)],
        ),
        (
            "batched_gemm8_shared",
            batched_gemm8_shared,
            (nb,),
            (8, 8),
            lambda r: [
                np.zeros((nb, 8, 8), np.float32),
                r.random((nb, 8, 8), dtype=np.float32),
                r.random((nb, 8, 8), dtype=np.float32),
            ],
        ),
        (
            "batched_gemm16_shared",
            batched_gemm16_shared,
            (nb // 4,),
            (16, 16),
            lambda r: [
                np.zeros((nb // 4, 16, 16), np.float32),
                r.random((nb // 4, 16, 16), dtype=np.float32),
                r.random((nb // 4, 16, 16), dtype=np.float32),
            ],
        ),
        (
            "matmul_naive",
            matmul_naive,
            (nm // 16, nm // 16),
            (16, 16),
            lambda r: [
                np.zeros((nm, nm), np.float32),
                r.random((nm, nm), dtype=np.float32),
                r.random((nm, nm), dtype=np.float32),
            ],
        ),
        (
            "matmul_tiled16",
            matmul_tiled16,
            (nm // 16, nm // 16),
            (16, 16),
            lambda r: [
                np.zeros((nm, nm), np.float32),
                r.random((nm, nm), dtype=np.float32),
                r.random((nm, nm), dtype=np.float32),
            ],
        ),
        (
            "gather_random",
            gather_random,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), f32(r, N), r.integers(0, N, N).astype(np.int32)],
        ),
        (
            "scatter_random",
            scatter_random,
            g(N),
            256,
            lambda r: [np.zeros(N, np.float32), f32(r, N), r.permutation(N).astype(np.int32)],
        ),
        (
            "hash_int64",
            hash_int64,
            g(N),
            256,
            lambda r: [np.zeros(N, np.int64), r.integers(0, 1 << 28, N).astype(np.int64)],
        ),
        (
            "hash_mod_table",
            hash_mod_table,
            g(N),
            256,
            lambda r: [np.zeros(N, np.int64), r.integers(0, 1 << 30, N).astype(np.int64), 1000003],
        ),
        (
            "collatz_steps",
            collatz_steps,
            g(1 << 20),
            256,
            lambda r: [np.zeros(1 << 20, np.int64), r.integers(1, 100000, 1 << 20).astype(np.int64)],
        ),
        (
            "digit_sum",
            digit_sum,
            g(N),
            256,
            lambda r: [np.zeros(N, np.int64), r.integers(0, 1 << 40, N).astype(np.int64)],
        ),
        ("poly_horner_f64", poly_horner_f64, g(N), 256, lambda r: [np.zeros(N), r.random(N)]),
        (
            "dot_f64_grid_stride",
            dot_f64_grid_stride,
            (SMS * 4,),
            256,
            lambda r: [np.zeros(1), r.random(N), r.random(N)],
        ),
        (
            "atomic_hist16",
            atomic_hist16,
            g(N),
            256,
            lambda r: [np.zeros(16, np.int32), r.integers(0, 1 << 20, N).astype(np.int32)],
        ),
        (
            "atomic_one_counter_fewblocks",
            atomic_one_counter_fewblocks,
            (SMS,),
            256,
            lambda r: [np.zeros(1, np.int32), f32(r, N)],
        ),
        (
            "shared_hist256",
            shared_hist256,
            (SMS * 2,),
            256,
            lambda r: [np.zeros(256, np.int32), r.integers(0, 1 << 20, N).astype(np.int32)],
        ),
        (
            "divergent_loop_2paths",
            divergent_loop_2paths,
            g(1 << 20),
            256,
            lambda r: [np.zeros(1 << 20, np.float32), f32(r, 1 << 20), 200],
        ),
        (
            "branch_in_loop",
            branch_in_loop,
            g(1 << 20),
            256,
            lambda r: [np.zeros(1 << 20, np.float32), f32(r, 1 << 20), 100],
        ),
        ("math_mix_f32", math_mix_f32, g(N), 256, lambda r: [np.zeros(N, np.float32), f32(r, N)]),
        (
            "row_sum_thread_per_row",
            row_sum_thread_per_row,
            g(16384, 128),
            128,
            lambda r: [np.zeros(16384, np.float32), r.random((16384, 512), dtype=np.float32)],
        ),
        (
            "col_sum_thread_per_col",
            col_sum_thread_per_col,
            g(16384, 128),
            128,
            lambda r: [np.zeros(16384, np.float32), r.random((512, 16384), dtype=np.float32)],
        ),
        ("reduce_shfl_atomic", reduce_shfl_atomic, g(N), 256, lambda r: [np.zeros(1, np.float32), f32(r, N)]),
        (
            "clip_quantize",
            clip_quantize,
            g(N),
            256,
            lambda r: [np.zeros(N, np.int32), (r.random(N, dtype=np.float32) - 0.5) * 4, np.float32(100.0)],
        ),
        (
            "transpose_shared_padded",
            transpose_shared_padded,
            (n2 // 32, n2 // 32),
            (32, 8),
            lambda r: [np.zeros((n2, n2), np.float32), r.random((n2, n2), dtype=np.float32)],
        ),
        ("warp_scan_shfl_up", warp_scan_shfl_up, g(N), 256, lambda r: [np.zeros(N, np.float32), f32(r, N)]),
        ("bitonic_sort_shared", bitonic_sort_shared, ((1 << 20) // 1024,), 1024, lambda r: [f32(r, 1 << 20)]),
        (
            "nbody_tile",
            nbody_tile,
            (16384 // 256,),
            256,
            lambda r: [np.zeros((16384, 3), np.float32), r.random((16384, 3), dtype=np.float32)],
        ),
        (
            "mandelbrot",
            mandelbrot,
            (1024 // 16, 1024 // 16),
            (16, 16),
            lambda r: [np.zeros((1024, 1024), np.int32), 1024, 256],
        ),
        (
            "one_block_shared_loop",
            one_block_shared_loop,
            (1,),
            256,
            lambda r: [np.zeros(256, np.float32), 100000],
        ),
        ("few_blocks_f64_reduce", few_blocks_f64_reduce, (16,), 256, lambda r: [np.zeros(16), r.random(N)]),
    ]
    return [dict(name=n, kernel=k, grid=gr, block=b, args=a, shared_bytes=0) for n, k, gr, b, a in C]


def make_args(case):
    """The case's arguments, the same on every machine (seeded by the case's name)."""
    seed = sum(ord(ch) * (k + 1) for k, ch in enumerate(case["name"]))
    return case["args"](np.random.default_rng(seed))
