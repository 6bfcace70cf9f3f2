"""An answer still as the chapter handed it over is a neutral note, not a red cross, and still a
fail (issue 25, point 2): the rule in gpulab.checks.answers.starting_state, used by every
exercise's check through gpulab.checks.result.untouched.

The chapters 01-08 reader tests run each exercise's starting state; here: the rule itself, the
registered stub fingerprints against the notebooks, and chapters 09-11's starting states.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
from pathlib import Path

import pytest

import exercise_order as eo
from gpulab.checks import answers, result
from gpulab.checks import amdahl, memory, warp

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("[01]*.ipynb"))


def _define(src: str, ns: dict | None = None, name: str = "<stub test>"):
    """Execute ``src`` under a file name linecache knows (as Jupyter does), so its source reads."""
    ns = {} if ns is None else ns
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    exec(compile(src, name, "exec"), ns)
    return ns


# ---- the rule ---------------------------------------------------------------------------------


def test_none_and_a_widgets_starting_value_are_untouched():
    assert answers.starting_state(None) and answers.starting_state(...)
    start = answers.starting({"stride": 1, "offset": 0})
    assert answers.starting_state(start) is not None
    assert answers.starting_state({"stride": 1, "offset": 0}) is None  # typed by hand: an answer
    start["stride"] = 8  # edited by hand: an answer
    assert answers.starting_state(start) is None
    assert answers.starting_state(answers.starting(4)) and answers.starting(4) == 4
    assert answers.as_int(answers.starting(4)) == 4 and type(answers.as_int(answers.starting(4))) is int
    for value in (0, 1.5, "x", [1], {"a": 1}, True):
        assert answers.starting_state(value) is None


def test_a_function_that_does_nothing_is_untouched_one_that_stores_is_not():
    ns = _define(
        "def a(x):\n    # your code here\n    return None\n"
        "def b(out, x):\n    '''doc'''\n    i, j = len(x), min(1, 2)\n    pass\n"
        "def c(out, x):\n    old = atomic_add(out, 0, 1)\n"
        "def d(out, x):\n    out[0] = 1\n"
        "def e(x):\n    return 0\n"
    )
    assert answers.starting_state(ns["a"]) and answers.starting_state(ns["b"])
    for name in "cde":
        assert answers.starting_state(ns[name]) is None, name


def test_the_fingerprint_ignores_layout_not_code_or_constants():
    one = _define("T = 32\ndef f(x):\n    # comment\n    return x[T]\n", name="<one>")["f"]
    same = _define("T = 32\n\ndef f(x):\n\n    return x[ T ]   # other comment\n", name="<same>")["f"]
    other_t = _define("T = 33\ndef f(x):\n    return x[T]\n", name="<t>")["f"]
    other_code = _define("T = 32\ndef f(x):\n    return x[T + 1]\n", name="<code>")["f"]
    fp = answers.code_fingerprint(one)
    assert fp and fp == answers.code_fingerprint(same)
    assert fp != answers.code_fingerprint(other_t) and fp != answers.code_fingerprint(other_code)
    assert answers.code_fingerprint(len) is None and answers.code_fingerprint(3) is None


def test_untouched_needs_every_answer_untouched():
    assert result.untouched(None, None).not_started
    assert result.untouched(None, 3) is None  # half answered: the check judges it
    assert result.untouched(3) is None and result.untouched() is None
    widget = result.untouched(answers.starting({"kind": "down"}))
    assert widget.not_started and not widget and "widget" in repr(widget)


def test_hostile_answers_are_left_to_the_check():
    class Liar:
        def __getattr__(self, name):
            raise RuntimeError("no")

        def __eq__(self, other):
            return True

    assert answers.starting_state(Liar()) is None


# ---- on real checks ---------------------------------------------------------------------------

STUB_SCAN = """
@cuda.jit
def my_warp_scan(x, out):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    # your code here: a shfl_up_sync loop
    if i < x.shape[0]:
        out[i] = v
