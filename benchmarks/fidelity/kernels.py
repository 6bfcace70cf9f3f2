"""Textbook kernels whose counters gpulab's simulator and Nsight Compute both report.

Each case launches one kernel once with fixed inputs; `ncu_vs_sim.py` runs them on the GPU
under ncu and on the simulator, and compares. Kernels live at module level with a global
`cuda`, as numba needs; `lineinfo=True` lets ncu attribute counters to source lines.
"""
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32

N = 1 << 16
TPB = 256
TILE = 32
TILE_PAD = TILE + 1      # numba needs shared shapes to be compile-time constants


@dataclass
class Case:
    name: str
    kernel: object
    grid: tuple
    block: tuple
    make: object
    note: str = ""


@cuda.jit(lineinfo=True)
def vector_add(out, a, b):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


@cuda.jit(lineinfo=True)
def strided_copy(out, a, stride):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i * stride]


@cuda.jit(lineinfo=True)
def offset_copy(out, a, offset):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i + offset]


@cuda.jit(lineinfo=True)
def broadcast_read(out, a):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[0] * 2.0


@cuda.jit(lineinfo=True)
def shared_stride(out, a, stride):
    sh = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i]
    cuda.syncthreads()
    out[i] = sh[(t * stride) % 1024]


@cuda.jit(lineinfo=True)
def transpose_naive(out, a):
    tile = cuda.shared.array((TILE, TILE), float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    x2 = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y2 = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    out[y2, x2] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


@cuda.jit(lineinfo=True)
def transpose_padded(out, a):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    x2 = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y2 = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    out[y2, x2] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


@cuda.jit(lineinfo=True)
def divergent_odd_even(out, a):
    i = cuda.grid(1)
    if i < out.shape[0]:
        if i % 2 == 0:
            out[i] = a[i] * 2.0
        else:
            out[i] = a[i] + 1.0


@cuda.jit(lineinfo=True)
def divergent_17_15(out, a):
    i = cuda.grid(1)
    if i < out.shape[0]:
        if i % 32 < 17:
            out[i] = a[i] * 2.0
        else:
            out[i] = a[i] + 1.0


@cuda.jit(lineinfo=True)
def tree_reduce(out, a):
    sh = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.shape[0] else 0.0
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


@cuda.jit(lineinfo=True)
def shuffle_reduce(out, a):
    sh = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    v = a[i] if i < a.shape[0] else float32(0.0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if t % 32 == 0:
        sh[t // 32] = v
    cuda.syncthreads()
    if t < 32:
        v = sh[t] if t < TPB // 32 else float32(0.0)
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
            off //= 2
        if t == 0:
            out[cuda.blockIdx.x] = v


T = 16


@cuda.jit(lineinfo=True)
def matmul_tiled(C, A, B):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.0)
    for t in range(A.shape[1] // T):
        sA[ty, tx] = A[y, t * T + tx]
        sB[ty, tx] = B[t * T + ty, x]
        cuda.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[y, x] = acc


def _vec(n=N, dtype=np.float32):
    return np.random.default_rng(1).random(n).astype(dtype)


def cases():
    n = N
    g = n // TPB
    sq = 256
    cs = [
        Case("vector_add", vector_add, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec(), _vec())),
    ]
    for s in (2, 4, 8, 32):
        cs.append(Case(f"strided_copy_s{s}", strided_copy, (g,), (TPB,),
                       lambda s=s: (np.zeros(n, np.float32), _vec(n * s), s)))
    cs += [
        Case("offset_copy_1", offset_copy, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec(n + 32), 1)),
        Case("copy_float64", vector_add, (g,), (TPB,),
             lambda: (np.zeros(n), _vec(dtype=np.float64), _vec(dtype=np.float64))),
        Case("broadcast_read", broadcast_read, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec())),
    ]
    for s in (1, 2, 32, 33):
        cs.append(Case(f"shared_stride_s{s}", shared_stride, (g,), (TPB,),
                       lambda s=s: (np.zeros(n, np.float32), _vec(), s)))
    cs += [
        Case("transpose_naive", transpose_naive, (sq // TILE, sq // TILE), (TILE, TILE),
             lambda: (np.zeros((sq, sq), np.float32), _vec(sq * sq).reshape(sq, sq))),
        Case("transpose_padded", transpose_padded, (sq // TILE, sq // TILE), (TILE, TILE),
             lambda: (np.zeros((sq, sq), np.float32), _vec(sq * sq).reshape(sq, sq))),
        Case("divergent_odd_even", divergent_odd_even, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec())),
        Case("divergent_17_15", divergent_17_15, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec())),
        Case("tree_reduce", tree_reduce, (g,), (TPB,), lambda: (np.zeros(g, np.float32), _vec())),
        Case("shuffle_reduce", shuffle_reduce, (g,), (TPB,), lambda: (np.zeros(g, np.float32), _vec())),
        Case("matmul_tiled", matmul_tiled, (8, 8), (T, T),
             lambda: (np.zeros((128, 128), np.float32), _vec(128 * 128).reshape(128, 128),
                      _vec(128 * 128).reshape(128, 128))),
    ]
    return cs
