"""The outcome every self-check returns: pass or fail, and the reason in words."""

import textwrap
from dataclasses import dataclass


@dataclass
class CheckResult:
    """Truthy only on a pass (so Otter tests can ``assert`` it); prints as ✅/❌ and the reason."""

    passed: bool
    message: str

    def __bool__(self):
        return self.passed

    def __repr__(self):
        text = ("✅ " if self.passed else "❌ ") + self.message
        # wrapped to the book's output column: 621 px holds 76 monospace characters, and the
        # ✅/❌ mark is drawn about three characters wide, so 68 per line
        return "\n".join(
            textwrap.fill(part, 68, subsequent_indent="   ", break_long_words=False, break_on_hyphens=False)
            for part in text.split("\n")
        )
