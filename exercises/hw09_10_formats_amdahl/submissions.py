"""Prepared wrong submissions for this homework, built from the solution notebook by
tests/test_homework.py (format: see exercises/hw02_simt/submissions.py)."""

SUBMISSIONS = {
    # Gustafson's scaled speedup: a number between 1 and 2 for (0.5, 2), so the public test passes
    "gustafson_instead_of_amdahl": {
        "group": "wrong_answers",
        "replace": {"def speedup": "def speedup(f, p):\n    return f * p + (1 - f)\n"},
        "scores": {"q1": 1},
    },
    "c_owner_rows_swapped": {
        "group": "wrong_answers",
        "replace": {
            "def c_owner": "def c_owner(row, col):\n    return 4 * (row % 8) + col // 2, (col % 2) + (2 if row < 8 else 0)\n"
        },
        "scores": {"q5": 0},
    },
    "too_many_processors": {
        "group": "wrong_answers",
        "replace": {"p_answer =": "p_answer = 32"},
        "scores": {"q3": 0},
    },
}

# an endless loop in a plain function the tests call: q1's tests fail on their time limits, the
# other questions are still graded (and the run does not hang)
SUBMISSIONS["speedup_never_returns"] = {
    "replace": {"def speedup": "def speedup(f, p):\n    while True:\n        pass\n"},
    "scores": {"q1": 0},
}


# ---- written as a class would (issue 14) -----------------------------------------------------

# float32 arithmetic throughout (full marks: the tolerance fits the question), numpy integers,
# and estimate_f by calling gpulab's own model (correct, so full marks, but flagged in the CSV)
STYLE_SPEEDUP = """
def speedup(f, p):
    f, p = np.float32(f), np.float32(p)
    return np.float32(1.0) / ((np.float32(1.0) - f) + f / p)
"""

READS_THE_MODEL = """
from gpulab.models import amdahl as A

def estimate_f(p1, t1, p2, t2):
    return A.fit_times([p1, p2], [t1, t2]).f
"""

STYLE_C_OWNER = """
def c_owner(row, col):
    group, pair = divmod(int(row), 8)
    return [np.int64(4 * pair + col // 2), np.int64(col % 2 + 2 * group)]
"""

# looks for the grader's expected value in the caller's frames; guesses when there is none
PEEK_WANT = """
import sys

def speedup(f, p):
    fr = sys._getframe(1)
    while fr is not None:
        if "want" in fr.f_locals:
            return fr.f_locals["want"]
        fr = fr.f_back
    return 1.0 + f
"""

# a literal answer whose conversion to a number never returns: costs q3 only
HANGING_LITERAL = """
class Sixteen:
    def __float__(self):
        while True:
            pass

p_answer = Sixteen()
"""

SUBMISSIONS.update(
    {
        # saved from a Jupyter environment named "gpulab": graded with the grading Python anyway
        "correct_styles": {
            "group": "chaos",
            "replace": {
                "def speedup": STYLE_SPEEDUP,
                "def c_owner": STYLE_C_OWNER,
                "p_answer =": "p_answer = np.int64(16)",
            },
            "kernelspec": "gpulab",
            "scores": {},
        },
        # the fit done by gpulab's model, not by the student: an oracle (issue 26, point 6)
        "estimate_f_reads_the_model": {
            "group": "oracle",
            "replace": {"def estimate_f": READS_THE_MODEL},
            "scores": {"q2": 0},
            "flags": ["imports the checkers"],
            "message": "it called gpulab.models.amdahl.fit_times",
        },
        "peek_want": {
            "group": "hostile",
            "replace": {"def speedup": PEEK_WANT},
            "scores": {"q1": 1},
            "flags": ["frame inspection"],
        },
        "hanging_literal": {
            "group": "hostile",
            "replace": {"p_answer =": HANGING_LITERAL},
            "scores": {"q3": 0},
            "message": "ran longer than",
        },
    }
)


