"""Self-checks for chapter 05 (memory hierarchy, coalescing); also used by the homework's tests."""
from __future__ import annotations

import numpy as np

from gpulab import metrics
from gpulab.checks.result import CheckResult
from gpulab.plots import memory as pm


def _sectors(stride, offset=0, elem_bytes=4):
    return pm.coalescing_summary(pm.warp_addresses(stride, offset, elem_bytes), elem_bytes)["sectors"]


def check_own_sector(answer) -> CheckResult:
    """Widget task: the smallest float32 stride (offset 0) at which every lane of a warp needs
    a 32-byte sector of its own. ``answer`` is the dict the coalescing explorer writes."""
    if not isinstance(answer, dict) or "stride" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be the dict it writes")
    s, off, eb = answer["stride"], answer["offset"], answer["elem_bytes"]
    if eb != 4 or off != 0:
        return CheckResult(False, f"set element bytes to 4 and offset to 0 (you have {eb} and {off})")
    got = _sectors(s)
    if got < metrics.WARP:
        return CheckResult(False, f"stride {s}: {got} sectors, so some lanes still share a sector")
    if s > 1 and _sectors(s - 1) >= metrics.WARP:
        return CheckResult(False, f"stride {s} gives 32 sectors, but so does a smaller stride: "
                                  "find the smallest")
    return CheckResult(True, f"stride {s}: 32 sectors of 32 bytes for 128 useful bytes; a sector "
                             f"holds {metrics.SECTOR_BYTES // 4} float32, so from stride "
                             f"{metrics.SECTOR_BYTES // 4} on no two lanes share one")


def check_scale(kernel, backend="sim") -> CheckResult:
    """Exercise: a kernel scale(out, a, factor) computing out = factor * a on a square float32
    matrix, launched with block (32, 8). Passes if the output is right and its loads are
    coalesced: at most 4 sectors per global load request (32 lanes x 4 bytes = 4 sectors)."""
    import gpulab

    n = 64
    rng = np.random.default_rng(5)
    a = rng.random((n, n), dtype=np.float32)
    out = np.zeros_like(a)
    try:
        rep = gpulab.launch(kernel, (n // 32, n // 8), (32, 8), out, a, np.float32(3.0), backend=backend)
    except Exception as e:  # noqa: BLE001 - report the reader's error, whatever it is
        return CheckResult(False, f"the kernel failed: {type(e).__name__}: {e}")
    if not np.allclose(out, 3.0 * a):
        bad = np.argwhere(~np.isclose(out, 3.0 * a))
        r, c = bad[0]
        return CheckResult(False, f"wrong output: {len(bad)} of {n * n} elements differ, first at "
                                  f"[{r}, {c}]: got {out[r, c]}, expected {3.0 * a[r, c]}")
    spr = rep.sectors_per_request("ld")
    if spr > 4.0 + 1e-9:
        return CheckResult(False, f"output correct, but {spr:.1f} sectors per load request (ideal 4): "
                                  "consecutive lanes (threadIdx.x) should read consecutive addresses, "
                                  "i.e. the last index of a[r, c]")
    return CheckResult(True, f"output correct and {spr:.1f} sectors per load request: coalesced")
