"""gpulab.grading on its own, without otter run (fast): tampering in place is seen, suspicious
code is flagged for the instructor, a hanging test costs only its own test, and any saved
kernel name grades with the grading environment's Python (issue 14, items 2, 11, 12, 13)."""

from __future__ import annotations

import time

import nbformat
import pytest

from gpulab import grading

otter = pytest.importorskip("otter", reason="otter-grader is not installed")


@pytest.fixture
def fresh_snapshot(monkeypatch):
    for name, value in (("_SNAPSHOT", None), ("_SEALED", False), ("_SNAPSHOT_ID", 0), ("_SNAPSHOT_SIZE", 0)):
        monkeypatch.setattr(grading.tamper, name, value)  # restored after the test
    grading.snapshot()
    assert grading.tamper_findings() == []
    yield monkeypatch
    monkeypatch.undo()


# ---- item 11: changes in place ---------------------------------------------------------------


def lenient(kernel, block=128, seed=None, sizes=None, backend="sim"):
    return True


def _changes():
    from gpulab import metrics
    import sys

    from gpulab.checks import amdahl, divergence, result, vector, warp
    from gpulab.sim import eager, typecheck

    launch_mod = sys.modules["gpulab.launch"]  # gpulab.launch is the function

    return [
        ("gpulab.checks.warp.SHARED_LD", lambda m: m.setattr(warp, "SHARED_LD", "nothing")),
        (
            "gpulab.checks.warp.check_warp_reduce",
            lambda m: m.setattr(warp.check_warp_reduce, "__defaults__", ("sim", 3)),
        ),
        (
            "gpulab.checks.divergence.check_warp_uniform",
            lambda m: m.setattr(divergence.check_warp_uniform, "__defaults__", (0.0, 128, 99.0, None)),
        ),
        (
            "gpulab.checks.vector.check_saxpy",
            lambda m: m.setattr(vector.check_saxpy, "__code__", lenient.__code__),
        ),
        (
            "gpulab.checks.amdahl.check_speedup",
            lambda m: m.setattr(amdahl.check_speedup, "__kwdefaults__", {"x": 1}),
        ),
        (
            "gpulab.metrics.SHARED_BANK_CONFLICTS",
            lambda m: m.setitem(metrics.SHARED_BANK_CONFLICTS, "ld", "nothing"),
        ),
        ("gpulab.checks.amdahl.F32_EPS", lambda m: m.setattr(amdahl, "F32_EPS", 1.0)),
        ("gpulab.checks.divergence.MAX_WORK_RATIO", lambda m: m.setattr(divergence, "MAX_WORK_RATIO", 10.0)),
        (
            "gpulab.checks.result.CheckResult.__bool__",
            lambda m: m.setattr(result.CheckResult.__bool__, "__code__", (lambda self: True).__code__),
        ),
        ("numpy.pi", lambda m: m.setattr(__import__("numpy"), "pi", 3.0)),
        # what decides how a kernel is judged, outside gpulab.checks: numba's type check, the
        # simulator's time budget, eager compilation of kernels with a signature
        ("gpulab.sim.typecheck.check", lambda m: m.setattr(typecheck, "check", lambda *a, **k: None)),
        (
            "gpulab.sim.typecheck.enabled",
            lambda m: m.setattr(typecheck.enabled, "__code__", (lambda: False).__code__),
        ),
        ("gpulab.launch.DEFAULT_TIMEOUT_S", lambda m: m.setattr(launch_mod, "DEFAULT_TIMEOUT_S", 1e9)),
        (
            "gpulab.launch.launch",
            lambda m: m.setattr(
                launch_mod.launch, "__kwdefaults__", {**launch_mod.launch.__kwdefaults__, "timeout_s": 1e9}
            ),
        ),
        ("gpulab.sim.eager.jit", lambda m: m.setattr(eager, "jit", lambda *a, **k: None)),
    ]


@pytest.mark.parametrize("key,change", _changes(), ids=[k for k, _ in _changes()])
def test_a_change_in_place_is_found(fresh_snapshot, key, change):
    change(fresh_snapshot)
    found = grading.tamper_findings(limit=0)
    assert any(f.startswith(key + " ") for f in found), found
    with pytest.raises(AssertionError, match="refuses to trust"):
        grading.assert_untampered()


