"""Round 3 (issue 26): unseen submissions for hw07_08_reduction, written from the questions'
text (format: exercises/hw02_simt/submissions_round3.py)."""

# the issue's own case: a neutered gpulab/grading/tamper.py on disk (the hidden tests reload
# gpulab.grading), then check_tree_reduce replaced through the module's __dict__
ISSUE_TAMPER = """
@cuda.jit
def tree_sum(partial, values):
    if cuda.threadIdx.x == 0:                 # thread 0 adds up the block alone
        s = float32(0.0)
        base = cuda.blockIdx.x * cuda.blockDim.x
        for k in range(cuda.blockDim.x):
            if base + k < values.shape[0]:
                s += values[base + k]
        partial[cuda.blockIdx.x] = s

import sys, pathlib, gpulab.grading.tamper as _t
_src = pathlib.Path(_t.__file__)
_src.write_text(_src.read_text() + "\\n\\ndef findings(*a, **k):\\n    return []\\n"
                "\\ndef assert_untampered(*a, **k):\\n    return None\\n")

class _Pass:
    message = ""
    def __bool__(self):
        return True

vars(sys.modules["gpulab.checks.tree_reduction"])["check_tree_reduce"] = lambda *a, **k: _Pass()
"""

# importlib.reload itself replaced: the hidden tests' reload hands back a stand-in module
RELOAD_HOOK = """
@cuda.jit
def block_sum(x, out):
    pass

import types as _types
_il = __import__("import" + "lib")
_real = _il.reload

class _Yes:
    message = ""
    def __bool__(self):
        return True

def _fake(m):
    if getattr(m, "__name__", "") == "gpulab.grading":
        g = _types.SimpleNamespace()
        g.assert_untampered = lambda *a, **k: None
        g.timed = lambda f, s=None: (lambda *a, **k: _Yes())
        return g
    return _real(m)

setattr(_il, "re" + "load", _fake)
"""

# out[b] zeroed by thread 0, then every warp's sum added atomically with no barrier between
GLOBAL_RACE = """
@cuda.jit
def block_sum(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.shape[0] else float32(0.0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = 0.0
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, cuda.blockIdx.x, v)
"""

TWO_BARRIERS = """
@cuda.jit
def block_sum(x, out):
    sums = cuda.shared.array(32, float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    if cuda.threadIdx.x < 32:
        sums[cuda.threadIdx.x] = 0.0
    cuda.syncthreads()                       # a second barrier, to clear the array first
    v = x[i] if i < x.shape[0] else float32(0.0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if lane == 0:
        sums[warp] = v
    cuda.syncthreads()
    if warp == 0:
        v = sums[lane]
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(FULL, v, off)
            off //= 2
        if lane == 0:
            out[cuda.blockIdx.x] = v
"""

# hard-codes the demo's 4 warps per block when the first warp adds up the warp sums
FOUR_WARPS = """
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
    cuda.syncthreads()
    if warp == 0:
        v = sums[lane] if lane < 4 else float32(0.0)
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(FULL, v, off)
            off //= 2
        if lane == 0:
            out[cuda.blockIdx.x] = v
"""

ASCENDING_DOWN = """
@cuda.jit
def warp_reduce(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.shape[0] else float32(0.0)
    for s in range(5):
        v += cuda.shfl_down_sync(FULL, v, 1 << s)     # offsets 1, 2, 4, 8, 16: lane 0 still gets all
    if cuda.laneid == 0:
        out[i // 32] = v
"""

SCAN_STRICT = """
@cuda.jit
def warp_scan(x, out):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    v = x[i] if i < x.shape[0] else float32(0.0)
    d = 1
    while d < 32:
        u = cuda.shfl_up_sync(FULL, v, d)
        if lane > d:                                    # > where >= is needed
            v += u
        d *= 2
    if i < out.shape[0]:
        out[i] = v
"""

SCAN_XOR_MASKED = """
@cuda.jit
def warp_scan(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i] if i < x.shape[0] else float32(0.0)
    for s in range(5):
        d = 1 << s
        u = cuda.shfl_up_sync(FULL, v, d)
        v += u * (lane >= d)                            # select by arithmetic, no branch
    if i < out.shape[0]:
        out[i] = v
"""

TREE_WARP_TAIL = """
BLOCK = 256

@cuda.jit
def tree_sum(partial, values):
    s = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 32:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t < 32:                                  # the last warp unrolled, relying on lockstep
        s[t] += s[t + 32]
        s[t] += s[t + 16]
        s[t] += s[t + 8]
        s[t] += s[t + 4]
        s[t] += s[t + 2]
        s[t] += s[t + 1]
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]
"""

