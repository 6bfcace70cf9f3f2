"""Self-checks for chapter 06 (shared memory, bank conflicts); also used by the homework's tests."""

from __future__ import annotations

import numpy as np

from gpulab import metrics
from gpulab.checks.answers import as_whole
from gpulab.checks.result import CheckResult
from gpulab.models import memory as mm
from gpulab.checks.result import untouched


def check_float64_padding(answer) -> CheckResult:
    """Widget task: with 8-byte elements, the narrowest tile row width >= 32 whose column read
    reaches the ideal wavefront count. ``answer`` is the dict the bank explorer writes."""
    if (start := untouched(answer, judge=check_float64_padding)) is not None:
        return start
    if not isinstance(answer, dict) or "row_width" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be the dict it writes")
    eb, w = as_whole(answer.get("elem_bytes")), as_whole(answer.get("row_width"))
    if w is None:
        return CheckResult(False, f"row_width should be a whole number, got {answer['row_width']!r}")
    if eb != 8:
        return CheckResult(False, f"set element bytes to 8 (you have {eb})")
    if w < 32:
        return CheckResult(False, "the tile holds 32 columns: the row width must be at least 32")

    def summary(width):
        return mm.bank_summary(mm.warp_addresses(width, 0, 8), 8)

    s = summary(w)
    if s["conflicts"]:
        return CheckResult(
            False,
            f"width {w}: {s['wavefronts']} wavefronts against an ideal "
            f"{s['ideal']}: still {s['conflicts']} extra",
        )
    narrower = [x for x in range(32, w) if summary(x)["conflicts"] == 0]
    if narrower:
        return CheckResult(False, f"width {w} is conflict-free, but so is {narrower[0]}: less padding")
    return CheckResult(
        True,
        f"width {w}: {s['wavefronts']} wavefronts, the minimum for 32 lanes x "
        "8 bytes (256 bytes need 2 wavefronts of 128)",
    )


def check_row_sums(kernel, backend="sim", seed=None) -> CheckResult:
    """Exercise: row_sums(out, a) for a (n, 32) float32 matrix, launched with grid (ceil(n/32),)
    and block (32, 32), for n = 64 and a random n that is not a multiple of 32 (new random data
    on every call unless ``seed`` is given). Passes if the sums are right, are read from the tile
    (at least 32 warp-wide shared loads per whole block: a token read beside sums taken from
    global memory fails) and every shared-memory load *and* store instruction takes the ideal
    number of wavefronts (no bank conflicts)."""
    if (start := untouched(kernel, judge=check_row_sums, backend=backend, seed=seed)) is not None:
        return start
    import gpulab

    rng = np.random.default_rng(seed)
    extra = int(rng.integers(33, 200))
    sizes = [64, extra + 1 if extra % 32 == 0 else extra]  # the second ends in a partial tile
    for n in sizes:
        a = rng.random((n, 32), dtype=np.float32)
        out = np.full(n, np.nan, np.float32)
        try:
            rep = gpulab.launch(kernel, (-(-n // 32),), (32, 32), out, a.copy(), backend=backend)
        except Exception as e:  # noqa: BLE001
            return CheckResult(False, f"n={n}: the kernel failed: {type(e).__name__}: {e}")
        want = a.sum(axis=1)
        if not np.allclose(out, want, rtol=1e-5):
            i = int(np.argmax(~np.isclose(out, want, rtol=1e-5)))
            return CheckResult(False, f"n={n}: wrong output: row {i} sums to {want[i]:.9g}, got {out[i]:.9g}")
        if backend != "sim":
            continue
        m = rep.metrics
        if m[metrics.SHARED_INSTRUCTIONS["ld"]] == 0:
            return CheckResult(
                False,
                "output correct, but the kernel does not read shared memory at "
                "all: the exercise is to keep the shared tile and fix its layout",
            )
        loads, full = m[metrics.SHARED_INSTRUCTIONS["ld"]], n // 32
        if n % 32 == 0 and loads < full * metrics.WARP:
            return CheckResult(
                False,
                f"n={n}: output correct, but {loads / full:.0f} shared load instructions per "
                f"block: a 32 x 32 tile holds {metrics.WARP * metrics.WARP} values and one warp-wide "
                f"load reads at most {metrics.WARP}, so summing the rows from the tile takes at "
                f"least {metrics.WARP}. Sum from the shared tile, not from global memory",
            )
        for op, what in (("ld", "load"), ("st", "store")):
            inst = m[metrics.SHARED_INSTRUCTIONS[op]]
            conflicts = m[metrics.SHARED_BANK_CONFLICTS[op]]
            if inst and conflicts:
                wf = m[metrics.SHARED_WAVEFRONTS[op]]
                return CheckResult(
                    False,
                    f"n={n}: output correct, but {wf / inst:.1f} wavefronts per "
                    f"shared {what} instruction ({conflicts} bank conflicts): "
                    f"lanes of a warp still hit the same bank",
                )
    return CheckResult(
        True,
        f"output correct for n = {', '.join(map(str, sizes))} and 1.0 "
        "wavefront per shared load and store instruction: no bank conflicts",
    )
