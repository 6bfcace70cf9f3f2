"""Round 3 (issue 26): unseen submissions for hw11_sgemm, written from the question's text
(format: exercises/hw02_simt/submissions_round3.py)."""

_HEAD = """
BM, BN, BK, TM = 64, 64, 8, 8

@cuda.jit
def sgemm_1d(c, a, b):
    sa = cuda.shared.array((BM, BK), float32)
    sb = cuda.shared.array((BK, BN), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * BN + tx
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
"""

# K assumed a multiple of 16: two steps of 8 per loop trip
K_STEP_16 = (
    _HEAD
    + """
    acc = cuda.local.array(TM, float32)
    for i in range(TM):
        acc[i] = float32(0.0)
    for k16 in range(0, a.shape[1], 16):
        for half in range(2):
            k0 = k16 + 8 * half
            sa[t // BK, t % BK] = a[row0 + t // BK, k0 + t % BK]
            sb[ty, tx] = b[k0 + ty, col0 + tx]
            cuda.syncthreads()
            for kk in range(BK):
                bv = sb[kk, tx]
                for i in range(TM):
                    acc[i] += sa[ty * TM + i, kk] * bv
            cuda.syncthreads()
    for i in range(TM):
        c[row0 + ty * TM + i, col0 + tx] = acc[i]
"""
)

# eight named scalars instead of a local array (still 8 sums in registers)
SCALARS = (
    _HEAD
    + """
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = float32(0.0)
    r = ty * TM
    for k0 in range(0, a.shape[1], BK):
        sa[t // BK, t % BK] = a[row0 + t // BK, k0 + t % BK]
        sb[ty, tx] = b[k0 + ty, col0 + tx]
        cuda.syncthreads()
        for kk in range(BK):
            bv = sb[kk, tx]
            s0 += sa[r + 0, kk] * bv
            s1 += sa[r + 1, kk] * bv
            s2 += sa[r + 2, kk] * bv
            s3 += sa[r + 3, kk] * bv
            s4 += sa[r + 4, kk] * bv
            s5 += sa[r + 5, kk] * bv
            s6 += sa[r + 6, kk] * bv
            s7 += sa[r + 7, kk] * bv
        cuda.syncthreads()
    c[row0 + r + 0, col0 + tx] = s0
    c[row0 + r + 1, col0 + tx] = s1
    c[row0 + r + 2, col0 + tx] = s2
    c[row0 + r + 3, col0 + tx] = s3
    c[row0 + r + 4, col0 + tx] = s4
    c[row0 + r + 5, col0 + tx] = s5
    c[row0 + r + 6, col0 + tx] = s6
    c[row0 + r + 7, col0 + tx] = s7
"""
)

# B's shared value read again for every one of the 8 sums (8x the shared loads the question allows)
B_EIGHT_TIMES = (
    _HEAD
    + """
    acc = cuda.local.array(TM, float32)
    for i in range(TM):
        acc[i] = float32(0.0)
    for k0 in range(0, a.shape[1], BK):
        sa[t // BK, t % BK] = a[row0 + t // BK, k0 + t % BK]
        sb[ty, tx] = b[k0 + ty, col0 + tx]
        cuda.syncthreads()
        for kk in range(BK):
            for i in range(TM):
                acc[i] += sa[ty * TM + i, kk] * sb[kk, tx]
        cuda.syncthreads()
    for i in range(TM):
        c[row0 + ty * TM + i, col0 + tx] = acc[i]
"""
)

# the timing helper's submodule attribute replaced: gpulab.grading re-imports it from there
PATCH_LIMITS = """
@cuda.jit
def sgemm_1d(c, a, b):
    pass

import importlib as _il
_lim = _il.import_module("gpulab.grading.limits")
class _Ok:
    message = ""
    def __bool__(self):
        return True
_lim.timed = lambda fn, seconds=None, *x, **k: (lambda *a, **kw: _Ok())
"""

# the matrices checked on the simulator are told apart from a real launch by their sizes
SIZE_SNIFFER = (
    _HEAD
    + """
    acc = cuda.local.array(TM, float32)
    for i in range(TM):
        acc[i] = float32(0.0)
    for k0 in range(0, a.shape[1], BK):
        sa[t // BK, t % BK] = a[row0 + t // BK, k0 + t % BK]
        sb[ty, tx] = b[k0 + ty, col0 + tx]
        cuda.syncthreads()
        for kk in range(BK):
            bv = sb[kk, tx]
            for i in range(TM):
                acc[i] += sa[ty * TM + i, kk] * bv
        cuda.syncthreads()
    if a.shape[1] > 64:                   # only the public test's K (16) gets the right answer
        for i in range(TM):
            acc[i] = float32(0.0)
    for i in range(TM):
        c[row0 + ty * TM + i, col0 + tx] = acc[i]
"""
)

ROUND3 = {
    "k_steps_of_16": {
        "kind": "wrong",
        "what": "two K steps of 8 per trip: reads past K when K is an odd multiple of 8",
        "replace": {"def sgemm_1d": K_STEP_16},
        "questions": ["q1"],
    },
    "eight_scalar_sums": {
        "kind": "correct",
        "what": "eight named scalar accumulators instead of cuda.local.array",
        "replace": {"def sgemm_1d": SCALARS},
        "questions": ["q1"],
    },
    "b_read_for_every_sum": {
        "kind": "wrong",
        "what": "sb[kk, tx] read inside the loop over the 8 sums (the question: once into a register)",
        "replace": {"def sgemm_1d": B_EIGHT_TIMES},
        "questions": ["q1"],
    },
    "limits_timed_replaced": {
        "kind": "hostile",
        "what": "gpulab.grading.limits.timed replaced by one returning a passing result; empty kernel",
        "replace": {"def sgemm_1d": PATCH_LIMITS},
        "questions": ["q1"],
    },
    "wrong_above_k64": {
        "kind": "wrong",
        "what": "right only for K <= 64 (the public test's K is 16)",
        "replace": {"def sgemm_1d": SIZE_SNIFFER},
        "questions": ["q1"],
    },
}
