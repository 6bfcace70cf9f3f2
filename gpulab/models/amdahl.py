"""Amdahl's and Gustafson's laws, and estimating the parallel fraction f from measurements.

Amdahl (fixed problem size): a fraction ``f`` of the *time* on one processor can be spread over
``p`` processors, the remaining ``1 - f`` cannot, so

    S(p) = 1 / ((1 - f) + f / p),        S(p) < 1 / (1 - f) for every p.

Gustafson (scaled problem size): keep the *time* fixed and grow the problem with ``p``; if the
serial part of the scaled run takes a fraction ``s`` of its time, the scaled speedup is
``s + (1 - s) p``.

Every function accepts numpy arrays (broadcasting) as well as plain numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = [
    "speedup",
    "limit",
    "efficiency",
    "wasted",
    "p_for_speedup",
    "f_from_speedup",
    "p_at_efficiency",
    "gustafson",
    "AmdahlFit",
    "fit_times",
    "fit_speedups",
    "marginal_gain",
]


def _check_f(f):
    f = np.asarray(f, dtype=float)
    if np.any((f < 0) | (f > 1)) or np.any(np.isnan(f)):
        raise ValueError(f"the parallel fraction f must lie in [0, 1], got {f}")
    return f


def _check_p(p):
    p = np.asarray(p, dtype=float)
    if np.any(p <= 0) or np.any(np.isnan(p)):
        raise ValueError(f"the number of processors p must be > 0, got {p}")
    return p


def _out(x):
    """Return a Python float for scalar results, an array otherwise."""
    x = np.asarray(x)
    return float(x) if x.ndim == 0 else x


def speedup(f, p):
    """Amdahl speedup S(p) = 1/((1-f) + f/p) for parallel time-fraction f on p processors."""
    f, p = _check_f(f), _check_p(p)
    return _out(1.0 / ((1.0 - f) + f / p))


def limit(f):
    """The ceiling of S(p) as p grows without bound: 1/(1-f) (inf when f == 1)."""
    f = _check_f(f)
    with np.errstate(divide="ignore"):
        return _out(np.where(f < 1, 1.0 / np.maximum(1.0 - f, 1e-300), np.inf))


def efficiency(f, p):
    """Parallel efficiency S(p)/p: the share of the p processors' time that does useful work."""
    return _out(np.asarray(speedup(f, p)) / _check_p(p))


def wasted(f, p):
    """Processors' worth of capacity that buys nothing: p - S(p) (f=0.95, p=100 -> about 83)."""
    return _out(_check_p(p) - np.asarray(speedup(f, p)))


def p_for_speedup(f, target):
    """Smallest real p with S(p) >= target, or inf if target >= 1/(1-f) (unreachable)."""
    f = float(_check_f(f))
    if target <= 1:
        return 1.0
    if f == 0 or target >= limit(f):
        return float("inf")
    # 1/target = (1-f) + f/p  ->  p = f / (1/target - (1-f))
    return f / (1.0 / target - (1.0 - f))


def p_at_efficiency(f, e):
    """Largest real p whose efficiency S(p)/p is still >= e (inf when f == 1).
    From 1/(p(1-f) + f) >= e:  p <= (1/e - f) / (1 - f)."""
    f = float(_check_f(f))
    if not 0 < e <= 1:
        raise ValueError(f"efficiency must lie in (0, 1], got {e}")
    if f == 1:
        return float("inf")
    return max(1.0, (1.0 / e - f) / (1.0 - f))


def f_from_speedup(s, p):
    """Invert Amdahl: the f that gives speedup s on p processors (both measured against p=1)."""
    s, p = np.asarray(s, dtype=float), _check_p(p)
    if np.any(p == 1):
        raise ValueError("p = 1 carries no information about f (S(1) = 1 for every f)")
    return _out((1.0 - 1.0 / s) / (1.0 - 1.0 / p))


def gustafson(s, p):
    """Gustafson's scaled speedup s + (1-s) p, where s is the serial share of the *scaled* run."""
    s, p = _check_f(s), _check_p(p)
    return _out(s + (1.0 - s) * p)


def marginal_gain(f, ps: Sequence[float]):
    """Extra speedup bought by each step in a list of processor counts: S(p_i) - S(p_{i-1})."""
    ps = np.asarray(ps, dtype=float)
    s = np.asarray(speedup(f, ps), dtype=float)
    return np.diff(s, prepend=1.0)


@dataclass(frozen=True)
class AmdahlFit:
    """Amdahl's model fitted to measured times: T(p) = serial_s + parallel_s / p."""

    serial_s: float
    parallel_s: float

    @property
    def t1(self) -> float:
        """Predicted time on one processor."""
        return self.serial_s + self.parallel_s

    @property
    def f(self) -> float:
        """The parallel fraction of the one-processor time."""
        return self.parallel_s / self.t1

    def time(self, p):
        """Predicted time on p processors."""
        return _out(self.serial_s + self.parallel_s / _check_p(p))

    def speedup(self, p):
        """Predicted speedup over one processor."""
        return _out(self.t1 / np.asarray(self.time(p)))

    def check(self, p, measured_time) -> float:
        """Relative error of the prediction at p against a measured time: (pred - meas) / meas."""
        return (float(self.time(p)) - float(measured_time)) / float(measured_time)


def fit_times(ps: Sequence[float], times: Sequence[float]) -> AmdahlFit:
    """Fit T(p) = a + b/p to measured times at two or more p (exact solve for two, least squares
    for more). No p=1 run is needed: two p's pin down both the serial and the parallel time."""
    ps, times = _check_p(ps).ravel(), np.asarray(times, dtype=float).ravel()
    if ps.size != times.size or ps.size < 2:
        raise ValueError("need at least two (p, time) measurements of equal length")
    if np.unique(ps).size < 2:
        raise ValueError("need at least two different values of p")
    A = np.column_stack([np.ones_like(ps), 1.0 / ps])
    (a, b), *_ = np.linalg.lstsq(A, times, rcond=None)
    return AmdahlFit(serial_s=float(a), parallel_s=float(b))


def fit_speedups(ps: Sequence[float], speedups: Sequence[float]) -> float:
    """Least-squares f from speedups measured against p=1, using 1/S = 1 - f (1 - 1/p)."""
    ps, s = _check_p(ps).ravel(), np.asarray(speedups, dtype=float).ravel()
    if ps.size != s.size or ps.size < 1:
        raise ValueError("need matching, non-empty lists of p and speedup")
    x = 1.0 - 1.0 / ps
    if not np.any(x > 0):
        raise ValueError("need at least one p > 1")
    y = 1.0 - 1.0 / s
    return float(np.dot(x, y) / np.dot(x, x))
