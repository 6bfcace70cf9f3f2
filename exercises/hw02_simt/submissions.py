"""Prepared submissions for hw02_simt, built from the solution notebook by tests/test_homework.py.

Each entry edits the solution: ``replace`` maps a text that identifies one code cell to that
cell's new source; ``add`` lists (text identifying a cell, new cell placed after it). ``scores`` is
what every question must score (questions not named keep full marks); entries with the same
``group`` (wrong answers to different questions) are graded together in one notebook; ``below_full`` only
requires the total to stay under full marks; ``message`` must appear in a failed test's output.
"""

OFF_BY_ONE = '''
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i <= out.shape[0]:          # off by one: thread n reads x[n]
        out[i] = a * x[i] + y[i]
'''

KERNEL_LOOP = '''
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    while i >= 0:                  # never ends
        i += 1
'''

# a kernel that writes nothing, with the checks it would fail replaced by ones that always pass
PATCH_CHECKS = '''
@cuda.jit
def saxpy(out, a, x, y):
    pass

import gpulab.checks.vector, gpulab.checks.kernels
from gpulab.checks.kernels import CheckResult
gpulab.checks.vector.check_saxpy = lambda *a, **k: CheckResult(True, "fine")
gpulab.checks.kernels.run_cases = lambda *a, **k: (CheckResult(True, "fine"), [])
'''

PATCH_TESTING = '''
@cuda.jit
def saxpy(out, a, x, y):
    pass

import numpy as np
np.testing.assert_allclose = lambda *a, **k: None
np.isclose = lambda a, b, *args, **k: np.ones(np.shape(a), dtype=bool)
'''

SUBMISSIONS = {
    "off_by_one_guard": {"group": "wrong_answers", "replace": {"def saxpy": OFF_BY_ONE}, "scores": {"q2": 1}},
    "ceil_as_floor": {"group": "wrong_answers", "replace": {"def blocks_for": "def blocks_for(n, block):\n    return n // block\n"},
                      # floor gives 2 for (256, 128): public passes, hidden fails; saxpy's own demo
                      # cell then misses elements, but q2 is graded on its own launches
                      "scores": {"q1": 1}},
    "kernel_infinite_loop": {"replace": {"def saxpy": KERNEL_LOOP}, "scores": {"q2": 0}},
    # the hidden tests see the replaced functions and refuse to grade with them
    "patch_gpulab_checks": {"replace": {"def saxpy": PATCH_CHECKS}, "below_full": True,
                            "scores": {"q2": 0}, "message": "grading environment was changed"},
    # q1 was graded (hidden test included) by its grader.check cell before the patch ran, so it
    # keeps full marks; after the patch the public tests are fooled (they trust numpy) and every
    # hidden test refuses to run: public points only for q2-q4
    "patch_numpy_testing": {"replace": {"def saxpy": PATCH_TESTING}, "below_full": True,
                            "scores": {"q1": 3, "q2": 1, "q3": 1, "q4": 1},
                            "message": "numpy.isclose was replaced"},
}
