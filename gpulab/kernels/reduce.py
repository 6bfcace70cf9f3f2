"""Shared-memory tree reduction (source article 002, section 27.3): one partial sum per block.

``tree_sum`` is the tree itself, the one definition that ``reduce_sum`` here and chapter 08's
``gpulab.kernels.warp.block_sum_tree`` both run. Launch ``reduce_sum`` with block = GROUP and any
grid; partial has one slot per block. Summing partial on the host (or with a second launch)
finishes the job.
"""

from numba import cuda, float32

GROUP = 256


@cuda.jit(device=True)
def tree_sum(s, t):
    """Sum s[0 : blockDim.x] into s[0], halving the active threads each round (blockDim.x a power
    of 2). The barrier is outside the if, so every thread of the block reaches it."""
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2


@cuda.jit
def reduce_sum(partial, values):
    """One partial sum per block: each thread stages one value in shared memory, then the tree."""
    s = cuda.shared.array(GROUP, float32)
    gi = cuda.threadIdx.x
    i = cuda.grid(1)
    s[gi] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    tree_sum(s, gi)
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
