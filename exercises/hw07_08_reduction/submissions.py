"""Prepared wrong submissions for this homework, built from the solution notebook by
tests/test_homework.py (format: see exercises/hw02_simt/submissions.py)."""

NO_BARRIER = """
@cuda.jit
def block_sum(x, out):
    sums = cuda.shared.array(32, float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    v = x[i] if i < x.shape[0] else float32(0.0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if lane == 0:
        sums[warp] = v
    # missing: cuda.syncthreads()
    if warp == 0:
        v = sums[lane] if lane < cuda.blockDim.x // 32 else float32(0.0)
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(FULL, v, off)
            off //= 2
        if lane == 0:
            out[cuda.blockIdx.x] = v
"""

TREE = """
@cuda.jit
def block_sum(x, out):
    s = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:                # right sums, but log2(block) + 1 barriers
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]
"""

EXCLUSIVE = """
@cuda.jit
def warp_scan(x, out):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    v = x[i] if i < x.shape[0] else float32(0.0)
    own = v
    d = 1
    while d < 32:
        u = cuda.shfl_up_sync(FULL, v, d)
        if lane >= d:
            v += u
        d *= 2
    if i < out.shape[0]:
        out[i] = v - own                 # exclusive, not inclusive
"""

SUBMISSIONS = {
    # the simulator reports the race in the public test too, so all of q1 is lost
    "missing_barrier": {
        "group": "serial_lanes",
        "replace": {"def block_sum": NO_BARRIER},
        "scores": {"q1": 0},
    },
    "tree_reduction_many_barriers": {
        "group": "wrong_answers",
        "replace": {"def block_sum": TREE},
        "scores": {"q1": 1},
    },
    "exclusive_scan": {
        "group": "wrong_answers",
        "replace": {"def warp_scan": EXCLUSIVE},
        "scores": {"q3": 0},
    },
}


# ---- written as a class would (issue 14) -----------------------------------------------------

# an explicit signature, an unrolled xor butterfly, cuda.laneid, a for loop over range
STYLE_BLOCK_SUM = """
@cuda.jit("void(float32[:], float32[:])")
def block_sum(x, out):
    sums = cuda.shared.array(32, float32)
    i = cuda.grid(1)
    lane = cuda.laneid
    warp = cuda.threadIdx.x // 32
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    for k in range(5):
        v += cuda.shfl_xor_sync(FULL, v, 16 >> k)
    if lane == 0:
        sums[warp] = v
    cuda.syncthreads()
    if warp == 0:
        v = float32(0.0)
        if lane < cuda.blockDim.x // 32:
            v = sums[lane]
        for k in range(5):
            v += cuda.shfl_xor_sync(FULL, v, 16 >> k)
        if lane == 0:
            out[cuda.blockIdx.x] = v
"""

STYLE_WARP_REDUCE = """
@cuda.jit("void(float32[:], float32[:])")
def warp_reduce(x, out):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    v += cuda.shfl_xor_sync(FULL, v, 16)
    v += cuda.shfl_xor_sync(FULL, v, 8)
    v += cuda.shfl_xor_sync(FULL, v, 4)
    v += cuda.shfl_xor_sync(FULL, v, 2)
    v += cuda.shfl_xor_sync(FULL, v, 1)
    if cuda.laneid == 0:
        out[i // 32] = v
"""

STYLE_WARP_SCAN = """
@cuda.jit
def warp_scan(x, out):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    for k in range(5):
        d = 1 << k
        u = cuda.shfl_up_sync(FULL, v, d)
        if cuda.laneid >= d:
            v += u
    if i < x.shape[0]:
        out[i] = v
"""

# right sums, but lane 0 adds up its warp in a loop: no shuffles at all
LANE0_REDUCE = """
@cuda.jit
def warp_reduce(x, out):
    i = cuda.grid(1)
    if cuda.threadIdx.x % 32 == 0:
        s = float32(0.0)
        for k in range(32):
            if i + k < x.shape[0]:
                s += x[i + k]
        out[i // 32] = s
"""

LANE0_SCAN = """
@cuda.jit
def warp_scan(x, out):
    i = cuda.grid(1)
    if cuda.threadIdx.x % 32 == 0:
        s = float32(0.0)
        for k in range(32):
            if i + k < x.shape[0]:
                s += x[i + k]
                out[i + k] = s
"""

