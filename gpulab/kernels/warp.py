"""Warp-level kernels for chapter 08: shuffle reductions, warp and block scans, ballot compaction.

Every kernel is a plain ``@cuda.jit`` function, so it runs unchanged on a GPU (numba.cuda) and on
gpulab's SIMT simulator. Loops are written against ``cuda.warpsize`` rather than a literal 32 so
the code reads the way portable wave code should (CUDA warps are 32 lanes on every NVIDIA GPU so
far; HLSL waves may be 4 to 128 lanes). The lane masks are 32-bit because CUDA's are.

Conventions: ``x`` is the input, ``out`` the output, ``n = x.shape[0]``; threads past ``n`` load a
neutral 0 and stay active, because a ``*_sync`` shuffle with the full mask requires every lane of
the warp to take part (an early ``return`` would make it undefined; the simulator reports it).
"""

from __future__ import annotations

from numba import cuda, float32, int32

from gpulab.kernels.reduce import tree_sum

FULL_MASK = 0xFFFFFFFF
MAX_WARPS_PER_BLOCK = 32  # 1024 threads / 32 lanes: one shared slot per warp is always enough


# --------------------------------------------------------------------------------------------
# device functions: one warp
# --------------------------------------------------------------------------------------------


@cuda.jit(device=True)
def warp_reduce_down(v):
    """Warp sum with shfl_down: after log2(warpsize) steps lane 0 holds the
    total (the other lanes hold partial sums)."""
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
        offset //= 2
    return v


@cuda.jit(device=True)
def warp_reduce_xor(v):
    """Warp sum with the shfl_xor butterfly: every lane ends with the total
    (HLSL WaveActiveSum)."""
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_xor_sync(FULL_MASK, v, offset)
        offset //= 2
    return v


@cuda.jit(device=True)
def warp_scan_inclusive(v):
    """Inclusive warp scan (Hillis-Steele with shfl_up): lane i gets
    v_0 + ... + v_i."""
    lane = cuda.laneid
    d = 1
    while d < cuda.warpsize:
        y = cuda.shfl_up_sync(FULL_MASK, v, d)
        if lane >= d:
            v += y
        d *= 2
    return v


@cuda.jit(device=True)
def warp_scan_exclusive(v):
    """Exclusive warp scan (HLSL WavePrefixSum): lane i gets v_0 + ... + v_(i-1), lane 0 gets 0."""
    inc = warp_scan_inclusive(v)
    ex = cuda.shfl_up_sync(FULL_MASK, inc, 1)
    if cuda.laneid == 0:
        ex = v - v
    return ex


