"""Held-out submissions for hw02_simt, written as a class would write them (issue 14's second
round): correct work in unusual styles, wrong work, hostile work. tests/test_grading_heldout_style.py
grades each kernel through the check its hidden test calls. Each entry: name, style, the name the
notebook defines, its cell source, and ``None`` (full marks) or a text the failure message must
contain. Kernel names match the notebook's, so a source can be pasted into its cell as is.
"""

HELDOUT = [
    (
        "grid_stride_saxpy",
        "correct: grid-stride for loop over cuda.gridsize(1)",
        "saxpy",
        "@cuda.jit\ndef saxpy(out, a, x, y):\n    start = cuda.grid(1); step = cuda.gridsize(1)\n    for i in range(start, out.shape[0], step):\n        out[i] = a * x[i] + y[i]\n\n",
        None,
    ),
    (
        "eager_signature_device_fn",
        "correct: eager signature with C-contiguous arrays and a typed device function",
        "saxpy",
        '@cuda.jit("float32(float32, float32, float32)", device=True)\ndef fma_sig(a, x, y): return a * x + y\n\n@cuda.jit("void(float32[::1], float32, float32[::1], float32[::1])")\ndef saxpy(out, a, x, y):\n    i = cuda.grid(1)\n    if i < len(out):\n        out[i] = fma_sig(a, x[i], y[i])\n\n',
        None,
    ),
    (
        "manual_index_device_fn",
        "correct: blockDim * blockIdx + threadIdx, lazy device helper, guard on x.size",
        "saxpy",
        "@cuda.jit(device=True)\ndef fma_(a, x, y): return a * x + y\n\n@cuda.jit\ndef saxpy(out, a, x, y):\n    i = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x\n    if i < x.size and i < out.size:\n        out[i] = fma_(a, x[i], y[i])\n\n",
        None,
    ),
    (
        "guard_hard_coded_1000",
        "wrong: the demo's n = 1000 hard-coded beside the real guard",
        "saxpy",
        "@cuda.jit\ndef saxpy(out, a, x, y):\n    i = cuda.grid(1)\n    if i < 1000:\n        if i < out.shape[0]:\n            out[i] = a * x[i] + y[i]\n\n",
        "never written",
    ),
    (
        "guard_skips_element_0",
        "wrong: 0 < i < n",
        "saxpy",
        "@cuda.jit\ndef saxpy(out, a, x, y):\n    i = cuda.grid(1)\n    if 0 < i < out.shape[0]:\n        out[i] = a * x[i] + y[i]\n\n",
        "never written",
    ),
    (
        "a_truncated_to_int",
        "wrong: int(a)",
        "saxpy",
        "@cuda.jit\ndef saxpy(out, a, x, y):  # truncates a to int: wrong\n    i = cuda.grid(1)\n    if i < out.shape[0]:\n        out[i] = int(a) * x[i] + y[i]\n\n",
        "expected",
    ),
    (
        "escape_through_data",
        "hostile: out.data[:] = ... (numpy outside the simulator)",
        "saxpy",
        "@cuda.jit\ndef saxpy(out, a, x, y):  # hostile: escape sim\n    i = cuda.grid(1)\n    if i == 0:\n        out.data[:] = a * x.data + y.data\n\n",
        "numba.cuda would refuse",
    ),
    (
        "invert_manual_index_early_return",
        "correct: manual 2-D index, early return, alpha by if inside a loop",
        "invert",
        "@cuda.jit\ndef invert(out, img, contrast):\n    x = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x\n    y = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y\n    if x >= img.shape[1] or y >= img.shape[0]:\n        return\n    for c in range(4):\n        if c == 3:\n            out[y, x, c] = img[y, x, c]\n        else:\n            out[y, x, c] = (0.5 - img[y, x, c]) * contrast + 0.5\n\n",
        None,
    ),
    (
        "invert_grid_stride_2d",
        "correct: 2-D grid-stride loops",
        "invert",
        "@cuda.jit\ndef invert(out, img, contrast):\n    x0, y0 = cuda.grid(2); sx, sy = cuda.gridsize(2)\n    for y in range(y0, img.shape[0], sy):\n        for x in range(x0, img.shape[1], sx):\n            out[y, x, 0] = (1.0 - img[y, x, 0] - 0.5) * contrast + 0.5\n            out[y, x, 1] = (1.0 - img[y, x, 1] - 0.5) * contrast + 0.5\n            out[y, x, 2] = (1.0 - img[y, x, 2] - 0.5) * contrast + 0.5\n            out[y, x, 3] = img[y, x, 3]\n\n",
        None,
    ),
    (
        "invert_swapped_guard",
        "wrong: x guarded against shape[0]",
        "invert",
        "@cuda.jit\ndef invert(out, img, contrast):  # wrong: guard x against shape[0]\n    x, y = cuda.grid(2)\n    if x < img.shape[0] and y < img.shape[1]:\n        for c in range(3):\n            out[y, x, c] = (0.5 - img[y, x, c]) * contrast + 0.5\n        out[y, x, 3] = img[y, x, 3]\n\n",
        "out-of-bounds",
    ),
    (
        "invert_alpha_inverted",
        "wrong: alpha inverted too",
        "invert",
        "@cuda.jit\ndef invert(out, img, contrast):  # wrong: alpha inverted too\n    x, y = cuda.grid(2)\n    if x < img.shape[1] and y < img.shape[0]:\n        for c in range(4):\n            out[y, x, c] = (0.5 - img[y, x, c]) * contrast + 0.5\n\n",
        "expected",
    ),
]
