"""The launches whose counters gpulab's simulator and Nsight Compute both report.

Every kernel is the book's own, imported from :mod:`gpulab.kernels` and re-jitted with
``lineinfo=True`` (``cuda.jit(lineinfo=True)(k.py_func)``) so that ncu can attribute counters to
source lines; the comparison therefore speaks about the kernels the chapters teach. The one
exception is ``shared_stride``, a probe of the shared-memory bank rule that no chapter runs as a
kernel (chapters 06 and 07 show the rule with :func:`gpulab.models.memory.bank_summary`).

Each case launches one kernel once with fixed inputs; ``ncu_vs_sim.py`` runs them on the GPU under
ncu and on the simulator, and compares.
"""

from dataclasses import dataclass

import numpy as np
from numba import cuda, float32

from gpulab.kernels import divergence, matmul, memory, reduce, transpose, warp

N = 1 << 16
TPB = 256  # threads per block; also the probe's shared words (a compile-time constant)


@dataclass
class Case:
    name: str
    kernel: object
    grid: tuple
    block: tuple
    make: object
    note: str = ""


def lineinfo(kernel):
    """The same Python function jitted again with line information for the profiler."""
    return cuda.jit(lineinfo=True)(kernel.py_func)


copy = lineinfo(memory.copy)
copy_strided = lineinfo(memory.copy_strided)
copy_offset = lineinfo(memory.copy_offset)
poly_global = lineinfo(memory.poly_global)
transpose_naive = lineinfo(transpose.transpose_naive)
transpose_shared = lineinfo(transpose.transpose_shared)
transpose_padded = lineinfo(transpose.transpose_padded)
branch_odd_even = lineinfo(divergence.branch_kernel("lane % 2 == 0"))
branch_17_15 = lineinfo(divergence.branch_kernel("lane < 17"))
reduce_sum = lineinfo(reduce.reduce_sum)
block_sum_shfl = lineinfo(warp.block_sum_shfl)
matmul_tiled = lineinfo(matmul.matmul_tiled)


@cuda.jit(lineinfo=True)
def shared_stride(out, a, stride):
    """Probe (not a book kernel): each thread stores one shared word, then thread t reads word
    (t * stride) mod 256, written by its block (blocks of TPB = 256 threads)."""
    sh = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i]
    cuda.syncthreads()
    out[i] = sh[(t * stride) % TPB]


def _vec(n=N, dtype=np.float32):
    return np.random.default_rng(1).random(n).astype(dtype)


def cases():
    n = N
    g = n // TPB
    sq = 256
    tgrid, tblock = transpose.grid_for((sq, sq)), (transpose.TILE, transpose.BLOCK_ROWS)
    mm = 128
    cs = [Case("copy", copy, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec()))]
    for s in (2, 4, 8, 32):
        cs.append(
            Case(
                f"strided_copy_s{s}",
                copy_strided,
                (g,),
                (TPB,),
                lambda s=s: (np.zeros(n, np.float32), _vec(n * s), s),
            )
        )
    cs += [
        Case("offset_copy_1", copy_offset, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec(n + 32), 1)),
        Case("copy_float64", copy, (g,), (TPB,), lambda: (np.zeros(n), _vec(dtype=np.float64))),
        Case(
            "broadcast_read",
            poly_global,
            (g,),
            (TPB,),
            lambda: (np.zeros(n, np.float32), _vec(), memory.POLY.copy()),
            note="every lane reads the same four coefficients",
        ),
    ]
    for s in (1, 2, 32, 33):
        cs.append(
            Case(
                f"shared_stride_s{s}",
                shared_stride,
                (g,),
                (TPB,),
                lambda s=s: (np.zeros(n, np.float32), _vec(), s),
            )
        )
    square = lambda: (np.zeros((sq, sq), np.float32), _vec(sq * sq).reshape(sq, sq))  # noqa: E731
    cs += [
        Case("transpose_naive", transpose_naive, tgrid, tblock, square),
        Case("transpose_shared", transpose_shared, tgrid, tblock, square),
        Case("transpose_padded", transpose_padded, tgrid, tblock, square),
        Case("divergent_odd_even", branch_odd_even, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec())),
        Case("divergent_17_15", branch_17_15, (g,), (TPB,), lambda: (np.zeros(n, np.float32), _vec())),
        Case("tree_reduce", reduce_sum, (g,), (reduce.GROUP,), lambda: (np.zeros(g, np.float32), _vec())),
        Case("shuffle_reduce", block_sum_shfl, (g,), (TPB,), lambda: (_vec(), np.zeros(g, np.float32))),
        Case(
            "matmul_tiled",
            matmul_tiled,
            matmul.grid_for(mm, mm),
            (matmul.TILE, matmul.TILE),
            lambda: (
                np.zeros((mm, mm), np.float32),
                _vec(mm * mm).reshape(mm, mm),
                _vec(mm * mm).reshape(mm, mm),
            ),
        ),
    ]
    return cs
