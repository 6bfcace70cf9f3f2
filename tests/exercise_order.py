"""Checks of how a chapter notebook meets its reader, shared by the chapter tests (issue 25).

An exercise must ask before the page tells: none of its solution's key values may appear in
what the reader sees above it. A key value is a regular expression the chapter's test names
for each exercise (``"stride 8"``, ``"shfl_xor"``), because only a person knows which text
gives an answer away; this module finds the exercises, their solutions and the reader-visible
text above each one, and reports the matches.

Reader-visible means what the built page shows without opening anything: markdown, and the
source and (when the notebook was executed) the outputs of code cells, except cells tagged
``remove-cell``, sources tagged ``remove-input`` or ``hide-input``/``hide-cell`` (folded behind a
toggle), outputs tagged ``remove-output``/``hide-output``, and solution dropdowns (between
``{solution-start}`` and ``{solution-end}``, folded by ``:class: dropdown``).

    from exercise_order import exercises, leaks
    for ex in exercises(nb):
        assert not leaks(nb, ex.label, KEYS[ex.label])
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

EXERCISE_RE = re.compile(r"^(`{3,}|:{3,})\{exercise\}[^\n]*\n(?P<body>.*?)^\1\s*$", re.M | re.S)
LABEL_RE = re.compile(r"^:label:\s*(\S+)", re.M)
SOLUTION_START_RE = re.compile(r"\{solution-start\}\s*(\S+)")
SOLUTION_END_RE = re.compile(r"\{solution-end\}")
REMOVED_CELL = {"remove-cell"}
FOLDED_SOURCE = {"remove-input", "hide-input", "hide-cell", "remove-cell"}
FOLDED_OUTPUT = {"remove-output", "hide-output", "hide-cell", "remove-cell"}
CODE_COLUMN = 88  # the longest code line the book's column shows without scrolling


def load(path) -> dict:
    """A notebook as plain JSON (cells with ``source`` as one string)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    for c in nb["cells"]:
        if isinstance(c.get("source"), list):
            c["source"] = "".join(c["source"])
    return nb


def _nb(nb_or_path) -> dict:
    return load(nb_or_path) if isinstance(nb_or_path, (str, Path)) else nb_or_path


def tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _source(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


@dataclass
class Exercise:
    """One ``{exercise}`` directive: its label, the cell it starts in and the solution's cells."""

    label: str
    cell: int
    offset: int  # where the directive starts in that markdown cell
    body: str
    solution_cells: list[int] = field(default_factory=list)


def _solution_spans(nb) -> dict[str, list[int]]:
    """label -> the indices of the cells from ``{solution-start}`` to ``{solution-end}``."""
    spans, current = {}, None
    for i, c in enumerate(nb["cells"]):
        src = _source(c)
        if c["cell_type"] == "markdown" and (m := SOLUTION_START_RE.search(src)):
            current = m.group(1)
            spans[current] = []
        if current is not None:
            spans[current].append(i)
            if c["cell_type"] == "markdown" and SOLUTION_END_RE.search(src):
                current = None
    return spans


def exercises(nb_or_path) -> list[Exercise]:
    """Every exercise of the notebook, in page order, with its solution cells (empty if none)."""
    nb = _nb(nb_or_path)
    spans = _solution_spans(nb)
    out = []
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] != "markdown":
            continue
        for m in EXERCISE_RE.finditer(_source(c)):
            lab = LABEL_RE.search(m.group("body"))
            if not lab:
                raise ValueError(f"cell {i}: an exercise without a :label: line")
            out.append(Exercise(lab.group(1), i, m.start(), m.group("body"), spans.get(lab.group(1), [])))
    return out


def _outputs_text(cell) -> str:
    parts = []
    for o in cell.get("outputs", []):
        if "text" in o:
            parts.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
        data = o.get("data", {})
        for mime in ("text/markdown", "text/plain"):
            if mime in data:
                v = data[mime]
                parts.append("".join(v) if isinstance(v, list) else v)
                break
    return "\n".join(parts)


