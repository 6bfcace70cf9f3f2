"""Grading support for the homework in ``exercises/`` (Otter-Grader 7).

Otter runs a submission top to bottom in one Jupyter kernel and then runs the tests *in that
same kernel*, so a submission can hang the grader or change the functions the tests call. This
module holds what the homework's tests and the instructor's grading loop use against that:

- :func:`timed`: call a student's function with a time limit (raises :class:`TimeLimit`, an
  ordinary exception, so Otter records a failed test instead of losing the whole run);
- :class:`GradingGuard`: an Otter plugin (named in each master's config) that puts a first cell
  in front of the submission: a per-cell time limit, a per-test time limit
  (:func:`install_test_time_limit`) and a snapshot of the grading code; it also grades with the
  ``python3`` kernel whatever kernel the notebook was saved with;
- :func:`tamper_findings` / :func:`assert_untampered`: what the submission replaced or changed in
  place in numpy, gpulab, Otter or builtins since that snapshot (or defined in a notebook cell);
- :func:`suspicious`: patterns for the instructor to read (patching, frame inspection, imports of
  the checkers), listed in the grading CSV;
- ``python -m gpulab.grading grade ...``: grade a folder of submissions with ``otter run``, one
  subprocess each with a whole-submission time limit, into a CSV.

Limits (in-process grading cannot be made tamper-proof): see ``exercises/README.md``.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import glob
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import types

__all__ = ["TimeLimit", "CellTimeLimit", "timed", "install_cell_time_limit", "snapshot",
           "tamper_findings", "assert_untampered", "GradingGuard", "grade_folder", "main"]

#: seconds a notebook cell may run during grading (override: GPULAB_CELL_TIMEOUT)
DEFAULT_CELL_TIMEOUT = 120
#: seconds one Otter test case may run (override: GPULAB_TEST_TIMEOUT)
DEFAULT_TEST_TIMEOUT = 60
#: Otter's final cell runs every test: it may run this many times the cell limit
EXPORT_CELL_FACTOR = 10
#: seconds a whole submission may take in ``grade_folder`` (override: --timeout)
DEFAULT_SUBMISSION_TIMEOUT = 900
#: modules whose callables the tests rely on; replacing one of them is tampering
SENSITIVE = ("numpy", "gpulab", "otter", "importlib", "builtins", "math", "signal", "inspect",
             "random")
#: changed by the notebook machinery itself, not by a submission
_LEGIT_CHANGES = ("builtins.input", "builtins.raw_input", "builtins.get_ipython")
#: Otter's last cell (runs every test); the cell time limit leaves it alone
_EXPORT_MARK = "Checker.check_if_not_already_checked"

# survives importlib.reload(gpulab.grading): the hidden tests reload this module from disk
_SNAPSHOT = globals().get("_SNAPSHOT")


class TimeLimit(TimeoutError):
    """A student's function ran past its time limit inside a test (an ordinary exception)."""


class CellTimeLimit(BaseException):
    """A notebook cell ran past the grading time limit. BaseException, so that a student's
    ``except Exception`` in a loop does not swallow it."""


# ---- time limits ----------------------------------------------------------------------------

def _unblock_alarm():
    """Undo a submission's ``signal.pthread_sigmask(SIG_BLOCK, {SIGALRM})``, which would
    silence every time limit from then on."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


@contextlib.contextmanager
def time_limit(seconds: float, what: str = "the function"):
    """Raise :class:`TimeLimit` in the block after ``seconds`` (SIGALRM; only in the main
    thread, elsewhere the block is unlimited). An enclosing limit is kept: the shorter wins, and
    the outer one is re-armed with what is left of it on the way out."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    _unblock_alarm()
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    start = time.monotonic()

    def on_alarm(signum, frame):
        raise TimeLimit(f"{what} ran longer than {seconds:g} s (an endless loop?)")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_left) if outer_left else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(1e-3, outer_left - (time.monotonic() - start)))


def timed(fn, seconds: float = 30.0):
    """Wrap ``fn`` so that one call raises :class:`TimeLimit` after ``seconds`` (see
    :func:`time_limit`)."""
    if not callable(fn):
        return fn

    def call(*args, **kwargs):
        with time_limit(seconds, getattr(fn, "__name__", "the function")):
            return fn(*args, **kwargs)

    call.__name__ = getattr(fn, "__name__", "call")
    call.__wrapped__ = fn
    return call


