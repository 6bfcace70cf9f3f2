"""Self-checks for chapter 09 (tensor cores and number formats); the homework tests use them too."""

from __future__ import annotations


from gpulab.checks.answers import as_number
from gpulab.models import formats as F
from gpulab.models import mma
from gpulab.checks.result import CheckResult  # noqa: F401 (re-exported)


def check_c_owner(fn) -> CheckResult:
    """Compare a reader's ``c_owner(row, col) -> (lane, i)`` for the m16n8k16 accumulator with
    the PTX ISA layout on all 128 elements; report the first element that disagrees."""
    answers = {}
    for r in range(16):
        for c in range(8):
            try:
                got = fn(r, c)
            except Exception as e:  # the reader's code raised
                return CheckResult(False, f"c_owner({r}, {c}) raised {type(e).__name__}: {e}")
            if got is None:
                return CheckResult(False, "c_owner returned None: not solved yet")
            try:
                pair = (as_number(got[0]), as_number(got[1]))
            except (TypeError, IndexError, KeyError, ValueError):
                pair = (None, None)
            if None in pair or any(v != int(v) for v in pair):  # 4.5 is no lane (c / 2 for c // 2)
                return CheckResult(
                    False, f"c_owner({r}, {c}) should return (lane, i), two whole numbers, got {got!r}"
                )
            answers[r, c] = (int(pair[0]), int(pair[1]))
    lane_of, idx_of = mma.owner_map("C")  # only after every call: no table to peek at
    for (r, c), got in answers.items():
        want = (int(lane_of[r, c]), int(idx_of[r, c]))
        if got != want:
            hint = ""
            if got[0] == want[0]:
                hint = " (right lane, wrong element index: rows 8-15 use c2/c3)"
            elif got[1] == want[1]:
                hint = " (right element index, wrong lane: lane = 4*groupID + threadID_in_group)"
            return CheckResult(
                False,
                f"element C[{r}, {c}]: expected lane {want[0]} c{want[1]}, got lane {got[0]} c{got[1]}{hint}",
            )
    return CheckResult(True, "all 128 accumulator elements are in the lane and register the PTX ISA says")


def check_format_choice(choice, problem: F.BudgetProblem | None = None) -> CheckResult:
    """Grade a choice {'x': fmt, 'w': fmt, 'acc': fmt} for the chapter's error-budget problem by
    running it through the emulation: it must meet the budget and move no more bytes than the
    cheapest combination that meets it."""
    p = problem or F.default_problem()
    if not isinstance(choice, dict) or not {"x", "w", "acc"} <= set(choice):
        return CheckResult(False, f"choice must be a dict with keys 'x', 'w' and 'acc', got {choice!r}")
    choice = {k: str(choice[k]) for k in ("x", "w", "acc")}  # plain strings, whatever __eq__ says
    for key, allowed in (("x", p.x_formats), ("w", p.w_formats), ("acc", p.accs)):
        if choice[key] not in allowed:
            return CheckResult(False, f"choice[{key!r}] = {choice[key]!r} is not one of {allowed}")
    err = p.error(choice)
    nbytes = p.bytes(choice)
    if err > p.budget:
        return CheckResult(
            False,
            f"relative error {err:.2%} is over the {p.budget:.0%} budget "
            f"(X in {choice['x']}, W in {choice['w']}, accumulate in {choice['acc']})",
        )
    best = min(r["bytes"] for r in p.all_choices() if r["error"] <= p.budget)
    if nbytes > best:
        return CheckResult(
            False,
            f"error {err:.2%} meets the budget, but X and W take {nbytes} bytes; "
            f"a combination with {best} bytes also meets it",
        )
    return CheckResult(True, f"error {err:.2%} <= {p.budget:.0%} with {nbytes} bytes, the fewest possible")
