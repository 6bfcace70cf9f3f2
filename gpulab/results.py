"""Where recorded benchmark results live, and how to read one: the single lookup every
chapter, plot and model uses.

A results file is ``<name>.json`` written by a ``benchmarks/`` script. It is looked up in
$GPULAB_RESULTS, then benchmarks/results/ of the source tree gpulab runs from, of the working
directory, and of its parent (a notebook runs from chapters/).
"""

import json
import os
from pathlib import Path

SOURCE_TREE = Path(__file__).resolve().parents[1]


def roots() -> list[Path]:
    """Candidate results folders, in lookup order (those that may not exist included)."""
    env = os.environ.get("GPULAB_RESULTS")
    out = [Path(env)] if env else []
    return out + [
        SOURCE_TREE / "benchmarks" / "results",
        Path.cwd() / "benchmarks" / "results",
        Path.cwd().parent / "benchmarks" / "results",
    ]


def path(name: str) -> Path | None:
    """The first ``<name>.json`` found, or None when this copy has none (e.g. a pip install)."""
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