def per_test_seconds() -> float:
    """Seconds one Otter test case may run: GPULAB_TEST_TIMEOUT, else the smaller of
    :data:`DEFAULT_TEST_TIMEOUT` and the cell limit (a test run by a ``grader.check`` cell must
    fit in that cell anyway)."""
    if os.environ.get("GPULAB_TEST_TIMEOUT"):
        return float(os.environ["GPULAB_TEST_TIMEOUT"])
    cell = float(os.environ.get("GPULAB_CELL_TIMEOUT", DEFAULT_CELL_TIMEOUT))
    return min(float(DEFAULT_TEST_TIMEOUT), cell)


def install_test_time_limit(seconds: float | None = None):
    """Run every Otter test case under :func:`time_limit` (``seconds``, default
    :func:`per_test_seconds`), so a test that hangs (in a student's function, in a literal answer
    whose ``__float__`` never returns, anywhere) fails alone and the next test still runs.

    Replaces ``ExceptionTestFile.run`` with the same loop plus the limit; the limit is a ``with``
    block in that loop, so the traceback Otter reads its error line from keeps its shape."""
    try:
        from otter.test_files import exception_test as et
    except Exception:       # Otter not installed: nothing to limit
        return None
    seconds = per_test_seconds() if seconds is None else float(seconds)
    original = getattr(et.ExceptionTestFile.run, "_gpulab_original", et.ExceptionTestFile.run)

    def run(self, global_environment):
        self.test_case_results = []
        for tc in self.test_cases:
            test_case = tc.body
            passed, message = True, "✅ Test case passed"
            try:
                with time_limit(seconds, f"test {tc.name}"):
                    test_case.call_func(global_environment)
            except (Exception, SystemExit) as e:     # sys.exit() in a student's function too
                try:
                    detail = self._generate_error_message(e)
                except Exception:       # a traceback of another shape (the limit hit outside)
                    detail = f"{type(e).__name__}: {e}"
                passed, message = False, "❌ Test case failed\n" + detail
            self.test_case_results.append(et.TestCaseResult(test_case=tc, message=message,
                                                            passed=passed))

    run._gpulab_original = original
    run.__doc__ = original.__doc__
    et.ExceptionTestFile.run = run
    return seconds


def install_cell_time_limit(seconds: float | None = None):
    """Limit every following IPython cell to ``seconds`` (default GPULAB_CELL_TIMEOUT or 120) by
    raising :class:`CellTimeLimit` in it; Otter's final cell, which runs every test (each under
    :func:`install_test_time_limit`'s own limit), gets :data:`EXPORT_CELL_FACTOR` times that as a
    backstop. Returns seconds."""
    from IPython import get_ipython

    ip = get_ipython()
    if seconds is None:
        seconds = float(os.environ.get("GPULAB_CELL_TIMEOUT", DEFAULT_CELL_TIMEOUT))
    if ip is None or not hasattr(signal, "setitimer"):
        return None

    def on_alarm(signum, frame):
        raise CellTimeLimit(f"this cell ran longer than {seconds:g} s during grading and was "
                            f"stopped (an endless loop?); grading goes on with the next cell")

    def pre(info=None):
        src = getattr(info, "raw_cell", "") or ""
        _unblock_alarm()
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL,
                         seconds * EXPORT_CELL_FACTOR if _EXPORT_MARK in src else seconds)

    def post(result=None):
        signal.setitimer(signal.ITIMER_REAL, 0)

    ip.events.register("pre_run_cell", pre)
    ip.events.register("post_run_cell", post)
    return seconds


# ---- tampering --------------------------------------------------------------------------------

def _sensitive(name: str) -> bool:
    return name.split(".")[0] in SENSITIVE


def _trusted_dirs():
    here = os.path.dirname(os.path.abspath(__file__))
    paths = sysconfig.get_paths()
    dirs = {here}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            dirs.add(os.path.realpath(paths[key]))
    for p in sys.path:                     # site-packages of the interpreter actually running
        if p.endswith("site-packages"):
            dirs.add(os.path.realpath(p))
    return tuple(d.rstrip(os.sep) + os.sep for d in dirs)


def _code_file(obj):
    fn = getattr(obj, "__func__", obj)
    fn = getattr(fn, "fget", fn)
    code = getattr(fn, "__code__", None)
    return code.co_filename if isinstance(code, types.CodeType) else None


