"""Held-out submissions for hw11_sgemm, written as a class would write them (issue 14's second
round): correct work in unusual styles, wrong work, hostile work. tests/test_grading_heldout_style.py
grades each kernel through the check its hidden test calls. Each entry: name, style, the name the
notebook defines, its cell source, and ``None`` (full marks) or a text the failure message must
contain. Kernel names match the notebook's, so a source can be pasted into its cell as is.
"""

HELDOUT = [
    (
        "sgemm_shifts_while_blockdim",
        "correct: flat index from blockDim, shifts and masks, a while over K",
        "sgemm_1d",
        "BM, BN, BK, TM = 64, 64, 8, 8\n\n@cuda.jit\ndef sgemm_1d(c, a, b):\n    sa = cuda.shared.array((BM, BK), float32)\n    sb = cuda.shared.array((BK, BN), float32)\n    tx = cuda.threadIdx.x; ty = cuda.threadIdx.y\n    t = ty * cuda.blockDim.x + tx\n    row0 = cuda.blockIdx.y * BM; col0 = cuda.blockIdx.x * BN\n    acc = cuda.local.array(TM, float32)\n    for i in range(TM):\n        acc[i] = 0.0\n    k0 = 0\n    while k0 < a.shape[1]:\n        sa[t >> 3, t & 7] = a[row0 + (t >> 3), k0 + (t & 7)]\n        sb[t >> 6, t & 63] = b[k0 + (t >> 6), col0 + (t & 63)]\n        cuda.syncthreads()\n        for kk in range(BK):\n            bv = sb[kk, tx]\n            for i in range(TM):\n                acc[i] += sa[ty * TM + i, kk] * bv\n        cuda.syncthreads()\n        k0 += BK\n    for i in range(TM):\n        c[row0 + ty * TM + i, col0 + tx] = acc[i]\n\n",
        None,
    ),
    (
        "sgemm_eight_scalars",
        "correct: eight scalar accumulators instead of cuda.local.array",
        "sgemm_1d",
        "BM, BN, BK, TM = 64, 64, 8, 8\n\n@cuda.jit\ndef sgemm_1d(c, a, b):   # 8 scalar accumulators instead of local array: fine\n    sa = cuda.shared.array((BM, BK), float32)\n    sb = cuda.shared.array((BK, BN), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    t = ty * BN + tx\n    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN\n    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = float32(0.0)\n    r = ty * TM\n    for k0 in range(0, a.shape[1], BK):\n        sa[t // BK, t % BK] = a[row0 + t // BK, k0 + t % BK]\n        sb[ty, tx] = b[k0 + ty, col0 + tx]\n        cuda.syncthreads()\n        for kk in range(BK):\n            bv = sb[kk, tx]\n            a0 += sa[r, kk] * bv; a1 += sa[r + 1, kk] * bv; a2 += sa[r + 2, kk] * bv; a3 += sa[r + 3, kk] * bv\n            a4 += sa[r + 4, kk] * bv; a5 += sa[r + 5, kk] * bv; a6 += sa[r + 6, kk] * bv; a7 += sa[r + 7, kk] * bv\n        cuda.syncthreads()\n    c[row0 + r, col0 + tx] = a0; c[row0 + r + 1, col0 + tx] = a1; c[row0 + r + 2, col0 + tx] = a2; c[row0 + r + 3, col0 + tx] = a3\n    c[row0 + r + 4, col0 + tx] = a4; c[row0 + r + 5, col0 + tx] = a5; c[row0 + r + 6, col0 + tx] = a6; c[row0 + r + 7, col0 + tx] = a7\n\n",
        None,
    ),
    (
        "sgemm_kmajor_padded_68",
        "correct: A's tile k-major, padded to 68 (the check's own hint)",
        "sgemm_1d",
        "BM, BN, BK, TM = 64, 64, 8, 8\n\n@cuda.jit\ndef sgemm_1d(c, a, b):  # A tile stored k-major with padding 68: conflict-free store? \n    sa = cuda.shared.array((8, 68), float32)\n    sb = cuda.shared.array((BK, BN), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    t = ty * BN + tx\n    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN\n    acc = cuda.local.array(TM, float32)\n    for i in range(TM):\n        acc[i] = float32(0.0)\n    for k0 in range(0, a.shape[1], BK):\n        sa[t % BK, t // BK] = a[row0 + t // BK, k0 + t % BK]\n        sb[ty, tx] = b[k0 + ty, col0 + tx]\n        cuda.syncthreads()\n        for kk in range(BK):\n            bv = sb[kk, tx]\n            for i in range(TM):\n                acc[i] += sa[kk, ty * TM + i] * bv\n        cuda.syncthreads()\n    for i in range(TM):\n        c[row0 + ty * TM + i, col0 + tx] = acc[i]\n\n",
        None,
    ),
    (
        "sgemm_no_second_barrier",
        "wrong: the barrier after the inner loop missing",
        "sgemm_1d",
        "BM, BN, BK, TM = 64, 64, 8, 8\n\n@cuda.jit\ndef sgemm_1d(c, a, b):\n    sa = cuda.shared.array((BM, BK), float32)\n    sb = cuda.shared.array((BK, BN), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    t = ty * BN + tx\n    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN\n    acc = cuda.local.array(TM, float32)\n    for i in range(TM):\n        acc[i] = float32(0.0)\n    for k0 in range(0, a.shape[1], BK):\n        sa[t // BK, t % BK] = a[row0 + t // BK, k0 + t % BK]\n        sb[ty, tx] = b[k0 + ty, col0 + tx]\n        cuda.syncthreads()\n        for kk in range(BK):\n            bv = sb[kk, tx]\n            for i in range(TM):\n                acc[i] += sa[ty * TM + i, kk] * bv\n    for i in range(TM):\n        c[row0 + ty * TM + i, col0 + tx] = acc[i]\n\n",
        "race",
    ),
    (
        "sgemm_k_hard_coded_16",
        "wrong: K loop hard-coded to the public test's 16",
        "sgemm_1d",
        "BM, BN, BK, TM = 64, 64, 8, 8\n\n@cuda.jit\ndef sgemm_1d(c, a, b):   # single K step (hard-coded K=8: public-size)\n    sa = cuda.shared.array((BM, BK), float32)\n    sb = cuda.shared.array((BK, BN), float32)\n    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y\n    t = ty * BN + tx\n    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN\n    acc = cuda.local.array(TM, float32)\n    for i in range(TM):\n        acc[i] = float32(0.0)\n    for k0 in range(0, 16, BK):\n        sa[t // BK, t % BK] = a[row0 + t // BK, k0 + t % BK] if k0 < a.shape[1] else 0.0\n        sb[ty, tx] = b[k0 + ty, col0 + tx] if k0 < a.shape[1] else 0.0\n        cuda.syncthreads()\n        for kk in range(BK):\n            bv = sb[kk, tx]\n            for i in range(TM):\n                acc[i] += sa[ty * TM + i, kk] * bv\n        cuda.syncthreads()\n    for i in range(TM):\n        c[row0 + ty * TM + i, col0 + tx] = acc[i]\n\n",
        "C[",
    ),
]