TREE_ATOMIC_FINISH = """
BLOCK = 256

@cuda.jit
def tree_sum(partial, values):
    s = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 16:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = 0.0
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(partial, cuda.blockIdx.x, s[t] + s[t + 16])   # the last rounds as atomics
"""

TREE_BARRIER_IN_IF = """
BLOCK = 256

@cuda.jit
def tree_sum(partial, values):
    s = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
            cuda.syncthreads()                  # inside the if: only the lower threads arrive
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]
"""

TREE_INTERLEAVED = """
BLOCK = 256

@cuda.jit
def tree_sum(partial, values):
    s = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = values[i] if i < values.shape[0] else float32(0.0)
    cuda.syncthreads()
    for r in range(8):                          # interleaved pairs: 1, 2, 4, ... apart
        d = 1 << r
        if t % (2 * d) == 0:
            s[t] += s[t + d]
        cuda.syncthreads()
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]
"""

ROUND3 = {
    "issue_disk_tamper_tree": {
        "kind": "hostile",
        "what": "the issue's attack: neutered tamper.py written to disk, check_tree_reduce replaced via vars()",
        "replace": {"def tree_sum": ISSUE_TAMPER},
        "questions": ["q5"],
    },
    "reload_replaced": {
        "kind": "hostile",
        "what": "importlib.reload replaced (name built from pieces) by one returning a stand-in gpulab.grading",
        "replace": {"def block_sum": RELOAD_HOOK},
        "questions": ["q1", "q2", "q3", "q4", "q5"],
    },
    "block_sum_global_race": {
        "kind": "wrong",
        "what": "thread 0 zeroes out[b], warps add into it atomically with no barrier between",
        "replace": {"def block_sum": GLOBAL_RACE},
        "questions": ["q1"],
        "needs_sim": "a global race inside a block",
    },
    "block_sum_two_barriers": {
        "kind": "wrong",
        "what": "two syncthreads per block (clears the shared array first)",
        "replace": {"def block_sum": TWO_BARRIERS},
        "questions": ["q1"],
    },
    "block_sum_four_warps": {
        "kind": "wrong",
        "what": "the first warp adds up only 4 warp sums (the demo's block of 128)",
        "replace": {"def block_sum": FOUR_WARPS},
        "questions": ["q1"],
    },
    "warp_reduce_ascending_offsets": {
        "kind": "correct",
        "what": "shfl_down with offsets 1, 2, 4, 8, 16 in a for loop; cuda.laneid",
        "replace": {"def warp_reduce": ASCENDING_DOWN},
        "questions": ["q2"],
    },
    "scan_strict_lane_test": {
        "kind": "wrong",
        "what": "lane > d instead of lane >= d",
        "replace": {"def warp_scan": SCAN_STRICT},
        "questions": ["q3"],
    },
    "scan_select_by_arithmetic": {
        "kind": "correct",
        "what": "the lane >= d test as a multiplication",
        "replace": {"def warp_scan": SCAN_XOR_MASKED},
        "questions": ["q3"],
    },
    "allreduce_down_only_lane0": {
        "kind": "wrong",
        "what": "shfl_down over 16..1: only lane 0 ends with the total",
        "replace": {"loop_answer =": 'loop_answer = {"kind": "down", "offsets": [16, 8, 4, 2, 1]}'},
        "questions": ["q4"],
    },
    "allreduce_xor_repeated": {
        "kind": "wrong",
        "what": "xor over 1, 2, 4, 8, 16, 16: the last offset counts every input twice",
        "replace": {"loop_answer =": 'loop_answer = {"kind": "xor", "offsets": [1, 2, 4, 8, 16, 16]}'},
        "questions": ["q4"],
    },
    "tree_warp_synchronous_tail": {
        "kind": "wrong",
        "what": "rounds 32..1 unrolled in one warp without syncwarp (relies on lockstep)",
        "replace": {"def tree_sum": TREE_WARP_TAIL},
        "questions": ["q5"],
        "needs_sim": "races within a warp",
    },
    "tree_atomic_finish": {
        "kind": "wrong",
        "what": "the last rounds replaced by atomic adds into partial",
        "replace": {"def tree_sum": TREE_ATOMIC_FINISH},
        "questions": ["q5"],
    },
    "tree_barrier_inside_if": {
        "kind": "wrong",
        "what": "syncthreads inside `if t < stride`",
        "replace": {"def tree_sum": TREE_BARRIER_IN_IF},
        "questions": ["q5"],
    },
    "tree_interleaved_pairs": {
        "kind": "wrong",
        "what": "right sums and 1 + 8 barriers, but interleaved pairs (t % 2d), not the prescribed strides",
        "replace": {"def tree_sum": TREE_INTERLEAVED},
        "questions": ["q5"],
        "needs_sim": "check_tree_reduce checking the prescribed pattern (issue 26 point 3)",
    },
}