_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), range)
#: modules whose plain values (constants, and public dicts/lists/arrays) are watched too; in
#: numpy and math only constants (numpy keeps private caches that change legitimately)
_VALUE_MODULES = ("gpulab",)
_CONSTANT_MODULES = ("gpulab", "numpy", "math")


def _frozen(obj, depth: int = 0):
    """A comparable picture of a value: immutables as they are, containers and arrays by content,
    instances of gpulab classes by their fields; anything else by identity."""
    if isinstance(obj, _IMMUTABLE):
        return (type(obj).__name__, obj)
    if depth > 4:
        return ("id", id(obj))
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, tuple(_frozen(v, depth + 1) for v in obj[:2000]), len(obj))
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, frozenset(_frozen(v, depth + 1) for v in list(obj)[:2000]))
    if isinstance(obj, dict):
        return ("dict", tuple((_frozen(k, depth + 1), _frozen(v, depth + 1))
                              for k, v in list(obj.items())[:2000]), len(obj))
    try:
        import numpy as np
        if isinstance(obj, np.ndarray):
            return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes()[:65536])
        if isinstance(obj, np.generic):
            return ("npscalar", obj.dtype.str, obj.tobytes())
    except Exception:
        pass
    cls_mod = getattr(type(obj), "__module__", "") or ""
    if cls_mod.split(".")[0] == "gpulab" and hasattr(obj, "__dict__") and not isinstance(obj, type):
        return (type(obj).__name__, id(obj), _frozen(dict(vars(obj)), depth + 1))
    return ("id", id(obj))


def _fingerprint(obj, values: bool):
    """What about ``obj`` changes its behaviour, beyond its identity: a function's code,
    defaults, keyword defaults and closure; a classmethod/staticmethod/property's functions;
    with ``values``, a plain value's content. None when only identity can be compared."""
    fn = obj
    if isinstance(obj, (staticmethod, classmethod)):
        fn = obj.__func__
    if isinstance(obj, property):
        return tuple(_fingerprint(f, values) if f is not None else None
                     for f in (obj.fget, obj.fset, obj.fdel))
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if isinstance(fn, types.FunctionType):
        cells = tuple(("id", id(c.cell_contents)) if _cell_ok(c) else None
                      for c in (fn.__closure__ or ()))
        return ("function", fn.__code__, _frozen(fn.__defaults__), _frozen(fn.__kwdefaults__),
                cells, id(fn.__globals__))
    if values and not callable(obj) and not isinstance(obj, types.ModuleType):
        return _frozen(obj)
    return None


def _cell_ok(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:          # an empty cell
        return False


def _watched(mod):
    """(key, object, fingerprint) for what a module exposes: callables and submodules; in
    gpulab, numpy and math also constants (``warp.SHARED_LD``, ``numpy.pi``), in gpulab also
    public dicts, lists and arrays (metric-name tables); and the functions and class-level
    values of the classes gpulab and Otter define (so ``CheckResult.__bool__ = ...`` or a
    changed class constant shows too)."""
    out = []
    try:
        items = list(vars(mod).items())
    except TypeError:
        return out
    top = mod.__name__.split(".")[0]
    values, constants = top in _VALUE_MODULES, top in _CONSTANT_MODULES
    for name, obj in items:
        if name.startswith("__") and name.endswith("__"):
            continue
        key = f"{mod.__name__}.{name}"
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
                            types.MethodType)) or callable(obj):
            out.append((key, obj, _fingerprint(obj, False)))
        elif constants and isinstance(obj, _IMMUTABLE) and not (top == "numpy" and name.startswith("_")):
            out.append((key, obj, _frozen(obj)))
        elif values and not name.startswith("_"):
            out.append((key, obj, _frozen(obj)))
        if isinstance(obj, type) and getattr(obj, "__module__", None) == mod.__name__ \
                and top in ("gpulab", "otter"):
            for mname, m in list(vars(obj).items()):
                if isinstance(m, (types.FunctionType, staticmethod, classmethod, property)):
                    out.append((f"{key}.{mname}", m, _fingerprint(m, False)))
                elif top == "gpulab" and isinstance(m, _IMMUTABLE) and not mname.startswith("__"):
                    out.append((f"{key}.{mname}", m, _frozen(m)))
    return out


