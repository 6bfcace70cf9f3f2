"""Checks for chapter 03 (warp divergence), shared with the homework: a kernel must give the right
values on any length *and* keep every lane of a warp on the same path, which the simulator
measures as warp execution efficiency (:data:`gpulab.metrics` counting rule: average active
lanes per warp-level instruction / 32)."""
from __future__ import annotations

import math

import numpy as np

from gpulab.checks.kernels import Case, CheckResult, run_cases
from gpulab.kernels import divergence as kd


def parity_reference(x: np.ndarray) -> np.ndarray:
    """out[i] = 2 x[i] at even i, x[i] + 1 at odd i (float32)."""
    out = (x + np.float32(1)).astype(np.float32)
    out[0::2] = (np.float32(2) * x[0::2]).astype(np.float32)
    return out


def _cases(sizes, block, rng):
    cases = []
    for n in sizes:
        x = rng.standard_normal(n).astype(np.float32)
        cases.append(Case(f"n={n}", (math.ceil(n / block),), (block,),
                          (np.full(n, np.nan, np.float32), x), {0: parity_reference(x)}))
    return cases


def check_parity_scale(kernel, block: int = 128, seed=None, min_efficiency: float = 0.99,
                       backend: str = "sim") -> CheckResult:
    """``kernel(out, x)`` computing :func:`parity_reference` without divergence: right values on
    lengths that are not multiples of the block, and warp execution efficiency of at least
    ``min_efficiency`` on full blocks (an if/else on i % 2 halves it)."""
    rng = np.random.default_rng(seed)
    odd = [1, block - 1, block + 3, int(rng.integers(2, 20 * block))]
    res, _ = run_cases(kernel, _cases(odd, block, rng), backend=backend, atol=1e-5,
                       arg_names=("out", "x"),
                       hint_mismatch=" (2 * x[i] where i is even, x[i] + 1 where it is odd)")
    if not res:
        return res
    full = [block * int(rng.integers(1, 8)) for _ in range(2)]
    res2, _ = run_cases(kernel, _cases(full, block, rng), backend=backend, atol=1e-5,
                        arg_names=("out", "x"), min_efficiency=min_efficiency)
    if res2 and backend == "sim":
        return CheckResult(True, res2.message + f"; also correct for n = {', '.join(map(str, odd))}")
    return res2


# -- chapter 03's own exercises ------------------------------------------------------------

def check_uniform_split(answer) -> CheckResult:
    """Widget exercise: a condition that sends at least a quarter of the threads each way and
    still has warp execution efficiency 1 (no warp is split)."""
    if not isinstance(answer, dict) or "condition" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be its dict")
    if "error" in answer:
        return CheckResult(False, f"the condition does not run: {answer['error']}")
    n = answer["threads_then"] + answer["threads_else"]
    few = min(answer["threads_then"], answer["threads_else"])
    if few < n / 4:
        return CheckResult(False, f"`{answer['condition']}`: {answer['threads_then']} threads take "
                                  f"the if-branch and {answer['threads_else']} the else; both "
                                  f"should get at least a quarter of the {n}")
    if answer["efficiency"] < 1 - 1e-9:
        return CheckResult(False, f"`{answer['condition']}` splits some warp: E = "
                                  f"{answer['efficiency']:.3f}. Make the condition the same for "
                                  f"all 32 lanes of a warp")
    return CheckResult(True, f"`{answer['condition']}`: {answer['threads_then']} / "
                             f"{answer['threads_else']} threads, E = 1: every warp takes one "
                             f"path, so each path costs only the warps that take it")


def shade_cases(block: int = 128, seed: int = 3):
    """Sizes that are and are not multiples of 64 (one boundary warp may split)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in (4096, 1000, 2048):
        x = rng.random(n, dtype=np.float32)
        out.append(Case(f"n={n}, block={block}", -(-n // block), block,
                        (np.full(n, np.nan, np.float32), x), {0: kd.shade_reference(x)}))
    return out


def check_warp_uniform(kernel, min_efficiency: float = 0.95, block: int = 128) -> CheckResult:
    """Run ``kernel(out, x)`` with one thread per element on the simulator: output must equal
    :func:`gpulab.kernels.divergence.shade`'s and warp execution efficiency must reach the bar."""
    res, reps = run_cases(kernel, shade_cases(block), min_efficiency=min_efficiency,
                          arg_names=("out", "x"), rtol=1e-5, atol=1e-4,
                          hint_mismatch=" (each element i must still get its own recurrence: "
                                        "the even one if i is even, the odd one otherwise)")
    if res.passed:
        import gpulab
        x = np.random.default_rng(0).random(1000, dtype=np.float32)
        before = gpulab.launch(kd.shade, -(-1000 // block), block,
                               np.zeros(1000, np.float32), x, backend="sim").warp_efficiency
        res.message += f" (the original kernel: {before:.3f})"
    return res
