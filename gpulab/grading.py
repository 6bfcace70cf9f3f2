"""Grading support for the homework in ``exercises/`` (Otter-Grader 7).

Otter runs a submission top to bottom in one Jupyter kernel and then runs the tests *in that
same kernel*, so a submission can hang the grader or change the functions the tests call. This
module holds what the homework's tests and the instructor's grading loop use against that:

- :func:`timed`: call a student's function with a time limit (raises :class:`TimeLimit`, an
  ordinary exception, so Otter records a failed test instead of losing the whole run);
- :class:`GradingGuard`: an Otter plugin (named in each master's config) that puts a first cell
  in front of the submission: a per-cell time limit and a snapshot of the grading code;
- :func:`tamper_findings` / :func:`assert_untampered`: what the submission replaced in numpy,
  gpulab, Otter or builtins since that snapshot (or defined in a notebook cell);
- ``python -m gpulab.grading grade ...``: grade a folder of submissions with ``otter run``, one
  subprocess each with a whole-submission time limit, into a CSV.

Limits (in-process grading cannot be made tamper-proof): see ``exercises/README.md``.
"""
from __future__ import annotations

import argparse
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
#: seconds a whole submission may take in ``grade_folder`` (override: --timeout)
DEFAULT_SUBMISSION_TIMEOUT = 900
#: modules whose callables the tests rely on; replacing one of them is tampering
SENSITIVE = ("numpy", "gpulab", "otter", "importlib", "builtins", "math", "signal", "inspect")
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

def timed(fn, seconds: float = 30.0):
    """Wrap ``fn`` so that one call raises :class:`TimeLimit` after ``seconds`` (SIGALRM; only in
    the main thread, elsewhere the call is unlimited). An enclosing limit is kept."""
    if not callable(fn):
        return fn

    def call(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            return fn(*args, **kwargs)
        outer_handler = signal.getsignal(signal.SIGALRM)
        outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
        start = time.monotonic()

        def on_alarm(signum, frame):
            raise TimeLimit(f"{getattr(fn, '__name__', 'the function')} ran longer than "
                            f"{seconds:g} s (an endless loop?)")

        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_left) if outer_left else seconds)
        try:
            return fn(*args, **kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, outer_handler)
            if outer_left:
                signal.setitimer(signal.ITIMER_REAL, max(1e-3, outer_left - (time.monotonic() - start)))

    call.__name__ = getattr(fn, "__name__", "call")
    call.__wrapped__ = fn
    return call


def install_cell_time_limit(seconds: float | None = None):
    """Limit every following IPython cell to ``seconds`` (default GPULAB_CELL_TIMEOUT or 120) by
    raising :class:`CellTimeLimit` in it; Otter's final export cell is exempt. Returns seconds."""
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
        if _EXPORT_MARK in src:
            return
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)

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


def _watched(mod):
    """(key, object) for the callables and submodules a module exposes, and the functions of the
    classes it defines (so ``CheckResult.__bool__ = ...`` shows too)."""
    out = []
    try:
        items = list(vars(mod).items())
    except TypeError:
        return out
    for name, obj in items:
        if name.startswith("__") and name.endswith("__"):
            continue
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
                            types.MethodType)) or callable(obj):
            out.append((f"{mod.__name__}.{name}", obj))
        if isinstance(obj, type) and getattr(obj, "__module__", None) == mod.__name__ \
                and mod.__name__.split(".")[0] in ("gpulab", "otter"):
            for mname, m in list(vars(obj).items()):
                if isinstance(m, (types.FunctionType, staticmethod, classmethod, property)):
                    out.append((f"{mod.__name__}.{name}.{mname}", m))
    return out


def snapshot():
    """Record the objects numpy, gpulab, Otter and builtins expose now (before student code runs).
    Imports every gpulab.checks module first so they are covered too."""
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
        if mod is not None and _sensitive(name):
            snap[name] = (mod, dict(_watched(mod)))
    _SNAPSHOT = snap
    return len(snap)


def tamper_findings(limit: int = 10):
    """What the submission changed: modules replaced in ``sys.modules``, callables replaced since
    :func:`snapshot`, and functions of numpy/gpulab/Otter whose code was written outside their
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
        current = dict(_watched(mod))
        for key, obj in objs.items():
            if key in _LEGIT_CHANGES:
                continue
            if key in current and current[key] is not obj:
                found.append(f"{key} was replaced")
            elif key not in current and not key.rsplit(".", 1)[-1].startswith("_"):
                found.append(f"{key} was deleted")
    for name, mod in list(sys.modules.items()):
        if mod is None or not _sensitive(name):
            continue
        if not isinstance(mod, types.ModuleType):
            found.append(f"sys.modules[{name!r}] is not a module")
            continue
        for key, obj in _watched(mod):
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
        return submission

    def during_assign(self, assignment):     # nothing to do while assigning
        return None


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
        return int(limit * 10) if _EXPORT_MARK in cell.get("source", "") else int(limit)

    class LimitedExecutePreprocessor(base):
        _gpulab_base = base

        def __init__(self, **kw):
            super().__init__(**kw)
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
    (r"__code__|__globals__|__builtins__", "code objects"),
    (r"\bos\._exit\b|\bsignal\.", "process/signal control"),
    (r"['\"][^'\"]*tests?[/\\]", "test file paths"),
]


def suspicious(nb_path: str):
    """Patterns in a submission's code cells that suggest an attempt on the grader (for review;
    they change no score). Ignores the lines the master itself contains (``grader = ...``)."""
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