def snapshot():
    """Record what numpy, gpulab, Otter and builtins expose now (before student code runs):
    each object and its fingerprint (:func:`_watched`). Imports every gpulab.checks module
    first so they are covered too."""
    global _SNAPSHOT
    import importlib
    import pkgutil

    import gpulab.checks
    import numpy.testing  # noqa: F401

    for info in pkgutil.iter_modules(gpulab.checks.__path__):
        try:
            importlib.import_module(f"gpulab.checks.{info.name}")
        except Exception:
            pass
    snap = {}
    for name, mod in list(sys.modules.items()):
        if mod is not None and _sensitive(name) and isinstance(mod, types.ModuleType):
            snap[name] = (mod, {k: (o, fp) for k, o, fp in _watched(mod)})
    _SNAPSHOT = snap
    return len(snap)


def _what_changed(before, after) -> str:
    """Name the part of a fingerprint that differs (code, defaults, ...)."""
    if before and after and before[0] == "function" == after[0]:
        for i, part in ((1, "__code__"), (2, "__defaults__"), (3, "__kwdefaults__"),
                        (4, "closure"), (5, "__globals__")):
            if before[i] != after[i]:
                return part
    return "value"


def tamper_findings(limit: int = 10):
    """What the submission changed: modules replaced in ``sys.modules``; objects replaced or
    deleted since :func:`snapshot`; objects changed in place (a function's ``__code__``,
    ``__defaults__``, ``__kwdefaults__`` or closure, a module constant, the content of a public
    gpulab table); and functions of numpy/gpulab/Otter whose code was written outside their
    installed files (a notebook cell). Empty list when nothing was found."""
    trusted = _trusted_dirs()
    found = []

    def untrusted_code(obj):
        f = _code_file(obj)
        if f is None:
            return False
        if f.startswith("<"):             # an old-style IPython cell; not "<string>": dataclasses
            return f.startswith("<ipython-input")  # and namedtuples make their methods that way
        if not os.path.isabs(f):          # Cython modules record relative .pyx paths
            return False
        return not os.path.realpath(f).startswith(trusted)

    snap = _SNAPSHOT or {}
    for name, (mod, objs) in snap.items():
        if name == __name__:               # the tests reload this module from disk on purpose
            continue
        now = sys.modules.get(name)
        if now is not None and now is not mod:
            found.append(f"sys.modules[{name!r}] was replaced")
            continue
        current = {k: (o, fp) for k, o, fp in _watched(mod)}
        for key, (obj, fp) in objs.items():
            if key in _LEGIT_CHANGES:
                continue
            if key in current:
                cobj, cfp = current[key]
                if cobj is not obj and not (fp is not None and not callable(obj) and cfp == fp):
                    found.append(f"{key} was replaced")
                elif cfp != fp:
                    found.append(f"{key} was changed in place ({_what_changed(fp, cfp)})")
            elif not key.rsplit(".", 1)[-1].startswith("_"):
                found.append(f"{key} was deleted")
    for name, mod in list(sys.modules.items()):
        if mod is None or not _sensitive(name):
            continue
        if not isinstance(mod, types.ModuleType):
            found.append(f"sys.modules[{name!r}] is not a module")
            continue
        for key, obj, _ in _watched(mod):
            if untrusted_code(obj):
                found.append(f"{key} was redefined in the submission ({_code_file(obj)})")
    seen, out = set(), []
    for f in found:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out[:limit] if limit else out


def assert_untampered():
    """Fail the calling test when :func:`tamper_findings` finds anything."""
    found = tamper_findings()
    if found:
        raise AssertionError("the grading environment was changed by the submission, so this test "
                             "refuses to trust it: " + "; ".join(found))


# ---- the Otter plugin ---------------------------------------------------------------------

GUARD_CELL = """\
# gpulab grading guard (added by gpulab.grading.GradingGuard; not part of the submission)
import gpulab.grading as _gpulab_grading
_gpulab_grading.install_cell_time_limit()
_gpulab_grading.install_test_time_limit()
_gpulab_grading.snapshot()
del _gpulab_grading
"""

try:
    from otter.plugins import AbstractOtterPlugin as _PluginBase
except Exception:  # Otter not installed: the plugin is only needed while grading
    _PluginBase = object


