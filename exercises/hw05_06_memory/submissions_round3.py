"""Round 3 (issue 26): unseen submissions for hw05_06_memory, written from the questions' text
(format: exercises/hw02_simt/submissions_round3.py)."""

ROWS_FROM_GLOBAL = """
PADDED = 33

@cuda.jit
def row_sums(out, a):
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    tile[ty, tx] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0
    cuda.syncthreads()
    if ty == 0 and row0 + tx < a.shape[0]:
        s = float32(0.0)
        for k in range(TILE):
            s += a[row0 + tx, k]          # the tile is filled but never read
        out[row0 + tx] = s
"""

ROWS_TRANSPOSED_STORE = """
@cuda.jit
def row_sums(out, a):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    tile[tx, ty] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0   # 32-way conflicted store
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(TILE):
            s += tile[k, tx]                                                  # conflict-free loads
        if row0 + tx < a.shape[0]:
            out[row0 + tx] = s
"""

ROWS_SWIZZLE = """
@cuda.jit
def row_sums(out, a):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    tile[ty, tx ^ ty] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(TILE):
            s += tile[tx, k ^ tx]
        if row0 + tx < a.shape[0]:
            out[row0 + tx] = s
"""

MATMUL_NO_ROW_GUARD = """
MM_TILE = 16

@cuda.jit
def matmul_tiled(c, a, b):
    sa = cuda.shared.array((MM_TILE, MM_TILE), float32)
    sb = cuda.shared.array((MM_TILE, MM_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * MM_TILE + ty
    col = cuda.blockIdx.x * MM_TILE + tx
    acc = float32(0.0)
    for t in range((a.shape[1] + MM_TILE - 1) // MM_TILE):
        k = t * MM_TILE
        sa[ty, tx] = a[row, k + tx] if k + tx < a.shape[1] else float32(0.0)   # no row < M
        sb[ty, tx] = b[k + ty, col] if k + ty < b.shape[0] and col < b.shape[1] else float32(0.0)
        cuda.syncthreads()
        for kk in range(MM_TILE):
            acc += sa[ty, kk] * sb[kk, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc
"""

MATMUL_B_FROM_GLOBAL = """
MM_TILE = 16

@cuda.jit
def matmul_tiled(c, a, b):
    sa = cuda.shared.array((MM_TILE, MM_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * MM_TILE + ty
    col = cuda.blockIdx.x * MM_TILE + tx
    acc = float32(0.0)
    for t in range((a.shape[1] + MM_TILE - 1) // MM_TILE):
        k = t * MM_TILE
        sa[ty, tx] = a[row, k + tx] if row < a.shape[0] and k + tx < a.shape[1] else float32(0.0)
        cuda.syncthreads()
        for kk in range(MM_TILE):
            if k + kk < b.shape[0] and col < b.shape[1]:
                acc += sa[ty, kk] * b[k + kk, col]                 # B straight from global memory
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc
"""

MATMUL_3D_SHARED = """
MM_TILE = 16

@cuda.jit
def matmul_tiled(c, a, b):
    s = cuda.shared.array((2, MM_TILE, MM_TILE), float32)     # both tiles in one array
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * MM_TILE + ty
    col = cuda.blockIdx.x * MM_TILE + tx
    M, K, N = a.shape[0], a.shape[1], b.shape[1]
    acc = float32(0.0)
    k = 0
    while k < K:
        s[0, ty, tx] = a[row, k + tx] if row < M and k + tx < K else float32(0.0)
        s[1, ty, tx] = b[k + ty, col] if k + ty < K and col < N else float32(0.0)
        cuda.syncthreads()
        for kk in range(MM_TILE):
            acc += s[0, ty, kk] * s[1, kk, tx]
        cuda.syncthreads()
        k += MM_TILE
    if row < M and col < N:
        c[row, col] = acc
"""

TRANSPOSE_PAD_34 = """
ROWS = 8

@cuda.jit
def transpose(out, a):
    tile = cuda.shared.array((32, 34), float32)          # padded, but to an even width
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    for j in range(0, TILE, ROWS):
        r, col = y0 + ty + j, x0 + tx
        if r < a.shape[0] and col < a.shape[1]:
            tile[ty + j, tx] = a[r, col]
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        r, col = x0 + ty + j, y0 + tx
        if r < out.shape[0] and col < out.shape[1]:
            out[r, col] = tile[tx, ty + j]
"""

TRANSPOSE_SWIZZLE = """
ROWS = 8

@cuda.jit
def transpose(out, a):
    tile = cuda.shared.array((32, 32), float32)          # no padding: columns swizzled by xor
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    for j in range(0, TILE, ROWS):
        r, col = y0 + ty + j, x0 + tx
        if r < a.shape[0] and col < a.shape[1]:
            tile[ty + j, tx ^ (ty + j)] = a[r, col]
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        r, col = x0 + ty + j, y0 + tx
        if r < out.shape[0] and col < out.shape[1]:
            out[r, col] = tile[tx, (ty + j) ^ tx]
"""

COPY_64_BLOCKS = """
def copy_grid(n):
    return 64                      # a grid-stride loop over a small fixed grid

@cuda.jit
def copy_kernel(out, a):
    i = cuda.grid(1)
    while i < out.shape[0]:
        out[i] = a[i]
        i += cuda.gridsize(1)
"""

