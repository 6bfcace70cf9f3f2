"""hw07 q5 prescribes one tree (issue 26 point 3): a shared array of 256 floats, strides 128, 64,
..., 1, each thread t < s adding element t + s, a barrier after filling and after each round (9).
check_tree_reduce(..., prescribed=True) holds a kernel to that; right sums by another route lose."""

from numba import cuda, float32

from gpulab.checks.tree_reduction import check_tree_reduce

B = 256


@cuda.jit
def textbook(partial, values):
    s = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    s[t] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = B // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def register_accumulator(partial, values):
    """Correct in another style: the running sum kept in a register, rounds unrolled by hand."""
    s = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    v = float32(0.0)
    if i < values.shape[0]:
        v = values[i]
    s[t] = v
    cuda.syncthreads()
    for stride in (128, 64, 32, 16, 8, 4, 2, 1):
        if t < stride:
            v += s[t + stride]
            s[t] = v
        cuda.syncthreads()
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def interleaved(partial, values):
    """Right sums, but the interleaved tree (thread t with t % 2s == 0 adds t + s)."""
    s = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    s[t] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = 1
    while stride < B:
        if t % (2 * stride) == 0:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def shuffle_tail(partial, values):
    """Correct: the rounds down to 32 in shared memory, the last five by shuffles (the question
    allows it)."""
    s = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    s[t] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    stride = B // 2
    while stride >= 32:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t < 32:
        v = s[t]
        for off in (16, 8, 4, 2, 1):
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        if t == 0:
            partial[cuda.blockIdx.x] = v


@cuda.jit
def shuffles_from_64(partial, values):
    """Right sums, but one shared round (128) only: the round at stride 64, wider than a warp, is
    left to per-warp shuffles and thread 0 adding the four warps' sums."""
    s = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    s[t] = values[i] if i < values.shape[0] else 0.0
    cuda.syncthreads()
    if t < 128:
        s[t] += s[t + 128]
    cuda.syncthreads()
    v = float32(0.0)
    if t < 128:
        v = s[t]
        for off in (16, 8, 4, 2, 1):
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        if t % 32 == 0:
            s[t] = v
    cuda.syncthreads()
    if t == 0:
        partial[cuda.blockIdx.x] = s[0] + s[32] + s[64] + s[96]


def test_the_textbook_tree_and_other_correct_styles_pass():
    for k in (textbook, register_accumulator, shuffle_tail):
        res = check_tree_reduce(k, block=B, seed=1, prescribed=True)
        assert res, res.message


def test_right_sums_by_another_tree_lose_with_the_reason():
    res = check_tree_reduce(interleaved, block=B, seed=1, prescribed=True)
    assert not res and ("stride" in res.message or "loads" in res.message), res.message
    res = check_tree_reduce(shuffles_from_64, block=B, seed=1, prescribed=True)
    assert not res and "stride" in res.message, res.message
