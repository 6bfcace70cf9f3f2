"""Self-checks for chapter 10 (Amdahl, Gustafson, the interview questions of seed 003).

Every check returns a CheckResult that prints as a pass/fail line with the reason, and is
truthy only on a pass (so the Otter tests can ``assert`` it).
"""

from __future__ import annotations

import math
import random

import numpy as np

from gpulab.checks.answers import as_float
from gpulab.models import amdahl as A
from gpulab.checks.result import CheckResult  # noqa: F401 (re-exported)
from gpulab.checks.result import untouched

__all__ = [
    "CheckResult",
    "check_speedup",
    "check_interview_speedup",
    "check_divergence",
    "check_occupancy",
    "check_estimate_f",
    "check_worth_buying",
    "speedup_tolerance",
    "estimate_f_tolerance",
]


#: float32 keeps 24 significant bits: an answer computed in float32 may be off by a few units
#: of 2**-24 relative per operation, and by more where rounding the inputs is amplified
F32_EPS = 2.0**-24


def speedup_tolerance(f: float, p: float) -> float:
    """Absolute tolerance for S(f, p) that a float32 computation meets: 16 half-ulps on each of
    the four operations plus 16x the effect of rounding f to float32 (dS/df = S^2 (1 - 1/p)).
    Every conceptual mistake (Gustafson, f and 1 - f swapped, p - 1) misses by far more."""
    s = A.speedup(f, p)
    return 16 * F32_EPS * s * (4 + s * abs(f) * (1 - 1 / p))


def _not_a_number(call: str, raw) -> str:
    """The message for a result that is no single number: None means not solved yet; anything
    else (an array, a tuple, a string) is named, so the reader sees what came back."""
    if raw is None:
        return f"{call} returned None: not solved yet"
    return f"{call} returned {raw!r:.80}, not a single number: return a float"


def _fmt(v) -> str:
    """Enough digits to see a miss in the last place of a float64."""
    return f"{v:.10g}"


def check_speedup(fn, seed=None) -> CheckResult:
    """Compare a reader's speedup(f, p) with Amdahl's law on fixed cases and 20 random ones
    (new ones on every call unless ``seed`` is given), within :func:`speedup_tolerance`: float32
    arithmetic passes, a different formula does not."""
    rng = random.Random(seed)
    cases = [(0.95, 100), (0.5, 2), (0.0, 64), (1.0, 64), (0.99, 1)]
    cases += [(rng.uniform(0, 1), rng.choice([2, 3, 8, 100, 1000, rng.randint(1, 10000)])) for _ in range(20)]
    cases = tuple(cases)  # a tuple: a function that reaches this frame cannot shorten it
    for f, p in cases:
        try:
            raw = fn(f, p)
            got = as_float(raw)
        except Exception as e:
            return CheckResult(False, f"speedup({f:.3g}, {p}) raised {type(e).__name__}: {e}")
        if got is None:
            return CheckResult(False, _not_a_number(f"speedup({f!r}, {p})", raw))
        want = A.speedup(f, p)  # computed after the call: nothing to peek at
        tol = speedup_tolerance(f, p)
        if not abs(got - want) <= tol:
            hint = ""
            if 0 < f < 1 and abs(got - 1 / (f + (1 - f) / p)) <= tol:
                hint = " f is the *parallel* fraction: the serial part 1-f is the one not divided by p"
            elif abs(got - (f * p + (1 - f))) <= tol:
                hint = " that is Gustafson's scaled speedup; Amdahl fixes the problem size"
            return CheckResult(
                False,
                f"speedup({f!r}, {p}) should be {_fmt(want)}, got {_fmt(got)} "
                f"(off by {abs(got - want):.3g}, allowed {tol:.2g}).{hint}",
            )
    return CheckResult(
        True, f"correct on {len(cases)} cases, including f=0.95, p=100 -> {A.speedup(0.95, 100):.1f}x"
    )


