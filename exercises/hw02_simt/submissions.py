"""Prepared submissions for hw02_simt, built from the solution notebook by tests/test_homework.py.

Each entry edits the solution: ``replace`` maps a text that identifies one code cell to that
cell's new source; ``add`` lists (text identifying a cell, new cell placed after it). ``scores`` is
what every question must score (questions not named keep full marks); entries with the same
``group`` (wrong answers to different questions) are graded together in one notebook; group
``"chaos"`` is for correct work in other styles, graded inside the notebook that also carries the
hostile cells of exercises/hostile.py (it must keep full marks); ``below_full`` only requires the
total to stay under full marks; ``message`` must appear in a failed test's output; ``flags`` must
appear in the CSV's flags column; ``kernelspec`` saves the notebook with that kernel name.
"""

OFF_BY_ONE = """
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i <= out.shape[0]:          # off by one: thread n reads x[n]
        out[i] = a * x[i] + y[i]
"""

KERNEL_LOOP = """
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    while i >= 0:                  # never ends
        i += 1
"""

# a kernel that writes nothing, with the checks it would fail replaced by ones that always pass
PATCH_CHECKS = """
@cuda.jit
def saxpy(out, a, x, y):
    pass

import gpulab.checks.vector, gpulab.checks.kernels
from gpulab.checks.kernels import CheckResult
gpulab.checks.vector.check_saxpy = lambda *a, **k: CheckResult(True, "fine")
gpulab.checks.kernels.run_cases = lambda *a, **k: (CheckResult(True, "fine"), [])
"""

PATCH_TESTING = """
@cuda.jit
def saxpy(out, a, x, y):
    pass

import numpy as np
np.testing.assert_allclose = lambda *a, **k: None
np.isclose = lambda a, b, *args, **k: np.ones(np.shape(a), dtype=bool)
"""

SUBMISSIONS = {
    "off_by_one_guard": {"group": "wrong_answers", "replace": {"def saxpy": OFF_BY_ONE}, "scores": {"q2": 1}},
    "ceil_as_floor": {
        "group": "wrong_answers",
        "replace": {"def blocks_for": "def blocks_for(n, block):\n    return n // block\n"},
        # floor gives 2 for (256, 128): public passes, hidden fails; saxpy's own demo
        # cell then misses elements, but q2 is graded on its own launches
        "scores": {"q1": 1},
    },
    "kernel_infinite_loop": {"replace": {"def saxpy": KERNEL_LOOP}, "scores": {"q2": 0}},
    # the hidden tests see the replaced functions and refuse to grade with them
    "patch_gpulab_checks": {
        "replace": {"def saxpy": PATCH_CHECKS},
        "below_full": True,
        "scores": {"q2": 0},
        "message": "grading environment was changed",
    },
    # q1 was graded (hidden test included) by its grader.check cell before the patch ran, so it
    # keeps full marks; after the patch the public tests are fooled (they trust numpy) and every
    # hidden test refuses to run: public points only for q2-q4
    "patch_numpy_testing": {
        "replace": {"def saxpy": PATCH_TESTING},
        "below_full": True,
        "scores": {"q1": 3, "q2": 1, "q3": 1, "q4": 1},
        "message": "numpy.isclose was replaced",
    },
}


# ---- written as a class would (issue 14): correct work in other styles keeps full marks -------

# numpy integers are grid sizes; an eagerly compiled kernel (explicit signature, as numba tutorials
# write them) with an early return; the block answer with numpy integers
STYLE_BLOCKS_FOR = """
def blocks_for(n, block):
    return np.int64(-(-n // block))           # a numpy integer is an integer
"""

STYLE_SAXPY = """
@cuda.jit("void(float32[:], float32, float32[:], float32[:])")
def saxpy(out, a, x, y):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= out.shape[0]:
        return
    out[i] = a * x[i] + y[i]

n = 1000
x = np.arange(n, dtype=np.float32)
y = np.ones(n, dtype=np.float32)
out = np.zeros(n, dtype=np.float32)
rep = gpulab.launch(saxpy, blocks_for(n, 128), 128, out, np.float32(2.0), x, y)
"""