COPY_BOOKS_KERNEL = """
from gpulab.kernels.memory import copy as copy_kernel

def copy_grid(n):
    return (n + 255) // 256
"""

# writes an always-passing transpose check into gpulab/checks/tiling.py and forgets the module,
# so the hidden test's `from gpulab.checks import tiling` reads the file again
DISK_CHECKS = """
ROWS = 8

@cuda.jit
def transpose(out, a):
    tile = cuda.shared.array((32, 32), float32)          # unpadded: 32-way conflicts
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    for j in range(0, TILE, ROWS):
        r, col = y0 + ty + j, x0 + tx
        if r < a.shape[0] and col < a.shape[1]:
            tile[ty + j, tx] = a[r, col]
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        r, col = x0 + ty + j, y0 + tx
        if r < out.shape[0] and col < out.shape[1]:
            out[r, col] = tile[tx, ty + j]

import os as _os
import gpulab.checks as _checks
_f = _os.path.join(_os.path.dirname(_checks.__file__), "tiling.py")
with open(_f, "a") as _h:
    _h.write("\\n\\nclass _Fine:\\n    message = 'fine'\\n    def __bool__(self):\\n        return True\\n"
             "\\ndef check_padded_transpose(*a, **k):\\n    return _Fine()\\n")
__import__("sys").modules.pop("gpulab.checks.tiling", None)
if hasattr(_checks, "tiling"):
    delattr(_checks, "tiling")
"""

ROUND3 = {
    "rows_summed_from_global": {
        "kind": "wrong",
        "what": "the tile is filled but each row is summed from global memory (no shared loads)",
        "replace": {"def row_sums": ROWS_FROM_GLOBAL},
        "questions": ["q2"],
    },
    "rows_transposed_store": {
        "kind": "wrong",
        "what": "conflict-free loads bought with a transposed, 32-way conflicted shared store",
        "replace": {"def row_sums": ROWS_TRANSPOSED_STORE},
        "questions": ["q2"],
    },
    "rows_xor_swizzle": {
        "kind": "correct",
        "what": "an unpadded tile with xor-swizzled columns",
        "replace": {"def row_sums": ROWS_SWIZZLE},
        "questions": ["q2"],
    },
    "matmul_without_row_guard": {
        "kind": "wrong",
        "what": "A's tile load checks the K edge only: rows past M read out of bounds",
        "replace": {"def matmul_tiled": MATMUL_NO_ROW_GUARD},
        "questions": ["q5"],
    },
    "matmul_b_from_global": {
        "kind": "wrong",
        "what": "A tiled, B read from global memory in the inner loop",
        "replace": {"def matmul_tiled": MATMUL_B_FROM_GLOBAL},
        "questions": ["q5"],
    },
    "matmul_one_3d_shared_array": {
        "kind": "correct",
        "what": "both tiles in one (2, 16, 16) shared array, a while loop over K",
        "replace": {"def matmul_tiled": MATMUL_3D_SHARED},
        "questions": ["q5"],
    },
    "transpose_padded_to_34": {
        "kind": "wrong",
        "what": "rows padded to 34 (2-way conflicts on the column read)",
        "replace": {"def transpose": TRANSPOSE_PAD_34},
        "questions": ["q6"],
    },
    "transpose_xor_swizzle": {
        "kind": "correct",
        "what": "no padding: xor-swizzled columns, conflict-free both ways",
        "replace": {"def transpose": TRANSPOSE_SWIZZLE},
        "questions": ["q6"],
    },
    "copy_over_64_blocks": {
        "kind": "wrong",
        "what": "grid-stride copy over 64 blocks (fewer than an H200's SMs)",
        "replace": {"def copy_grid": COPY_64_BLOCKS},
        "questions": ["q7"],
    },
    "copy_is_the_books_kernel": {
        "kind": "hostile",
        "what": "copy_kernel imported from gpulab.kernels.memory (the reference itself)",
        "replace": {"def copy_grid": COPY_BOOKS_KERNEL},
        "questions": ["q7"],
    },
    "padding_34_for_doubles": {
        "kind": "wrong",
        "what": "row width 34 for 8-byte elements (4 wavefronts, not 2)",
        "replace": {"padding_answer =": 'padding_answer = {"elem_bytes": 8, "row_width": 34}'},
        "questions": ["q4"],
    },
    "padding_typed_loosely": {
        "kind": "correct",
        "what": "the right widget answers typed as an integral float and a numpy integer",
        "replace": {
            "padding_answer =": 'padding_answer = {"elem_bytes": 8.0, "row_width": np.int64(33)}',
            "sector_answer =": 'sector_answer = {"stride": np.int32(8), "offset": 0, "elem_bytes": 4}',
        },
        "questions": ["q3", "q4"],
    },
    "disk_rewrites_tiling_check": {
        "kind": "hostile",
        "what": "appends an always-true check_padded_transpose to gpulab/checks/tiling.py and drops the module",
        "replace": {"def transpose": DISK_CHECKS},
        "questions": ["q6"],
    },
}