def test_grading_work_itself_changes_nothing(fresh_snapshot):
    """Running checks, kernels and widgets (what a correct notebook does) is not tampering."""
    import numpy as np
    from numba import cuda

    import gpulab
    from gpulab.checks import amdahl, divergence, vector
    from gpulab.widgets import divergence as wd

    @cuda.jit
    def saxpy(out, a, x, y):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = a * x[i] + y[i]

    assert vector.check_saxpy(saxpy)
    assert amdahl.check_speedup(lambda f, p: 1 / ((1 - f) + f / p))
    assert divergence.check_uniform_split({"condition": "warp % 2 == 0", "data": "random"})
    wd.explorer({}, draw=False)
    gpulab.launch(
        saxpy, 1, 32, np.zeros(8, np.float32), np.float32(1), np.ones(8, np.float32), np.ones(8, np.float32)
    )
    assert grading.tamper_findings(limit=0) == []


# ---- item 12: flags for the instructor ------------------------------------------------------


@pytest.mark.parametrize(
    "code,flag",
    [
        (
            "def speedup(f, p):\n    import sys\n    return sys._getframe(1).f_locals['want']",
            "frame inspection",
        ),
        (
            "import inspect\ndef blocks_for(n, b):\n    return inspect.currentframe().f_back.f_locals['want']",
            "frame inspection",
        ),
        ("import inspect\nx = inspect.stack()", "frame inspection"),
        ("import gc\nrefs = gc.get_referrers(1)", "heap inspection"),
        (
            "from gpulab.models import amdahl as A\ndef speedup(f, p):\n    return A.speedup(f, p)",
            "imports the checkers",
        ),
        ("import gpulab.checks.vector as v", "imports the checkers"),
        ("from gpulab import models", "imports the checkers"),
        ("f = getattr(sys, '_get' + 'frame')", "dynamic import/attribute"),
        ("check.__defaults__ = (0,)", "code objects"),
    ],
)
def test_reading_the_grader_is_flagged(tmp_path, code, flag):
    p = tmp_path / "s.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), str(p))
    assert flag in grading.suspicious(str(p))


def test_ordinary_code_is_not_flagged(tmp_path):
    p = tmp_path / "s.ipynb"
    cells = [
        "import numpy as np\nfrom numba import cuda\nimport gpulab\nimport otter\n"
        "from gpulab import homework\ngrader = otter.Notebook(tests_dir=homework.public_tests('x'))",
        "from gpulab.widgets import launch_shape\nlaunch_shape.explorer(globals(), name='explored')",
        "def speedup(f, p):\n    return 1 / ((1 - f) + f / p)",
        "rep = gpulab.launch(k, 1, 32, out)\nprint(rep.warp_efficiency)",
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), str(p))
    assert grading.suspicious(str(p)) == []


# ---- item 2: any saved kernel name ------------------------------------------------------------


def test_the_guard_grades_with_the_python3_kernel():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nb.metadata["kernelspec"] = {"name": "gpulab", "display_name": "gpulab (venv)", "language": "python"}
    out = grading.GradingGuard("s.ipynb", {}, {}).before_execution(nb)
    assert out.metadata["kernelspec"]["name"] == "python3"
    assert grading.GUARD_CELL in out.cells[0].source


# ---- item 13: a hanging test costs only itself ----------------------------------------------

HANGING_TESTS = """
from otter.test_files import test_case

OK_FORMAT = False

name = "q9"
points = [1, 1]

@test_case(points=None, hidden=False)
def test_hangs(p_answer):
    float(p_answer)

@test_case(points=None, hidden=False)
def test_fine(other):
    assert other == 1
"""


class Hang:
    def __float__(self):
        while True:
            pass


def test_a_hanging_test_case_fails_alone(monkeypatch):
    from otter.test_files import exception_test as et

    monkeypatch.setattr(et.ExceptionTestFile, "run", et.ExceptionTestFile.run)
    assert grading.install_test_time_limit(0.5) == 0.5
    tf = et.ExceptionTestFile.from_string(HANGING_TESTS, path="q9.py")
    t0 = time.monotonic()
    tf.run({"p_answer": Hang(), "other": 1})
    assert time.monotonic() - t0 < 5
    res = tf.test_case_results
    assert [r.passed for r in res] == [False, True]
    assert "ran longer than 0.5 s" in res[0].message and "float(p_answer)" in res[0].message


def test_time_limits_nest():
    def spin():
        while True:
            pass

    t0 = time.monotonic()
    with pytest.raises(grading.TimeLimit, match="inner"):
        with grading.time_limit(5, "outer"):
            with grading.time_limit(0.3, "inner"):
                spin()
    assert time.monotonic() - t0 < 3
    t0 = time.monotonic()
    with pytest.raises(grading.TimeLimit):  # the shorter, enclosing limit wins
        with grading.time_limit(0.3, "outer"):
            grading.timed(spin, 10)()
    assert time.monotonic() - t0 < 3


