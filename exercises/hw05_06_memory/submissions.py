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
