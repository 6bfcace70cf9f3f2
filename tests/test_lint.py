"""ruff lint and format, with the settings in pyproject.toml ([tool.ruff]): the same check
contributors run (`ruff check . && ruff format --check .`) is part of the suite CI runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff():
    exe = Path(sys.executable).parent / "ruff"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ruff")
    if found:
        return [found]
    pytest.fail("ruff is not installed: pip install -r requirements.txt (it pins ruff)")


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff(args):
    proc = subprocess.run(_ruff() + args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"ruff {' '.join(args)} failed:\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}"