def check_interview_speedup(speedup, ceiling) -> CheckResult:
    """Interview question 1: 95% parallel code on 100 processors. Expect ~16.8x and a 20x ceiling."""
    if (start := untouched(speedup, ceiling, judge=check_interview_speedup)) is not None:
        return start
    s, c = as_float(speedup), as_float(ceiling)
    if s is None or c is None:
        return CheckResult(False, "give two numbers: the speedup on 100 processors and the ceiling")
    want_s, want_c = A.speedup(0.95, 100), A.limit(0.95)
    if abs(s - want_s) > 0.05:
        hint = (
            " (95x would be the 'lines of code' reading: f is a share of time, and the 5% never shrinks)"
            if s > 50
            else ""
        )
        return CheckResult(False, f"speedup: expected about {want_s:.1f}, got {s:g}{hint}")
    if abs(c - want_c) > 0.05:
        return CheckResult(False, f"ceiling: expected {want_c:g} = 1/(1-0.95), got {c:g}")
    return CheckResult(
        True,
        f"S(100) = 1/(0.05 + 0.95/100) = {want_s:.1f}x and at most 1/0.05 = 20x: "
        f"about {A.wasted(0.95, 100):.0f} of the 100 processors' worth is spent waiting "
        "on the serial 5%.",
    )


def check_divergence(time_ratio, efficiency) -> CheckResult:
    """Interview question 2: a warp branches on odd/even thread index, both sides equally long.
    Expect the warp to take about twice as long, at a warp execution efficiency of 0.5 (a
    fraction, as hw03 q4 asks: a percentage such as 50 is refused with a message)."""
    if (start := untouched(time_ratio, efficiency, judge=check_divergence)) is not None:
        return start
    r, e = as_float(time_ratio), as_float(efficiency)
    if r is None or e is None:
        return CheckResult(False, "give two numbers: the time ratio and the warp execution efficiency")
    if not 0 <= e <= 1:  # the questions ask for a fraction: 50 "as a percentage" is refused
        return CheckResult(
            False,
            f"efficiency = {e:g}: give it as a fraction between 0 and 1 (50 % is 0.5), not a percentage",
        )
    why = (
        "16 lanes take the 'if' side, 16 the 'else' side; the warp issues one instruction stream, "
        "so it runs both sides one after the other with half the lanes masked off each time: "
        "T_warp = T_if + T_else = 2T, and each instruction does 16 of 32 lanes' work."
    )
    if not 1.9 <= r <= 2.1:
        hint = " (32 would be the worst case: every lane on its own path)" if r > 10 else ""
        return CheckResult(False, f"time ratio: expected about 2, got {r:g}{hint}. {why}")
    if not math.isclose(e, 0.5, abs_tol=0.01):
        return CheckResult(False, f"efficiency: expected 0.5 (50%), got {e:g}. {why}")
    return CheckResult(
        True,
        "about 2x the time at 50% efficiency. "
        + why
        + " Branching on warp index (i // 32) instead would keep each warp uniform.",
    )


def check_occupancy(answer) -> CheckResult:
    """Interview question 3: is 100% occupancy automatically the fastest? Expect no."""
    if (start := untouched(answer, judge=check_occupancy)) is not None:
        return start
    if isinstance(answer, str):
        a = answer.strip().lower()
        val = {"no": False, "false": False, "yes": True, "true": True}.get(a)
    elif isinstance(answer, (bool, np.bool_)):
        val = bool(answer)  # numpy's bool_ too (a comparison of arrays or numpy scalars)
    else:
        val = None
    why = (
        "Occupancy is a means of hiding latency, not a goal: once enough warps (or enough "
        "independent loads per warp, i.e. instruction-level parallelism) cover the latency, more "
        "warps add nothing, and forcing occupancy up by cutting registers can cause spills to "
        "local memory (per-thread space in device memory, cached in L1 and L2) and make the kernel "
        "slower. Read occupancy as a symptom."
    )
    if val is None:
        return CheckResult(False, "answer True/False (or 'yes'/'no')")
    if val:
        return CheckResult(False, "not automatically. " + why)
    return CheckResult(True, "right, no. " + why)


