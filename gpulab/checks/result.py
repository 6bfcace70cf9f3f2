"""The outcome every self-check returns: pass or fail, and the reason in words.

Each result made while no grading test runs is remembered (:func:`made_outside_tests`): a
homework answer searched for by calling the grader's own check is not the student's work
(gpulab.grading.oracles, issue 26). An answer still as the chapter handed it over is a neutral
"not answered yet" note, not a red cross, and still a fail (:func:`untouched`, issue 25)."""

import os
import sys
import textwrap
from dataclasses import dataclass

from gpulab.checks.answers import NO_ANSWER, WIDGET_START, starting_state
from gpulab.checks.answers import plain as answers_plain

# private and mutable, so the grading snapshot does not watch them: "in_test" counts the Otter
# test cases running now (gpulab.grading.limits sets it); _OUTSIDE holds, for each result made
# while it was 0, the names of the functions of gpulab.checks on the stack that made it
_STATE = {"in_test": 0}
_OUTSIDE: list = []
_CHECKS_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def made_outside_tests() -> list:
    """For each CheckResult made while no grading test ran: the set of gpulab.checks function
    names that were on the stack (``{"check_worth_buying", ...}``)."""
    return list(_OUTSIDE)


def _callers():
    names, f = set(), sys._getframe(2)
    for _ in range(12):
        if f is None:
            break
        if f.f_code.co_filename.startswith(_CHECKS_DIR):
            names.add(f.f_code.co_name)
        f = f.f_back
    return frozenset(names)


# how every check ends the message for an answer left as the stub returned it (None)
NOT_STARTED = "not solved yet"


@dataclass
class CheckResult:
    """Truthy only on a pass (so Otter tests can ``assert`` it); prints as ✅/❌ and the reason."""

    passed: bool
    message: str
    # what to do next, for a not-started result (default: write the answer in the cell above)
    todo: str = ""

    def __post_init__(self):
        if not _STATE["in_test"] and len(_OUTSIDE) < 10000:
            _OUTSIDE.append(_callers())

    def __bool__(self):
        return self.passed

    @property
    def not_started(self) -> bool:
        """True for a stub's untouched answer (the check said "... not solved yet"): a fail for
        the grader, shown as a neutral note rather than a red cross in notebooks and on the page."""
        return not self.passed and self.message.rstrip(". ").endswith(NOT_STARTED)

    def __repr__(self):
        if self.not_started:
            what = self.message.rstrip(". ")[: -len(NOT_STARTED)].rstrip(": ")
            what = what.replace("returned None", "returns None")
            todo = self.todo or "Write it in the cell above, then run this check again."
            text = f"✎ Not answered yet: {what}. {todo}"
        else:
            text = ("✅ " if self.passed else "❌ ") + self.message
        # wrapped to the book's output column: 621 px holds 76 monospace characters, and the
        # ✅/❌ mark is drawn about three characters wide, so 68 per line
        return "\n".join(
            textwrap.fill(part, 68, subsequent_indent="   ", break_long_words=False, break_on_hyphens=False)
            for part in text.split("\n")
        )


def untouched(*answers, judge=None, **params) -> CheckResult | None:
    """None when any of ``answers`` is an answer (the check goes on); when every one is still as
    the chapter handed it over (gpulab.checks.answers.starting_state: None, a widget's starting
    value, a stub's code), the check's own verdict on them, ``judge(*answers, **params)``: kept
    as it is when it passes (a widget may start on a right answer), else turned into the neutral
    not-started note, still a fail. Each exercise's check calls it first:
    ``if (r := untouched(kernel, judge=check_x, seed=seed)) is not None: return r``."""
    if _STATE.get("judging"):  # the check judging a starting state calls this again: go on
        return None
    states = [starting_state(a) for a in answers]
    if not answers or any(s is None for s in states):
        return None
    if judge is not None:
        plain = [answers_plain(a) for a in answers]  # a widget's mark dropped
        _STATE["judging"] = _STATE.get("judging", 0) + 1
        try:
            verdict = judge(*plain, **params)
        finally:
            _STATE["judging"] -= 1
        if verdict.passed or verdict.not_started:
            return verdict
    if all(s == WIDGET_START for s in states):
        return CheckResult(
            False,
            f"the widget above is still at its starting setting: {NOT_STARTED}",
            todo="Move its controls to your answer, then run this check again.",
        )
    if all(s == NO_ANSWER for s in states):
        what = "the answer is still None" if len(states) == 1 else "the answers are still None"
        return CheckResult(
            False,
            f"{what}: {NOT_STARTED}",
            todo="Write them in the cell above, then run this check again." if len(states) > 1 else "",
        )
    what = "; ".join(dict.fromkeys(s for s in states if s != NO_ANSWER))
    return CheckResult(
        False, f"{what}: {NOT_STARTED}", todo="Change it in the cell above, then run this check again."
    )
