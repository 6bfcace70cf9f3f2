"""Whose work an answer is (issue 26, point 6): a homework answer produced by calling gpulab's
own models or checks, or that *is* one of gpulab's functions or kernels, is not the student's.

The policy, per question, is written in each question's text and in exercises/README.md:

- a function or kernel the student writes (``blocks_for``, ``register_blocks``, ``speedup``,
  ``estimate_f``, ``c_owner``, ``copy_grid``, every kernel) must not call ``gpulab.models`` or
  ``gpulab.checks`` while it runs and must not be gpulab's own (``gpulab.kernels.memory.copy``);
- a literal answer (the widget questions, hw03 q4) may be explored with gpulab's widgets and
  models, as those questions say, but must not be searched for with the grader's own check: a
  submission that called the question's check itself loses the question.

A hidden test wraps a function answer in :func:`audited` before handing it to the check and
calls :func:`assert_own_work` after it; a failure names what was called.
"""

from __future__ import annotations

import functools
import os
import sys

__all__ = ["audited", "assert_own_work", "library_calls", "ORACLE_MESSAGE", "LIBRARY_DIRS"]

#: what a failed :func:`assert_own_work` says (the score is 0 for that question)
ORACLE_MESSAGE = "this answer was not computed by the submission's own code"

_GPULAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: the packages whose functions are the reference answers
LIBRARY_DIRS = tuple(os.path.join(_GPULAB, d) + os.sep for d in ("models", "checks"))


def _qualname(code) -> str:
    rel = os.path.relpath(code.co_filename, os.path.dirname(_GPULAB.rstrip(os.sep)))
    if not rel.endswith(".py"):
        return code.co_name
    return rel[:-3].replace(os.sep, ".").removesuffix(".__init__") + "." + code.co_name


def audited(fn):
    """``fn`` wrapped so that every call into gpulab.models or gpulab.checks made while it runs is
    recorded in ``wrapper.library_calls`` (a profile hook, active only during ``fn``: a student's
    function is small, the checks that call it are not slowed). Anything not callable (an
    unsolved ``None``) is returned as it is, for the check to say so."""
    if not callable(fn):
        return fn
    calls = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(LIBRARY_DIRS):
            name = _qualname(frame.f_code)
            if name not in calls and len(calls) < 20:
                calls.append(name)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        old = sys.getprofile()
        sys.setprofile(hook)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.setprofile(old)

    wrapper.library_calls = calls
    wrapper.audited_answer = fn
    return wrapper


def _answer_code(answer):
    """The code object of the answer itself (under an :func:`audited` wrapper, of a kernel's
    ``py_func``, of a bound method's function), or None."""
    fn = getattr(answer, "audited_answer", answer)
    fn = getattr(fn, "py_func", fn)
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__code__", None)


def library_calls(*answers, checks=()) -> list:
    """What in ``answers`` and ``checks`` was gpulab's work, in words (empty: the student's own):
    library calls an :func:`audited` answer made; an answer that is a gpulab function or kernel;
    a check among ``checks`` that the submission called itself outside the tests."""
    from gpulab.checks import result

    found = []
    for a in answers:
        found += [f"it called {c}" for c in getattr(a, "library_calls", [])]
        code = _answer_code(a)
        if code is not None and os.path.abspath(code.co_filename).startswith(_GPULAB):
            found.append(f"it is gpulab's own {_qualname(code)}")
    names = {getattr(c, "__name__", str(c)) for c in checks}
    called = sorted({n for made in result.made_outside_tests() for n in made} & names)
    found += [f"the submission called the grader's {n} itself to find it" for n in called]
    return found


def assert_own_work(*answers, checks=()):
    """Fail the calling hidden test when :func:`library_calls` finds anything."""
    found = library_calls(*answers, checks=checks)
    if found:
        raise AssertionError(
            f"{ORACLE_MESSAGE}: " + "; ".join(found) + ". This question asks for your own rule "
            "(see the question and exercises/README.md, 'Answers from gpulab itself')"
        )
