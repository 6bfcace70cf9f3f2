"""The outcome every self-check returns: pass or fail, and the reason in words.

Each result made while no grading test runs is remembered (:func:`made_outside_tests`): a
homework answer searched for by calling the grader's own check is not the student's work
(gpulab.grading.oracles, issue 26)."""

import os
import sys
import textwrap
from dataclasses import dataclass

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
            text = f"✎ Not answered yet: {what}. Write it in the cell above, then run this check again."
        else:
            text = ("✅ " if self.passed else "❌ ") + self.message
        # wrapped to the book's output column: 621 px holds 76 monospace characters, and the
        # ✅/❌ mark is drawn about three characters wide, so 68 per line
        return "\n".join(
            textwrap.fill(part, 68, subsequent_indent="   ", break_long_words=False, break_on_hyphens=False)
            for part in text.split("\n")
        )
