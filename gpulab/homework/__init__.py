"""The homework's public tests, shipped inside gpulab so a Colab notebook finds them after
``pip install`` (no clone, no drive): ``otter.Notebook(tests_dir=public_tests("hw02_simt"))``.

Each ``<hw>/tests/q*.py`` is a copy of what ``otter assign`` writes into the student folder for
``exercises/<hw>/<hw>.ipynb``; ``tests/test_homework.py`` fails when a copy is stale.
"""

from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def assignments() -> list[str]:
    """Names of the homework whose public tests ship with gpulab."""
    return sorted(d for d in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, d, "tests")))


def public_tests(hw: str) -> str:
    """Path of the folder holding homework ``hw``'s public tests (``q1.py``, ...)."""
    path = os.path.join(HERE, hw, "tests")
    if not os.path.isdir(path):
        raise FileNotFoundError(
            f"no public tests for {hw!r} in gpulab {HERE}; known: {', '.join(assignments()) or 'none'}"
        )
    return path
