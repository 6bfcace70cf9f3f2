"""Three small kernels, each built to make warps wait for one reason (seed 003's stall reasons,
as Nsight Compute names them in its Warp State section):

- :func:`dependent_loads` -> **Long Scoreboard**: every load's address is the previous load's
  value, so a warp waits for global memory (L2/HBM) before it can issue its next instruction;
- :func:`one_warp_works` -> **Barrier**: warp 0 of each block runs a long loop before
  ``syncthreads()`` while the other warps have reached the barrier and wait there;
- :func:`conflicted_stores` -> **MIO Throttle**: back-to-back shared-memory stores in which all
  32 lanes hit the same bank (32-way conflicts), so the shared-memory pipe (fed by the MIO queue)
  is the bottleneck and warps cannot even enqueue their next shared instruction. Thread t owns
  words 32t .. 32t+31, so there is no race, only conflicts.

All three run on a GPU (numba.cuda) and on gpulab's simulator (``gpulab.launch``), which counts
their loads, barriers and bank conflicts but does not model time or stalls; the measured stall
breakdown on an H200 is in ``gpulab/data/results/stall_reasons.json``
(``benchmarks/stall_reasons.py``).
"""

import numpy as np
from numba import cuda, float32

BLOCK = 256  # threads per block for one_warp_works / conflicted_stores
SHARED_WORDS = 32 * BLOCK  # float32 words of shared memory per block (32 KiB)


@cuda.jit
def dependent_loads(out, nxt, steps):
    """j = nxt[j] ``steps`` times from j = thread index: each load waits for the one before it."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        j = i % nxt.shape[0]
        for _ in range(steps):
            j = nxt[j]
        out[i] = j


@cuda.jit
def one_warp_works(out, iters):
    """Warp 0 of the block does ``iters`` dependent multiply-adds, then every warp meets at the
    barrier: warps 1.. wait there the whole time."""
    t = cuda.threadIdx.x
    v = float32(t)
    if t < 32:
        for _ in range(iters):
            v = v * float32(0.999) + float32(0.001)
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = v


@cuda.jit
def conflicted_stores(out, iters):
    """Each thread stores its value ``iters`` times to its own shared word 32 * t + (k mod 32):
    all 32 lanes of a warp hit bank k mod 32 at once, a 32-way conflict per store; then one read
    back. The stored register never changes, so no store waits for a register (that wait would
    count as Short Scoreboard). Launch with blockDim.x <= BLOCK."""
    s = cuda.shared.array(SHARED_WORDS, float32)
    t = cuda.threadIdx.x
    v = float32(t)
    for k in range(iters):
        s[t * 32 + (k & 31)] = v
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = s[t * 32 + (t & 31)]


def random_successors(n: int, seed: int = 0) -> np.ndarray:
    """int32 array of n random successors (a random map, not a permutation), for dependent_loads."""
    return np.random.default_rng(seed).integers(0, n, size=n, dtype=np.int32)


def dependent_loads_reference(nxt: np.ndarray, n_out: int, steps: int) -> np.ndarray:
    """What dependent_loads writes, in numpy."""
    j = np.arange(n_out) % nxt.shape[0]
    for _ in range(steps):
        j = nxt[j]
    return j


def one_warp_works_reference(n_out: int, block: int, iters: int) -> np.ndarray:
    """What one_warp_works writes, in numpy float32."""
    t = (np.arange(n_out) % block).astype(np.float32)
    v = t.copy()
    w = v[t < 32]
    for _ in range(iters):
        w = w * np.float32(0.999) + np.float32(0.001)
    v[t < 32] = w
    return v


def conflicted_stores_reference(n_out: int, block: int, iters: int) -> np.ndarray:
    """What conflicted_stores writes: t where thread t stored to word 32t + (t mod 32) (that is,
    when t mod 32 < iters), else whatever shared memory held (not checked: returns NaN there)."""
    t = np.arange(n_out) % block
    return np.where((t & 31) < iters, t, np.nan).astype(np.float32)
