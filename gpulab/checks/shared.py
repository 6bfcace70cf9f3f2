"""Self-checks for chapter 06 (shared memory, bank conflicts); also used by the homework's tests."""
from __future__ import annotations

import numpy as np

from gpulab import metrics
from gpulab.checks.result import CheckResult
from gpulab.plots import memory as pm


def check_float64_padding(answer) -> CheckResult:
    """Widget task: with 8-byte elements, the narrowest tile row width >= 32 whose column read
    reaches the ideal wavefront count. ``answer`` is the dict the bank explorer writes."""
    if not isinstance(answer, dict) or "row_width" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be the dict it writes")
    eb, w = answer["elem_bytes"], answer["row_width"]
    if eb != 8:
        return CheckResult(False, f"set element bytes to 8 (you have {eb})")
    if w < 32:
        return CheckResult(False, "the tile holds 32 columns: the row width must be at least 32")

    def summary(width):
        return pm.bank_summary(pm.warp_addresses(width, 0, 8), 8)

    s = summary(w)
    if s["conflicts"]:
        return CheckResult(False, f"width {w}: {s['wavefronts']} wavefronts against an ideal "
                                  f"{s['ideal']}: still {s['conflicts']} extra")
    narrower = [x for x in range(32, w) if summary(x)["conflicts"] == 0]
    if narrower:
        return CheckResult(False, f"width {w} is conflict-free, but so is {narrower[0]}: less padding")
    return CheckResult(True, f"width {w}: {s['wavefronts']} wavefronts, the minimum for 32 lanes x "
                             "8 bytes (256 bytes need 2 wavefronts of 128)")


def check_row_sums(kernel, backend="sim") -> CheckResult:
    """Exercise: row_sums(out, a) for a (n, 32) float32 matrix, launched with grid (n/32,) and
    block (32, 32). Passes if the sums are right and every shared-memory load instruction
    takes the ideal number of wavefronts (no bank conflicts)."""
    import gpulab

    n = 64
    rng = np.random.default_rng(6)
    a = rng.random((n, 32), dtype=np.float32)
    out = np.zeros(n, np.float32)
    try:
        rep = gpulab.launch(kernel, (n // 32,), (32, 32), out, a, backend=backend)
    except Exception as e:  # noqa: BLE001
        return CheckResult(False, f"the kernel failed: {type(e).__name__}: {e}")
    want = a.sum(axis=1)
    if not np.allclose(out, want, rtol=1e-5):
        i = int(np.argmax(~np.isclose(out, want, rtol=1e-5)))
        return CheckResult(False, f"wrong output: row {i} sums to {want[i]:.4f}, got {out[i]:.4f}")
    m = rep.metrics
    inst = m[metrics.SHARED_INSTRUCTIONS["ld"]]
    wf = m[metrics.SHARED_WAVEFRONTS["ld"]]
    conflicts = m[metrics.SHARED_BANK_CONFLICTS["ld"]]
    if inst == 0:
        return CheckResult(False, "output correct, but the kernel does not read shared memory at all: "
                                  "the exercise is to keep the shared tile and fix its layout")
    if conflicts:
        return CheckResult(False, f"output correct, but {wf / inst:.1f} wavefronts per shared load "
                                  f"instruction ({conflicts} bank conflicts): lanes of a warp still "
                                  "hit the same bank")
    return CheckResult(True, f"output correct and {wf / inst:.1f} wavefront per shared load "
                             "instruction: no bank conflicts")