class GradingGuard(_PluginBase):
    """Otter plugin: before the submission runs, insert :data:`GUARD_CELL` (per-cell time limit,
    snapshot of the grading code), and give Otter's notebook client time limits too
    (:func:`patch_nbclient`). Listed under ``generate: plugins`` in each master's config, so it
    acts in ``otter run``, ``otter assign``'s own test run and on Gradescope alike."""

    def before_grading(self, config):
        patch_nbclient()

    def before_execution(self, submission):
        import nbformat

        if isinstance(submission, str):   # a .py submission: prepend the same lines
            return GUARD_CELL + "\n" + submission
        submission.cells.insert(0, nbformat.v4.new_code_cell(GUARD_CELL))
        use_python3_kernel(submission)
        return submission

    def during_assign(self, assignment):     # nothing to do while assigning
        return None


def use_python3_kernel(nb):
    """Grade with the grading environment's own Python kernel ("python3", which Jupyter starts
    with the running interpreter) whatever kernel the student's notebook was saved with (an
    environment named "gpulab", a Colab kernel): otherwise ``otter run`` stops on NoSuchKernel."""
    spec = nb.setdefault("metadata", {}).get("kernelspec") or {}
    if spec.get("name") != "python3":
        nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}
    return nb


# ---- nbclient time limits --------------------------------------------------------------------

def patch_nbclient(cell_timeout: float | None = None):
    """Make the ExecutePreprocessor Otter creates give up on a cell after ``cell_timeout`` + 30 s
    (Otter's export cell: 10x that), interrupt the kernel and go on with the next cell.

    Backstop for what the in-kernel limit cannot stop: a kernel that never answers (a C call
    that ignores signals, or ipykernel 7's occasional lost reply, ipython/ipykernel#1471).
    Otter imports ExecutePreprocessor when it grades, so patching the module attribute works."""
    import nbconvert.preprocessors as pre

    base = getattr(pre.ExecutePreprocessor, "_gpulab_base", pre.ExecutePreprocessor)
    limit = float(cell_timeout or os.environ.get("GPULAB_CELL_TIMEOUT", DEFAULT_CELL_TIMEOUT)) + 30

    def timeout_func(cell):
        return int(limit * EXPORT_CELL_FACTOR) if _EXPORT_MARK in cell.get("source", "") else int(limit)

    class LimitedExecutePreprocessor(base):
        _gpulab_base = base

        def __init__(self, **kw):
            super().__init__(**kw)
            self.kernel_name = "python3"        # whatever kernel the notebook was saved with
            self.timeout_func = timeout_func
            self.interrupt_on_timeout = True
            self.error_on_timeout = {"ename": "CellTimeout",
                                     "evalue": f"no reply from the kernel within {limit:g} s",
                                     "traceback": []}

    pre.ExecutePreprocessor = LimitedExecutePreprocessor
    return limit


# ---- grading a folder ---------------------------------------------------------------------

_RUN_ONE = r"""
import json, sys, os
os.environ.setdefault("GPULAB_QUIET", "1")
from gpulab.grading import patch_nbclient
patch_nbclient()
from otter.run import main
res = main(sys.argv[1], autograder=sys.argv[2], output_dir=sys.argv[3], no_logo=True)
scores = {name: [float(r.score), float(r.possible)] for name, r in res.results.items()}
cases = {name: [[c.test_case.name, bool(c.passed), c.message[:2000]] for c in r.test_case_results]
         for name, r in res.results.items()}
err = repr(res.catastrophic_error) if res.has_catastrophic_failure() else ""
with open(os.path.join(sys.argv[3], "scores.json"), "w") as f:
    json.dump({"total": float(res.total), "possible": float(res.possible), "scores": scores,
               "cases": cases, "error": err}, f)
"""

