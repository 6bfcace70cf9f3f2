"""Round 3 (issue 26): unseen submissions for hw02_simt, written from the questions' text before
reading the grader. Graded one notebook each by ``python exercises/round3.py`` (which runs
``python -m gpulab.grading grade`` on a private copy of gpulab, since some of them write to it).

Each entry edits the solution like exercises/hw02_simt/submissions.py (``replace``, ``add``);
``kind`` is ``correct`` (must keep full marks), ``wrong`` (the ``questions`` it targets must lose
points) or ``hostile`` (must be flagged as hostile and earn nothing on ``questions``);
``needs_sim`` names a simulator check a wrong kernel depends on.
"""

# the attack, generalised: write a neutered grading helper into the installed package
# (found through __file__, no path literal), then replace the check in the module's dict
DISK_TAMPER = """
@cuda.jit
def saxpy(out, a, x, y):
    pass

import pathlib
_pkg = pathlib.Path(gpulab.__file__).parent
for _rel in ("grading/__init__.py", "grading/tamper.py"):
    _p = _pkg / _rel
    _p.write_text(_p.read_text() + "\\n\\ndef assert_untampered(*a, **k):\\n    return None\\n"
                  "\\ndef findings(*a, **k):\\n    return []\\n")

class _Ok:
    message = "fine"
    def __bool__(self):
        return True

_m = __import__("gpulab.checks.vector", fromlist=["x"])
vars(_m)["check_saxpy"] = lambda *a, **k: _Ok()
"""

# in memory only, without the words the flags look for
SETATTR_CHECK = """
@cuda.jit
def invert(out, img, contrast):
    pass

_mod = __import__("gpulab.checks." + "simt", fromlist=["x"])
_good = getattr(_mod, "check_" + "invert")
class _R:
    message = "ok"
    def __bool__(self):
        return True
setattr(_mod, "check_" + "invert", lambda *a, **k: _R())
"""

# an int that equals anything
EQ_ANYTHING = """
class Count(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

def blocks_for(n, block):
    return Count(1)
"""

# the answer dict runs code while the check reads it: it rebinds numpy's comparisons
GETITEM_SIDE_EFFECT = """
class Answer(dict):
    def __getitem__(self, key):
        import numpy, math
        numpy.isclose = lambda a, b, *x, **k: numpy.ones(numpy.shape(a), dtype=bool)
        numpy.allclose = lambda *x, **k: True
        numpy.array_equal = lambda *x, **k: True
        math.isclose = lambda *x, **k: True
        return dict.__getitem__(self, key)

block_answer = Answer({"width": 100, "height": 60, "block": (32, 32)})
"""

# correct: the block size written as the literal the question fixes (128)
HARDCODED_128 = """
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.threadIdx.x + 128 * cuda.blockIdx.x     # the question launches blocks of 128
    if i < x.size:
        out[i] = a * x[i] + y[i]
"""

# correct: a grid-stride loop over rows, a loop over channels with alpha by a select
INVERT_STRIDE = """
@cuda.jit
def invert(out, img, contrast):
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    h, w = img.shape[0], img.shape[1]
    y = y0
    while y < h:
        x = x0
        while x < w:
            for c in range(4):
                v = img[y, x, c]
                out[y, x, c] = v if c == 3 else (0.5 - v) * contrast + 0.5
            x += sx
        y += sy
"""

# wrong: reads x[i] and y[i] before the guard (threads past the end read out of bounds)
READ_BEFORE_GUARD = """
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    xi = x[i]
    yi = y[i]
    if i < out.shape[0]:
        out[i] = a * xi + yi
"""

# wrong: the guard compares x with the height and y with the width (right on square images)
GUARD_SWAPPED = """
@cuda.jit
def invert(out, img, contrast):
    x, y = cuda.grid(2)
    if x < img.shape[0] and y < img.shape[1]:
        for c in range(3):
            out[y, x, c] = (1.0 - img[y, x, c] - 0.5) * contrast + 0.5
        out[y, x, 3] = img[y, x, 3]
"""

ROUND3 = {
    "disk_tamper_vars": {
        "kind": "hostile",
        "what": "writes a no-op assert_untampered into gpulab/grading on disk, replaces check_saxpy via vars()",
        "replace": {"def saxpy": DISK_TAMPER},
        "questions": ["q2"],
    },
    "setattr_check_no_keywords": {
        "kind": "hostile",
        "what": "setattr on gpulab.checks.simt.check_invert built from string pieces, empty kernel",
        "replace": {"def invert": SETATTR_CHECK},
        "questions": ["q3"],
    },
    "int_equal_to_anything": {
        "kind": "hostile",
        "what": "blocks_for returns an int subclass whose __eq__ is always True (value 1)",
        "replace": {"def blocks_for": EQ_ANYTHING},
        "questions": ["q1"],
    },
    "answer_getitem_patches_numpy": {
        "kind": "hostile",
        "what": "block_answer is a dict whose __getitem__ rebinds numpy/math comparisons; (32, 32) block",
        "replace": {"block_answer =": GETITEM_SIDE_EFFECT},
        "questions": ["q4"],
    },
    "saxpy_block_literal_128": {
        "kind": "correct",
        "what": "saxpy indexing with the literal 128 the question fixes, guard on x.size",
        "replace": {"def saxpy": HARDCODED_128},
        "questions": ["q2"],
    },
    "invert_grid_stride": {
        "kind": "correct",
        "what": "invert as a 2-D grid-stride loop, channels in a loop, alpha by a select",
        "replace": {"def invert": INVERT_STRIDE},
        "questions": ["q3"],
    },
    "saxpy_reads_before_guard": {
        "kind": "wrong",
        "what": "loads x[i], y[i] before the guard",
        "replace": {"def saxpy": READ_BEFORE_GUARD},
        "questions": ["q2"],
    },
    "invert_guard_axes_swapped": {
        "kind": "wrong",
        "what": "guard compares x with the height, y with the width",
        "replace": {"def invert": GUARD_SWAPPED},
        "questions": ["q3"],
    },
    "block_not_a_warp_multiple": {
        "kind": "wrong",
        "what": "block (10, 6): no idle thread, but 60 threads is not a multiple of 32",
        "replace": {"block_answer =": 'block_answer = {"width": 100, "height": 60, "block": (10, 6)}'},
        "questions": ["q4"],
    },
}
