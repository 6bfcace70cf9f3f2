"""Matrix transpose three ways (chapter 06, seed 001 section 5.2): naive, shared, padded.

All three use TILE x BLOCK_ROWS = 32 x 8 thread blocks, each thread handling TILE/BLOCK_ROWS
elements, and out = a.T for a of shape (height, width). Launch with
grid = (ceil(width/TILE), ceil(height/TILE)), block = (TILE, BLOCK_ROWS).
"""

from numba import cuda, float32

TILE = 32
BLOCK_ROWS = 8
PADDED = TILE + 1  # a module constant: numba needs a literal shape, not an expression


def grid_for(shape):
    """Launch grid for an input of shape (height, width)."""
    h, w = shape
    return ((w + TILE - 1) // TILE, (h + TILE - 1) // TILE)


@cuda.jit
def transpose_naive(out, a):
    """Read a row-wise (coalesced), write out column-wise (each lane a different row of out)."""
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y0 = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, BLOCK_ROWS):
        y = y0 + j
        if x < a.shape[1] and y < a.shape[0]:
            out[x, y] = a[y, x]


@cuda.jit
def transpose_shared(out, a):
    """Stage a 32x32 tile in shared memory so both global read and write are coalesced.

    The shared read tile[tx, ty + j] walks a column: 32 lanes, same bank (32-way conflict).
    """
    tile = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        if x < a.shape[1] and y + j < a.shape[0]:
            tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    xo = cuda.blockIdx.y * TILE + tx
    yo = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        if xo < a.shape[0] and yo + j < a.shape[1]:
            out[yo + j, xo] = tile[tx, ty + j]


@cuda.jit
def transpose_padded(out, a):
    """As transpose_shared with a TILE x (TILE+1) tile: a column now spans all 32 banks."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        if x < a.shape[1] and y + j < a.shape[0]:
            tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    xo = cuda.blockIdx.y * TILE + tx
    yo = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        if xo < a.shape[0] and yo + j < a.shape[1]:
            out[yo + j, xo] = tile[tx, ty + j]


@cuda.jit
def row_sums_shared(out, a):
    """Row sums of a (n, 32) matrix via a shared 32x32 tile: lane k sums tile row k.

    Chapter 06's exercise: the column-wise shared read tile[tx, k] is a 32-way bank conflict.
    Launch with grid = (ceil(n/32),), block = (32, 32).
    """
    tile = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    if row0 + ty < a.shape[0]:
        tile[ty, tx] = a[row0 + ty, tx]
    else:
        tile[ty, tx] = 0.0
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(TILE):
            s += tile[tx, k]
        if row0 + tx < a.shape[0]:
            out[row0 + tx] = s


TILE_WIDE = 64
ROWS_WIDE = 4
PADDED_WIDE = TILE_WIDE + 1


def grid_for_wide(shape):
    """Launch grid of :func:`transpose_padded_wide` for an input of shape (height, width)."""
    h, w = shape
    return ((w + TILE_WIDE - 1) // TILE_WIDE, (h + TILE_WIDE - 1) // TILE_WIDE)


@cuda.jit
def transpose_padded_wide(out, a):
    """The padded transpose tuned for bandwidth: 64 x 65 tiles, 64 x 4 threads (16 elements
    each, more loads in flight per thread), and no per-element bounds checks in whole tiles.

    Chosen by benchmarks/transpose_variants.py on an H200 (64x4 was the fastest of the shapes
    tried). Launch with grid_for_wide(a.shape), block (TILE_WIDE, ROWS_WIDE).
    """
    tile = cuda.shared.array((TILE_WIDE, PADDED_WIDE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE_WIDE + tx
    y = cuda.blockIdx.y * TILE_WIDE + ty
    whole = (cuda.blockIdx.x + 1) * TILE_WIDE <= a.shape[1] and (cuda.blockIdx.y + 1) * TILE_WIDE <= a.shape[
        0
    ]
    if whole:
        for j in range(0, TILE_WIDE, ROWS_WIDE):
            tile[ty + j, tx] = a[y + j, x]
    else:
        for j in range(0, TILE_WIDE, ROWS_WIDE):
            if x < a.shape[1] and y + j < a.shape[0]:
                tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    xo = cuda.blockIdx.y * TILE_WIDE + tx
    yo = cuda.blockIdx.x * TILE_WIDE + ty
    if whole:
        for j in range(0, TILE_WIDE, ROWS_WIDE):
            out[yo + j, xo] = tile[tx, ty + j]
    else:
        for j in range(0, TILE_WIDE, ROWS_WIDE):
            if xo < a.shape[0] and yo + j < a.shape[1]:
                out[yo + j, xo] = tile[tx, ty + j]
