"""Image kernels from seed 002 in numba: invert/contrast with an edge guard, box blur naive and tiled.

Images are float32 arrays; x (the fast thread index) walks columns so warps read along rows.
"""

from numba import cuda, float32

GROUP = 8  # numthreads(8, 8, 1) for the per-pixel kernels
TILE = 16  # blur tile: 16 x 16 threads, one output pixel each
R = 4  # blur radius: a (2R+1)^2 = 81-tap box
HALO = TILE + 2 * R
ROWS_X, ROWS_Y = 32, 8  # blur_tiled_rows: 32 x 8 threads, one warp per tile row
HALO_X, HALO_Y = ROWS_X + 2 * R, ROWS_Y + 2 * R


def dispatch(width, height, group=GROUP):
    """The HLSL host line Dispatch((w + 7) / 8, (h + 7) / 8, 1) as a numba grid (x, y)."""
    return ((width + group - 1) // group, (height + group - 1) // group)


@cuda.jit
def invert_contrast(out, img, contrast):
    """RGBA image (h, w, 4): rgb -> (1 - rgb - 0.5) * contrast + 0.5, alpha kept;
    edge-guarded."""
    x, y = cuda.grid(2)
    if x >= img.shape[1] or y >= img.shape[0]:
        return  # guard the edges
    for ch in range(3):
        out[y, x, ch] = (1.0 - img[y, x, ch] - 0.5) * contrast + 0.5
    out[y, x, 3] = img[y, x, 3]


@cuda.jit
def invert_contrast_unguarded(out, img, contrast):
    """The same kernel without the edge guard: threads past the image edge index out of
    bounds."""
    x, y = cuda.grid(2)
    for ch in range(3):
        out[y, x, ch] = (1.0 - img[y, x, ch] - 0.5) * contrast + 0.5
    out[y, x, 3] = img[y, x, 3]


@cuda.jit
def blur_naive(out, img):
    """(2R+1)^2 box blur of a grey image (h, w), clamp-to-edge, every tap read from global
    memory."""
    x, y = cuda.grid(2)
    h = img.shape[0]
    w = img.shape[1]
    if x < w and y < h:
        s = float32(0.0)
        for dy in range(-R, R + 1):
            yy = min(max(y + dy, 0), h - 1)
            for dx in range(-R, R + 1):
                xx = min(max(x + dx, 0), w - 1)
                s += img[yy, xx]
        out[y, x] = s / ((2 * R + 1) * (2 * R + 1))


@cuda.jit
def blur_tiled(out, img):
    """The same blur with a (TILE+2R)^2 halo tile loaded cooperatively into shared memory.

    Launch with block = (TILE, TILE) and grid = (ceil(w/TILE), ceil(h/TILE)).
    """
    tile = cuda.shared.array((HALO, HALO), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    h = img.shape[0]
    w = img.shape[1]
    bx = cuda.blockIdx.x * TILE - R
    by = cuda.blockIdx.y * TILE - R
    for yy in range(ty, HALO, TILE):  # several texels per thread
        gy = min(max(by + yy, 0), h - 1)
        for xx in range(tx, HALO, TILE):
            gx = min(max(bx + xx, 0), w - 1)
            tile[yy, xx] = img[gy, gx]
    cuda.syncthreads()
    s = float32(0.0)
    for dy in range(-R, R + 1):
        for dx in range(-R, R + 1):
            s += tile[ty + R + dy, tx + R + dx]
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    if x < w and y < h:
        out[y, x] = s / ((2 * R + 1) * (2 * R + 1))


@cuda.jit
def blur_tiled_rows(out, img):
    """blur_tiled with 32 x 8 blocks: each warp reads one tile row, so shared reads never
    conflict.

    The (8+2R) x (32+2R) tile carries a relatively larger halo (2.5 values per output for
    R = 4).
    Launch with block = (ROWS_X, ROWS_Y) and grid = (ceil(w/ROWS_X), ceil(h/ROWS_Y)).
    """
    tile = cuda.shared.array((HALO_Y, HALO_X), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    h = img.shape[0]
    w = img.shape[1]
    bx = cuda.blockIdx.x * ROWS_X - R
    by = cuda.blockIdx.y * ROWS_Y - R
    for yy in range(ty, HALO_Y, ROWS_Y):
        gy = min(max(by + yy, 0), h - 1)
        for xx in range(tx, HALO_X, ROWS_X):
            gx = min(max(bx + xx, 0), w - 1)
            tile[yy, xx] = img[gy, gx]
    cuda.syncthreads()
    s = float32(0.0)
    for dy in range(-R, R + 1):
        for dx in range(-R, R + 1):
            s += tile[ty + R + dy, tx + R + dx]
    x = cuda.blockIdx.x * ROWS_X + tx
    y = cuda.blockIdx.y * ROWS_Y + ty
    if x < w and y < h:
        out[y, x] = s / ((2 * R + 1) * (2 * R + 1))


# ---- float3 pixels: array of structures (AoS) against structure of arrays (SoA) -------------
# Source article 002's tiled blur keeps float3 colours in its groupshared tile. A float3 is
# 12 bytes and CUDA has no 12-byte load: each channel is a separate 4-byte access, 12 bytes
# apart.

BLOCK_1D = 128
AOS_TILE = 3 * BLOCK_1D  # floats one block stages: 128 pixels x 3 channels


@cuda.jit
def grey_aos(out, rgb):
    """rgb (n, 3) float32, pixels stored as structures: each channel load strides
    12 bytes."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = 0.299 * rgb[i, 0] + 0.587 * rgb[i, 1] + 0.114 * rgb[i, 2]


@cuda.jit
def grey_soa(out, planes):
    """planes (3, n) float32, one array per channel: consecutive lanes read consecutive
    words."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = 0.299 * planes[0, i] + 0.587 * planes[1, i] + 0.114 * planes[2, i]


@cuda.jit
def grey_aos_staged(out, flat):
    """flat = rgb.ravel() (AoS). The block copies its 3 x 128 floats into shared memory
    with consecutive lanes on consecutive words, then each thread reads its float3 from
    the tile: word 3t, a stride of 3 banks, which is odd, so the 32 lanes hit 32 different
    banks.
    Launch with block BLOCK_1D."""
    tile = cuda.shared.array(AOS_TILE, float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * AOS_TILE
    for k in range(3):
        j = k * BLOCK_1D + t
        if base + j < flat.shape[0]:
            tile[j] = flat[base + j]
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = 0.299 * tile[3 * t] + 0.587 * tile[3 * t + 1] + 0.114 * tile[3 * t + 2]
