"""Self-checks for chapter 01 (also used by the homework's tests)."""

from __future__ import annotations

import math
import random

from gpulab.models import latency as lat
from gpulab.checks.answers import as_number
from gpulab.checks.result import CheckResult  # noqa: F401 (re-exported)


def _cases(seed=None):
    rng = random.Random(seed)
    cases = [
        (4.8e12, 700e-9, 132, 128),
        (3.35e12, 600e-9, 132, 512),
        (0.9e12, 400e-9, 80, 128),
        (4.8e12, 700e-9, 132, 32),
    ]
    for _ in range(20):
        cases.append(
            (
                rng.uniform(0.2, 8) * 1e12,
                rng.uniform(100, 1500) * 1e-9,
                rng.randint(8, 200),
                rng.choice([32, 64, 128, 256, 512]),
            )
        )
    return cases


def check_warps_needed(fn, seed=None) -> CheckResult:
    """Compare a reader's warps_needed(bandwidth, latency, n_sm, bytes_per_request) with the
    model on fixed and random cases (new ones on every call unless ``seed`` is given); say which
    case failed and how."""
    cases = tuple(_cases(seed))  # a tuple: a function that reaches this frame cannot shorten it
    for bw, L, n_sm, b in cases:
        try:
            got = fn(bw, L, n_sm, b)
        except Exception as e:  # the reader's code raised
            return CheckResult(False, f"your function raised {type(e).__name__}: {e}")
        if got is None:
            return CheckResult(False, "your function returned None: not solved yet")
        if as_number(got) is None:
            return CheckResult(False, f"your function returned {got!r}: not a number")
        got = as_number(got)  # the plain number it holds, whatever its __eq__
        want = lat.warps_needed(bw, L, n_sm, b)  # after the call: nothing to peek at
        if isinstance(got, float) and not math.isclose(got, round(got)):
            return CheckResult(
                False,
                f"warps come in whole numbers: got {got} for "
                f"bandwidth={bw:.3g} B/s, latency={L:.3g} s, {n_sm} SMs, {b} B",
            )
        if got != want:
            hint = ""
            exact = lat.bytes_in_flight_per_sm(bw, L, n_sm) / b
            if math.isclose(got, math.floor(exact)):
                hint = " (round up: a fraction of a warp still has to be a whole warp)"
            elif math.isclose(got, want * n_sm, rel_tol=0.02):
                hint = " (did you forget to divide by the number of SMs?)"
            return CheckResult(
                False,
                f"for bandwidth={bw:.3g} B/s, latency={L:.3g} s, {n_sm} SMs, "
                f"{b} B per request: expected {want}, got {got}{hint}",
            )
    return CheckResult(True, f"correct on {len(cases)} cases")
