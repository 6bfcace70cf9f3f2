"""Prepared wrong submissions for this homework, built from the solution notebook by
tests/test_homework.py (format: see exercises/hw02_simt/submissions.py)."""

STRIDED = """
@cuda.jit
def scale(out, a, factor):
    row, col = cuda.grid(2)          # consecutive lanes walk down a column: 32 sectors per request
    if row < a.shape[0] and col < a.shape[1]:
        out[row, col] = factor * a[row, col]
"""

CONFLICTED = """
@cuda.jit
def row_sums(out, a):
    tile = cuda.shared.array((TILE, TILE), float32)     # no padding: column reads hit one bank
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    tile[ty, tx] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(TILE):
            s += tile[tx, k]
        if row0 + tx < a.shape[0]:
            out[row0 + tx] = s
"""

SUBMISSIONS = {
    "strided_access": {"group": "wrong_answers", "replace": {"def scale": STRIDED}, "scores": {"q1": 1}},
    "conflicted_shared_access": {
        "group": "wrong_answers",
        "replace": {"def row_sums": CONFLICTED},
        "scores": {"q2": 1},
    },
    "padding_too_wide": {
        "group": "wrong_answers",
        "replace": {"padding_answer =": 'padding_answer = {"elem_bytes": 8, "row_width": 34}'},
        "scores": {"q4": 0},
    },
}


# ---- written as a class would (issue 14) -----------------------------------------------------

STYLE_SCALE = """
@cuda.jit("void(float32[:, :], float32[:, :], float32)")
def scale(out, a, factor):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row >= a.shape[0] or col >= a.shape[1]:
        return
    out[row, col] = a[row, col] * factor
"""

# padding written as a literal, a while loop, an explicit signature
STYLE_ROW_SUMS = """
@cuda.jit("void(float32[:], float32[:, :])")
def row_sums(out, a):
    tile = cuda.shared.array((32, 33), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * 32
    v = float32(0.0)
    if row0 + ty < a.shape[0]:
        v = a[row0 + ty, tx]
    tile[ty, tx] = v
    cuda.syncthreads()
    if ty == 0 and row0 + tx < a.shape[0]:
        s = float32(0.0)
        k = 0
        while k < 32:
            s += tile[tx, k]
            k += 1
        out[row0 + tx] = s
"""

HARD_CODED_64 = """
@cuda.jit
def scale(out, a, factor):
    col, row = cuda.grid(2)
    if row < 64 and col < 64:           # the public test's size, hard-coded
        out[row, col] = factor * a[row, col]
"""

# conflict-free column reads, but the tile is stored transposed: a 32-way conflict on every store
TRANSPOSED_STORE = """
@cuda.jit
def row_sums(out, a):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    tile[tx, ty] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(TILE):
            s += tile[k, tx]
        if row0 + tx < a.shape[0]:
            out[row0 + tx] = s
"""

SUBMISSIONS.update(
    {
        "correct_styles": {
            "group": "chaos",
            "replace": {
                "def scale": STYLE_SCALE,
                "def row_sums": STYLE_ROW_SUMS,
                "sector_answer =": 'sector_answer = {"stride": np.int64(8), "offset": 0, '
                '"elem_bytes": np.int32(4)}',
            },
            "scores": {},
        },
        "hard_coded_64": {
            "group": "wrong_answers_2",
            "replace": {"def scale": HARD_CODED_64},
            "scores": {"q1": 1},
        },
        "transposed_store": {
            "group": "wrong_answers_2",
            "replace": {"def row_sums": TRANSPOSED_STORE},
            "scores": {"q2": 1},
        },
    }
)


# ---- tiled matmul (q5) and padded transpose (q6), issue 14 item 18 ---------------------------

# untiled: right values, every product read from global memory
NAIVE_MATMUL = """
@cuda.jit
def matmul_tiled(c, a, b):
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        s = float32(0.0)
        for k in range(a.shape[1]):
            s += a[row, k] * b[k, col]
        c[row, col] = s
"""

_MATMUL = """
@cuda.jit
def matmul_tiled(c, a, b):
    sa = cuda.shared.array((16, 16), float32)
    sb = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * 16 + ty
    col = cuda.blockIdx.x * 16 + tx
    acc = float32(0.0)
    for t in range(STEPS):
        k = t * 16
        sa[ty, tx] = a[row, k + tx] if row < a.shape[0] and k + tx < a.shape[1] else float32(0.0)
        sb[ty, tx] = b[k + ty, col] if k + ty < b.shape[0] and col < b.shape[1] else float32(0.0)
        cuda.syncthreads()
        for kk in range(16):
            acc += sa[ty, kk] * sb[kk, tx]
        SECOND_BARRIER
    if GUARD:
        c[row, col] = acc
"""
_OK = {
    "STEPS": "(a.shape[1] + 15) // 16",
    "SECOND_BARRIER": "cuda.syncthreads()",
    "GUARD": "row < c.shape[0] and col < c.shape[1]",
}


