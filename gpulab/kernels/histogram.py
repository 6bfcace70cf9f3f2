"""256-bin histogram of uint8 data: atomics on global memory vs a per-block shared histogram.

Launch with a 1-D block of BLOCK threads and any 1-D grid; both kernels grid-stride over data.
"""

from numba import cuda, int32

BINS = 256
BLOCK = 256


@cuda.jit
def histogram_global(hist, data):
    """Every sample is one atomic add on the global histogram (all blocks contend for
    256 words)."""
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for i in range(start, data.shape[0], step):
        cuda.atomic.add(hist, data[i], 1)


@cuda.jit
def histogram_shared(hist, data):
    """Each block counts into its own shared histogram, then adds it to the global one
    once."""
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, BINS, cuda.blockDim.x):
        local[b] = 0
    cuda.syncthreads()
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for i in range(start, data.shape[0], step):
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    for b in range(t, BINS, cuda.blockDim.x):
        if local[b] != 0:
            cuda.atomic.add(hist, b, local[b])
