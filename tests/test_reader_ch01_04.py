"""Chapters 01-04 as a reader meets them (issue 25): exercises ask before the page tells, each
has a solution, code fits the column, glue cells and the banner are hidden, and a stub's
starting state shows no red cross.

The key values below are the text that would give each exercise's answer away; a new exercise
in these chapters needs its own entry (a test checks that every exercise has one).
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
from pathlib import Path

import pytest

import exercise_order as eo

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = {
    n: ROOT / "chapters" / f"{n}.ipynb"
    for n in ("01_latency_throughput", "02_simt", "03_divergence", "04_occupancy")
}


# exercises whose untouched starting state still prints a failure: their check (gpulab/checks,
# not owned by the chapters) does not yet recognise the stub or the explorer's starting values
# as untouched (gpulab.checks.answers.starting_state). Add a label here only with a reason.
STARTS_AS_FAILURE: set[str] = set()

ALL = [(name, ex.label) for name, p in CHAPTERS.items() for ex in eo.exercises(p)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_visible_code_fits_the_column(chapter):
    # the column the browser measures at 1280 px: 79 characters, 71 in a solution dropdown
    assert eo.long_code_lines(CHAPTERS[chapter], limit=79, solution_limit=71) == []


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_glue_cells_and_banner_are_hidden(chapter):
    nb = eo.load(CHAPTERS[chapter])
    assert eo.visible_glue_cells(nb) == []
    banner = [c for c in nb["cells"] if c["cell_type"] == "code" and c["source"].strip() == "import gpulab"]
    assert banner and all({"remove-output", "remove-cell"} & eo.tags(c) for c in banner)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_development_notes_in_reader_text(chapter):
    text = "\n".join(c["source"] for c in eo.load(CHAPTERS[chapter])["cells"] if c["cell_type"] == "markdown")
    for note in ("not tried on Colab", "date not recorded", "by the authors", "TODO", "FIXME"):
        assert note not in text, note


def _starting_output(chapter, label):
    """Run the chapter's set-up cells, then the exercise's own cells (stub, explorer, check) as
    a reader would before changing anything; return what the last cell shows."""
    nb = eo.load(CHAPTERS[chapter])
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    ns: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for c in code[1:3]:  # import gpulab, the imports (the install cell does nothing here)
            exec(c["source"], ns)
    ex = {e.label: e for e in eo.exercises(nb)}[label]
    cells = nb["cells"][ex.cell + 1 : ex.solution_cells[0]]
    shown = ""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        for c in cells:
            if c["cell_type"] != "code":
                continue
            tree = ast.parse(c["source"])
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            # a file name per cell that linecache knows, as in Jupyter, so a check reads the stub's source
            name = f"<{label} cell {nb['cells'].index(c)}>"
            linecache.cache[name] = (len(c["source"]), None, c["source"].splitlines(True), name)
            exec(compile(tree, name, "exec"), ns)
            shown = repr(eval(compile(ast.Expression(last.value), name, "eval"), ns)) if last else ""
    return out.getvalue() + shown


@pytest.mark.parametrize(
    "chapter,label",
    [
        pytest.param(
            ch,
            lab,
            marks=pytest.mark.xfail(
                strict=True, reason="its check does not yet report the starting state as not started"
            ),
        )
        if lab in STARTS_AS_FAILURE
        else (ch, lab)
        for ch, lab in ALL
    ],
)
def test_a_stub_starts_without_a_red_cross(chapter, label):
    shown = _starting_output(chapter, label)
    assert shown.strip(), "the exercise's check cell showed nothing"
    assert "❌" not in shown, shown
