"""Prepared wrong submissions for this homework, built from the solution notebook by
tests/test_homework.py (format: see exercises/hw02_simt/submissions.py)."""

SUBMISSIONS = {
    # Gustafson's scaled speedup: a number between 1 and 2 for (0.5, 2), so the public test passes
    "gustafson_instead_of_amdahl": {"group": "wrong_answers", "replace": {"def speedup": "def speedup(f, p):\n    return f * p + (1 - f)\n"},
                                    "scores": {"q1": 1}},
    "c_owner_rows_swapped": {"group": "wrong_answers", "replace": {"def c_owner": "def c_owner(row, col):\n    return 4 * (row % 8) + col // 2, (col % 2) + (2 if row < 8 else 0)\n"},
                             "scores": {"q5": 0}},
    "too_many_processors": {"group": "wrong_answers", "replace": {"p_answer =": "p_answer = 32"}, "scores": {"q3": 0}},
}

# an endless loop in a plain function the tests call: q1's tests fail on their time limits, the
# other questions are still graded (and the run does not hang)
SUBMISSIONS["speedup_never_returns"] = {
    "replace": {"def speedup": "def speedup(f, p):\n    while True:\n        pass\n"},
    "scores": {"q1": 0}}


# ---- written as a class would (issue 14) -----------------------------------------------------

# float32 arithmetic throughout (full marks: the tolerance fits the question), numpy integers,
# and estimate_f by calling gpulab's own model (correct, so full marks, but flagged in the CSV)
STYLE_SPEEDUP = '''
def speedup(f, p):
    f, p = np.float32(f), np.float32(p)
    return np.float32(1.0) / ((np.float32(1.0) - f) + f / p)
'''

READS_THE_MODEL = '''
from gpulab.models import amdahl as A

def estimate_f(p1, t1, p2, t2):
    return A.fit_times([p1, p2], [t1, t2]).f
'''

STYLE_C_OWNER = '''
def c_owner(row, col):
    group, pair = divmod(int(row), 8)
    return [np.int64(4 * pair + col // 2), np.int64(col % 2 + 2 * group)]
'''

# looks for the grader's expected value in the caller's frames; guesses when there is none
PEEK_WANT = '''
import sys

def speedup(f, p):
    fr = sys._getframe(1)
    while fr is not None:
        if "want" in fr.f_locals:
            return fr.f_locals["want"]
        fr = fr.f_back
    return 1.0 + f
'''

# a literal answer whose conversion to a number never returns: costs q3 only
HANGING_LITERAL = '''
class Sixteen:
    def __float__(self):
        while True:
            pass

p_answer = Sixteen()
'''

SUBMISSIONS.update({
    # saved from a Jupyter environment named "gpulab": graded with the grading Python anyway
    "correct_styles": {"group": "chaos", "replace": {"def speedup": STYLE_SPEEDUP, "def estimate_f": READS_THE_MODEL,
                                   "def c_owner": STYLE_C_OWNER, "p_answer =": "p_answer = np.int64(16)"},
                       "kernelspec": "gpulab", "scores": {}, "flags": ["imports the checkers"]},
    "peek_want": {"group": "hostile", "replace": {"def speedup": PEEK_WANT}, "scores": {"q1": 1},
                  "flags": ["frame inspection"]},
    "hanging_literal": {"group": "hostile", "replace": {"p_answer =": HANGING_LITERAL}, "scores": {"q3": 0},
                        "message": "ran longer than"},
})