def _matmul(**change):
    src = _MATMUL
    for k, v in dict(_OK, **change).items():
        src = src.replace(k, v)
    return src


# the next step's stores overwrite tiles other warps are still reading (a race from K > 16 on)
MATMUL_NO_SECOND_BARRIER = _matmul(SECOND_BARRIER="pass                    # missing: cuda.syncthreads()")
MATMUL_OFF_BY_ONE = _matmul(GUARD="row <= c.shape[0] and col <= c.shape[1]")
# one K step: K = 16, as in the public test
MATMUL_HARD_CODED_K = _matmul(STEPS="1")

# the shared tile is 32 x 32: reading it by column is a 32-way bank conflict
UNPADDED_TRANSPOSE = """
@cuda.jit
def transpose(out, a):
    tile = cuda.shared.array((32, 32), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * 32, cuda.blockIdx.y * 32
    for j in range(0, 32, 8):
        if y0 + ty + j < a.shape[0] and x0 + tx < a.shape[1]:
            tile[ty + j, tx] = a[y0 + ty + j, x0 + tx]
    cuda.syncthreads()
    for j in range(0, 32, 8):
        if x0 + ty + j < out.shape[0] and y0 + tx < out.shape[1]:
            out[x0 + ty + j, y0 + tx] = tile[tx, ty + j]
"""

# reads the tile back with no barrier: other warps' rows may not be there yet
TRANSPOSE_NO_BARRIER = UNPADDED_TRANSPOSE.replace("(32, 32)", "(32, 33)").replace(
    "    cuda.syncthreads()\n", ""
)

# no guards: right for the public test's 32 x 32, out of bounds on any other size
TRANSPOSE_HARD_CODED_32 = """
@cuda.jit
def transpose(out, a):
    tile = cuda.shared.array((32, 33), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for j in range(0, 32, 8):
        tile[ty + j, tx] = a[ty + j, tx]
    cuda.syncthreads()
    for j in range(0, 32, 8):
        out[ty + j, tx] = tile[tx, ty + j]
"""

# the unpadded transpose, with the check it fails replaced by one that always passes
PATCH_TRANSPOSE_CHECK = (
    UNPADDED_TRANSPOSE
    + """
import gpulab.checks.tiling
gpulab.checks.tiling.check_padded_transpose = lambda *a, **k: gpulab.checks.tiling.CheckResult(True, "fine")
"""
)

# correct, as a class writes them: explicit signatures, cuda.grid(2), if/else loads, a while
# loop over the K tiles, literal sizes; the transpose with the padding in a constant and 4 steps
STYLE_MATMUL = """
@cuda.jit("void(float32[:, :], float32[:, :], float32[:, :])")
def matmul_tiled(c, a, b):
    sa = cuda.shared.array((16, 16), float32)
    sb = cuda.shared.array((16, 16), float32)
    col, row = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.0)
    k0 = 0
    while k0 < a.shape[1]:
        if row < a.shape[0] and k0 + tx < a.shape[1]:
            sa[ty, tx] = a[row, k0 + tx]
        else:
            sa[ty, tx] = 0.0
        if k0 + ty < b.shape[0] and col < b.shape[1]:
            sb[ty, tx] = b[k0 + ty, col]
        else:
            sb[ty, tx] = 0.0
        cuda.syncthreads()
        for kk in range(16):
            acc += sa[ty, kk] * sb[kk, tx]
        cuda.syncthreads()
        k0 += 16
    if row >= c.shape[0] or col >= c.shape[1]:
        return
    c[row, col] = acc
"""

STYLE_TRANSPOSE = """
PAD = 33

@cuda.jit("void(float32[:, :], float32[:, :])")
def transpose(out, a):
    tile = cuda.shared.array((32, PAD), float32)
    h, w = a.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for s in range(4):
        r = cuda.blockIdx.y * 32 + ty + 8 * s
        col = cuda.blockIdx.x * 32 + tx
        if r < h and col < w:
            tile[ty + 8 * s, tx] = a[r, col]
    cuda.syncthreads()
    for s in range(4):
        r = cuda.blockIdx.x * 32 + ty + 8 * s      # a row of out is a column of a
        col = cuda.blockIdx.y * 32 + tx
        if r < w and col < h:
            out[r, col] = tile[tx, ty + 8 * s]
"""

