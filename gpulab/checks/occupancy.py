"""Self-checks for chapter 04 (occupancy), shared with the homework's tests.

Expected values come from :mod:`gpulab.models.occupancy`, never from a stored table.
"""

from __future__ import annotations

import random

from gpulab.checks.answers import as_number, as_whole
from gpulab.checks.kernels import CheckResult
from gpulab.models import occupancy as occ
from gpulab.checks.result import untouched


def _register_cases(seed=None):
    """(threads, registers) on sm_90 where one block fits: fixed corners plus 40 random ones
    (new ones on every call unless ``seed`` is given)."""
    fixed = [
        (256, 32),
        (256, 40),
        (128, 37),
        (320, 37),
        (1024, 32),
        (1024, 33),
        (96, 255),
        (64, 16),
        (512, 64),
        (32, 1),
        (640, 48),
        (384, 72),
        (224, 168),
    ]
    rng = random.Random(seed)
    out = list(fixed)
    while len(out) < len(fixed) + 40:
        t, r = rng.randint(1, 1024), rng.randint(1, 255)
        if occ.occupancy(t, r, 0, "sm_90").limits["registers"] > 0:
            out.append((t, r))
    return out


def check_register_limit(fn, seed=None) -> CheckResult:
    """Compare a reader's ``register_blocks(threads, registers)`` (sm_90) with the calculator's
    register limit on fixed and fresh random configurations; when wrong, say which case and
    which rule was probably missed."""
    cases = tuple(_register_cases(seed))  # a tuple: a function that reaches this frame cannot shorten it
    for t, r in cases:
        try:
            got = fn(t, r)
        except Exception as e:
            return CheckResult(False, f"your function raised {type(e).__name__}: {e}")
        if got is None:
            return CheckResult(False, "your function returned None: not solved yet")
        if as_number(got) is None:
            return CheckResult(False, f"register_blocks({t}, {r}) returned {got!r}: not a number")
        got = as_number(got)  # the plain number it holds, whatever its __eq__
        want = occ.occupancy(t, r, 0, "sm_90").limits["registers"]  # after the call
        if got != want:
            return CheckResult(
                False,
                f"{t} threads/block, {r} registers/thread: expected {want} "
                f"blocks per SM, got {got}{_register_hint(fn, cases)}",
            )
    return CheckResult(True, f"correct on {len(cases)} configurations")


def _register_hint(fn, cases) -> str:
    """Name the rule a wrong answer missed, if it matches a known mistake on every case."""
    a = occ.Arch
    F, sub, unit, W = a.registers_per_sm, a.sub_partitions, a.register_alloc_unit, a.warp_size

    def per_warp(r):
        return -(-W * r // unit) * unit

    def warps(t):
        return -(-t // W)

    mistakes = [
        (
            lambda t, r: (F // (W * r)) // warps(t),
            "this is floor(F/(32R)) in whole blocks: round each warp's 32R registers up to a "
            f"multiple of {unit} first",
        ),
        (
            lambda t, r: (F // per_warp(r)) // warps(t),
            f"a warp's registers all come from one of the {sub} sub-partitions of {F // sub:,}: "
            f"count warps per sub-partition first, then multiply by {sub}",
        ),
        (
            lambda t, r: F // (r * t),
            f"registers are allocated per warp, rounded up to {unit}, and a partial warp costs a whole one",
        ),
        (
            lambda t, r: (F // sub // per_warp(r)) * sub,
            "that is warps per SM; the question asks for whole blocks per SM",
        ),
    ]
    try:
        answers = {(t, r): as_number(fn(t, r)) for t, r in cases}  # plain numbers: no custom __eq__
    except Exception:
        return ""
    for rule, text in mistakes:
        if all(answers[c] == rule(*c) for c in answers):
            return f" ({text})"
    return ""


def largest_registers_for(target: float, threads: int, arch: str) -> int:
    """Largest registers per thread that still gives occupancy >= target (0 if none does)."""
    best = 0
    for r in range(1, 256):
        if occ.occupancy(threads, r, 0, arch).occupancy >= target - 1e-12:
            best = r
    return best


def check_register_budget(
    answer, threads: int = 256, arch: str = "sm_90", target: float = 0.75
) -> CheckResult:
    """Widget exercise: ``answer`` (the explorer's dict) must be the largest register count with
    which ``threads``-thread blocks on ``arch`` still reach ``target`` occupancy, no shared memory."""
    if (
        start := untouched(answer, judge=check_register_budget, threads=threads, arch=arch, target=target)
    ) is not None:
        return start
    if not isinstance(answer, dict) or "registers" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be its dict")
    for key, want in (("arch", arch), ("threads", threads), ("shared", 0)):
        got = str(answer.get(key)) if key == "arch" else as_whole(answer.get(key))
        if got != want:
            return CheckResult(False, f"set {key} to {want} (it is {answer.get(key)})")
    r = as_whole(answer["registers"])
    if r is None or not 1 <= r <= 255:
        return CheckResult(
            False, f"registers should be a whole number from 1 to 255, got {answer['registers']!r}"
        )
    best = largest_registers_for(target, threads, arch)
    got = occ.occupancy(threads, r, 0, arch)
    if got.occupancy < target - 1e-12:
        return CheckResult(False, f"{r} registers give {got.occupancy:.1%}, below {target:.0%}: go down")
    if r < best:
        return CheckResult(
            False,
            f"{r} registers reach {got.occupancy:.1%}, but you can afford "
            f"more registers and stay at or above {target:.0%}: go up",
        )
    nxt = occ.occupancy(threads, r + 1, 0, arch)
    return CheckResult(
        True,
        f"{r} registers: {got.blocks_per_sm} blocks, {got.active_warps} "
        f"warps ({got.occupancy:.1%}); at {r + 1} the allocation per warp "
        f"becomes {nxt.registers_per_block // nxt.warps_per_block} registers and occupancy "
        f"drops to {nxt.occupancy:.1%}",
    )
