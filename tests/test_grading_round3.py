"""Issue 26 (grading round 3), each point from a submission like the one the issue describes,
without Otter's full run (exercises/round3.py grades the round's submissions with it):

1. a neutered ``gpulab/grading/tamper.py`` written to disk plus a check replaced through the
   module's ``__dict__``: found in memory (no reload) and on disk (file hashes), and the plugin
   scores such a submission 0 with the reason;
5. a public test fooled by an ``int`` whose ``__eq__`` is always True: public tests normalise
   answers as the hidden checks do;
6. answers produced by gpulab's own models and checks lose their question.
(Point 4, rules against checks, is tests/test_checks_rules.py.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import types

import nbformat
import pytest

from gpulab import grading
from gpulab.checks import amdahl, result
from gpulab.grading import oracles, plugin, tamper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- point 1: the grader does not trust its files ----------------------------------------------


def test_changed_files_sees_a_rewritten_file(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "grading").mkdir(parents=True)
    (pkg / "grading" / "tamper.py").write_text("def findings():\n    return ['x']\n")
    (pkg / "grading" / "notes.txt").write_text("not python")
    before = tamper.package_hashes([str(pkg)])
    assert list(before) == [str(pkg / "grading" / "tamper.py")]
    assert tamper.changed_files(before, tamper.package_hashes([str(pkg)])) == []
    (pkg / "grading" / "tamper.py").write_text("def findings():\n    return []\n")
    (pkg / "grading" / "new.py").write_text("")
    changed = tamper.changed_files(before, tamper.package_hashes([str(pkg)]))
    assert changed == sorted([str(pkg / "grading" / "new.py"), str(pkg / "grading" / "tamper.py")])


class _Case:
    def __init__(self, message, passed=False):
        self.message, self.passed = message, passed


class _File:
    def __init__(self, *messages):
        self.test_case_results = [_Case(m) for m in messages]
        self.score = 1.0

    def update_score(self, s):
        self.score = s


class _Results:
    """What the plugin uses of Otter's GradingResults."""

    def __init__(self, **files):
        self.results = files
        self.data = {}

    def update_score(self, name, s):
        self.results[name].update_score(s)

    def set_plugin_data(self, name, data):
        self.data[name] = data


def test_the_plugin_scores_a_submission_that_rewrote_its_tests_as_hostile(tmp_path, monkeypatch):
    """The hidden tests Otter runs are files in the autograder's tests/ (the kernel's working
    directory): rewriting one to always pass changes the hashes the plugin took before."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "q1.py").write_text("def test_q1_values(x):\n    assert False\n")
    monkeypatch.chdir(tmp_path)
    guard = plugin.GradingGuard.__new__(plugin.GradingGuard)
    guard.before_grading(None)
    (tmp_path / "tests" / "q1.py").write_text("def test_q1_values(x):\n    pass\n")  # the submission
    res = _Results(q1=_File("✅ Test case passed"), q2=_File("✅ Test case passed"))
    guard.after_grading(res)
    reasons = res.data[plugin.PLUGIN_NAME]["hostile"]
    assert reasons and "tests/q1.py" in reasons[0], reasons
    assert res.results["q1"].score == 0 and res.results["q2"].score == 0


def test_the_plugin_leaves_an_honest_submission_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    guard = plugin.GradingGuard.__new__(plugin.GradingGuard)
    guard.before_grading(None)
    res = _Results(
        q1=_File("✅ Test case passed"), q2=_File("❌ Test case failed\nAssertionError: wrong sums")
    )
    guard.after_grading(res)
    assert res.data[plugin.PLUGIN_NAME] == {"hostile": []}
    assert res.results["q1"].score == 1.0


def test_a_test_that_found_tampering_makes_the_whole_submission_hostile():
    msg = (
        f"❌ Test case failed\nAssertionError: {tamper.TAMPER_MESSAGE}, so this test refuses: x was replaced"
    )
    reasons = plugin.hostile_reasons(_Results(q1=_File("✅ Test case passed"), q5=_File(msg)))
    assert reasons == [f"q5: {tamper.TAMPER_MESSAGE}: x was replaced"]


ISSUE_ATTACK = """
import pathlib, sys
import gpulab.grading.tamper as _t
_src = pathlib.Path(_t.__file__)
_src.write_text(_src.read_text() + "\\ndef tamper_findings(*a, **k):\\n    return []\\n"
                "\\ndef assert_untampered(*a, **k):\\n    return None\\n")
class _Pass:
    message = ""
    def __bool__(self):
        return True
vars(sys.modules["gpulab.checks.tree_reduction"])["check_tree_reduce"] = lambda *a, **k: _Pass()
"""

HIDDEN_TEST = """
import gpulab.grading as g
try:
    g.assert_untampered()
    from gpulab.checks import tree_reduction
    res = tree_reduction.check_tree_reduce(None, block=256)
    g.assert_untampered()
    print("GRADED", bool(res))