SUSPICIOUS = [
    (r"sys\.modules\s*\[[^]]*\]\s*=[^=]|sys\.modules\.(pop|update|setdefault)|del\s+sys\.modules",
     "sys.modules"),
    (r"\bimportlib\b", "importlib"),
    (r"\bsetattr\s*\(", "setattr"),
    (r"\b(np|numpy)\.(testing|allclose|isclose|array_equal)\s*(\.\w+\s*)?=[^=]", "assigns to numpy"),
    (r"\bgpulab\.(checks|grading|launch)\b.*=[^=]", "assigns to gpulab"),
    (r"\botter\b", "otter internals"),
    (r"__code__|__globals__|__builtins__|__defaults__|__kwdefaults__|__closure__", "code objects"),
    (r"\bos\._exit\b|\bsignal\.", "process/signal control"),
    (r"['\"][^'\"]*tests?[/\\]", "test file paths"),
    # reading the grader's expectations instead of computing them
    (r"\b_getframe\b|\bcurrentframe\b|\binspect\.(stack|trace|getouterframes|getinnerframes|"
     r"getframeinfo|getsource)\b|\bf_(back|locals|globals)\b|\btb_frame\b|\bgi_frame\b|"
     r"\bsettrace\b|\bsetprofile\b", "frame inspection"),
    (r"\bgc\.(get_referrers|get_referents|get_objects)\b|\bget_referrers\b|\bget_objects\b",
     "heap inspection"),
    (r"\bgpulab\.(checks|models|grading|homework\.\w+\.tests)\b|"
     r"from\s+gpulab\s+import\s+[^#\n]*\b(checks|models|grading)\b", "imports the checkers"),
    (r"\b__import__\b|\bgetattr\s*\(\s*(sys|inspect|gc|gpulab)\b", "dynamic import/attribute"),
]


def suspicious(nb_path: str):
    """Patterns in a submission's code cells that suggest an attempt on the grader (for review;
    they change no score): patching, frame or heap inspection (``sys._getframe``, ``inspect``,
    ``gc.get_referrers``), importing gpulab's checkers or models (the reference answers). Ignores
    the lines the master itself contains (``grader = ...``)."""
    try:
        with open(nb_path, encoding="utf-8") as f:
            nb = json.load(f)
        cells = ["".join(c.get("source", "")) for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    except Exception as e:
        return [f"unreadable notebook: {type(e).__name__}"]
    flags = []
    for src in cells:
        for line in src.splitlines():
            if "otter.Notebook(" in line or line.strip().startswith("import otter"):
                continue
            for rx, what in SUSPICIOUS:
                if re.search(rx, line) and what not in flags:
                    flags.append(what)
    return flags


def grade_one(submission: str, autograder: str, timeout: float = DEFAULT_SUBMISSION_TIMEOUT,
              cell_timeout: float | None = None, python: str = sys.executable,
              env: dict | None = None) -> dict:
    """Grade one submission with ``otter run`` in a subprocess killed after ``timeout`` seconds.
    Returns {'file', 'status', 'total', 'possible', 'scores', 'seconds', 'error', 'flags'}."""
    out = tempfile.mkdtemp(prefix="gpulab-grade-")
    env = dict(os.environ, **(env or {}), GPULAB_QUIET="1")
    if cell_timeout:
        env["GPULAB_CELL_TIMEOUT"] = str(cell_timeout)
    row = {"file": submission, "status": "ok", "total": 0.0, "possible": None, "scores": {}, "cases": {},
           "seconds": 0.0, "error": "", "flags": suspicious(submission)}
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen([python, "-c", _RUN_ONE, os.path.abspath(submission),
                                 os.path.abspath(autograder), out], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)   # otter run, its kernel and anything they started
            proc.communicate()
            row.update(status="timeout", error=f"grading took longer than {timeout:g} s and was stopped")
            return row
        path = os.path.join(out, "scores.json")
        if proc.returncode != 0 or not os.path.exists(path):
            tail = log.decode("utf-8", "replace")[-2000:]
            row.update(status="error", error=tail.strip().splitlines()[-1] if tail.strip() else
                       f"otter run exited with {proc.returncode}")
            return row
        with open(path) as f:
            res = json.load(f)
        row.update(total=res["total"], possible=res["possible"], scores=res["scores"],
                   cases=res["cases"])
        if res["error"]:
            row.update(status="error", error=f"Otter could not grade the notebook: {res['error']}"[:500])
        return row
    finally:
        row["seconds"] = round(time.monotonic() - t0, 1)
        subprocess.run(["rm", "-rf", out], check=False)


def grade_folder(submissions, autograder, csv_path: str, jobs: int = 1,
                 timeout: float = DEFAULT_SUBMISSION_TIMEOUT, cell_timeout: float | None = None,
                 env: dict | None = None):
    """Grade every submission (paths) and write one CSV row each: file, status, total, possible,
    one column per question, seconds, flags, error. ``autograder`` is one zip for all, or a list
    (one per submission). Returns the rows."""
    from concurrent.futures import ThreadPoolExecutor

    zips = [autograder] * len(submissions) if isinstance(autograder, str) else list(autograder)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(pool.map(lambda sz: grade_one(sz[0], sz[1], timeout, cell_timeout, env=env),
                             zip(submissions, zips)))
    questions = sorted({q for r in rows for q in r["scores"]},
                       key=lambda q: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", q)])
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["file", "status", "total", "possible", *questions, "seconds", "flags", "error"])
        for r in rows:
            w.writerow([os.path.basename(r["file"]), r["status"], r["total"], r["possible"],
                        *[r["scores"].get(q, [0.0])[0] for q in questions], r["seconds"],
                        "; ".join(r["flags"]), r["error"]])
    return rows


def assign_all(exercises: str, out: str, sync_public_tests: bool = False) -> dict:
    """Run ``otter assign`` on every master ``exercises/<hw>/<hw>.ipynb`` into ``out/<hw>``; with
    ``sync_public_tests``, copy each student ``tests/`` folder into gpulab/homework/<hw>/tests
    (what Colab notebooks use). Returns {hw: autograder zip path}."""
    import shutil

    zips = {}
    for master in sorted(glob.glob(os.path.join(exercises, "*", "*.ipynb"))):
        hw = os.path.splitext(os.path.basename(master))[0]
        if os.path.basename(os.path.dirname(master)) != hw:
            continue
        dest = os.path.abspath(os.path.join(out, hw))
        shutil.rmtree(dest, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "gpulab.grading", "otter", "assign", "-v",
                        os.path.abspath(master), dest], check=True,
                       cwd=os.path.dirname(os.path.abspath(master)))
        zips[hw] = sorted(glob.glob(os.path.join(dest, "autograder", "*.zip")))[-1]
        if sync_public_tests:
            target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "homework", hw, "tests")
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(os.path.join(dest, "student", "tests"), target)
        print(f"{hw}: {zips[hw]}")
    return zips


