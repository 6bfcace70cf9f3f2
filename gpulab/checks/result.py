"""The outcome every self-check returns: pass or fail, and the reason in words."""

import textwrap
from dataclasses import dataclass


# how every check ends the message for an answer left as the stub returned it (None)
NOT_STARTED = "not solved yet"


@dataclass
class CheckResult:
    """Truthy only on a pass (so Otter tests can ``assert`` it); prints as ✅/❌ and the reason."""

    passed: bool
    message: str

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
