"""Checks for chapter 03 (warp divergence), shared with the homework: a kernel must give the right
values on any length *and* keep every lane of a warp on the same path, which the simulator
measures as warp execution efficiency (:data:`gpulab.metrics` counting rule: average active
lanes per warp-level instruction / 32)."""
from __future__ import annotations

import math

import numpy as np

from gpulab.checks.kernels import Case, CheckResult, run_cases


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