SUBMISSIONS.update(
    {
        "naive_untiled_matmul": {
            "group": "wrong_answers",
            "replace": {"def matmul_tiled": NAIVE_MATMUL},
            "scores": {"q5": 1},
        },
        "unpadded_transpose": {
            "group": "wrong_answers",
            "replace": {"def transpose": UNPADDED_TRANSPOSE},
            "scores": {"q6": 1},
        },
        "matmul_missing_second_barrier": {
            "group": "wrong_answers_2",
            "replace": {"def matmul_tiled": MATMUL_NO_SECOND_BARRIER},
            "scores": {"q5": 1},
        },
        "transpose_hard_coded_32": {
            "group": "wrong_answers_2",
            "replace": {"def transpose": TRANSPOSE_HARD_CODED_32},
            "scores": {"q6": 1},
        },
        "matmul_off_by_one_guard": {
            "group": "wrong_answers_3",
            "replace": {"def matmul_tiled": MATMUL_OFF_BY_ONE},
            "scores": {"q5": 1},
        },
        # the simulator reports the race in the public test too
        "transpose_missing_barrier": {
            "group": "wrong_answers_3",
            "replace": {"def transpose": TRANSPOSE_NO_BARRIER},
            "scores": {"q6": 0},
        },
        "matmul_hard_coded_k": {
            "group": "tiling_hostile",
            "replace": {"def matmul_tiled": MATMUL_HARD_CODED_K},
            "scores": {"q5": 1},
        },
        # the patch costs the hidden points of q6 and of every later question (q7: the hidden tests
        # refuse a changed environment), and is flagged
        "patched_transpose_check": {
            "group": "tiling_hostile",
            "replace": {"def transpose": PATCH_TRANSPOSE_CHECK},
            "scores": {"q6": 1, "q7": 1},
            "flags": ["assigns to gpulab", "imports the checkers"],
            "message": "gpulab.checks.tiling.check_padded_transpose was replaced",
        },
        "correct_tiling_styles": {
            "group": "chaos",
            "replace": {"def matmul_tiled": STYLE_MATMUL, "def transpose": STYLE_TRANSPOSE},
        },
    }
)


# ---- a copy graded by predicted DRAM efficiency on an H200 (q7, issue 16 item 6) -------------

# correct: a grid-stride loop over a fixed grid (132 SMs x 8 blocks), a while loop
GRID_STRIDE_COPY = """
def copy_grid(n):
    return 132 * 8

@cuda.jit
def copy_kernel(out, a):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.shape[0]:
        out[i] = a[i]
        i += stride
"""

# each thread copies 4 consecutive elements: right values, but a warp's lanes are 16 bytes apart
# (4x the sectors per request); predicted at about 39% of the DRAM bound against the book's 61%
CHUNKED_COPY = """
def copy_grid(n):
    return (n + 1023) // 1024

@cuda.jit
def copy_kernel(out, a):
    t = cuda.grid(1)
    for j in range(4):
        i = 4 * t + j
        if i < out.shape[0]:
            out[i] = a[i]
"""

# no guard: fine on the public test's 1024 elements (4 whole blocks), out of bounds on a partial block
UNGUARDED_COPY = """
def copy_grid(n):
    return (n + 255) // 256

@cuda.jit
def copy_kernel(out, a):
    i = cuda.grid(1)
    out[i] = a[i]
"""

SUBMISSIONS.update(
    {
        "grid_stride_copy": {"group": "chaos", "replace": {"def copy_grid": GRID_STRIDE_COPY}, "scores": {}},
        # four consecutive elements per thread: each load touches 4x the sectors it needs; the
        # next three iterations find them in L1, but the L1 wavefronts bind. Timed on the H200
        # (gpulab/data/results/hw05_copies.json, CUDA events, n = 2**24): 83.3 us against the book
        # copy's 54.1 us, 0.65 of its speed, under the question's 80% rule; the model of blind
        # round 4 agrees (L1-bound), so the hidden test fails it and only the public point remains
        "chunked_copy": {
            "group": "wrong_answers",
            "replace": {"def copy_grid": CHUNKED_COPY},
            "scores": {"q7": 1},
        },
        "unguarded_copy": {
            "group": "wrong_answers_2",
            "replace": {"def copy_grid": UNGUARDED_COPY},
            "scores": {"q7": 1},
            "message": "out of bounds",
        },
    }
)