@cuda.jit(device=True)
def block_reduce_shfl(v, partial):
    """Block sum with one barrier: warps reduce by shuffle, warp 0 reduces
    the per-warp sums.

    ``partial`` is a shared array with one slot per warp, of the values' type (float32 or
    int32). The result is valid in thread 0.
    """
    lane = cuda.laneid
    wid = cuda.threadIdx.x // cuda.warpsize
    nwarps = (cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize
    v = warp_reduce_down(v)
    if lane == 0:
        partial[wid] = v
    cuda.syncthreads()
    if wid == 0:
        w = partial.dtype.type(0)  # a zero of the slot type, so int32 sums stay int32 here
        if lane < nwarps:
            w = partial[lane]
        v = warp_reduce_down(w)
    return v


# --------------------------------------------------------------------------------------------
# kernels: one warp, one block
# --------------------------------------------------------------------------------------------


@cuda.jit
def warp_sum_down(x, out):
    """out[w] = sum of x[32w : 32w+32] (each warp of the grid sums its own 32 elements)."""
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    v = warp_reduce_down(v)
    w = i // cuda.warpsize
    if cuda.laneid == 0 and w < out.shape[0]:
        out[w] = v


@cuda.jit
def warp_allsum_xor(x, out):
    """out[i] = sum of thread i's 32-element warp segment, written by every lane (butterfly)."""
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    v = warp_reduce_xor(v)
    if i < out.shape[0]:
        out[i] = v


@cuda.jit
def block_sum_tree(x, out):
    """Source article 000's 'SM 6.0' baseline: a shared-memory tree, one
    barrier per halving (blockDim a power of 2).

    out[b] = sum of block b's elements; 1 + log2(blockDim) barriers.
    """
    s = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    s[t] = v
    cuda.syncthreads()
    tree_sum(s, t)  # the one tree: gpulab.kernels.reduce.tree_sum
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def block_sum_shfl(x, out):
    """out[b] = sum of block b's elements with warp shuffles and a single barrier (any blockDim)."""
    partial = cuda.shared.array(MAX_WARPS_PER_BLOCK, float32)
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    v = block_reduce_shfl(v, partial)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = v


@cuda.jit
def device_sum(x, out):
    """out[0] += sum(x): grid-stride loop, 4 independent accumulators, block shuffle reduce, 1 atomic/block.

    The grid-stride loop lets a grid sized to the GPU (a few blocks per SM) stream any n; four
    accumulators keep four loads in flight per thread (Little's law). ``out`` must start at 0.
    """
    partial = cuda.shared.array(MAX_WARPS_PER_BLOCK, float32)
    n = x.shape[0]
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    a0 = float32(0.0)
    a1 = float32(0.0)
    a2 = float32(0.0)
    a3 = float32(0.0)
    while i + 3 * stride < n:
        a0 += x[i]
        a1 += x[i + stride]
        a2 += x[i + 2 * stride]
        a3 += x[i + 3 * stride]
        i += 4 * stride
    while i < n:
        a0 += x[i]
        i += stride
    v = block_reduce_shfl((a0 + a1) + (a2 + a3), partial)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def device_sum_pairs(xc, out):
    """Like device_sum, but reads the float32 array as complex64 pairs: 8-byte loads, half the
    load instructions for the same bytes. ``xc = x.view(np.complex64)`` (len(x) even)."""
    partial = cuda.shared.array(MAX_WARPS_PER_BLOCK, float32)
    n = xc.shape[0]
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    a0 = float32(0.0)
    a1 = float32(0.0)
    a2 = float32(0.0)
    a3 = float32(0.0)
    while i + 3 * stride < n:
        c0 = xc[i]
        c1 = xc[i + stride]
        c2 = xc[i + 2 * stride]
        c3 = xc[i + 3 * stride]
        a0 += c0.real + c0.imag
        a1 += c1.real + c1.imag
        a2 += c2.real + c2.imag
        a3 += c3.real + c3.imag
        i += 4 * stride
    while i < n:
        c0 = xc[i]
        a0 += c0.real + c0.imag
        i += stride
    v = block_reduce_shfl((a0 + a1) + (a2 + a3), partial)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def warp_scan_kernel(x, out, inclusive):
    """out = per-warp inclusive (inclusive=1) or exclusive (0) prefix sums of x, 32-element segments."""
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    if inclusive:
        r = warp_scan_inclusive(v)
    else:
        r = warp_scan_exclusive(v)
    if i < out.shape[0]:
        out[i] = r


@cuda.jit
def block_scan(x, out):
    """Inclusive scan of each block's segment with two barriers (the source article's prefix sum, corrected).

    Warps scan by shuffle; each warp's last lane posts the warp total; warp 0 turns the totals into
    exclusive offsets by a shuffle scan (one warp reads and writes, so no other warp races it);
    every thread adds its warp's offset.
    """
    offsets = cuda.shared.array(MAX_WARPS_PER_BLOCK, float32)
    i = cuda.grid(1)
    lane = cuda.laneid
    wid = cuda.threadIdx.x // cuda.warpsize
    nwarps = (cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    inc = warp_scan_inclusive(v)
    if lane == cuda.warpsize - 1:
        offsets[wid] = inc
    cuda.syncthreads()
    if wid == 0:
        t = float32(0.0)
        if lane < nwarps:
            t = offsets[lane]
        ex = warp_scan_exclusive(t)
        if lane < nwarps:
            offsets[lane] = ex
    cuda.syncthreads()
    r = inc + offsets[wid]
    if i < out.shape[0]:
        out[i] = r


@cuda.jit
def compact_positive(x, out, count):
    """Stream compaction: copy the x[i] > 0 into out, one atomic per warp (ballot + popc).

    Order is kept inside a warp; warps append in whatever order they reach the atomic. count[0]
    (start at 0) ends as the number kept.
    """
    i = cuda.grid(1)
    lane = cuda.laneid
    keep = False
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
        keep = v > 0
    votes = cuda.ballot_sync(FULL_MASK, keep)
    below = votes & ((1 << lane) - 1)  # the voters in lower lanes
    rank = cuda.popc(below)
    total = cuda.popc(votes)
    base = int32(0)
    if lane == 0 and total > 0:
        base = cuda.atomic.add(count, 0, total)
    base = cuda.shfl_sync(FULL_MASK, base, 0)
    if keep:
        out[base + rank] = v


# --------------------------------------------------------------------------------------------
# source article 000's kernels, translated to numba as written (bugs included), and fixes
# --------------------------------------------------------------------------------------------


@cuda.jit
def article_reduce_as_written(x, out):
    """Source article 000's 'optimised' reduction, translated line for line:
    its barrier sits inside ``if (WaveIsFirstLane())``, so only lane 0 of
    each warp reaches it (barrier divergence)."""
    s = cuda.shared.array(8, float32)
    tid = cuda.threadIdx.x
    v = warp_reduce_xor(x[tid])  # WaveActiveSum
    if cuda.laneid == 0:  # WaveIsFirstLane()
        w = tid // cuda.warpsize
        s[w] = v
        cuda.syncthreads()  # GroupMemoryBarrierWithGroupSync()
        if w == 0:
            # WaveActiveSum over the active lanes
            f = warp_reduce_xor(s[cuda.laneid])
            if tid == 0:
                out[0] = f


@cuda.jit
def article_reduce_barrier_moved(x, out):
    """The obvious fix (barrier moved out of the branch) still has the
    article's second bug: the final WaveActiveSum runs inside the first-lane
    branch, where only one lane of warp 0 is active."""
    s = cuda.shared.array(8, float32)
    tid = cuda.threadIdx.x
    v = warp_reduce_xor(x[tid])
    w = tid // cuda.warpsize
    if cuda.laneid == 0:
        s[w] = v
    cuda.syncthreads()
    if cuda.laneid == 0:
        if w == 0:
            f = warp_reduce_xor(s[cuda.laneid])
            if tid == 0:
                out[0] = f


@cuda.jit
def article_scan_as_written(x, out):
    """Source article 000's prefix sum, translated line for line: the first
    lanes read the shared offsets of lower warps while those warps overwrite
    their own slot, with no barrier between (a race). Also, warp 0's slot
    keeps warp 0's total, so warp 0's results come out too large."""
    offs = cuda.shared.array(8, float32)
    tid = cuda.threadIdx.x
    lane = cuda.laneid
    v = x[tid]
    pre = warp_scan_exclusive(v)  # WavePrefixSum (exclusive)
    w = tid // cuda.warpsize
    total = warp_reduce_xor(v)  # WaveActiveSum
    if lane == 0:
        offs[w] = total
    cuda.syncthreads()
    acc = float32(0.0)
    if lane == 0 and w > 0:
        for k in range(w):
            acc += offs[k]  # reads slot k ...
        offs[w] = acc  # ... which warp k overwrites
    cuda.syncthreads()
    out[tid] = pre + offs[w]


@cuda.jit
def article_scan_fixed(x, out):
    """Source article 000's prefix sum with its two bugs fixed the minimal
    way: a barrier between reading and writing the offsets, and warp 0's
    offset set to 0. Three barriers; block_scan needs two."""
    offs = cuda.shared.array(8, float32)
    tid = cuda.threadIdx.x
    lane = cuda.laneid
    v = x[tid]
    pre = warp_scan_exclusive(v)
    w = tid // cuda.warpsize
    total = warp_reduce_xor(v)
    if lane == 0:
        offs[w] = total
    cuda.syncthreads()
    acc = float32(0.0)
    if lane == 0:
        for k in range(w):
            acc += offs[k]
    cuda.syncthreads()  # every read is done before anyone writes
    if lane == 0:
        offs[w] = acc
    cuda.syncthreads()
    out[tid] = pre + offs[w]


# --------------------------------------------------------------------------------------------
# a shuffle loop chosen at run time (for the chapter's widget and figure)
# --------------------------------------------------------------------------------------------

SHUFFLE_KIND_CODES = {"idx": 0, "up": 1, "down": 2, "xor": 3}


@cuda.jit
def shuffle_loop(x, offsets, kind, out):
    """out[i] = v after ``v += shfl_<kind>_sync(FULL_MASK, v, d)`` for each d in offsets.

    kind: 0 idx (shfl_sync), 1 up, 2 down, 3 xor (see SHUFFLE_KIND_CODES).
    """
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    for k in range(offsets.shape[0]):
        d = offsets[k]
        if kind == 0:
            y = cuda.shfl_sync(FULL_MASK, v, d)
        elif kind == 1:
            y = cuda.shfl_up_sync(FULL_MASK, v, d)
        elif kind == 2:
            y = cuda.shfl_down_sync(FULL_MASK, v, d)
        else:
            y = cuda.shfl_xor_sync(FULL_MASK, v, d)
        v += y
    if i < out.shape[0]:
        out[i] = v
