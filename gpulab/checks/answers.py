"""Turn a reader's answer into a plain Python number before any comparison, so an object that
claims to equal everything (an ``int`` subclass whose ``__eq__`` returns True, a number whose
arithmetic lies) is graded by the value it really holds."""

from __future__ import annotations

import operator


def as_int(v):
    """The exact ``int`` an integral answer holds (Python or numpy integer, anything with
    ``__index__``); ``None`` for a bool, a float or anything else."""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return None
    try:
        return operator.index(v)  # exact int since Python 3.10, even for subclasses
    except TypeError:
        return None


def as_float(v):
    """The exact ``float`` a numeric answer holds, or ``None`` when it is not a number."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def as_number(v):
    """``as_int`` for integral answers, else ``as_float``: a plain number, or ``None``."""
    i = as_int(v)
    return i if i is not None else as_float(v)
