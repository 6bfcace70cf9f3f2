"""Every number with a unit in a chapter's prose is glued from a computation, cited, or allow-listed.

The book promises that each figure is measured, computed or cited. A number typed into markdown
goes stale silently when a measurement is re-run, so chapter prose shows numbers through myst-nb
`{glue}` roles (computed in the notebook or read from gpulab/data/results/), or cites a source with
`{cite}` in the same paragraph. The few remaining literals are on a reviewed allow-list
(tests/prose_numbers_allow.txt), each with its reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
ALLOW_FILE = ROOT / "tests" / "prose_numbers_allow.txt"

# Units of measured or quoted quantities: time, rates, frequency, power, sizes, shares and ratios.
UNITS = (
    r"ns|µs|us|ms|s|seconds|minutes|GB/s|TB/s|GiB/s|MB/s|TFLOP/s|TFLOPS|GFLOP/s|PFLOP/s|"
    r"TOPS|MHz|GHz|W|KB|KiB|MB|MiB|GB|GiB|TB|%|×|x"
)
NUMBER_WITH_UNIT = re.compile(rf"(?<![\w.^/{{])(\d[\d,]*(?:\.\d+)?)(?:\s?|-)(?:{UNITS})(?![\w/])(?!\s?\d)")
# What is not prose: code spans, math, roles' targets, links' targets, directive/option lines.
_STRIP = [
    re.compile(r"```.*?```", re.S),  # fenced blocks (code, directives' bodies are kept below)
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$\n]+\$"),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<https?://[^>]*>"),
    re.compile(r"https?://\S+"),
]


def _paragraphs(markdown: str):
    """Blank-line separated paragraphs; every table row is its own paragraph."""
    for para in re.split(r"\n\s*\n", markdown):
        lines = para.splitlines()
        if lines and all(line.lstrip().startswith("|") for line in lines if line.strip()):
            yield from lines
        else:
            yield para


def _prose(para: str) -> str:
    # keep the text inside directive fences (admonitions, exercises hold prose) but drop code fences
    para = re.sub(r"```\{(?:code-cell|code|code-block)\}.*?```", "", para, flags=re.S)
    para = re.sub(r"^\s*(```+|:::+)\s*(\{[^}]*\}.*)?$", "", para, flags=re.M)
    para = re.sub(r"^\s*:\w[\w-]*:.*$", "", para, flags=re.M)  # directive options
    for pat in _STRIP:
        para = pat.sub(" ", para)
    return para


def _allowed():
    allowed = set()
    for line in ALLOW_FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        assert len(parts) == 3 and parts[2], f"allow-list line needs 'chapter | literal | reason': {line!r}"
        allowed.add((parts[0], parts[1]))
    return allowed


def unsourced_numbers(nb_path: Path):
    """(cell index, literal, paragraph excerpt) for each number with a unit that has no source."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    found = []
    for idx, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        src = "".join(cell["source"])
        for para in _paragraphs(src):
            if "{cite" in para:
                continue
            text = _prose(para)
            for m in NUMBER_WITH_UNIT.finditer(text):
                start = max(0, m.start() - 50)
                found.append((idx, m.group(0).strip(), " ".join(text[start : m.end() + 30].split())))
    return found


def test_scanner_finds_literals_and_skips_sources():
    """The scanner itself: typed numbers are found; glued, cited, code and math are not."""
    import tempfile

    cells = [
        {"cell_type": "markdown", "source": "A copy reached 3.2 TB/s and took 17.6 µs."},
        {"cell_type": "markdown", "source": "Measured: {glue:text}`bw:.1f` TB/s."},
        {"cell_type": "markdown", "source": "Peak 4.8 TB/s {cite}`nvidia-h200`."},
        {"cell_type": "markdown", "source": "In code `x = 5 ms` and math $t = 3\\,\\mu s$; a 16×16 tile."},
        {"cell_type": "markdown", "source": "| kernel | time |\n|---|---|\n| copy | 12 ms |"},
    ]
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "nb.ipynb"
        p.write_text(json.dumps({"cells": cells}), encoding="utf-8")
        hits = unsourced_numbers(p)
    assert [(i, lit) for i, lit, _ in hits] == [(0, "3.2 TB/s"), (0, "17.6 µs"), (4, "12 ms")]


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_prose_numbers_have_a_source(nb_path):
    allowed = _allowed()
    bad = [(i, lit, ctx) for i, lit, ctx in unsourced_numbers(nb_path) if (nb_path.stem, lit) not in allowed]
    msg = "\n".join(f"  cell {i}: {lit!r} in ...{ctx}..." for i, lit, ctx in bad)
    assert not bad, (
        f"{nb_path.name}: numbers with units typed into the prose, neither glued ({{glue:text}}) nor "
        f"cited ({{cite}}) in their paragraph nor on tests/prose_numbers_allow.txt:\n{msg}"
    )
