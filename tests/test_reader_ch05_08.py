"""Chapters 05-08 as a reader meets them (issue 25): exercises ask before the page tells, each
has a solution, code fits the column, glue cells and the banner are hidden, tables are numbered
and captioned, and a stub's starting state shows no red cross.

The key values below are the text that would give each exercise's answer away; a new exercise
in these chapters needs its own entry (a test checks that every exercise has one).
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import re
from pathlib import Path

import pytest

import exercise_order as eo

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = {
    n: ROOT / "chapters" / f"{n}.ipynb"
    for n in ("05_memory", "06_shared_memory", "07_compute_patterns", "08_warp_primitives")
}


# exercises whose untouched starting state still prints a failure: their check (gpulab/checks,
# not owned by the chapters) does not yet recognise the stub or the explorer's starting values
# as untouched (gpulab.checks.answers.starting_state). Add a label here only with a reason.
STARTS_AS_FAILURE: set[str] = set()

ALL = [(name, ex.label) for name, p in CHAPTERS.items() for ex in eo.exercises(p)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_visible_code_fits_the_column(chapter):
    # the column measured at 1280 px: 79 characters of code, 71 inside a solution
    assert eo.long_code_lines(CHAPTERS[chapter], limit=79, solution_limit=71) == []
    # set-up cells fold behind a toggle, which is narrower when opened (666 px: 77 characters)
    setup = [c for c in eo.load(CHAPTERS[chapter])["cells"] if c["cell_type"] == "code"][1:3]
    assert [line for c in setup for line in c["source"].splitlines() if len(line) > 77] == []


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_glue_cells_and_banner_are_hidden(chapter):
    nb = eo.load(CHAPTERS[chapter])
    assert eo.visible_glue_cells(nb) == []
    banner = [c for c in nb["cells"] if c["cell_type"] == "code" and c["source"].strip() == "import gpulab"]
    assert banner and all({"remove-output", "remove-cell"} & eo.tags(c) for c in banner)


TABLE_ROW = re.compile(r"^\|.*\|\s*$", re.M)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_tables_are_numbered_and_captioned(chapter):
    """Every markdown table sits in a ```{table} Caption``` directive with a :name:."""
    for c in eo.load(CHAPTERS[chapter])["cells"]:
        if c["cell_type"] != "markdown" or not TABLE_ROW.search(c["source"]):
            continue
        for block in re.split(r"\n\s*\n", c["source"]):
            if not TABLE_ROW.search(block) or block.lstrip().startswith("```{table}"):
                continue
            before = c["source"][: c["source"].index(block)]
            opened = before.rfind("```{table}")
            assert opened >= 0 and "```" not in before[opened + 3 :].replace("```{table}", ""), (
                f"{chapter}: a table outside a numbered {{table}} directive: {block[:80]!r}"
            )
            head = before[opened:].splitlines()
            assert len(head[0]) > len("```{table} ") and any(h.startswith(":name:") for h in head)


@pytest.mark.parametrize("chapter,label", ALL)
def test_the_page_shows_no_starting_check_output(chapter, label):
    """On the built page an exercise's check cells show their code, not the failure an untouched
    stub gives (the tag ``remove-output``); the reader runs them in the notebook."""
    nb = eo.load(CHAPTERS[chapter])
    ex = {e.label: e for e in eo.exercises(nb)}[label]
    checks = [
        c
        for c in nb["cells"][ex.cell + 1 : ex.solution_cells[0]]
        if c["cell_type"] == "code" and re.search(r"\.check_\w+\(", c["source"].strip().splitlines()[-1])
    ]
    assert checks, f"{label}: no check cell between the exercise and its solution"
    assert all(eo.FOLDED_OUTPUT & eo.tags(c) for c in checks)


def _starting_output(chapter, label):
    """Run the chapter's set-up cells, then the exercise's own cells (stub, explorer, check) as
    a reader would before changing anything; return what those cells show."""
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
            # a file name linecache knows, so inspect (and gpulab's simulator) can read the source
            name = f"<{label} cell {nb['cells'].index(c)}>"
            linecache.cache[name] = (len(c["source"]), None, c["source"].splitlines(True), name)
            exec(compile(tree, name, "exec"), ns)
            # the last expression's value is what Jupyter shows
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), ns)
                shown += "" if value is None else repr(value) + "\n"
    return out.getvalue() + shown


@pytest.mark.parametrize(
    "chapter,label",
    [
        pytest.param(
            ch,
            lab,
            marks=pytest.mark.xfail(
                strict=True,
                raises=AssertionError,
                reason="its check does not yet report the starting state as not started",
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


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_explorer_snapshot_is_described_in_words(chapter):
    """A static page shows an explorer as a still picture: the markdown just above it says what
    the picture shows and how a reader without Python can still do the task."""
    cells = eo.load(CHAPTERS[chapter])["cells"]
    explorers = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "(globals()" in c["source"]]
    assert explorers
    for i in explorers:
        above = "\n".join(c["source"] for c in cells[max(0, i - 3) : i] if c["cell_type"] == "markdown")
        assert "still picture of its starting state" in above and "does not react" in above, i
