"""Where recorded benchmark results live, and how to read one: the single lookup every
chapter, plot and model uses.

A results file is ``<name>.json`` written by a ``benchmarks/`` script into :data:`RESULTS_DIR`,
``gpulab/data/results/``: package data, so a pip-installed gpulab (Colab, a wheel in an empty
folder) reads the same recorded figures as a clone. ``$GPULAB_RESULTS``, when set, is looked up
first (your own GPU's results).
"""

import json
import os
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "data" / "results"


def roots() -> list[Path]:
    """Candidate results folders, in lookup order (those that may not exist included)."""
    env = os.environ.get("GPULAB_RESULTS")
    return ([Path(env)] if env else []) + [RESULTS_DIR]


def path(name: str) -> Path | None:
    """The first ``<name>.json`` found, or None when no root has it."""
    for root in roots():
        p = root / f"{name}.json"
        if p.is_file():
            return p
    return None


def load(name: str) -> dict | None:
    """The parsed ``<name>.json``, or None when this copy has none."""
    p = path(name)
    return json.loads(p.read_text()) if p else None


def glob(pattern: str) -> list[Path]:
    """Every results file matching ``pattern`` (e.g. ``"tensor_cores_throughput*.json"``),
    one per file name, the first root winning."""
    seen = {}
    for root in roots():
        if root.is_dir():
            for p in sorted(root.glob(pattern)):
                seen.setdefault(p.name, p)
    return [seen[k] for k in sorted(seen)]
