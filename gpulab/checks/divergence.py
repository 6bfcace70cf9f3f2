"""Checks for chapter 03 (warp divergence), shared with the homework: a kernel must give the right
values on any length *and* keep every lane of a warp on the same path, which the simulator
measures as warp execution efficiency (:data:`gpulab.metrics` counting rule: average active
lanes per warp-level instruction / 32)."""

from __future__ import annotations

import math

import numpy as np

from gpulab.checks.kernels import Case, CheckResult, run_cases
from gpulab.kernels import divergence as kd
from gpulab.checks.result import untouched


def parity_reference(x: np.ndarray) -> np.ndarray:
    """out[i] = 2 x[i] at even i, x[i] + 1 at odd i (float32)."""
    out = (x + np.float32(1)).astype(np.float32)
    out[0::2] = (np.float32(2) * x[0::2]).astype(np.float32)
    return out


def _cases(sizes, block, rng):
    cases = []
    for n in sizes:
        x = rng.standard_normal(n).astype(np.float32)
        cases.append(
            Case(
                f"n={n}",
                (math.ceil(n / block),),
                (block,),
                (np.full(n, np.nan, np.float32), x),
                {0: lambda x=x.copy(): parity_reference(x)},
            )
        )
    return cases


def check_parity_scale(
    kernel, block: int = 128, seed=None, min_efficiency: float = 0.99, backend: str = "sim"
) -> CheckResult:
    """``kernel(out, x)`` computing :func:`parity_reference` without divergence: right values on
    lengths that are not multiples of the block, and warp execution efficiency of at least
    ``min_efficiency`` on full blocks (an if/else on i % 2 halves it)."""
    rng = np.random.default_rng(seed)
    odd = [1, block - 1, block + 3, int(rng.integers(2, 20 * block))]
    res, _ = run_cases(
        kernel,
        _cases(odd, block, rng),
        backend=backend,
        atol=1e-5,
        arg_names=("out", "x"),
        hint_mismatch=" (2 * x[i] where i is even, x[i] + 1 where it is odd)",
    )
    if not res:
        return res
    full = [block * int(rng.integers(1, 8)) for _ in range(2)]
    res2, _ = run_cases(
        kernel,
        _cases(full, block, rng),
        backend=backend,
        atol=1e-5,
        arg_names=("out", "x"),
        min_efficiency=min_efficiency,
    )
    if res2 and backend == "sim":
        return CheckResult(True, res2.message + f"; also correct for n = {', '.join(map(str, odd))}")
    return res2


# -- chapter 03's own exercises ------------------------------------------------------------


def check_uniform_split(answer) -> CheckResult:
    """Widget exercise: a condition that sends at least a quarter of the threads each way and
    still has warp execution efficiency 1 (no warp is split). The condition is run again on the
    simulator here; the figures in ``answer`` are not trusted (they could be typed by hand)."""
    if (start := untouched(answer, judge=check_uniform_split)) is not None:
        return start
    if not isinstance(answer, dict) or "condition" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be its dict")
    cond, kind = answer["condition"], str(answer.get("data", "random"))
    if not isinstance(cond, str) or kind not in ("random", "sorted"):
        return CheckResult(
            False,
            "`answer` should hold the explorer's condition text and its data "
            "kind ('random' or 'sorted'): run the explorer cell again",
        )
    cond = str(cond)
    try:
        r = kd.run_branch(cond, kind, n=128, block=64)
    except Exception as e:  # a condition that does not compile or run
        return CheckResult(False, f"the condition does not run: {type(e).__name__}: {e}")
    n = r["threads_then"] + r["threads_else"]
    few = min(r["threads_then"], r["threads_else"])
    if few < n / 4:
        return CheckResult(
            False,
            f"`{cond}`: {r['threads_then']} threads take "
            f"the if-branch and {r['threads_else']} the else; both "
            f"should get at least a quarter of the {n}",
        )
    if r["efficiency"] < 1 - 1e-9:
        return CheckResult(
            False,
            f"`{cond}` splits some warp: E = "
            f"{r['efficiency']:.3f}. Make the condition the same for "
            f"all 32 lanes of a warp",
        )
    return CheckResult(
        True,
        f"`{cond}`: {r['threads_then']} / "
        f"{r['threads_else']} threads, E = 1: every warp takes one "
        f"path, so each path costs only the warps that take it",
    )


