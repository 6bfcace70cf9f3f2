"""Prepared wrong submissions for this homework, built from the solution notebook by
tests/test_homework.py (format: see exercises/hw02_simt/submissions.py)."""

NO_BARRIER = '''
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
'''

TREE = '''
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
'''

EXCLUSIVE = '''
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
'''

SUBMISSIONS = {
    # the simulator reports the race in the public test too, so all of q1 is lost
    "missing_barrier": {"replace": {"def block_sum": NO_BARRIER}, "scores": {"q1": 0}},
    "tree_reduction_many_barriers": {"group": "wrong_answers", "replace": {"def block_sum": TREE}, "scores": {"q1": 1}},
    "exclusive_scan": {"group": "wrong_answers", "replace": {"def warp_scan": EXCLUSIVE}, "scores": {"q3": 0}},
}
