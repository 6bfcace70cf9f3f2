"""Turn a reader's answer into a plain Python number before any comparison, so an object that
claims to equal everything (an ``int`` subclass whose ``__eq__`` returns True, a number whose
arithmetic lies) is graded by the value it really holds."""

from __future__ import annotations

import math
import operator

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
