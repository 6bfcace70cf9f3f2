"""benchmarks/run_notebooks.py records a notebook named by a relative path (issue 14, item 17:
it used to execute the notebook and then crash on ``Path.relative_to``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def test_relative_notebook_path_is_recorded(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 6 * 7\nprint(x)")])
    nbformat.write(nb, str(tmp_path / "tiny.ipynb"))
    p = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run_notebooks.py"),
            "tiny.ipynb",
            "--timeout",
            "120",
            "--out",
            "out.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    runs = json.loads((tmp_path / "out.json").read_text())["runs"]
    assert [r["ok"] for r in runs] == [True]
    assert runs[0]["notebook"] == str(tmp_path.resolve() / "tiny.ipynb")
