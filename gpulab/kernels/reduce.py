"""Shared-memory tree reduction (source article 002, section 27.3): one partial sum per block.

Launch with block = GROUP and any grid; partial has one slot per block. Summing partial on
the host (or with a second launch) finishes the job.
"""
from numba import cuda, float32

GROUP = 256


@cuda.jit
def reduce_sum(partial, values):
    """Tree reduction in shared memory; the barrier is outside the if, so every thread reaches it."""
    s = cuda.shared.array(GROUP, float32)
    gi = cuda.threadIdx.x
    i = cuda.grid(1)
    s[gi] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = GROUP // 2
    while stride > 0:
        if gi < stride:
            s[gi] += s[gi + stride]
        cuda.syncthreads()
        stride //= 2
    if gi == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def reduce_sum_barrier_in_if(partial, values):
    """The bug source article 002 warns about: syncthreads inside the if, reached by only some threads."""
    s = cuda.shared.array(GROUP, float32)
    gi = cuda.threadIdx.x
    i = cuda.grid(1)
    s[gi] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = GROUP // 2
    while stride > 0:
        if gi < stride:
            s[gi] += s[gi + stride]
            cuda.syncthreads()
        stride //= 2
    if gi == 0:
        partial[cuda.blockIdx.x] = s[0]
