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
