"""Generic kernel check: run a reader's kernel on gpulab's simulator, compare outputs, report why.

Any chapter can build a list of :class:`Case` (launch shape, arguments, expected outputs) and call
:func:`run_cases`. The simulator raises on out-of-bounds indices, divergent barriers and races,
so "no out-of-bounds access" is checked by the run itself; optional thresholds check counters
(warp execution efficiency) the simulator measures.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
from gpulab.checks.result import CheckResult  # noqa: F401 (re-exported)

__all__ = ["CheckResult", "Case", "run_cases", "first_mismatch"]


@dataclass
class Case:
    """One launch: ``kernel[grid, block](*args)``; ``expected`` maps argument index -> array, or
    -> a function of no arguments returning it (computed only after the launch, so no expected
    value exists anywhere while the reader's code runs)."""

    name: str
    grid: object
    block: object
    args: tuple
    expected: dict = field(default_factory=dict)


def first_mismatch(got: np.ndarray, want: np.ndarray, rtol: float, atol: float):
    """(index, got, want, number wrong) of the first differing element, or None if all match."""
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=False)
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return idx, got[idx], want[idx], int(bad.sum())


def run_cases(
    kernel,
    cases,
    *,
    backend: str = "sim",
    rtol: float = 1e-5,
    atol: float = 1e-6,
    min_efficiency: float | None = None,
    arg_names=None,
    hint_oob: str | None = None,
    hint_mismatch: str = "",
):
    """Run every case; return ``(CheckResult, reports)``.

    Fails with the case name and the reason: the simulator stopped the kernel (its message names
    the line and threads), an output element differs (which, expected, got; NaN = never written),
    or the warp execution efficiency is below ``min_efficiency``. ``hint_oob`` and
    ``hint_mismatch`` add a chapter-specific hint to those two failures.
    """
    import gpulab
    from gpulab.errors import KernelError, OutOfBounds

    reps = []
    effs = []
    for case in cases:
        args = tuple(copy.deepcopy(a) if isinstance(a, np.ndarray) else a for a in case.args)
        try:
            rep = gpulab.launch(kernel, case.grid, case.block, *args, backend=backend)
        except OutOfBounds as e:
            hint = hint_oob or (
                "threads whose index falls outside the data must not touch it: guard the edges"
            )
            return CheckResult(False, f"{case.name}: out-of-bounds access, {hint}.\n{e}"), reps
        except KernelError as e:
            return CheckResult(False, f"{case.name}: the simulator stopped your kernel.\n{e}"), reps
        except Exception as e:  # the reader's code or the launch itself
            return CheckResult(False, f"{case.name}: {type(e).__name__}: {e}"), reps
        reps.append(rep)
        for pos, want in case.expected.items():
            want = np.asarray(want() if callable(want) else want)
            got = args[pos]
            name = arg_names[pos] if arg_names else f"argument {pos}"
            if got.shape != want.shape:
                return CheckResult(
                    False, f"{case.name}: {name} has shape {got.shape}, expected {want.shape}"
                ), reps
            mm = first_mismatch(got, want, rtol, atol)
            if mm:
                idx, g, w, n = mm
                where = ", ".join(map(str, idx))
                extra = " (never written: no thread stored it)" if np.isnan(g) else ""
                hint = hint_mismatch
                return CheckResult(
                    False,
                    f"{case.name}: {name}[{where}] = {g:.9g}, expected {w:.9g}"
                    f"{extra}; {n} of {want.size} elements wrong{hint}",
                ), reps
        if min_efficiency is not None and backend == "sim":
            eff = float(rep.warp_efficiency)
            effs.append(eff)
            if eff < min_efficiency:
                return CheckResult(
                    False,
                    f"{case.name}: output correct, but warp execution "
                    f"efficiency is {eff:.3f} < {min_efficiency}: "
                    f"lanes of a warp still take different paths",
                ), reps
    msg = f"correct output on {len(reps)} case(s) ({', '.join(c.name for c in cases)})"
    if effs:
        msg += f", warp execution efficiency >= {min(effs):.3f}"
    return CheckResult(True, msg + ", no out-of-bounds access"), reps