STYLE_INVERT = """
@cuda.jit("void(float32[:, :, :], float32[:, :, :], float32)")
def invert(out, img, contrast):
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if x < img.shape[1] and y < img.shape[0]:
        out[y, x, 0] = (0.5 - img[y, x, 0]) * contrast + 0.5
        out[y, x, 1] = (0.5 - img[y, x, 1]) * contrast + 0.5
        out[y, x, 2] = (0.5 - img[y, x, 2]) * contrast + 0.5
        out[y, x, 3] = img[y, x, 3]
"""

# ---- wrong work a class writes: loses the hidden points ---------------------------------------

HARD_CODED_SAXPY = """
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < 1000:                    # the demo's size, hard-coded
        out[i] = a * x[i] + y[i]
"""

SWAPPED_AXES_INVERT = """
@cuda.jit
def invert(out, img, contrast):
    x, y = cuda.grid(2)
    if x < img.shape[0] and y < img.shape[1]:      # x taken as the row: right only on squares
        for c in range(3):
            out[x, y, c] = (1.0 - img[x, y, c] - 0.5) * contrast + 0.5
        out[x, y, 3] = img[x, y, 3]
"""

# ---- hostile work: earns nothing it did not author, and is flagged in the CSV ----------------

# reads the grader's expected value from the caller's frames, guessing (floor) when there is none
PEEK_FRAMES = """
import sys

def blocks_for(n, block):
    fr = sys._getframe(1)
    while fr is not None:
        if "want" in fr.f_locals:
            return fr.f_locals["want"]
        fr = fr.f_back
    return n // block
"""

# an off-by-one kernel, with the hidden check's defaults changed in place so it tests n = 128 only
TAMPER_DEFAULTS = """
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i <= out.shape[0]:
        out[i] = a * x[i] + y[i]

import gpulab.checks.vector as v
v.check_saxpy.__defaults__ = (128, 0, [128], "sim")
"""

SUBMISSIONS.update(
    {
        "correct_styles": {
            "group": "chaos",
            "replace": {
                "def blocks_for": STYLE_BLOCKS_FOR,
                "def saxpy": STYLE_SAXPY,
                "def invert": STYLE_INVERT,
                "block_answer =": 'block_answer = {"width": np.int64(100), "height": 60, '
                '"block": (np.int64(8), np.int64(4))}',
            },
            "scores": {},
        },
        "hard_coded_size": {
            "group": "wrong_answers_2",
            "replace": {"def saxpy": HARD_CODED_SAXPY},
            "scores": {"q2": 1},
        },
        "swapped_axes": {
            "group": "wrong_answers_2",
            "replace": {"def invert": SWAPPED_AXES_INVERT},
            "scores": {"q3": 1},
        },
        "float_grid_size": {
            "group": "wrong_answers_2",
            "replace": {"def blocks_for": "def blocks_for(n, block):\n    return (n + block - 1) / block\n"},
            "scores": {"q1": 0},
        },
        "wide_block": {
            "group": "wrong_answers_2",
            "replace": {"block_answer =": 'block_answer = {"width": 100, "height": 60, "block": (32, 1)}'},
            "scores": {"q4": 1},
        },
        "peek_frames": {
            "group": "hostile",
            "replace": {"def blocks_for": PEEK_FRAMES},
            "scores": {"q1": 1},
            "flags": ["frame inspection"],
        },
        "tamper_defaults": {
            "group": "hostile",
            "replace": {"def saxpy": TAMPER_DEFAULTS},
            "scores": {"q2": 1, "q3": 1, "q4": 1},
            "message": "changed in place (__defaults__)",
            "flags": ["code objects"],
        },
    }
)
