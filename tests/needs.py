"""What a test needs from the machine (an interpreter, a browser, a tool) and what to do when it is
missing: skip with the reason on a developer's machine, fail in CI (``CI=true``, set by CI for
.ci/run), where a skipped subject would still report green (issue 21).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def in_ci() -> bool:
    """True under CI (``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(why: str):
    """Skip with ``why``, or fail with it under CI."""
    import pytest

    if in_ci():
        pytest.fail(f"CI=true and {why}", pytrace=False)
    pytest.skip(why)


def pyenv_python(version: str) -> str | None:
    """``$(pyenv prefix VERSION)/bin/python``: the interpreter itself, not pyenv's ``pythonX.Y``
    shim on the PATH, which fails unless pyenv selects that version. None when pyenv or the
    version is missing."""
    try:
        p = subprocess.run(["pyenv", "prefix", version], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    exe = Path(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "") / "bin" / "python"
    return str(exe) if p.returncode == 0 and exe.is_file() else None
