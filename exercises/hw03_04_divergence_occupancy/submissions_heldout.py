"""Held-out submissions for hw03_04_divergence_occupancy, written as a class would write them (issue 14's second
round): correct work in unusual styles, wrong work, hostile work. tests/test_grading_heldout_style.py
grades each kernel through the check its hidden test calls. Each entry: name, style, the name the
notebook defines, its cell source, and ``None`` (full marks) or a text the failure message must
contain. Kernel names match the notebook's, so a source can be pasted into its cell as is.
"""

HELDOUT = [
    (
        "ternary_select",
        "correct: a conditional expression (one select per lane)",
        "parity_scale",
        "@cuda.jit\ndef parity_scale(out, x):\n    i = cuda.grid(1)\n    if i < out.shape[0]:\n        out[i] = 2 * x[i] if i % 2 == 0 else x[i] + 1   # ternary: select, no branch?\n\n",
        None,
    ),
    (
        "float_mask_blend",
        "correct: float mask arithmetic",
        "parity_scale",
        "from numba import float32\n\n@cuda.jit\ndef parity_scale(out, x):\n    i = cuda.grid(1)\n    if i < out.shape[0]:\n        even = float32(1 - (i % 2))\n        out[i] = even * (2 * x[i]) + (1 - even) * (x[i] + 1)\n\n",
        None,
    ),
    (
        "grid_stride_bitand",
        "correct: grid-stride loop with i & 1",
        "parity_scale",
        "@cuda.jit\ndef parity_scale(out, x):\n    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):\n        p = i & 1\n        out[i] = x[i] * (2 - p) + p\n\n",
        None,
    ),
    (
        "if_else_branch",
        "wrong: the divergent if/else kept",
        "parity_scale",
        "@cuda.jit\ndef parity_scale(out, x):\n    i = cuda.grid(1)\n    if i < out.shape[0]:\n        if i % 2 == 0:\n            out[i] = 2 * x[i]\n        else:\n            out[i] = x[i] + 1\n\n",
        "warp execution efficiency",
    ),
    (
        "parity_of_warp",
        "wrong: (i // 32) & 1 instead of i & 1",
        "parity_scale",
        "@cuda.jit\ndef parity_scale(out, x):  # wrong: parity of warp not element\n    i = cuda.grid(1)\n    if i < out.shape[0]:\n        p = (i // 32) & 1\n        out[i] = x[i] * (2 - p) + p\n\n",
        "expected",
    ),
]
