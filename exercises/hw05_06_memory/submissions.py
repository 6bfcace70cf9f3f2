"""Prepared wrong submissions for this homework, built from the solution notebook by
tests/test_homework.py (format: see exercises/hw02_simt/submissions.py)."""

STRIDED = '''
@cuda.jit
def scale(out, a, factor):
    row, col = cuda.grid(2)          # consecutive lanes walk down a column: 32 sectors per request
    if row < a.shape[0] and col < a.shape[1]:
        out[row, col] = factor * a[row, col]
'''

CONFLICTED = '''
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
'''

SUBMISSIONS = {
    "strided_access": {"group": "wrong_answers", "replace": {"def scale": STRIDED}, "scores": {"q1": 1}},
    "conflicted_shared_access": {"group": "wrong_answers", "replace": {"def row_sums": CONFLICTED}, "scores": {"q2": 1}},
    "padding_too_wide": {"group": "wrong_answers", "replace": {"padding_answer =": 'padding_answer = {"elem_bytes": 8, "row_width": 34}'},
                         "scores": {"q4": 0}},
}


# ---- written as a class would (issue 14) -----------------------------------------------------

STYLE_SCALE = '''
@cuda.jit("void(float32[:, :], float32[:, :], float32)")
def scale(out, a, factor):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row >= a.shape[0] or col >= a.shape[1]:
        return
    out[row, col] = a[row, col] * factor
'''

# padding written as a literal, a while loop, an explicit signature
STYLE_ROW_SUMS = '''
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
'''

HARD_CODED_64 = '''
@cuda.jit
def scale(out, a, factor):
    col, row = cuda.grid(2)
    if row < 64 and col < 64:           # the public test's size, hard-coded
        out[row, col] = factor * a[row, col]
'''

# conflict-free column reads, but the tile is stored transposed: a 32-way conflict on every store
TRANSPOSED_STORE = '''
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
'''

SUBMISSIONS.update({
    "correct_styles": {"group": "chaos", "replace": {"def scale": STYLE_SCALE, "def row_sums": STYLE_ROW_SUMS,
                                   "sector_answer =": 'sector_answer = {"stride": np.int64(8), "offset": 0, '
                                                      '"elem_bytes": np.int32(4)}'},
                       "scores": {}},
    "hard_coded_64": {"group": "wrong_answers_2", "replace": {"def scale": HARD_CODED_64}, "scores": {"q1": 1}},
    "transposed_store": {"group": "wrong_answers_2", "replace": {"def row_sums": TRANSPOSED_STORE},
                         "scores": {"q2": 1}},
})
