"""fp32 matrix multiply C = A @ B, naive and shared-memory tiled (chapter 06, seed 004).

Both launch with block = (TILE, TILE) and grid = (ceil(N/TILE), ceil(M/TILE)) for C of
shape (M, N); x indexes columns so that consecutive lanes touch consecutive addresses.
"""

from numba import cuda, float32

TILE = 16


def grid_for(m, n):
    """Launch grid for C of shape (m, n)."""
    return ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)


@cuda.jit
def matmul_naive(c, a, b):
    """Each thread reads a full row of A and column of B straight from global memory."""
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


@cuda.jit
def matmul_tiled(c, a, b):
    """Blocks stage TILE x TILE tiles of A and B in shared memory and reuse them TILE
    times."""
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    kdim = a.shape[1]
    acc = float32(0.0)
    for t in range((kdim + TILE - 1) // TILE):
        k_a = t * TILE + tx
        k_b = t * TILE + ty
        if row < a.shape[0] and k_a < kdim:
            sa[ty, tx] = a[row, k_a]
        else:
            sa[ty, tx] = 0.0
        if k_b < kdim and col < b.shape[1]:
            sb[ty, tx] = b[k_b, col]
        else:
            sb[ty, tx] = 0.0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def matmul_tiled_one_barrier(c, a, b):
    """matmul_tiled without the second barrier (a bug): a fast warp overwrites the next
    tile while slower warps still read the current one. K must be a multiple of TILE."""
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range(a.shape[1] // TILE):
        sa[ty, tx] = a[row, t * TILE + tx]
        sb[ty, tx] = b[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
    c[row, col] = acc