def visible_before(nb_or_path, cell: int, offset: int | None = None) -> str:
    """What a reader sees on the page above cell ``cell`` (above ``offset`` in that cell)."""
    nb = _nb(nb_or_path)
    hidden = {i for cells in _solution_spans(nb).values() for i in cells}
    parts = []
    for i, c in enumerate(nb["cells"][: cell + 1]):
        t = tags(c)
        if i in hidden or t & REMOVED_CELL:
            continue
        src = _source(c)
        if i == cell:
            if offset is None:
                break
            src = src[:offset]
        if c["cell_type"] == "markdown":
            parts.append(src)
        elif c["cell_type"] == "code":
            if not t & FOLDED_SOURCE:
                parts.append(src)
            if not t & FOLDED_OUTPUT:
                parts.append(_outputs_text(c))
    return "\n".join(parts)


def leaks(nb_or_path, label: str, keys) -> list[str]:
    """Each key (a regular expression) found in the visible text above exercise ``label``,
    with some context: an empty list means the exercise asks before the page tells."""
    nb = _nb(nb_or_path)
    ex = {e.label: e for e in exercises(nb)}
    if label not in ex:
        raise KeyError(f"no exercise labelled {label!r}; found {sorted(ex)}")
    text = visible_before(nb, ex[label].cell, ex[label].offset)
    found = []
    for key in keys:
        for m in re.finditer(key, text):
            ctx = text[max(0, m.start() - 50) : m.end() + 50].replace("\n", " ")
            found.append(f"{label}: {key!r} appears above it: ...{ctx}...")
    return found


def solution_text(nb_or_path, label: str) -> str:
    """The markdown and code of an exercise's solution dropdown."""
    nb = _nb(nb_or_path)
    return "\n".join(_source(nb["cells"][i]) for i in _solution_spans(nb).get(label, []))


def without_solution(nb_or_path) -> list[str]:
    """Labels of exercises that have no ``{solution-start}`` block."""
    return [e.label for e in exercises(nb_or_path) if not e.solution_cells]


def long_code_lines(nb_or_path, limit: int = CODE_COLUMN, solution_limit: int | None = None) -> list[str]:
    """Visible code lines longer than ``limit`` characters (they scroll sideways in the book);
    inside solution dropdowns, which are narrower, longer than ``solution_limit`` when given.
    At 1280 px the book's text column shows about 79 characters of code, a solution about 71
    (tests/test_pages.py measures the rendered page)."""
    nb = _nb(nb_or_path)
    in_solution = {i for cells in _solution_spans(nb).values() for i in cells}
    out = []
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] != "code" or tags(c) & FOLDED_SOURCE:
            continue
        lim = solution_limit if solution_limit is not None and i in in_solution else limit
        for n, line in enumerate(_source(c).splitlines(), 1):
            if len(line) > lim:
                out.append(f"cell {i} line {n} ({len(line)} chars): {line[:60]}...")
    return out


def _is_glue_call(node) -> bool:
    f = node.func if isinstance(node, ast.Call) else None
    return (isinstance(f, ast.Name) and f.id == "glue") or (isinstance(f, ast.Attribute) and f.attr == "glue")


def glue_only(cell) -> bool:
    """A code cell whose only visible effect is passing numbers to the text: every top-level
    statement is an import, an assignment, a ``glue(...)`` call or a block of only those."""
    if cell["cell_type"] != "code":
        return False
    try:
        tree = ast.parse(_source(cell))
    except SyntaxError:  # IPython magics: not a glue cell
        return False
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    if not any(_is_glue_call(n) for n in calls):
        return False
    for n in ast.walk(tree):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and not _is_glue_call(n.value):
            return False  # a statement printing or drawing something
    return True


def visible_glue_cells(nb_or_path) -> list[str]:
    """Glue-only code cells a reader would see (they must carry ``remove-cell``)."""
    nb = _nb(nb_or_path)
    return [
        f"cell {i}: {(_source(c).splitlines() or [''])[0][:60]}"
        for i, c in enumerate(nb["cells"])
        if glue_only(c) and not tags(c) & REMOVED_CELL
    ]