def test_nested_limits_leave_nothing_behind():
    """Two limits nested, then unrelated work after both exit must not meet them. The trace function
    that keeps a limit raising used to raise at the first instruction of the ``with``'s exception
    handler: the inner limit's exit was skipped and its TimeLimit stayed in ``sys.exc_info()`` for
    the rest of the process (a later in-process load of benchmarks/blind_r4/run.py met it)."""
    import gc
    import signal
    import sys
    import types

    from gpulab.grading import limits

    def spin():
        while True:
            pass

    handler, trace = signal.getsignal(signal.SIGALRM), sys.gettrace()
    with pytest.raises(grading.TimeLimit, match="inner"):
        with grading.time_limit(1, "outer"):
            with grading.time_limit(0.2, "inner"):
                spin()
    with pytest.raises(grading.TimeLimit, match="spin"):
        with grading.time_limit(0.2, "outer"):
            grading.timed(spin, 10)()
    assert sys.exc_info() == (None, None, None)
    assert signal.getsignal(signal.SIGALRM) == handler and sys.gettrace() is trace
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    gc.collect()
    code = limits.time_limit.__wrapped__.__code__
    assert not [g for g in gc.get_objects() if isinstance(g, types.GeneratorType) and g.gi_code is code]
    assert not [
        f
        for f in gc.get_objects()
        if isinstance(f, types.FrameType) and "_keep_raising" in getattr(f.f_trace, "__qualname__", "")
    ]
    t_end = time.monotonic() + 1.2  # past the outer limit: nothing re-armed goes off
    while time.monotonic() < t_end:
        try:
            raise ValueError("unrelated")
        except ValueError as e:
            assert e.__context__ is None, repr(e.__context__)


EXITING_TESTS = HANGING_TESTS.replace("float(p_answer)", "raise SystemExit(0)")


def test_sys_exit_in_a_test_fails_that_test_alone(monkeypatch):
    from otter.test_files import exception_test as et

    monkeypatch.setattr(et.ExceptionTestFile, "run", et.ExceptionTestFile.run)
    grading.install_test_time_limit(5)
    tf = et.ExceptionTestFile.from_string(EXITING_TESTS, path="q9.py")
    tf.run({"p_answer": 1, "other": 1})
    assert [r.passed for r in tf.test_case_results] == [False, True]


def test_a_blocked_alarm_signal_does_not_silence_the_limit():
    import signal

    def spin():
        while True:
            pass

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        t0 = time.monotonic()
        with pytest.raises(grading.TimeLimit):
            grading.timed(spin, 0.3)()
        assert time.monotonic() - t0 < 3
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


def test_replacing_random_is_found(fresh_snapshot):
    import random

    fresh_snapshot.setattr(random, "Random", lambda seed=None: random.Random(0))
    assert "random.Random was replaced" in grading.tamper_findings(limit=0)


# ---- the package's own parts (issue 18 item 4) -----------------------------------------------


def test_a_patched_grading_part_is_found_without_any_reload(fresh_snapshot):
    """Issue 26: the hidden tests no longer reload gpulab.grading from disk (a submission had
    rewritten tamper.py there, and the reload loaded its neutered copy); the grading package's
    own parts are in the snapshot instead, so patching one of them is a finding."""
    fresh_snapshot.setattr(grading.limits, "DEFAULT_TEST_TIMEOUT", 10**6)
    fresh_snapshot.setattr(grading.limits, "timed", lambda fn, seconds=None: fn)
    found = grading.tamper_findings(limit=0)
    assert "gpulab.grading.limits.DEFAULT_TEST_TIMEOUT was replaced" in found, found
    assert "gpulab.grading.limits.timed was replaced" in found, found


def test_a_check_replaced_through_the_module_dict_is_found(fresh_snapshot):
    """The issue's second step: ``vars(sys.modules[...])["check_tree_reduce"] = ...``."""
    import sys

    from gpulab.checks import tree_reduction

    fresh_snapshot.setitem(
        vars(sys.modules["gpulab.checks.tree_reduction"]), "check_tree_reduce", lambda *a: 1
    )
    assert tree_reduction.check_tree_reduce(None) == 1
    assert "gpulab.checks.tree_reduction.check_tree_reduce was replaced" in grading.tamper_findings(limit=0)


