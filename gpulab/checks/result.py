"""The outcome every self-check returns: pass or fail, and the reason in words."""
from dataclasses import dataclass


@dataclass
class CheckResult:
    """Truthy only on a pass (so Otter tests can ``assert`` it); prints as ✅/❌ and the reason."""

    passed: bool
    message: str

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return ("✅ " if self.passed else "❌ ") + self.message
