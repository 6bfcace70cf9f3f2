"""Prepared submissions for hw11_sgemm, built from the solution notebook by tests/test_homework.py
(format: see exercises/hw02_simt/submissions.py). What a class writes for 1-D register blocking
(issue 17 item 5): correct work in other styles, the usual wrong turns, and tampering."""

_SGEMM = """
@cuda.jit
def sgemm_1d(c, a, b):
    sa = cuda.shared.array((64, 8), float32)
    sb = cuda.shared.array((8, 64), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * 64 + tx
    row0, col0 = cuda.blockIdx.y * 64, cuda.blockIdx.x * 64
    acc = cuda.local.array(8, float32)
    for i in range(8):
        acc[i] = float32(0.0)
    for k0 in range(0, K_END, 8):
        sa[t // 8, t % 8] = a[row0 + t // 8, k0 + t % 8]
        sb[ty, tx] = b[k0 + ty, col0 + tx]
        cuda.syncthreads()
        for kk in range(8):
            bv = sb[kk, tx]
            for i in range(8):
                acc[i] += A_VALUE * bv
        SECOND_BARRIER
    for i in range(8):
        c[row0 + ty * 8 + i, col0 + tx] = acc[i]
"""


def _sgemm(k_end="a.shape[1]", a_value="sa[ty * 8 + i, kk]", barrier="cuda.syncthreads()"):
    return _SGEMM.replace("K_END", k_end).replace("A_VALUE", a_value).replace("SECOND_BARRIER", barrier)


# K = 16, as in the public test
HARD_CODED_K = _sgemm(k_end="16")
# the next step's stores overwrite tiles other warps still read: a race (the public test has 2 steps)
NO_SECOND_BARRIER = _sgemm(barrier="pass                   # missing: cuda.syncthreads()")
# A's tile staged transposed: lanes tx read 32 rows of A, one float each (18 sectors per load
# request, averaged with B's 4, where coalesced tiles need 4), and sa[tx, ty] puts 8 lanes in one
# bank (896 store conflicts); right values and the right number of load requests
TRANSPOSED_A = (
    _SGEMM.replace("sa[t // 8, t % 8] = a[row0 + t // 8, k0 + t % 8]", "sa[tx, ty] = a[row0 + tx, k0 + ty]")
    .replace("K_END", "a.shape[1]")
    .replace("A_VALUE", "sa[ty * 8 + i, kk]")
    .replace("SECOND_BARRIER", "cuda.syncthreads()")
)
# B from shared memory, but A read from global memory in the inner loop: 8 loads per k
A_FROM_GLOBAL = _sgemm(a_value="a[row0 + ty * 8 + i, k0 + kk]")

# chapter 6's plain shared tiles, no register blocking: each thread makes its 8 outputs one after
# another, re-staging both tiles for every output (8 times the loads)
PLAIN_SHARED_TILES = """
@cuda.jit
def sgemm_1d(c, a, b):
    sa = cuda.shared.array((64, 8), float32)
    sb = cuda.shared.array((8, 64), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * 64 + tx
    row0, col0 = cuda.blockIdx.y * 64, cuda.blockIdx.x * 64
    for i in range(8):
        s = float32(0.0)
        for k0 in range(0, a.shape[1], 8):
            sa[t // 8, t % 8] = a[row0 + t // 8, k0 + t % 8]
            sb[ty, tx] = b[k0 + ty, col0 + tx]
            cuda.syncthreads()
            for kk in range(8):
                s += sa[ty * 8 + i, kk] * sb[kk, tx]
            cuda.syncthreads()
        c[row0 + ty * 8 + i, col0 + tx] = s
"""

# the plain-tiles kernel, with the check's K step rebound so that its load limit is 8 times higher
TAMPER_BK = (
    PLAIN_SHARED_TILES
    + """
import gpulab.checks.sgemm as sg
sg.BK = 1
"""
)

