"""Time limits for grading: a student's function (:func:`timed`), one Otter test case
(:func:`install_test_time_limit`), one notebook cell (:func:`install_cell_time_limit`) and
Otter's notebook client (:func:`patch_nbclient`), so a hang costs only its own test or cell."""

from __future__ import annotations

import contextlib
import dis
import os
import signal
import sys
import sysconfig
import threading
import time

__all__ = [
    "TimeLimit",
    "CellTimeLimit",
    "time_limit",
    "timed",
    "per_test_seconds",
    "install_test_time_limit",
    "install_cell_time_limit",
    "patch_nbclient",
    "DEFAULT_CELL_TIMEOUT",
    "DEFAULT_TEST_TIMEOUT",
    "EXPORT_CELL_FACTOR",
]

#: seconds a notebook cell may run during grading (override: GPULAB_CELL_TIMEOUT)
DEFAULT_CELL_TIMEOUT = 120
#: seconds one Otter test case may run (override: GPULAB_TEST_TIMEOUT)
DEFAULT_TEST_TIMEOUT = 60
#: Otter's final cell runs every test: it may run this many times the cell limit
EXPORT_CELL_FACTOR = 10
#: Otter's last cell (runs every test); the cell time limit leaves it alone
_EXPORT_MARK = "Checker.check_if_not_already_checked"


class TimeLimit(TimeoutError):
    """A student's function ran past its time limit inside a test (an ordinary exception)."""


class CellTimeLimit(BaseException):
    """A notebook cell ran past the grading time limit. BaseException, so that a student's
    ``except Exception`` in a loop does not swallow it."""


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

    message = f"{what} ran longer than {seconds:g} s (an endless loop?)"
    persisted = []

    def on_alarm(signum, frame):
        if not persisted:
            persisted.extend(_keep_raising(frame, message))
        raise TimeLimit(message)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_left) if outer_left else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _stop_raising(persisted)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(1e-3, outer_left - (time.monotonic() - start)))


_PUSH_EXC_INFO = dis.opmap.get("PUSH_EXC_INFO", -1)  # an exception handler's first instruction
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the gpulab package
_LIBRARY_DIRS = tuple(
    {
        os.path.abspath(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sysconfig.get_paths()["stdlib"])
    }
)


def _student_code(code) -> bool:
    """Code that is neither gpulab's nor the standard library's nor an installed package's: a
    submission's (a notebook cell, a file next to it)."""
    fn = os.path.abspath(code.co_filename) if not code.co_filename.startswith("<") else code.co_filename
    if fn.startswith("<frozen"):
        return False
    return not (fn.startswith(_OWN_DIR) or fn.startswith(_LIBRARY_DIRS))


def _keep_raising(frame, message, error=None):
    """After the limit: raise TimeLimit again at every line the submission's code runs, so a bare
    ``except:`` (or ``except BaseException``) around the loop that hangs cannot swallow it for
    good: the next line of its handler raises outside the ``try``. Returns (the frames traced,
    the trace function to restore)."""

    error = error or TimeLimit

    def tracer(f, event, arg):
        if event == "line" and _student_code(f.f_code) and not _entering_handler(f):
            raise error(message)
        return tracer

    previous = sys.gettrace()
    frames = []
    f = frame
    while f is not None:
        f.f_trace = tracer
        f.f_trace_lines = True
        frames.append(f)
        f = f.f_back
    sys.settrace(tracer)
    return frames, previous


def _entering_handler(frame) -> bool:
    """Whether ``frame`` is about to run the first instruction of an exception handler (an
    ``except`` or a ``with`` block's exit), where the exception has not been pushed yet. Raising
    from the trace function there skips the ``with``'s ``__exit__`` (a limit's cleanup then runs
    whenever its generator is collected) and leaves the exception in ``sys.exc_info()`` for the rest
    of the thread (CPython 3.11-3.13): every later exception got it as ``__context__``."""
    try:
        return frame.f_code.co_code[frame.f_lasti] == _PUSH_EXC_INFO
    except (IndexError, TypeError):
        return False


def _stop_raising(persisted):
    """Undo :func:`_keep_raising` (``persisted``: the list it filled, emptied here)."""
    if persisted:
        frames, previous = persisted
        sys.settrace(previous)
        for f in frames:
            f.f_trace = None
        persisted.clear()


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
    except Exception:  # Otter not installed: nothing to limit
        return None
    seconds = per_test_seconds() if seconds is None else float(seconds)
    original = getattr(et.ExceptionTestFile.run, "_gpulab_original", et.ExceptionTestFile.run)

    from gpulab.checks import result as _result  # which check results the tests made (oracles)

    def run(self, global_environment):
        self.test_case_results = []
        for tc in self.test_cases:
            test_case = tc.body
            passed, message = True, "✅ Test case passed"
            try:
                _result._STATE["in_test"] += 1
                try:
                    with time_limit(seconds, f"test {tc.name}"):
                        test_case.call_func(global_environment)
                finally:
                    _result._STATE["in_test"] -= 1
            except (Exception, SystemExit) as e:  # sys.exit() in a student's function too
                try:
                    detail = self._generate_error_message(e)
                except Exception:  # a traceback of another shape (the limit hit outside)
                    detail = f"{type(e).__name__}: {e}"
                passed, message = False, "❌ Test case failed\n" + detail
            self.test_case_results.append(et.TestCaseResult(test_case=tc, message=message, passed=passed))

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

    message = (
        f"this cell ran longer than {seconds:g} s during grading and was "
        f"stopped (an endless loop?); grading goes on with the next cell"
    )
    persisted = []

    def on_alarm(signum, frame):
        if not persisted:  # a bare except: in the cell cannot swallow it for good either
            persisted.extend(_keep_raising(frame, message, CellTimeLimit))
        raise CellTimeLimit(message)

    def pre(info=None):
        src = getattr(info, "raw_cell", "") or ""
        _unblock_alarm()
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds * EXPORT_CELL_FACTOR if _EXPORT_MARK in src else seconds)

    def post(result=None):
        signal.setitimer(signal.ITIMER_REAL, 0)
        _stop_raising(persisted)

    ip.events.register("pre_run_cell", pre)
    ip.events.register("post_run_cell", post)
    return seconds


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
            self.kernel_name = "python3"  # whatever kernel the notebook was saved with
            self.timeout_func = timeout_func
            self.interrupt_on_timeout = True
            self.error_on_timeout = {
                "ename": "CellTimeout",
                "evalue": f"no reply from the kernel within {limit:g} s",
                "traceback": [],
            }

    pre.ExecutePreprocessor = LimitedExecutePreprocessor
    return limit