#: sizes the chapter's exercise text names: one odd (it has one more even element than odd ones,
#: so a split into halves of n // 2 reads past the end), one not a multiple of 64 (a boundary warp
#: may split)
SHADE_SIZES = (4096, 1001, 2048)
#: a warp-uniform shade issues at most this share of the divergent original's warp instructions
#: (the chapter's solution: 0.74-0.75; computing both recurrences everywhere: 1.0)
MAX_WORK_RATIO = 0.9


def shade_cases(block: int = 128, seed=None):
    """The exercise's sizes, new random inputs on every call unless ``seed`` is given."""
    rng = np.random.default_rng(seed)
    out = []
    for n in SHADE_SIZES:
        x = rng.random(n, dtype=np.float32)
        out.append(
            Case(
                f"n={n}, block={block}",
                -(-n // block),
                block,
                (np.full(n, np.nan, np.float32), x),
                {0: lambda x=x.copy(): kd.shade_reference(x)},
            )
        )
    return out


def check_warp_uniform(
    kernel, min_efficiency: float = 0.95, block: int = 128, max_work_ratio: float = MAX_WORK_RATIO, seed=None
) -> CheckResult:
    """Run ``kernel(out, x)`` with one thread per element on the simulator: output must equal
    :func:`gpulab.kernels.divergence.shade`'s, warp execution efficiency must reach the bar, and
    the warp-level instructions issued must stay below ``max_work_ratio`` times the divergent
    original's on the same input (a kernel that computes both recurrences for every element and
    blends them keeps every lane busy, E ~ 1, but does all the work twice)."""
    if (
        start := untouched(
            kernel,
            judge=check_warp_uniform,
            min_efficiency=min_efficiency,
            block=block,
            max_work_ratio=max_work_ratio,
            seed=seed,
        )
    ) is not None:
        return start
    import gpulab
    from gpulab import metrics

    cases = shade_cases(block, seed)
    res, reps = run_cases(
        kernel,
        cases,
        min_efficiency=min_efficiency,
        arg_names=("out", "x"),
        rtol=1e-5,
        atol=1e-4,
        hint_oob="an odd n has (n + 1) // 2 even elements and n // 2 odd ones: "
        "count the halves so that every thread's element exists",
        hint_mismatch=" (each element i must still get its own recurrence: "
        "the even one if i is even, the odd one otherwise)",
    )
    if not res.passed:
        return res
    worst = 0.0
    for case, rep in zip(cases, reps):
        x = case.args[1]
        base = gpulab.launch(kd.shade, case.grid, case.block, np.zeros_like(x), x, backend="sim")
        mine = rep.metrics.get(metrics.INST_EXECUTED, 0)
        theirs = base.metrics.get(metrics.INST_EXECUTED, 0)
        ratio = mine / theirs if theirs else 0.0
        worst = max(worst, ratio)
        if ratio > max_work_ratio:
            return CheckResult(
                False,
                f"{case.name}: output correct and E = {rep.warp_efficiency:.3f}, "
                f"but {mine} warp instructions issued, {ratio:.2f}x the "
                f"divergent original's {theirs}: every warp still runs both "
                f"recurrences. Give each warp elements of one parity, so "
                f"it runs one recurrence (at most {max_work_ratio:.2f}x)",
            )
        if len(x) % 2:  # the odd size: where the original's E is quoted
            odd, before = len(x), base.warp_efficiency
    res.message += (
        f", {worst:.2f}x the original's warp instructions at most (limit "
        f"{max_work_ratio:.2f}x; the original kernel at n = {odd}: E = {before:.3f})"
    )
    return res
