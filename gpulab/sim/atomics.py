"""The atomic operations a kernel can call, as one table: name -> how to apply it to memory.

An atomic read-modify-write by every active lane at once is applied as if the lanes went one
after another in lane order (the hardware serialises them in some order it does not specify).
Each :class:`AtomicOp` says how:

* ``kind="sum"``: add/sub, done as a prefix sum per address;
* ``kind="scan"``: an associative ``combine`` (a numpy ufunc), done as ``ufunc.accumulate`` per
  address;
* ``kind="exch"``: each lane gets the previous lane's value, memory keeps the last lane's;
* ``kind="sequential"``: ``combine(current, *values) -> new`` applied one lane at a time, for
  operations whose result depends on every earlier lane (cas, inc, dec).

Adding an atomic is one entry in :data:`OPS` (and a test): ``SimCuda.atomic`` builds its methods
from this table, and ``metrics.atomic_counts`` counts it under Nsight Compute's names.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class AtomicOp:
    """One ``cuda.atomic.<attr>``: its arguments after (ary, idx) and how it updates memory."""

    name: str  # the operation (as in metrics.REDUCIBLE_ATOMICS, PTX)
    attr: str  # the attribute name in numba.cuda (``and_`` for ``and``)
    values: tuple  # names of the arguments after (ary, idx), for messages
    kind: str  # "sum", "scan", "exch" or "sequential"
    combine: Callable = None
    doc: str = ""


def _cas(cur, old, val):
    """compare-and-swap: store ``val`` only where memory still holds ``old``."""
    return val if cur == old else cur


def _inc(cur, limit):
    """CUDA atomicInc: wrap to 0 once ``limit`` is reached, else add one."""
    return 0 if cur >= limit else cur + 1


def _dec(cur, limit):
    """CUDA atomicDec: wrap to ``limit`` at 0 or above ``limit``, else subtract one."""
    return limit if (cur == 0 or cur > limit) else cur - 1


_OPS = [
    AtomicOp("add", "add", ("val",), "sum", doc="ary[idx] += val"),
    AtomicOp("sub", "sub", ("val",), "sum", doc="ary[idx] -= val"),
    AtomicOp(
        "max",
        "max",
        ("val",),
        "scan",
        np.maximum,
        "ary[idx] = max(ary[idx], val); a NaN value changes nothing, a NaN in memory stays",
    ),
    AtomicOp(
        "min",
        "min",
        ("val",),
        "scan",
        np.minimum,
        "ary[idx] = min(ary[idx], val); a NaN value changes nothing, a NaN in memory stays",
    ),
    AtomicOp("nanmax", "nanmax", ("val",), "scan", np.fmax, "max treating NaN as missing"),
    AtomicOp("nanmin", "nanmin", ("val",), "scan", np.fmin, "min treating NaN as missing"),
    AtomicOp("and", "and_", ("val",), "scan", np.bitwise_and, "ary[idx] &= val"),
    AtomicOp("or", "or_", ("val",), "scan", np.bitwise_or, "ary[idx] |= val"),
    AtomicOp("xor", "xor", ("val",), "scan", np.bitwise_xor, "ary[idx] ^= val"),
    AtomicOp("exch", "exch", ("val",), "exch", doc="ary[idx] = val"),
    AtomicOp("inc", "inc", ("val",), "sequential", _inc, _inc.__doc__),
    AtomicOp("dec", "dec", ("val",), "sequential", _dec, _dec.__doc__),
    AtomicOp("cas", "cas", ("old", "val"), "sequential", _cas, _cas.__doc__),
]

#: every atomic the simulator supports, by the attribute name a kernel writes after cuda.atomic.
OPS = {op.attr: op for op in _OPS}
#: the same, by operation name (``and`` rather than ``and_``)
BY_NAME = {op.name: op for op in _OPS}


def apply(op, data, flat, vals, old):
    """Apply ``op`` for every lane, in lane order: ``data`` flat memory, ``flat`` each lane's
    element, ``vals`` one array per argument; write each lane's old value into ``old``."""
    if op.kind == "sequential":
        _sequential(op.combine, data, flat, vals, old)
    else:
        _vectorised(op, data, flat, vals[0], old)


def _sequential(combine, data, flat, vals, old):
    """One lane at a time, in lane order."""
    for k, addr in enumerate(flat):
        cur = data[addr]
        old[k] = cur
        data[addr] = combine(cur, *(v[k] for v in vals))


def _vectorised(op, data, flat, val, old):
    """Atomics whose result does not depend on the order beyond a scan: grouped by address.

    nanmax/nanmin treat NaN as missing (fmax/fmin), as numba documents; max/min follow
    numba-cuda's implementation: a NaN value changes nothing, a NaN in memory stays.
    """
    order = np.argsort(flat, kind="stable")  # lane order kept within one address
    f = flat[order]
    v = val[order].astype(data.dtype, copy=False) if op.kind != "exch" else val[order]
    starts = np.ones(len(f), dtype=bool)
    starts[1:] = f[1:] != f[:-1]
    seg = np.cumsum(starts) - 1
    base = data[f[starts]]
    if op.kind == "sum":
        v = v if op.name == "add" else -v
        c = np.cumsum(v, dtype=np.result_type(data.dtype, v.dtype))
        seg_start_c = (c - v)[starts]
        before = c - v - seg_start_c[seg]
        o = (base[seg] + before).astype(data.dtype)
        new = base + (c[np.r_[np.flatnonzero(starts)[1:] - 1, len(f) - 1]] - seg_start_c)
    elif op.kind == "scan":
        o = np.empty(len(f), dtype=data.dtype)
        if op.name in ("max", "min") and data.dtype.kind == "f":
            # numba-cuda's float max/min (cudadrv/nvvm.py) leave memory alone when the value is
            # NaN, and a NaN already in memory stays: a NaN value acts like -inf / +inf here
            v = np.where(np.isnan(v), -np.inf if op.name == "max" else np.inf, v).astype(data.dtype)
        new = base.copy()
        bounds = np.r_[np.flatnonzero(starts), len(f)]
        for s in range(len(bounds) - 1):  # python loop over distinct addresses only
            a, b = bounds[s], bounds[s + 1]
            acc = op.combine.accumulate(np.r_[base[s : s + 1], v[a:b]])
            o[a:b] = acc[:-1]
            new[s] = acc[-1]
    else:  # exch: each lane gets the previous lane's value
        o = np.empty(len(f), dtype=data.dtype)
        o[starts] = base
        prev = np.r_[0, np.arange(len(f) - 1)]
        o[~starts] = v[prev[~starts]]
        last = np.r_[np.flatnonzero(starts)[1:] - 1, len(f) - 1]
        new = v[last]
    data[f[starts]] = new
    old[order] = o