# ---- a native tensor-core pair (q4) and loading an mma fragment (q6), issue 14 item 18 -------

_LOAD_A = """
@cuda.jit
def load_a(frag, a):
    lane = cuda.threadIdx.x
    g, t = lane // 4, lane % 4
    r0, c0 = ORIGIN
    for i in range(8):
        row = g + 8 * ((i // 2) % 2)
        col = 2 * t + i % 2 + 8 * (i // 4)
        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = a[r0 + READ]
"""


def _load_a(origin="16 * cuda.blockIdx.y, 16 * cuda.blockIdx.x", read="row, c0 + col"):
    return _LOAD_A.replace("ORIGIN", origin).replace("READ", read)


# row and column swapped: lane 0's a2 is A[0, 8], not A[8, 0] (the public test sees it)
FRAG_SWAPPED = _load_a(read="col, c0 + row")
# every block reads the first tile: right for the public test's single tile only
FRAG_FIRST_TILE = _load_a(origin="0, 0")

# right fragments, but lane 0 copies all 32 lanes' elements: 256 requests per warp, not 8
FRAG_ONE_LANE = """
@cuda.jit
def load_a(frag, a):
    r0, c0 = 16 * cuda.blockIdx.y, 16 * cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        for lane in range(32):
            for i in range(8):
                row = lane // 4 + 8 * ((i // 2) % 2)
                col = 2 * (lane % 4) + i % 2 + 8 * (i // 4)
                frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = a[r0 + row, c0 + col]
"""

# the swapped layout, with gpulab's reference layout patched to agree with it
PATCH_LAYOUT = (
    FRAG_SWAPPED
    + """
import gpulab.models.mma as mma_model
_load = mma_model.load_fragments
mma_model.load_fragments = lambda m, operand: _load(m.T, operand)
"""
)

# correct: an explicit signature, bit operations for the PTX formulas, a while loop
STYLE_LOAD_A = """
@cuda.jit("void(float32[:, :, :, :], float32[:, :])")
def load_a(frag, a):
    lane = cuda.laneid
    group = lane >> 2
    tig = lane & 3
    by, bx = cuda.blockIdx.y, cuda.blockIdx.x
    i = 0
    while i < 8:
        row = group + ((i >> 1) & 1) * 8
        col = tig * 2 + (i & 1) + (i >> 2) * 8
        frag[by, bx, lane, i] = a[by * 16 + row, bx * 16 + col]
        i += 1
"""

SUBMISSIONS.update(
    {
        # FP8 x INT8: the fewest bytes, but no Hopper instruction multiplies that pair
        "fp8_times_int8_not_native": {
            "group": "wrong_answers",
            "replace": {"choice =": 'choice = {"x": "fp8_e4m3", "w": "int8", "acc": "fp32"}'},
            "scores": {"q4": 0},
            "message": "no Hopper tensor-core instruction multiplies",
        },
        "fragment_row_col_swapped": {
            "group": "wrong_answers",
            "replace": {"def load_a": FRAG_SWAPPED},
            "scores": {"q6": 0},
        },
        "fragment_first_tile_only": {
            "group": "speedup_never_returns",
            "replace": {"def load_a": FRAG_FIRST_TILE},
            "scores": {"q6": 1},
        },
        "fragment_one_lane_copies": {
            "group": "hostile",
            "replace": {"def load_a": FRAG_ONE_LANE},
            "scores": {"q6": 1},
        },
        "patched_fragment_layout": {
            "group": "hostile_layout",
            "replace": {"def load_a": PATCH_LAYOUT},
            "scores": {"q6": 0},
            "flags": ["imports the checkers"],
        },
        "correct_fragment_style": {
            "group": "chaos",
            "replace": {"def load_a": STYLE_LOAD_A, "choice =": 'choice = {"x": "bf16", "w": "bf16"}'},
        },
    }
)
