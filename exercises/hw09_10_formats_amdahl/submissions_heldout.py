"""Held-out submissions for hw09_10_formats_amdahl, written as a class would write them (issue 14's second
round): correct work in unusual styles, wrong work, hostile work. tests/test_grading_heldout_style.py
grades each kernel through the check its hidden test calls. Each entry: name, style, the name the
notebook defines, its cell source, and ``None`` (full marks) or a text the failure message must
contain. Kernel names match the notebook's, so a source can be pasted into its cell as is.
"""

HELDOUT = [
    (
        "load_a_bit_ops",
        "correct: indices by shifts and masks",
        "load_a",
        "@cuda.jit\ndef load_a(frag, a):\n    lane = cuda.threadIdx.x\n    g = lane >> 2; t = lane & 3\n    r0 = cuda.blockIdx.y << 4; c0 = cuda.blockIdx.x << 4\n    for i in range(8):\n        row = g + ((i >> 1) & 1) * 8\n        col = t * 2 + (i & 1) + (i >> 2) * 8\n        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = a[r0 + row, c0 + col]\n\n",
        None,
    ),
    (
        "load_a_unrolled_row_view",
        "correct: eight explicit stores into a row view frag[by, bx, lane]",
        "load_a",
        "@cuda.jit\ndef load_a(frag, a):\n    lane = cuda.threadIdx.x\n    g, t = lane // 4, lane % 4\n    by, bx = cuda.blockIdx.y, cuda.blockIdx.x\n    r, c = 16 * by + g, 16 * bx + 2 * t\n    f = frag[by, bx, lane]\n    f[0] = a[r, c]; f[1] = a[r, c + 1]\n    f[2] = a[r + 8, c]; f[3] = a[r + 8, c + 1]\n    f[4] = a[r, c + 8]; f[5] = a[r, c + 9]\n    f[6] = a[r + 8, c + 8]; f[7] = a[r + 8, c + 9]\n\n",
        None,
    ),
    (
        "load_a_halves_in_wrong_order",
        "wrong: a2/a3 and a4/a5 swapped",
        "load_a",
        "@cuda.jit\ndef load_a(frag, a):  # a2/a4 swapped: order r,c / r,c+8 / r+8,c...\n    lane = cuda.threadIdx.x\n    g, t = lane // 4, lane % 4\n    by, bx = cuda.blockIdx.y, cuda.blockIdx.x\n    r, c = 16 * by + g, 16 * bx + 2 * t\n    f = frag[by, bx, lane]\n    f[0] = a[r, c]; f[1] = a[r, c + 1]\n    f[2] = a[r, c + 8]; f[3] = a[r, c + 9]\n    f[4] = a[r + 8, c]; f[5] = a[r + 8, c + 1]\n    f[6] = a[r + 8, c + 8]; f[7] = a[r + 8, c + 9]\n\n",
        "PTX layout",
    ),
]