except AssertionError as e:
    print("REFUSED", e)
"""


def test_the_issues_attack_is_refused_in_memory_and_seen_on_disk(tmp_path):
    """The issue's submission, in a fresh interpreter over a copy of gpulab: after the guard's
    sealed snapshot it appends a no-op assert_untampered to tamper.py on disk and replaces
    check_tree_reduce in the module's dict. The hidden test's code (which no longer reloads)
    refuses to grade, and the file hashes the plugin took before differ."""
    env = dict(_round3().private_package(str(tmp_path)), GPULAB_QUIET="1")  # never this checkout's files
    before = tamper.package_hashes([str(tmp_path / "gpulab" / "grading")])
    mine = tamper.package_hashes([os.path.join(ROOT, "gpulab", "grading")])
    script = (
        "import os, sys, gpulab.grading as _g\n"
        f"assert os.path.realpath(_g.__file__).startswith({str(os.path.realpath(tmp_path))!r}), _g.__file__\n"
        "_g.install_test_time_limit()\n_g.snapshot(seal=True)\n" + ISSUE_ATTACK + HIDDEN_TEST
    )
    p = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert tamper.package_hashes([os.path.join(ROOT, "gpulab", "grading")]) == mine
    out = p.stdout + p.stderr
    assert "REFUSED" in out and "check_tree_reduce was replaced" in out, out[-2000:]
    changed = tamper.changed_files(before, tamper.package_hashes([str(tmp_path / "gpulab" / "grading")]))
    assert changed == [str(tmp_path / "gpulab" / "grading" / "tamper.py")]


# ---- point 5: public tests normalise as the hidden checks do ------------------------------------


def _public_test(hw, name):
    nb = nbformat.read(os.path.join(ROOT, "exercises", hw, f"{hw}.ipynb"), as_version=4)
    src = next(c.source for c in nb.cells if c.cell_type == "code" and f"def {name}(" in c.source)
    assert not src.startswith("# HIDDEN")
    ns = {}
    exec(compile(src, f"<{hw} {name}>", "exec"), ns)
    return ns[name]


class _EqualsAnything(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


@pytest.mark.parametrize(
    "hw,test,answer",
    [
        ("hw03_04_divergence_occupancy", "test_q2_form", lambda threads, registers: _EqualsAnything(1)),
        ("hw02_simt", "test_q1_form", lambda n, block: _EqualsAnything(7)),
    ],
)
def test_a_public_test_is_not_fooled_by_an_int_equal_to_anything(hw, test, answer):
    """hw03 q2's public test did ``r == 8``: an int subclass whose ``__eq__`` returns True passed it
    (the hidden check was not fooled). Public tests now compare what the number really holds."""
    with pytest.raises(AssertionError, match="should be"):
        _public_test(hw, test)(answer)


class _TextEqualToAnything(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def _hw11_ladder(alone, fixed):
    steps = ("prefetch", "unroll", "unroll_u32")
    return {
        "ffma_share": dict.fromkeys(steps, 0.5),
        "blocks_per_sm": dict.fromkeys(steps, 1),
        "unroll_alone": alone,
        "uint32_fixed": fixed,
    }


def test_hw11_q2_public_test_is_not_fooled_by_text_equal_to_anything():
    """A ``str`` subclass whose ``__eq__`` returns True passed hw11 q2's ``in factors`` (one public
    point); the public test and the check now compare the plain text it holds."""
    from gpulab.checks import sgemm_ladder

    public = _public_test("hw11_sgemm", "test_q2_form")
    public(_hw11_ladder("occupancy", ["occupancy"]))  # the form of a real answer passes
    for ladder in (
        _hw11_ladder(_TextEqualToAnything("x"), ["occupancy"]),
        _hw11_ladder("occupancy", [_TextEqualToAnything("x")]),
    ):
        with pytest.raises(AssertionError, match="unroll_alone|uint32_fixed"):
            public(ladder)
        assert not sgemm_ladder.check_ladder_reading(ladder)


def test_public_tests_still_take_the_right_answers_in_other_types():
    _public_test("hw03_04_divergence_occupancy", "test_q2_form")(lambda t, r: 8.0)  # 8.0: a count
    _public_test("hw02_simt", "test_q1_form")(lambda n, b: __import__("numpy").int64(2))
    _public_test("hw03_04_divergence_occupancy", "test_q4_form")(2.0, 0.5)
    with pytest.raises(AssertionError, match="fraction"):
        _public_test("hw03_04_divergence_occupancy", "test_q4_form")(2.0, 50)


def test_every_public_test_of_a_number_goes_through_the_normaliser():
    """No public test compares a student's number with ``==`` or ``float(...)`` directly."""
    for hw in sorted(os.listdir(os.path.join(ROOT, "exercises"))):
        path = os.path.join(ROOT, "exercises", hw, f"{hw}.ipynb")
        if not os.path.exists(path):
            continue
        for c in nbformat.read(path, as_version=4).cells:
            src = c.source
            if c.cell_type != "code" or not src.startswith("def test_") or "gpulab.launch" in src:
                continue
            assert "gpulab.checks.answers import" in src, (hw, src[:60])
            assert not re.search(r"(?<![\w.])float\([rs]\)|\br == \d", src), (hw, src[:60])