def main(argv=None):
    """``python -m gpulab.grading grade AUTOGRADER.zip SUBMISSION_OR_FOLDER... --csv grades.csv``;
    ``python -m gpulab.grading otter ARGS...``: Otter's own command line with :func:`patch_nbclient`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["otter"]:
        patch_nbclient()
        from otter.cli import cli
        return cli.main(args=argv[1:], prog_name="otter", standalone_mode=True)
    ap = argparse.ArgumentParser(prog="python -m gpulab.grading",
                                 description="Grade Otter submissions locally (no Docker) into a CSV.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("otter", help="run Otter's command line (otter assign/run ...) with cell time limits")
    g = sub.add_parser("grade", help="grade .ipynb submissions with otter run, one subprocess each")
    g.add_argument("autograder", help="the autograder zip otter assign wrote (dist/<hw>/autograder/*.zip)")
    g.add_argument("submissions", nargs="+", help=".ipynb files or folders holding them")
    g.add_argument("--csv", default="grades.csv", help="where to write the CSV (default grades.csv)")
    g.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default 1)")
    g.add_argument("--timeout", type=float, default=DEFAULT_SUBMISSION_TIMEOUT,
                   help=f"seconds per submission before it is stopped (default {DEFAULT_SUBMISSION_TIMEOUT})")
    g.add_argument("--cell-timeout", type=float, default=None,
                   help=f"seconds per notebook cell (default {DEFAULT_CELL_TIMEOUT})")
    s = sub.add_parser("assign", help="otter assign every master in exercises/ (student + autograder)")
    s.add_argument("--exercises", default="exercises", help="folder of masters (default exercises)")
    s.add_argument("--out", default="dist", help="output folder (default dist)")
    s.add_argument("--sync-public-tests", action="store_true",
                   help="also copy the public tests into gpulab/homework (maintainers)")
    a = ap.parse_args(argv)
    if a.cmd == "assign":
        assign_all(a.exercises, a.out, a.sync_public_tests)
        return 0
    files = []
    for s in a.submissions:
        files += sorted(glob.glob(os.path.join(s, "*.ipynb"))) if os.path.isdir(s) else [s]
    if not files:
        ap.error("no .ipynb submissions found")
    rows = grade_folder(files, a.autograder, a.csv, a.jobs, a.timeout, a.cell_timeout)
    for r in rows:
        print(f"{os.path.basename(r['file'])}: {r['status']} {r['total']:g}/{r['possible']} "
              f"({r['seconds']} s){'  flags: ' + ', '.join(r['flags']) if r['flags'] else ''}")
    print(f"wrote {a.csv} ({len(rows)} submissions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