# correct: an explicit signature, the staging index from blockDim with shifts, a while loop over K
STYLE_SGEMM = """
@cuda.jit("void(float32[:, :], float32[:, :], float32[:, :])")
def sgemm_1d(c, a, b):
    sa = cuda.shared.array((64, 8), float32)
    sb = cuda.shared.array((8, 64), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * cuda.blockDim.x + tx
    row0 = cuda.blockIdx.y * 64
    col0 = cuda.blockIdx.x * 64
    acc = cuda.local.array(8, float32)
    for i in range(8):
        acc[i] = 0.0
    k0 = 0
    while k0 < a.shape[1]:
        sa[t >> 3, t & 7] = a[row0 + (t >> 3), k0 + (t & 7)]
        sb[ty, tx] = b[k0 + ty, col0 + tx]
        cuda.syncthreads()
        for kk in range(8):
            bv = sb[kk, tx]
            base = ty * 8
            for i in range(8):
                acc[i] += sa[base + i, kk] * bv
        cuda.syncthreads()
        k0 += 8
    for i in range(8):
        c[row0 + ty * 8 + i, col0 + tx] = acc[i]
"""

# q2 (issue 27): the ladder read from the recorded counters. Right numbers, wrong reading: unrolling
# alone blamed on instruction overhead (its FFMA share rose), uint32's gain on instructions only
Q2_WRONG_READING = """
ladder = None
steps = ("prefetch", "unroll", "unroll_u32")
ladder = {
    "ffma_share": {k: ncu[k][FFMA] / 32 / ncu[k][INST] for k in steps},
    "blocks_per_sm": {"prefetch": 2, "unroll": 1, "unroll_u32": 2},
    "unroll_alone": "instruction overhead",
    "uint32_fixed": ["instruction overhead"],
}
"""
# FFMA counted per thread, not per warp instruction: shares above 1 (the public test says so)
Q2_THREAD_SHARE = """
ladder = None
steps = ("prefetch", "unroll", "unroll_u32")
ladder = {
    "ffma_share": {k: ncu[k][FFMA] / ncu[k][INST] for k in steps},
    "blocks_per_sm": {"prefetch": 2, "unroll": 1, "unroll_u32": 2},
    "unroll_alone": "occupancy",
    "uint32_fixed": ["occupancy", "instruction overhead"],
}
"""
# correct: typed in by hand from the printed table, a tuple for the factors
Q2_BY_HAND = """
ladder = {
    "ffma_share": {"prefetch": 0.570, "unroll": 0.767, "unroll_u32": 0.843},
    "blocks_per_sm": {"prefetch": 2, "unroll": 1.0, "unroll_u32": 2},
    "unroll_alone": "occupancy",
    "uint32_fixed": ("instruction overhead", "occupancy"),
}
"""

SUBMISSIONS = {
    "plain_shared_tiles": {"replace": {"def sgemm_1d": PLAIN_SHARED_TILES}, "scores": {"q1": 1}},
    "a_from_global_memory": {"replace": {"def sgemm_1d": A_FROM_GLOBAL}, "scores": {"q1": 1}},
    "transposed_a_staging": {"replace": {"def sgemm_1d": TRANSPOSED_A}, "scores": {"q1": 1}},
    "hard_coded_k": {"replace": {"def sgemm_1d": HARD_CODED_K}, "scores": {"q1": 1}},
    # graded in hard_coded_k's notebook (another question)
    "q2_wrong_reading": {
        "group": "hard_coded_k",
        "replace": {"ladder = None": Q2_WRONG_READING},
        "scores": {"q2": 1},
    },
    "q2_share_per_thread": {
        "group": "a_from_global_memory",
        "replace": {"ladder = None": Q2_THREAD_SHARE},
        "scores": {"q2": 0},
    },
    # the simulator reports the race in the public test too
    "missing_second_barrier": {"replace": {"def sgemm_1d": NO_SECOND_BARRIER}, "scores": {"q1": 0}},
    "tamper_block_k": {
        "replace": {"def sgemm_1d": TAMPER_BK},
        "scores": {"q1": 1},
        "flags": ["imports the checkers"],
        "message": "gpulab.checks.sgemm.BK was replaced",
    },
    "correct_styles": {"group": "chaos", "replace": {"def sgemm_1d": STYLE_SGEMM}, "kernelspec": "gpulab"},
    "q2_by_hand": {"group": "chaos", "replace": {"ladder = None": Q2_BY_HAND}},
}
