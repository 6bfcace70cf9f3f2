"""Held-out submissions for hw05_06_memory, written as a class would write them (issue 14's second
round): correct work in unusual styles, wrong work, hostile work. tests/test_grading_heldout_style.py
grades each kernel through the check its hidden test calls. Each entry: name, style, the name the
notebook defines, its cell source, and ``None`` (full marks) or a text the failure message must
contain. Kernel names match the notebook's, so a source can be pasted into its cell as is.
"""

HELDOUT = [
    (
        "scale_manual_index_early_return",
        "correct: manual 2-D index with early return",
        "scale",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef scale(out, a, factor):\n    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x\n    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y\n    if row >= a.shape[0] or col >= a.shape[1]:\n        return\n    out[row, col] = a[row, col] * factor\n\n",
        None,
    ),
    (
        "scale_square_guard",
        "correct: both sides guarded with shape[0] (the matrix is square)",
        "scale",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef scale(out, a, factor):  # guard with shape[0] twice (square): fine\n    col, row = cuda.grid(2)\n    n = a.shape[0]\n    if row < n and col < n:\n        out[row, col] = factor * a[row, col]\n\n",
        None,
    ),
    (
        "scale_column_guard_only",
        "wrong: only the column guarded",
        "scale",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef scale(out, a, factor):  # wrong: only col guard\n    col, row = cuda.grid(2)\n    if col < a.shape[1]:\n        out[row, col] = factor * a[row, col]\n\n",
        "guard both sides",
    ),
    (
        "row_sums_xor_swizzle",
        "correct: XOR-swizzled tile instead of padding",
        "row_sums",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef row_sums(out, a):   # XOR swizzle\n    tile = cuda.shared.array((TILE, TILE), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row0 = cuda.blockIdx.x * TILE\n    tile[ty, tx ^ ty] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0\n    cuda.syncthreads()\n    if ty == 0:\n        s = float32(0.0)\n        for k in range(TILE):\n            s += tile[tx, k ^ tx]\n        if row0 + tx < a.shape[0]:\n            out[row0 + tx] = s\n\n",
        None,
    ),
    (
        "row_sums_warp_per_row_shuffles",
        "correct: each warp reads one tile row and reduces it by shuffles",
        "row_sums",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef row_sums(out, a):  # tile in shared, read row-wise by each warp, reduce by shuffles (conflict free, correct)\n    tile = cuda.shared.array((TILE, TILE), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row0 = cuda.blockIdx.x * TILE\n    tile[ty, tx] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0\n    cuda.syncthreads()\n    v = tile[ty, tx]\n    off = 16\n    while off > 0:\n        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)\n        off //= 2\n    if tx == 0 and row0 + ty < a.shape[0]:\n        out[row0 + ty] = v\n\n",
        None,
    ),
    (
        "row_sums_transposed_store",
        "wrong: conflict moved from the loads to the stores",
        "row_sums",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef row_sums(out, a):   # store transposed, read row: tile[tx, ty] = a[row0+tx, ty]? conflicts on store\n    tile = cuda.shared.array((TILE, TILE), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row0 = cuda.blockIdx.x * TILE\n    tile[tx, ty] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0\n    cuda.syncthreads()\n    if ty == 0:\n        s = float32(0.0)\n        for k in range(TILE):\n            s += tile[k, tx]\n        if row0 + tx < a.shape[0]:\n            out[row0 + tx] = s\n\n",
        "shared store",
    ),
    (
        "row_sums_no_barrier",
        "wrong: missing syncthreads",
        "row_sums",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef row_sums(out, a):\n    tile = cuda.shared.array((TILE, PADDED), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row0 = cuda.blockIdx.x * TILE\n    tile[ty, tx] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0\n    if ty == 0:\n        s = float32(0.0)\n        for k in range(TILE):\n            s += tile[tx, k]\n        if row0 + tx < a.shape[0]:\n            out[row0 + tx] = s\n\n",
        "SharedMemoryRace",
    ),
    (
        "row_sums_hard_coded_64",
        "wrong: row bound hard-coded to the public test's 64",
        "row_sums",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef row_sums(out, a):  # hard-coded 64 rows\n    tile = cuda.shared.array((TILE, PADDED), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row0 = cuda.blockIdx.x * TILE\n    tile[ty, tx] = a[row0 + ty, tx] if row0 + ty < 64 else 0.0\n    cuda.syncthreads()\n    if ty == 0:\n        s = float32(0.0)\n        for k in range(TILE):\n            s += tile[tx, k]\n        if row0 + tx < a.shape[0]:\n            out[row0 + tx] = s\n\n",
        "n=",
    ),
    (
        "matmul_while_zero_then_load",
        "correct: while loop over K, tiles zeroed then conditionally loaded, cuda.grid(2)",
        "matmul_tiled",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef matmul_tiled(c, a, b):\n    sa = cuda.shared.array((MM, MM), float32)\n    sb = cuda.shared.array((MM, MM), float32)\n    tx = cuda.threadIdx.x; ty = cuda.threadIdx.y\n    col, row = cuda.grid(2)\n    acc = 0.0\n    t = 0\n    while t < a.shape[1]:\n        sa[ty, tx] = 0.0\n        sb[ty, tx] = 0.0\n        if row < a.shape[0] and t + tx < a.shape[1]:\n            sa[ty, tx] = a[row, t + tx]\n        if col < b.shape[1] and t + ty < b.shape[0]:\n            sb[ty, tx] = b[t + ty, col]\n        cuda.syncthreads()\n        for k in range(MM):\n            acc += sa[ty, k] * sb[k, tx]\n        cuda.syncthreads()\n        t += MM\n    if row < c.shape[0] and col < c.shape[1]:\n        c[row, col] = acc\n\n",
        None,
    ),
    (
        "matmul_three_barriers",
        "correct: a barrier between the A and B loads as well",
        "matmul_tiled",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef matmul_tiled(c, a, b):  # three barriers per step, fine\n    sa = cuda.shared.array((MM, MM), float32)\n    sb = cuda.shared.array((MM, MM), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row = cuda.blockIdx.y * MM + ty\n    col = cuda.blockIdx.x * MM + tx\n    acc = float32(0.0)\n    for t in range(0, a.shape[1], MM):\n        sa[ty, tx] = a[row, t + tx] if row < a.shape[0] and t + tx < a.shape[1] else float32(0.0)\n        cuda.syncthreads()\n        sb[ty, tx] = b[t + ty, col] if t + ty < b.shape[0] and col < b.shape[1] else float32(0.0)\n        cuda.syncthreads()\n        for k in range(MM):\n            acc += sa[ty, k] * sb[k, tx]\n        cuda.syncthreads()\n    if row < c.shape[0] and col < c.shape[1]:\n        c[row, col] = acc\n\n",
        None,
    ),
    (
        "matmul_b_tile_transposed",
        "correct: B's tile stored transposed in shared memory",
        "matmul_tiled",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef matmul_tiled(c, a, b):  # sb transposed in shared (bank conflicts but correct); no constraint\n    sa = cuda.shared.array((MM, MM), float32)\n    sb = cuda.shared.array((MM, MM), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row = cuda.blockIdx.y * MM + ty\n    col = cuda.blockIdx.x * MM + tx\n    acc = float32(0.0)\n    for t in range(0, a.shape[1], MM):\n        sa[ty, tx] = a[row, t + tx] if row < a.shape[0] and t + tx < a.shape[1] else float32(0.0)\n        sb[tx, ty] = b[t + ty, col] if t + ty < b.shape[0] and col < b.shape[1] else float32(0.0)\n        cuda.syncthreads()\n        for k in range(MM):\n            acc += sa[ty, k] * sb[tx, k]\n        cuda.syncthreads()\n    if row < c.shape[0] and col < c.shape[1]:\n        c[row, col] = acc\n\n",
        None,
    ),
    (
        "matmul_b_tile_wrong_index",
        "wrong: B's tile indexed by tx for its row",
        "matmul_tiled",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef matmul_tiled(c, a, b):  # loads b[t+tx, col]: wrong tile index\n    sa = cuda.shared.array((MM, MM), float32)\n    sb = cuda.shared.array((MM, MM), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row = cuda.blockIdx.y * MM + ty\n    col = cuda.blockIdx.x * MM + tx\n    acc = float32(0.0)\n    for t in range(0, a.shape[1], MM):\n        sa[ty, tx] = a[row, t + tx] if row < a.shape[0] and t + tx < a.shape[1] else float32(0.0)\n        sb[ty, tx] = b[t + tx, col] if t + tx < b.shape[0] and col < b.shape[1] else float32(0.0)\n        cuda.syncthreads()\n        for k in range(MM):\n            acc += sa[ty, k] * sb[k, tx]\n        cuda.syncthreads()\n    if row < c.shape[0] and col < c.shape[1]:\n        c[row, col] = acc\n\n",
        "Check which tile",
    ),
    (
        "matmul_early_return",
        "wrong: threads outside C return before staging tiles",
        "matmul_tiled",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef matmul_tiled(c, a, b):  # returns before barrier for out-of-range threads: divergent barrier (wrong)\n    sa = cuda.shared.array((MM, MM), float32)\n    sb = cuda.shared.array((MM, MM), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row = cuda.blockIdx.y * MM + ty\n    col = cuda.blockIdx.x * MM + tx\n    if row >= c.shape[0] or col >= c.shape[1]:\n        return\n    acc = float32(0.0)\n    for t in range(0, a.shape[1], MM):\n        sa[ty, tx] = a[row, t + tx] if t + tx < a.shape[1] else float32(0.0)\n        sb[ty, tx] = b[t + ty, col] if t + ty < b.shape[0] else float32(0.0)\n        cuda.syncthreads()\n        for k in range(MM):\n            acc += sa[ty, k] * sb[k, tx]\n        cuda.syncthreads()\n    c[row, col] = acc\n\n",
        "Uninitialised shared-memory read",
    ),
    (
        "matmul_k_floor",
        "wrong: range(K // 16) drops the last partial K tile",
        "matmul_tiled",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef matmul_tiled(c, a, b):   # range(a.shape[1] // MM): drops the last partial K tile\n    sa = cuda.shared.array((MM, MM), float32)\n    sb = cuda.shared.array((MM, MM), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row = cuda.blockIdx.y * MM + ty\n    col = cuda.blockIdx.x * MM + tx\n    acc = float32(0.0)\n    for t in range(a.shape[1] // MM):\n        k = t * MM\n        sa[ty, tx] = a[row, k + tx] if row < a.shape[0] and k + tx < a.shape[1] else float32(0.0)\n        sb[ty, tx] = b[k + ty, col] if k + ty < b.shape[0] and col < b.shape[1] else float32(0.0)\n        cuda.syncthreads()\n        for kk in range(MM):\n            acc += sa[ty, kk] * sb[kk, tx]\n        cuda.syncthreads()\n    if row < c.shape[0] and col < c.shape[1]:\n        c[row, col] = acc\n\n",
        "filled with zeros",
    ),
    (
        "transpose_flat_shared_33",
        "correct: one flat shared array of 32 x 33 with literal strides",
        "transpose",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef transpose(out, a):\n    tile = cuda.shared.array(1056, float32)  # 32 * 33 flat\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    x0, y0 = cuda.blockIdx.x * 32, cuda.blockIdx.y * 32\n    for j in range(0, 32, 8):\n        if y0 + ty + j < a.shape[0] and x0 + tx < a.shape[1]:\n            tile[(ty + j) * 33 + tx] = a[y0 + ty + j, x0 + tx]\n    cuda.syncthreads()\n    for j in range(0, 32, 8):\n        if x0 + ty + j < out.shape[0] and y0 + tx < out.shape[1]:\n            out[x0 + ty + j, y0 + tx] = tile[tx * 33 + ty + j]\n\n",
        None,
    ),
    (
        "transpose_store_guard_from_a",
        "wrong: the store guarded with a's shape (a missing edge)",
        "transpose",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef transpose(out, a):  # guards store only with shape of a swapped: wrong\n    tile = cuda.shared.array((32, 33), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    x0, y0 = cuda.blockIdx.x * 32, cuda.blockIdx.y * 32\n    for j in range(0, 32, 8):\n        if y0 + ty + j < a.shape[0] and x0 + tx < a.shape[1]:\n            tile[ty + j, tx] = a[y0 + ty + j, x0 + tx]\n    cuda.syncthreads()\n    for j in range(0, 32, 8):\n        if x0 + ty + j < a.shape[0] and y0 + tx < a.shape[1]:\n            out[x0 + ty + j, y0 + tx] = tile[tx, ty + j]\n\n",
        "never written",
    ),
    (
        "transpose_no_shared",
        "wrong: the naive transpose (uncoalesced stores)",
        "transpose",
        "TILE = 32\nPADDED = 33\nMM = 16\n\n@cuda.jit\ndef transpose(out, a):  # no shared\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    x = cuda.blockIdx.x * 32 + tx\n    for j in range(0, 32, 8):\n        y = cuda.blockIdx.y * 32 + ty + j\n        if y < a.shape[0] and x < a.shape[1]:\n            out[x, y] = a[y, x]\n\n",
        "sectors per global store",
    ),
    (
        "row_sums_token_shared_read",
        "wrong by the constraint: one token read of the tile, sums from global memory",
        "row_sums",
        "TILE = 32\nPADDED = 33\n\n@cuda.jit\ndef row_sums(out, a):\n    tile = cuda.shared.array((TILE, PADDED), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    row0 = cuda.blockIdx.x * TILE\n    tile[ty, tx] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0\n    cuda.syncthreads()\n    if ty == 0 and row0 + tx < a.shape[0]:\n        s = tile[0, 0] * float32(0.0)\n        for k in range(TILE):\n            s += a[row0 + tx, k]\n        out[row0 + tx] = s\n",
        "Sum from the shared tile",
    ),
]
