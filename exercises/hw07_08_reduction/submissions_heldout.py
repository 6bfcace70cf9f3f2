"""Held-out submissions for hw07_08_reduction, written as a class would write them (issue 14's second
round): correct work in unusual styles, wrong work, hostile work. tests/test_grading_heldout_style.py
grades each kernel through the check its hidden test calls. Each entry: name, style, the name the
notebook defines, its cell source, and ``None`` (full marks) or a text the failure message must
contain. Kernel names match the notebook's, so a source can be pasted into its cell as is.
"""

HELDOUT = [
    (
        "block_sum_xor_device_fn",
        "correct: xor butterflies in a device function, cuda.laneid, x.size",
        "block_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit(device=True)\ndef wsum(v):\n    for off in (16, 8, 4, 2, 1):\n        v += cuda.shfl_xor_sync(FULL, v, off)\n    return v\n\n@cuda.jit\ndef block_sum(x, out):\n    sums = cuda.shared.array(32, float32)\n    i = cuda.grid(1)\n    lane = cuda.laneid\n    w = cuda.threadIdx.x >> 5\n    v = float32(0.0)\n    if i < x.size:\n        v = x[i]\n    v = wsum(v)\n    if lane == 0:\n        sums[w] = v\n    cuda.syncthreads()\n    if w == 0:\n        nw = (cuda.blockDim.x + 31) // 32\n        v = sums[lane] if lane < nw else float32(0.0)\n        v = wsum(v)\n        if lane == 0:\n            out[cuda.blockIdx.x] = v\n\n",
        None,
    ),
    (
        "block_sum_extra_syncwarp",
        "correct: cuda.syncwarp() calls beside the one syncthreads",
        "block_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef block_sum(x, out):   # extra syncwarp calls, not forbidden\n    sums = cuda.shared.array(32, float32)\n    i = cuda.grid(1)\n    lane = cuda.threadIdx.x % 32\n    w = cuda.threadIdx.x // 32\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    off = 16\n    while off > 0:\n        v += cuda.shfl_down_sync(FULL, v, off)\n        off //= 2\n    cuda.syncwarp(FULL)\n    if lane == 0:\n        sums[w] = v\n    cuda.syncthreads()\n    if w == 0:\n        v = sums[lane] if lane < cuda.blockDim.x // 32 else float32(0.0)\n        cuda.syncwarp()\n        off = 16\n        while off > 0:\n            v += cuda.shfl_down_sync(FULL, v, off)\n            off //= 2\n        if lane == 0:\n            out[cuda.blockIdx.x] = v\n\n",
        None,
    ),
    (
        "block_sum_shared_atomic_two_barriers",
        "wrong by the constraint: a shared atomic total needs 2 barriers",
        "block_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef block_sum(x, out):   # lane 0 of each warp atomically adds into shared total, one barrier\n    tot = cuda.shared.array(1, float32)\n    i = cuda.grid(1)\n    if cuda.threadIdx.x == 0:\n        tot[0] = 0.0\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    for off in (16, 8, 4, 2, 1):\n        v += cuda.shfl_down_sync(FULL, v, off)\n    cuda.syncthreads()\n    if cuda.threadIdx.x % 32 == 0:\n        cuda.atomic.add(tot, 0, v)\n    cuda.syncthreads()\n    if cuda.threadIdx.x == 0:\n        out[cuda.blockIdx.x] = tot[0]\n\n",
        "2 syncthreads",
    ),
    (
        "block_sum_four_warps_hard_coded",
        "wrong: warp count hard-coded to 4 (block 128)",
        "block_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef block_sum(x, out):   # only first 4 warps' sums: hard-coded block 128\n    sums = cuda.shared.array(32, float32)\n    i = cuda.grid(1)\n    lane = cuda.threadIdx.x % 32\n    w = cuda.threadIdx.x // 32\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    for off in (16, 8, 4, 2, 1):\n        v += cuda.shfl_down_sync(FULL, v, off)\n    if lane == 0:\n        sums[w] = v\n    cuda.syncthreads()\n    if w == 0:\n        v = sums[lane] if lane < 4 else float32(0.0)\n        for off in (16, 8, 4, 2, 1):\n            v += cuda.shfl_down_sync(FULL, v, off)\n        if lane == 0:\n            out[cuda.blockIdx.x] = v\n\n",
        "Uninitialised",
    ),
    (
        "block_sum_reads_every_slot",
        "wrong: the first warp reads all 32 slots, most never written",
        "block_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef block_sum(x, out):   # reads sums[lane] for every lane (beyond nw): uninitialised\n    sums = cuda.shared.array(32, float32)\n    i = cuda.grid(1)\n    lane = cuda.threadIdx.x % 32\n    w = cuda.threadIdx.x // 32\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    for off in (16, 8, 4, 2, 1):\n        v += cuda.shfl_down_sync(FULL, v, off)\n    if lane == 0:\n        sums[w] = v\n    cuda.syncthreads()\n    if w == 0:\n        v = sums[lane]\n        for off in (16, 8, 4, 2, 1):\n            v += cuda.shfl_down_sync(FULL, v, off)\n        if lane == 0:\n            out[cuda.blockIdx.x] = v\n\n",
        "Uninitialised",
    ),
    (
        "warp_reduce_syncwarp_laneid",
        "correct: a syncwarp before the tree, cuda.laneid writes",
        "warp_reduce",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_reduce(x, out):\n    i = cuda.grid(1)\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    cuda.syncwarp()\n    for off in (16, 8, 4, 2, 1):\n        v += cuda.shfl_down_sync(FULL, v, off)\n    if cuda.laneid == 0:\n        out[i // 32] = v\n\n",
        None,
    ),
    (
        "warp_reduce_xor_lane31",
        "correct: xor butterfly in a while loop, lane 31 writes",
        "warp_reduce",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_reduce(x, out):   # xor, lane 31 writes\n    i = cuda.grid(1)\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    d = 1\n    while d < 32:\n        v += cuda.shfl_xor_sync(FULL, v, d)\n        d <<= 1\n    if cuda.threadIdx.x % 32 == 31:\n        out[i // 32] = v\n\n",
        None,
    ),
    (
        "warp_reduce_shfl_up_last_lane",
        "correct: an inclusive shfl_up scan whose last lane writes the sum",
        "warp_reduce",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_reduce(x, out):  # shfl_up: last lane has total\n    i = cuda.grid(1)\n    lane = cuda.threadIdx.x % 32\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    d = 1\n    while d < 32:\n        u = cuda.shfl_up_sync(FULL, v, d)\n        if lane >= d:\n            v += u\n        d *= 2\n    if lane == 31:\n        out[i // 32] = v\n\n",
        None,
    ),
    (
        "warp_reduce_early_exit",
        "wrong: lanes past n return before a full-mask shuffle",
        "warp_reduce",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_reduce(x, out):   # lanes past n return early: shfl with full mask from exited lanes (UB)\n    i = cuda.grid(1)\n    if i >= x.shape[0]:\n        return\n    v = x[i]\n    for off in (16, 8, 4, 2, 1):\n        v += cuda.shfl_down_sync(FULL, v, off)\n    if cuda.threadIdx.x % 32 == 0:\n        out[i // 32] = v\n\n",
        "has exited",
    ),
    (
        "warp_reduce_block_local_index",
        "wrong: out[threadIdx.x // 32] (every block writes slot 0)",
        "warp_reduce",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_reduce(x, out):  # out[threadIdx.x//32]: wrong with several blocks\n    i = cuda.grid(1)\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    for off in (16, 8, 4, 2, 1):\n        v += cuda.shfl_down_sync(FULL, v, off)\n    if cuda.threadIdx.x % 32 == 0:\n        out[cuda.threadIdx.x // 32] = v\n\n",
        "race",
    ),
    (
        "warp_reduce_32_broadcasts",
        "wrong by the constraint: 32 shfl_sync broadcasts, no tree",
        "warp_reduce",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_reduce(x, out):  # 5 shfl steps but also each lane gathers all 32 via shfl: 32+5 shuffles\n    i = cuda.grid(1)\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    s = float32(0.0)\n    for l in range(32):\n        s += cuda.shfl_sync(FULL, v, l)\n    if cuda.threadIdx.x % 32 == 0:\n        out[i // 32] = s\n\n",
        "32 shuffles per warp",
    ),
    (
        "warp_reduce_four_steps",
        "wrong: offsets 8, 4, 2, 1 only",
        "warp_reduce",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_reduce(x, out):  # wrong: only 4 steps\n    i = cuda.grid(1)\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    for off in (8, 4, 2, 1):\n        v += cuda.shfl_down_sync(FULL, v, off)\n    if cuda.threadIdx.x % 32 == 0:\n        out[i // 32] = v\n\n",
        "warp sum wrong",
    ),
    (
        "warp_scan_select",
        "correct: a conditional expression instead of an if",
        "warp_scan",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_scan(x, out):  # Kogge-Stone with select\n    i = cuda.grid(1)\n    lane = cuda.laneid\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    for d in (1, 2, 4, 8, 16):\n        u = cuda.shfl_up_sync(FULL, v, d)\n        v += u if lane >= d else float32(0.0)\n    if i < x.shape[0]:\n        out[i] = v\n\n",
        None,
    ),
    (
        "warp_scan_no_lane_test",
        "wrong: adds what lanes below d received from themselves",
        "warp_scan",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_scan(x, out):  # wrong: adds u for lane < d (shfl_up returns own value)\n    i = cuda.grid(1)\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    for d in (1, 2, 4, 8, 16):\n        v += cuda.shfl_up_sync(FULL, v, d)\n    if i < x.shape[0]:\n        out[i] = v\n\n",
        "inclusive",
    ),
    (
        "warp_scan_exclusive",
        "wrong: exclusive scan",
        "warp_scan",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef warp_scan(x, out):\n    i = cuda.grid(1)\n    lane = cuda.laneid\n    v = x[i] if i < x.shape[0] else float32(0.0)\n    orig = v\n    for d in (1, 2, 4, 8, 16):\n        u = cuda.shfl_up_sync(FULL, v, d)\n        if lane >= d:\n            v += u\n    if i < x.shape[0]:\n        out[i] = v - orig\n\n",
        "inclusive",
    ),
    (
        "tree_for_over_shifts",
        "correct: rounds as a for over shifts, no float32 literal",
        "tree_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef tree_sum(partial, values):\n    s = cuda.shared.array(BLOCK, float32)\n    t = cuda.threadIdx.x\n    i = cuda.blockIdx.x * BLOCK + t\n    s[t] = values[i] if i < values.size else 0\n    cuda.syncthreads()\n    for sh in range(7, -1, -1):\n        st = 1 << sh\n        if t < st:\n            s[t] = s[t] + s[t + st]\n        cuda.syncthreads()\n    if t == 0:\n        partial[cuda.blockIdx.x] = s[0]\n\n",
        None,
    ),
    (
        "tree_blockdim_stride",
        "correct: stride from blockDim.x >> 1, if/else load",
        "tree_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef tree_sum(partial, values):\n    s = cuda.shared.array(256, float32)\n    t = cuda.threadIdx.x\n    i = cuda.grid(1)\n    if i < values.shape[0]:\n        s[t] = values[i]\n    else:\n        s[t] = 0.0\n    cuda.syncthreads()\n    stride = cuda.blockDim.x >> 1\n    while stride:\n        if t < stride:\n            s[t] += s[t + stride]\n        cuda.syncthreads()\n        stride >>= 1\n    if t == 0:\n        partial[cuda.blockIdx.x] = s[0]\n\n",
        None,
    ),
    (
        "tree_then_shuffles",
        "correct: rounds down to 32, then a shuffle tree (fewer barriers)",
        "tree_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef tree_sum(partial, values):  # tree down to 32 then shuffles: fewer barriers\n    s = cuda.shared.array(256, float32)\n    t = cuda.threadIdx.x\n    i = cuda.grid(1)\n    s[t] = values[i] if i < values.shape[0] else float32(0.0)\n    cuda.syncthreads()\n    stride = 128\n    while stride >= 32:\n        if t < stride:\n            s[t] += s[t + stride]\n        cuda.syncthreads()\n        stride //= 2\n    if t < 32:\n        v = s[t]\n        for off in (16, 8, 4, 2, 1):\n            v += cuda.shfl_down_sync(FULL, v, off)\n        if t == 0:\n            partial[cuda.blockIdx.x] = v\n\n",
        None,
    ),
    (
        "tree_barrier_in_if",
        "wrong: syncthreads inside the if",
        "tree_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef tree_sum(partial, values):  # wrong: barrier inside if\n    s = cuda.shared.array(256, float32)\n    t = cuda.threadIdx.x\n    i = cuda.grid(1)\n    s[t] = values[i] if i < values.shape[0] else float32(0.0)\n    cuda.syncthreads()\n    stride = 128\n    while stride > 0:\n        if t < stride:\n            s[t] += s[t + stride]\n            cuda.syncthreads()\n        stride //= 2\n    if t == 0:\n        partial[cuda.blockIdx.x] = s[0]\n\n",
        "only part of a block",
    ),
    (
        "tree_starts_at_64",
        "wrong: first stride 64 (drops half the block)",
        "tree_sum",
        "FULL = 0xFFFFFFFF\nBLOCK = 256\n\n@cuda.jit\ndef tree_sum(partial, values):  # wrong: starts at 64 (drops half)\n    s = cuda.shared.array(256, float32)\n    t = cuda.threadIdx.x\n    i = cuda.grid(1)\n    s[t] = values[i] if i < values.shape[0] else float32(0.0)\n    cuda.syncthreads()\n    stride = 64\n    while stride > 0:\n        if t < stride:\n            s[t] += s[t + stride]\n        cuda.syncthreads()\n        stride //= 2\n    if t == 0:\n        partial[cuda.blockIdx.x] = s[0]\n\n",
        "block sums wrong",
    ),
]