def test_an_import_hook_is_found(fresh_snapshot):
    """Round 3: ``builtins.__import__`` replaced so that the hidden test's ``from gpulab.checks
    import formats`` gets a stand-in went unseen (dunder names were not watched)."""
    import builtins

    original = builtins.__import__
    fresh_snapshot.setattr(builtins, "__import__", lambda *a, **k: original(*a, **k))
    assert "builtins.__import__ was replaced" in grading.tamper_findings(limit=0)


def test_the_sealed_snapshot_cannot_be_retaken_or_emptied(fresh_snapshot):
    """A submission re-recording the state it patched (calling snapshot() again), emptying the
    recorded dict or unsealing it is itself a finding."""
    fresh_snapshot.setattr(grading.tamper, "_SEALED", True)
    fresh_snapshot.setattr(grading.tamper, "_RETAKEN", [])
    with pytest.raises(RuntimeError, match="sealed"):
        grading.snapshot()
    assert any("snapshot() was called again" in f for f in grading.tamper_findings(limit=0))
    fresh_snapshot.setattr(grading.tamper, "_RETAKEN", [])
    fresh_snapshot.setattr(grading.tamper, "_SNAPSHOT", {})
    assert any("snapshot itself was replaced" in f for f in grading.tamper_findings(limit=0))


def test_the_hidden_tests_never_reload_the_grader_and_check_again_after():
    """Every hidden test uses gpulab.grading as the guard cell imported it, re-checks the
    environment after its check returned (an answer's ``__getitem__`` patching numpy while the
    check read it), and asks whose work the answer is (issue 26, points 1 and 6)."""
    import glob
    import json
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    hidden = 0
    for path in glob.glob(os.path.join(root, "exercises", "hw*", "hw*.ipynb")):
        for c in json.load(open(path))["cells"]:
            src = "".join(c["source"])
            if c["cell_type"] != "code" or not src.startswith("# HIDDEN"):
                continue
            hidden += 1
            assert "importlib.reload" not in src, (path, src[:80])
            last_check = max(i for i, ln in enumerate(src.splitlines()) if "g.timed(" in ln)
            after = src.splitlines()[last_check + 1 :]
            assert any("g.assert_untampered()" in ln for ln in after), (path, src[:80])
            assert any("g.assert_own_work(" in ln for ln in after), (path, src[:80])
    assert hidden >= 27


def test_run_one_is_a_module_with_a_usage_line():
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, "-m", "gpulab.grading.run_one"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "GPULAB_QUIET": "1"},
    )
    assert p.returncode != 0 and "usage: python -m gpulab.grading.run_one" in p.stderr


def _swallowing_loop():
    def compute():
        s = 0
        for k in range(1000):
            s += k
        return s / 0

    while True:
        try:
            return compute()
        except:  # noqa: E722 - the submission's bare except swallows the time limit too
            continue


def test_a_bare_except_loop_cannot_swallow_the_time_limit():
    """A retry loop whose bare except catches the limit's exception used to run until the whole
    submission was killed; the limit now raises again at its next line, outside the try."""
    import sys
    import time

    from gpulab.grading import TimeLimit, timed

    before = sys.gettrace()
    t0 = time.monotonic()
    with pytest.raises(TimeLimit):
        timed(_swallowing_loop, 0.5)()
    assert time.monotonic() - t0 < 5
    assert sys.gettrace() is before
    assert timed(lambda: 6 * 7, 1)() == 42


CELL_LIMIT_SCRIPT = """
import sys, time
from IPython.core.interactiveshell import InteractiveShell
from gpulab.grading import limits
ip = InteractiveShell.instance()
limits.install_cell_time_limit(0.5)
t0 = time.monotonic()
res = ip.run_cell("def f():\\n    return 1 / 0\\nwhile True:\\n    try:\\n        f()\\n    except:\\n        continue\\n")
assert isinstance(res.error_in_exec, limits.CellTimeLimit), res.error_in_exec
assert time.monotonic() - t0 < 5
assert ip.run_cell("6 * 7").result == 42
assert sys.gettrace() is None
print("ok")
"""


def test_a_bare_except_loop_in_a_cell_is_stopped_by_the_cell_limit(tmp_path):
    """The same loop at the top of a notebook cell: the cell limit stops it and the next cell
    runs (in a fresh interpreter: an IPython shell would stay the process's get_ipython())."""
    import subprocess
    import sys

    script = tmp_path / "cell_limit.py"
    script.write_text(CELL_LIMIT_SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr
