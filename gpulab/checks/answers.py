"""Turn a reader's answer into a plain Python number before any comparison, so an object that
claims to equal everything (an ``int`` subclass whose ``__eq__`` returns True, a number whose
arithmetic lies) is graded by the value it really holds; and tell an answer from one still as the chapter handed it
over (:func:`starting_state`, issue 25)."""

from __future__ import annotations

import ast
import copy
import hashlib
import inspect
import math
import operator
import textwrap
import types

import numpy as np


def as_int(v):
    """The exact ``int`` an integral answer holds (Python or numpy integer, anything with
    ``__index__``); ``None`` for a bool, a float or anything else."""
    if isinstance(v, (bool, np.bool_)):  # numpy 2 names its bool 'bool', not 'bool_'
        return None
    try:
        return operator.index(v)  # exact int since Python 3.10, even for subclasses
    except TypeError:
        return None


def as_float(v):
    """The exact ``float`` a numeric answer holds, or ``None`` when it is not a number (a string
    such as ``"16.8"`` is text, not a number, whatever ``float`` would make of it)."""
    if isinstance(v, (str, bytes)):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def as_number(v):
    """``as_int`` for integral answers, else ``as_float``: a plain number, or ``None`` (also for
    a bool, which ``float`` would turn into 0.0 or 1.0)."""
    if isinstance(v, (bool, np.bool_)):
        return None
    i = as_int(v)
    return i if i is not None else as_float(v)


def as_whole(v):
    """The ``int`` a count typed by hand holds: what :func:`as_int` accepts, and also a float
    with an integral value (``60.0`` for 60, as a literal or a division may give it); ``None``
    for a bool, a fractional or non-finite float, or anything else. For widget answers and
    counts, not for launch sizes (a launch rejects a float grid)."""
    i = as_int(v)
    if i is not None or isinstance(v, (bool, np.bool_)):
        return i
    f = as_float(v) if isinstance(v, (float, np.floating)) else None
    if f is None or not math.isfinite(f) or f != int(f):
        return None
    return int(f)


# ---- an answer still in the state the chapter handed it over in (issue 25, point 2) ----------
#
# A self-check given an answer nobody has touched yet says so in a neutral note instead of a red
# cross (gpulab.checks.result.untouched), and still fails. Untouched means one of:
#   - ``None`` or ``...``: a value left unwritten;
#   - a widget's value before any of its controls moved (:func:`starting` marks it);
#   - a function or kernel that has no effect: its body only binds local names (``pass``, ``...``,
#     a docstring, ``x, y = cuda.grid(2)``, a bare ``return``): it stores and returns nothing;
#   - a function or kernel whose code is an exercise's starting code, unchanged: the same syntax
#     tree (comments, blank lines and layout do not count) and the same module constants it
#     reads (``TILE = 32``); the fingerprints of the chapters' stubs are in STARTING_CODE, and
#     tests/test_stub_states.py keeps them equal to the notebooks' stub cells.


class _StartingDict(dict):
    """A widget's dict value as the widget first wrote it; edited by hand, it is an answer."""

    __slots__ = ("start",)


class _StartingInt(int):
    __slots__ = ()


class _StartingFloat(float):
    __slots__ = ()


def as_text(v):
    """The plain ``str`` a text answer holds (a ``str`` subclass's own ``__eq__`` is ignored, so
    a string "equal to anything" compares as what it really holds); ``None`` for anything else."""
    return str.__str__(v) if isinstance(v, str) else None


def starting(value):
    """``value`` marked as a widget's starting value (a dict, int or float): a check reads it as
    not answered until a control moves (the widget then writes a plain value)."""
    if isinstance(value, dict):
        marked = _StartingDict(value)
        marked.start = copy.deepcopy(dict(value))
        return marked
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, int):
        return _StartingInt(value)
    if isinstance(value, float):
        return _StartingFloat(value)
    return value


def plain(value):
    """``value`` without a widget's starting mark (a plain dict, int or float); else itself."""
    if isinstance(value, _StartingDict):
        return dict(value)
    if isinstance(value, _StartingInt):
        return int(value)
    if isinstance(value, _StartingFloat):
        return float(value)
    return value


def mark_starting(namespace: dict, name: str) -> None:
    """Mark the value a widget has just written into ``namespace[name]`` as its starting value."""
    if name in namespace:
        namespace[name] = starting(namespace[name])


def _canonical(node) -> str:
    """A syntax tree as text, the same on every Python version: fields that are None or empty
    (``type_params`` since 3.12, ``type_comment``) are left out, and so are comments and layout."""
    if isinstance(node, ast.AST):
        fields = []
        for f in node._fields:
            v = getattr(node, f, None)
            if v is None or (isinstance(v, list) and not v) or f in ("type_comment", "kind"):
                continue
            fields.append(f"{f}={_canonical(v)}")
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(_canonical(v) for v in node) + "]"
    return repr(node)


def _function_of(answer):
    """The Python function behind an answer: a numba kernel's ``py_func``, a grader's wrapper's
    answer, a bound method's function; None for anything that is not a function."""
    fn = getattr(answer, "audited_answer", answer)
    fn = getattr(fn, "__wrapped__", fn)
    fn = getattr(fn, "py_func", fn)
    fn = getattr(fn, "__func__", fn)
    return fn if isinstance(fn, types.FunctionType) else None


def _definition(fn):
    """The ``def`` of ``fn`` as a syntax tree, or None when its source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return defs[0] if defs and defs[0].name == fn.__name__ else None


def _body(node) -> list:
    """The statements of a ``def`` without its docstring."""
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        if isinstance(body[0].value.value, str):
            body = body[1:]
    return body


_CONSTANT_TYPES = (int, float, str, bool, type(None))


def _constants_read(fn) -> list:
    """``name=value`` for each module-level constant (number, string, tuple of them) the
    function reads: the same code with another ``TILE`` is another kernel."""
    names, todo = set(), [fn.__code__]
    while todo:
        code = todo.pop()
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    out = []
    for name in sorted(names):
        v = fn.__globals__.get(name, _CONSTANT_TYPES)
        if isinstance(v, _CONSTANT_TYPES) or (
            isinstance(v, tuple) and all(isinstance(x, _CONSTANT_TYPES) for x in v)
        ):
            out.append(f"{name}={v!r}")
    return out


def code_fingerprint(answer) -> str | None:
    """16 hex digits naming a function's code: its syntax tree without decorators, name and
    docstring, and the module constants it reads; None when it is no function or its source
    cannot be read."""
    fn = _function_of(answer)
    node = _definition(fn) if fn is not None else None
    if node is None:
        return None
    text = _canonical(node.args) + _canonical(_body(node)) + ";".join(_constants_read(fn))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _local_name(target) -> bool:
    return isinstance(target, ast.Name) or (
        isinstance(target, (ast.Tuple, ast.List)) and all(_local_name(t) for t in target.elts)
    )


# calls that only compute a value or allocate an array (an atomic, say, in ``old = ...`` stores)
_PURE_CALLS = {"grid", "gridsize", "array", "float32", "float64", "int32", "int64", "len", "min", "max"}


def _pure(expr) -> bool:
    for n in ast.walk(expr):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name not in _PURE_CALLS:
                return False
        elif isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)):
            return False
    return True


def _does_nothing(answer) -> bool:
    """A function or kernel that has no effect: its body only binds local names (``x, y =
    cuda.grid(2)``, ``tile = cuda.shared.array(...)``) besides ``pass``, ``...``, a docstring and
    a bare ``return`` / ``return None``; it stores nothing, calls nothing on its own and returns
    nothing."""
    fn = _function_of(answer)
    node = _definition(fn) if fn is not None else None
    if node is None:
        return False
    for s in _body(node):
        if isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
            continue
        if isinstance(s, ast.Assign) and all(_local_name(t) for t in s.targets) and _pure(s.value):
            continue
        if isinstance(s, ast.Return) and (
            s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None)
        ):
            continue
        return False
    return True


NO_ANSWER = "no answer yet"
WIDGET_START = "the widget's starting setting"

#: fingerprint (code_fingerprint) -> the exercise and function whose starting code it is
STARTING_CODE: dict[str, str] = {
    "480dafc02ba441a4": "ex-ch05-scale scale",
    "0c1d80b5c7d8adb1": "ex-ch06-rowsums row_sums",
    "879f85909abf6c87": "ex-ch07-invert dispatch",
    "987d497c2fc56d48": "ex-ch08-warp-reduce my_warp_sum",
    "e03c361e1e0690ac": "ex-ch08-warp-scan my_warp_scan",
    "0fcd6cd9fca38578": "ex-ch09-load load_a",
}


def starting_state(answer) -> str | None:
    """How ``answer`` is still untouched, in words, or None when it is an answer (see the rules
    above). Never raises: anything it cannot read is an answer, for the check to judge."""
    try:
        if answer is None or answer is Ellipsis:
            return NO_ANSWER
        if isinstance(answer, _StartingDict):
            return WIDGET_START if dict(answer) == answer.start else None
        if isinstance(answer, (_StartingInt, _StartingFloat)):
            return WIDGET_START
        if _function_of(answer) is None:
            return None
        name = f"`{_function_of(answer).__name__}`"
        if _does_nothing(answer):
            return f"{name} does nothing yet"
        if code_fingerprint(answer) in STARTING_CODE:
            return f"{name} is the exercise's starting code"
    except Exception:  # noqa: BLE001 - a hostile or odd answer is judged by the check itself
        return None
    return None