# ---- point 6: answers produced by gpulab itself ------------------------------------------------


def test_a_function_answer_that_calls_the_models_is_not_own_work():
    from gpulab.models import amdahl as A

    speedup = oracles.audited(A.speedup)  # speedup = gpulab.models.amdahl.speedup
    assert amdahl.check_speedup(speedup)  # right values...
    found = oracles.library_calls(speedup)
    assert "it called gpulab.models.amdahl.speedup" in found, found
    with pytest.raises(AssertionError, match=oracles.ORACLE_MESSAGE):
        oracles.assert_own_work(speedup)

    def estimate(p1, t1, p2, t2):  # a function of one's own that asks the model inside
        fit = A.fit_times([p1, p2], [t1, t2])
        return fit.parallel_s / (fit.serial_s + fit.parallel_s)

    wrapped = oracles.audited(estimate)
    assert amdahl.check_estimate_f(wrapped)
    assert any("fit_times" in f for f in oracles.library_calls(wrapped))


def test_own_work_passes():
    def speedup(f, p):
        return 1.0 / ((1.0 - f) + f / p)

    wrapped = oracles.audited(speedup)
    assert amdahl.check_speedup(wrapped)
    oracles.assert_own_work(wrapped)


def test_the_books_own_kernel_is_not_own_work():
    from gpulab.kernels.memory import copy

    assert oracles.library_calls(copy) == ["it is gpulab's own gpulab.kernels.memory.copy"]


def test_an_answer_searched_with_the_grader_check_loses_its_question(monkeypatch):
    """hw09 q3: p_answer = next(p for p in powers of two if check_worth_buying(p))."""
    monkeypatch.setattr(result, "_OUTSIDE", [])
    p_answer = next(p for p in (2**k for k in range(12)) if amdahl.check_worth_buying(p))
    assert p_answer == 16
    with pytest.raises(AssertionError, match="check_worth_buying"):
        oracles.assert_own_work(checks=[amdahl.check_worth_buying])
    oracles.assert_own_work(checks=[amdahl.check_speedup])  # another question's check: not this one


def test_checks_run_by_the_tests_themselves_are_not_the_submissions(monkeypatch):
    monkeypatch.setattr(result, "_OUTSIDE", [])
    monkeypatch.setitem(result._STATE, "in_test", 1)  # as limits' patched Otter test runner sets it
    assert amdahl.check_worth_buying(16)
    monkeypatch.setitem(result._STATE, "in_test", 0)
    oracles.assert_own_work(checks=[amdahl.check_worth_buying])


def test_otter_test_cases_run_with_in_test_set():
    """limits.install_test_time_limit's runner marks the test cases (so the hidden checks'
    results are not counted as the submission's)."""
    pytest.importorskip("otter")
    from otter.test_files import exception_test as et

    seen = []
    original = et.ExceptionTestFile.run
    try:
        grading.install_test_time_limit(5)
        tc = types.SimpleNamespace(
            name="t",
            body=types.SimpleNamespace(call_func=lambda env: seen.append(result._STATE["in_test"])),
        )
        tf = et.ExceptionTestFile.__new__(et.ExceptionTestFile)
        tf.test_cases = [tc]
        et.ExceptionTestFile.run(tf, {})
    finally:
        et.ExceptionTestFile.run = original
    assert seen == [1] and result._STATE["in_test"] == 0


def _round3():
    """exercises/round3.py as a module."""
    sys.path.insert(0, os.path.join(ROOT, "exercises"))
    try:
        import round3
    finally:
        sys.path.pop(0)
    return round3


def test_round3_submissions_are_many_and_of_every_kind():
    """The round's submissions (exercises/*/submissions_round3.py): at least 30 hostile or wrong,
    across all six homeworks, each naming the questions it targets."""
    round3 = _round3()
    entries = {(hw, name): e for hw in round3.HWS for name, e in round3.load_round3(hw).items()}
    assert len(round3.HWS) == 6
    assert sum(e["kind"] in ("hostile", "wrong") for e in entries.values()) >= 30
    for (hw, name), e in entries.items():
        assert e["kind"] in ("correct", "wrong", "hostile") and e["questions"], (hw, name)
        textwrap.dedent(e["what"])
