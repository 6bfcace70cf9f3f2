"""Check for chapter 09's error-budget exercise, restricted to what Hopper's tensor cores multiply.

A choice ``{"x": fmt, "w": fmt}`` (an ``"acc"`` key, if given, must be ``"fp32"``: every pair
accumulates in FP32, or exactly in s32 for INT8) must be a pair sm_90 multiplies directly
(:data:`gpulab.models.formats.SM90_MMA_PAIRS`), meet the budget in the CPU emulation, and move
no more bytes than the cheapest such pair that meets it. Expected values come from the emulation,
computed when the check runs.
"""

from __future__ import annotations

from gpulab.checks.result import CheckResult
from gpulab.models import formats as F
from gpulab.checks.result import untouched

__all__ = ["CheckResult", "check_native_format_choice"]


def check_native_format_choice(choice, problem: F.BudgetProblem | None = None) -> CheckResult:
    """Grade ``choice`` for :func:`gpulab.models.formats.native_problem` (or ``problem``)."""
    if (start := untouched(choice, judge=check_native_format_choice, problem=problem)) is not None:
        return start
    p = problem or F.native_problem()
    if not isinstance(choice, dict) or not {"x", "w"} <= set(choice):
        return CheckResult(False, f"choice must be a dict with keys 'x' and 'w', got {choice!r}")
    # plain strings, whatever __eq__ or __hash__ a str subclass claims
    choice = {
        k: str.__str__(v) if isinstance(v, str) else v for k, v in choice.items() if k in ("x", "w", "acc")
    }
    for key, allowed in (("x", p.x_formats), ("w", p.w_formats)):
        if choice[key] not in allowed:
            return CheckResult(False, f"choice[{key!r}] = {choice[key]!r} is not one of {allowed}")
    if choice.get("acc", p.accs[0]) not in p.accs:
        return CheckResult(
            False,
            f"accumulate in {p.accs[0]}: every tensor-core pair here does (got acc = {choice['acc']!r})",
        )
    fx, fw = choice["x"], choice["w"]
    if p.pairs is not None and (fx, fw) not in p.pairs:
        return CheckResult(
            False,
            f"no Hopper tensor-core instruction multiplies {fx} by {fw}: mma and "
            "wgmma take FP16 x FP16, BF16 x BF16, TF32 x TF32, FP8 x FP8 (E4M3 "
            "or E5M2 each) or INT8 x INT8. A kernel could convert one operand in "
            "registers first (dequantise it), but then the multiply runs in the "
            "other format; pick a pair the hardware multiplies",
        )
    c = {"x": fx, "w": fw, "acc": p.accs[0]}
    err, nbytes = p.error(c), p.bytes(c)
    if err > p.budget:
        return CheckResult(
            False, f"X in {fx}, W in {fw}: relative error {err:.2%} is over the {p.budget:.0%} budget"
        )
    ok = [r for r in p.all_choices() if r["error"] <= p.budget]
    best = min(r["bytes"] for r in ok)
    if nbytes > best:
        return CheckResult(
            False,
            f"error {err:.2%} meets the budget, but X and W take {nbytes} bytes; "
            f"a pair with {best} bytes also meets it (a memory-bound layer "
            f"pays for bytes)",
        )
    return CheckResult(
        True,
        f"X in {fx}, W in {fw}: error {err:.2%} <= {p.budget:.0%} with {nbytes} "
        f"bytes, the fewest of any pair the tensor cores multiply",
    )