def estimate_f_tolerance(t1: float, t2: float) -> float:
    """Absolute tolerance for f from two times: t1 - t2 cancels, so rounding t1 and t2 to float32
    costs about 2**-24 (t1 + t2) / |t1 - t2| of f; allow 16x that (and 1e-9 when exact)."""
    return 1e-9 + 16 * F32_EPS * (abs(t1) + abs(t2)) / max(abs(t1 - t2), 1e-300)


def check_estimate_f(fn, seed=None) -> CheckResult:
    """Compare a reader's estimate_f(p1, t1, p2, t2) (f from two measured times, no p=1 run)
    with the exact solution of t = serial + parallel/p, on one fixed and 20 random cases (new
    ones on every call unless ``seed`` is given)."""
    rng = random.Random(seed)
    cases = [(2, 0.3 + 2.7 / 2, 8, 0.3 + 2.7 / 8)]
    for _ in range(20):
        s, q = rng.uniform(0.01, 1), rng.uniform(0.1, 10)
        p1, p2 = rng.sample([2, 3, 4, 8, 16, 32, 100], 2)
        cases.append((p1, s + q / p1, p2, s + q / p2))
    cases = tuple(cases)  # a tuple: a function that reaches this frame cannot shorten it
    for p1, t1, p2, t2 in cases:
        try:
            raw = fn(p1, t1, p2, t2)
            got = as_float(raw)
        except Exception as e:
            return CheckResult(False, f"estimate_f raised {type(e).__name__}: {e}")
        if got is None:
            return CheckResult(False, _not_a_number(f"estimate_f({p1}, {t1!r}, {p2}, {t2!r})", raw))
        want = A.fit_times([p1, p2], [t1, t2]).f  # after the call: nothing to peek at
        tol = estimate_f_tolerance(t1, t2)
        if not abs(got - want) <= tol:
            hint = ""
            if abs(got - A.f_from_speedup(t1 / t2, p2 / p1)) <= tol:
                hint = (
                    " you treated t1/t2 as a speedup over one processor, but p1 is not 1: "
                    "solve t = serial + parallel/p for both unknowns"
                )
            return CheckResult(
                False,
                f"for (p, t) = ({p1}, {t1!r}), ({p2}, {t2!r}) expected "
                f"f = {_fmt(want)}, got {_fmt(got)} (off by "
                f"{abs(got - want):.3g}, allowed {tol:.2g}).{hint}",
            )
    return CheckResult(True, f"correct on {len(cases)} cases")


def check_worth_buying(p, f: float = 0.95, min_efficiency: float = 0.5) -> CheckResult:
    """The largest power-of-two p whose efficiency S(p)/p is still >= min_efficiency."""
    if (start := untouched(p, judge=check_worth_buying, f=f, min_efficiency=min_efficiency)) is not None:
        return start
    ok = [2**k for k in range(20) if A.efficiency(f, 2**k) >= min_efficiency - 1e-12]
    want = max(ok)
    got = as_float(p)
    if got is None:
        return CheckResult(False, "give a number of processors")
    if got < 1:
        return CheckResult(False, f"p = {got:g}: a number of processors is at least 1")
    eff = A.efficiency(f, got)
    if got == want:
        return CheckResult(
            True,
            f"p = {want}: efficiency {100 * eff:.0f}%; doubling to {2 * want} would drop it "
            f"to {100 * A.efficiency(f, 2 * want):.0f}%. The exact boundary is "
            f"p = (1/e - f)/(1 - f) = {A.p_at_efficiency(f, min_efficiency):.1f}.",
        )
    if got > want and eff >= min_efficiency - 1e-12:
        return CheckResult(
            False,
            f"p = {got:g} still runs at {100 * eff:.0f}% efficiency, but it is not a power of "
            "two: the question asks for the largest power of two that meets the bar",
        )
    if got > want:
        return CheckResult(
            False, f"p = {got:g} runs at {100 * eff:.0f}% efficiency, below {100 * min_efficiency:.0f}%"
        )
    return CheckResult(False, f"p = {got:g} meets the bar, but a larger power of two still does too")