# the serial reduction again, with the check's thresholds rebound so that it would pass
TAMPER_CONSTANTS = (
    LANE0_REDUCE
    + """
import gpulab.checks.warp as w
w.MIN_SHUFFLES = 0
w.MIN_EFFICIENCY = 0.0
"""
)

SUBMISSIONS.update(
    {
        "correct_styles": {
            "group": "chaos",
            "replace": {
                "def block_sum": STYLE_BLOCK_SUM,
                "def warp_reduce": STYLE_WARP_REDUCE,
                "def warp_scan": STYLE_WARP_SCAN,
                "loop_answer =": 'loop_answer = {"kind": "xor", "offsets": np.array([1, 2, 4, 8, 16])}',
            },
            "scores": {},
        },
        "lane0_serial_reduce": {
            "group": "serial_lanes",
            "replace": {"def warp_reduce": LANE0_REDUCE},
            "scores": {"q2": 1},
        },
        "lane0_serial_scan": {
            "group": "serial_lanes",
            "replace": {"def warp_scan": LANE0_SCAN},
            "scores": {"q3": 1},
        },
        # q1 was graded before the tampering cell ran; afterwards every hidden test refuses to grade
        "tamper_warp_constants": {
            "replace": {"def warp_reduce": TAMPER_CONSTANTS},
            "scores": {"q1": 4, "q2": 1, "q3": 1, "q4": 0},
            "message": "gpulab.checks.warp.MIN_SHUFFLES was replaced",
        },
    }
)


# ---- the shared-memory tree (q5), issue 14 item 18 --------------------------------------------

_TREE = """
@cuda.jit
def tree_sum(partial, values):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if GUARD else float32(0.0)
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        ROUND_BARRIER
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]
"""


def _tree(guard="i < values.shape[0]", barrier="cuda.syncthreads()"):
    return _TREE.replace("GUARD", guard).replace("ROUND_BARRIER", barrier)


# a round reads what another warp added in the round before: the simulator reports the race
TREE_NO_ROUND_BARRIER = _tree(barrier="pass                   # missing: cuda.syncthreads()")
TREE_OFF_BY_ONE = _tree(guard="i <= values.shape[0]")

# right sums, 2 barriers, but thread 0 adds up the block alone: 256 loads where a tree needs 48
TREE_SERIAL = """
@cuda.jit
def tree_sum(partial, values):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else float32(0.0)
    cuda.syncthreads()
    if t == 0:
        acc = float32(0.0)
        for k in range(256):
            acc += s[k]
        partial[cuda.blockIdx.x] = acc
"""

# the serial sum again, with the check's load limit rebound so that it would pass
TAMPER_TREE_BOUND = (
    TREE_SERIAL
    + """
import gpulab.checks.tree_reduction as tr
tr.tree_load_bound = lambda block, items_per_thread=1: 10 ** 9
"""
)

# correct: an explicit signature, the stride from blockDim, rounds as a for loop over shifts
STYLE_TREE = """
@cuda.jit("void(float32[:], float32[:])")
def tree_sum(partial, values):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    v = float32(0.0)
    if i < values.shape[0]:
        v = values[i]
    s[t] = v
    cuda.syncthreads()
    for r in range(7, -1, -1):
        stride = 1 << r
        if t < stride:
            s[t] = s[t] + s[t + stride]
        cuda.syncthreads()
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]
"""

SUBMISSIONS["tamper_warp_constants"]["scores"]["q5"] = 1  # q5 runs after the tampering cell
SUBMISSIONS.update(
    {
        "tree_missing_round_barrier": {
            "group": "wrong_answers",
            "replace": {"def tree_sum": TREE_NO_ROUND_BARRIER},
            "scores": {"q5": 0},
        },
        "tree_serial_thread0": {
            "group": "serial_lanes",
            "replace": {"def tree_sum": TREE_SERIAL},
            "scores": {"q5": 1},
        },
        "tree_off_by_one_guard": {
            "group": "tree_edges",
            "replace": {"def tree_sum": TREE_OFF_BY_ONE},
            "scores": {"q5": 1},
        },
        "tamper_tree_bound": {
            "group": "tree_hostile",
            "replace": {"def tree_sum": TAMPER_TREE_BOUND},
            "scores": {"q5": 1},
            "flags": ["imports the checkers"],
            "message": "gpulab.checks.tree_reduction.tree_load_bound was replaced",
        },
        "correct_tree_style": {"group": "chaos", "replace": {"def tree_sum": STYLE_TREE}},
    }
)
