"""Checks for one-dimensional kernels over arrays of any length (homework 02): the launch covers
every element, and threads past the end touch nothing. Expected values are computed with numpy;
the launch-shape rule is :func:`gpulab.models.launch.grid_for`."""

from __future__ import annotations

import math

import numpy as np

from gpulab.checks.answers import as_int
from gpulab.checks.kernels import Case, CheckResult, run_cases
from gpulab.models import launch as lm


def is_integral(v) -> bool:
    """An int of any kind (Python or numpy; anything with ``__index__``), but not a bool or a
    float: what a launch accepts as a grid size."""
    return as_int(v) is not None


def edge_sizes(block: int, seed=None, extra: int = 1):
    """Lengths that catch guard and rounding mistakes: 1, block - 1, block, block + 1, a few
    blocks and a bit, ``extra`` random lengths (``seed=None``: different every call), and one
    random length of 16 to 40 blocks, so a guard hard-coded to a demo's size (``i < 1000``)
    fails on every run, not only when a random length happens to exceed it."""
    rng = np.random.default_rng(seed)
    sizes = [1, block - 1, block, block + 1, 3 * block + 7]
    sizes += [int(rng.integers(2, 40 * block)) for _ in range(extra)]
    sizes.append(int(rng.integers(16 * block, 40 * block)))
    return [n for n in sizes if n >= 1]


def check_blocks_for(fn, seed=None) -> CheckResult:
    """A reader's ``blocks_for(n, block)``: the fewest blocks of ``block`` threads that cover ``n``
    elements (ceil division), on fixed corners and random cases."""
    rng = np.random.default_rng(seed)
    cases = [(1, 32), (32, 32), (33, 32), (256, 128), (1000, 256), (1, 1024), (1025, 1024)]
    cases += [(int(rng.integers(1, 10**7)), int(rng.choice([32, 64, 96, 128, 256, 1024]))) for _ in range(30)]
    cases = tuple(cases)  # a tuple: a function that reaches this frame cannot shorten it
    for n, b in cases:
        try:
            got = fn(n, b)
        except Exception as e:  # the reader's code raised
            return CheckResult(False, f"blocks_for({n}, {b}) raised {type(e).__name__}: {e}")
        if got is None:
            return CheckResult(False, "blocks_for returned None: not solved yet")
        if as_int(got) is None:
            return CheckResult(False, f"blocks_for({n}, {b}) returned {got!r}: a grid size is an int")
        got = as_int(got)  # the plain int it holds, whatever its __eq__
        want = lm.grid_for((n,), (b,))[0]  # after the call: nothing to peek at
        if got != want:
            hint = " (round up: a partial block still needs a whole block)" if got == n // b else ""
            return CheckResult(False, f"blocks_for({n}, {b}) should be {want}, got {got}{hint}")
    return CheckResult(True, f"correct on {len(cases)} cases (ceil(n / block))")


def saxpy_reference(a, x, y):
    """out = a * x + y in float32, as the kernel computes it."""
    return (np.float32(a) * x + y).astype(np.float32)


def check_saxpy(kernel, block: int = 128, seed=None, sizes=None, backend: str = "sim") -> CheckResult:
    """A kernel ``saxpy(out, a, x, y)`` (out[i] = a x[i] + y[i]) launched with ceil(n/block)
    blocks of ``block`` threads, on lengths that are and are not multiples of the block; random
    data (``seed=None``: new data each call). Out-of-bounds accesses fail the check."""
    rng = np.random.default_rng(seed)
    cases = []
    for n in sizes or edge_sizes(block, seed):
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        a = np.float32(rng.uniform(-3, 3))
        out = np.full(n, np.nan, np.float32)
        cases.append(
            Case(
                f"n={n}",
                (math.ceil(n / block),),
                (block,),
                (out, a, x, y),
                {0: lambda a=a, x=x.copy(), y=y.copy(): saxpy_reference(a, x, y)},
            )
        )
    res, _ = run_cases(
        kernel,
        cases,
        backend=backend,
        rtol=1e-5,
        atol=1e-5,
        arg_names=("out", "a", "x", "y"),
        hint_oob="the last block has threads past the end of the arrays: they must "
        "not touch them (is the guard i < n, with n = out.shape[0]?)",
        hint_mismatch=" (out[i] = a * x[i] + y[i] for every i < n)",
    )
    return res