"""


def test_a_stub_is_a_neutral_fail_a_wrong_kernel_keeps_its_reason():
    from numba import cuda, float32

    ns = _define(STUB_SCAN, {"cuda": cuda, "float32": float32}, "<scan stub>")
    res = warp.check_warp_scan(ns["my_warp_scan"])
    assert res.not_started and not res.passed and not bool(res)
    text = repr(res)
    assert "❌" not in text and text.startswith("✎ Not answered yet") and "my_warp_scan" in text
    # as a hidden test hands it over (under the grader's audit wrapper): the same, a fail
    from gpulab.grading import oracles

    graded = warp.check_warp_scan(oracles.audited(ns["my_warp_scan"]))
    assert graded.not_started and not graded
    # one real statement changed (a step that is wrong): a red cross with the check's reason
    wrong = STUB_SCAN.replace(
        "    # your code here: a shfl_up_sync loop\n",
        "    v += cuda.shfl_down_sync(0xFFFFFFFF, v, 1)\n",
    )
    ns = _define(wrong, {"cuda": cuda, "float32": float32}, "<scan wrong>")
    res = warp.check_warp_scan(ns["my_warp_scan"], seed=1)
    assert not res.passed and not res.not_started
    assert repr(res).startswith("❌") and "inclusive warp scan wrong" in res.message


def test_a_widget_value_moved_and_back_is_an_answer():
    start = answers.starting({"stride": 1, "offset": 0, "elem_bytes": 4})
    assert memory.check_own_sector(start).not_started
    res = memory.check_own_sector({"stride": 1, "offset": 0, "elem_bytes": 4})
    assert not res.passed and repr(res).startswith("❌") and "stride 1" in res.message
    assert memory.check_own_sector({"stride": 8, "offset": 0, "elem_bytes": 4}).passed
    # a widget that starts on a right answer passes: the note only ever replaces a failure
    assert memory.check_own_sector(answers.starting({"stride": 8, "offset": 0, "elem_bytes": 4})).passed


def test_none_answers_still_fail_and_a_half_answer_keeps_its_reason():
    assert amdahl.check_interview_speedup(None, None).not_started
    res = amdahl.check_interview_speedup(16.8, None)
    assert not res.passed and not res.not_started and repr(res).startswith("❌")


# ---- the notebooks ----------------------------------------------------------------------------


def _stub_functions():
    """(label, function name, function) for every function an exercise's stub cells define,
    executed after the chapter's set-up cells as a reader would."""
    out = []
    for path in CHAPTERS:
        nb = eo.load(path)
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        ns: dict = {}
        with contextlib.redirect_stdout(io.StringIO()):
            for c in code[1:3]:
                exec(c["source"], ns)
        for ex in eo.exercises(nb):
            for i in range(ex.cell + 1, ex.solution_cells[0]):
                c = nb["cells"][i]
                if c["cell_type"] != "code":
                    continue
                defs = [n.name for n in ast.parse(c["source"]).body if isinstance(n, ast.FunctionDef)]
                if not defs:
                    continue
                with contextlib.redirect_stdout(io.StringIO()):
                    _define(c["source"], ns, f"<{ex.label} cell {i}>")
                out += [(ex.label, name, ns[name]) for name in defs]
    return out


@pytest.mark.slow
def test_starting_code_registry_matches_the_notebooks():
    """Each stub that does something (a runnable starting kernel) is registered by its
    fingerprint, and nothing else is; a stub that does nothing needs no entry."""
    want = {}
    for label, name, fn in _stub_functions():
        if answers.starting_state(fn) is not None and "does nothing" in answers.starting_state(fn):
            continue
        want[answers.code_fingerprint(fn)] = f"{label} {name}"
    assert None not in want
    assert answers.STARTING_CODE == want, f"set gpulab.checks.answers.STARTING_CODE to {want!r}"


def _starting_output(path, label):
    """What an exercise's cells (stub, widget, check) show before the reader changes anything."""
    nb = eo.load(path)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    ns: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for c in code[1:3]:
            exec(c["source"], ns)
    ex = {e.label: e for e in eo.exercises(nb)}[label]
    shown = ""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        for i in range(ex.cell + 1, ex.solution_cells[0]):
            c = nb["cells"][i]
            if c["cell_type"] != "code" or "remove-cell" in eo.tags(c):
                continue
            tree = ast.parse(c["source"])
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            name = f"<{label} cell {i}>"
            linecache.cache[name] = (len(c["source"]), None, c["source"].splitlines(True), name)
            exec(compile(tree, name, "exec"), ns)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), ns)
                shown += "" if value is None else repr(value) + "\n"
    return out.getvalue() + shown


LATE = [(p, ex.label) for p in CHAPTERS if p.name[:2] in ("09", "10", "11") for ex in eo.exercises(p)]


@pytest.mark.slow
@pytest.mark.parametrize("path,label", LATE, ids=[lab for _, lab in LATE])
def test_chapters_09_11_stubs_start_without_a_red_cross(path, label):
    shown = _starting_output(path, label)
    assert "Not answered yet" in shown, shown
    assert "❌" not in shown, shown
