"""Self-checks for chapter 05 (memory hierarchy, coalescing); also used by the homework's tests."""

from __future__ import annotations

import numpy as np

from gpulab import metrics
from gpulab.checks.answers import as_whole
from gpulab.checks.result import CheckResult
from gpulab.models import memory as mm
from gpulab.checks.result import untouched


def _sectors(stride, offset=0, elem_bytes=4):
    return mm.coalescing_summary(mm.warp_addresses(stride, offset, elem_bytes), elem_bytes)["sectors"]


def check_own_sector(answer) -> CheckResult:
    """Widget task: the smallest float32 stride (offset 0) at which every lane of a warp needs
    a 32-byte sector of its own. ``answer`` is the dict the coalescing explorer writes."""
    if (start := untouched(answer, judge=check_own_sector)) is not None:
        return start
    if not isinstance(answer, dict) or "stride" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be the dict it writes")
    s, off, eb = (as_whole(answer.get(k)) for k in ("stride", "offset", "elem_bytes"))
    if s is None or s < 1:
        return CheckResult(False, f"stride should be a whole number of elements, got {answer['stride']!r}")
    if eb != 4 or off != 0:
        return CheckResult(False, f"set element bytes to 4 and offset to 0 (you have {eb} and {off})")
    got = _sectors(s)
    if got < metrics.WARP:
        return CheckResult(False, f"stride {s}: {got} sectors, so some lanes still share a sector")
    if s > 1 and _sectors(s - 1) >= metrics.WARP:
        return CheckResult(
            False, f"stride {s} gives 32 sectors, but so does a smaller stride: find the smallest"
        )
    return CheckResult(
        True,
        f"stride {s}: 32 sectors of 32 bytes for 128 useful bytes; a sector "
        f"holds {metrics.SECTOR_BYTES // 4} float32, so from stride "
        f"{metrics.SECTOR_BYTES // 4} on no two lanes share one",
    )


def _scale_one(kernel, h, w, rng, backend):
    """Launch ``kernel(out, a, factor)`` on an h x w matrix with block (32, 8) and a grid of
    ceil(w/32) x ceil(h/8); return (report or None, failure message or None)."""
    import gpulab

    a = rng.random((h, w), dtype=np.float32)
    factor = np.float32(rng.uniform(0.5, 4.0))
    out = np.full_like(a, np.nan)
    try:
        rep = gpulab.launch(
            kernel, (-(-w // 32), -(-h // 8)), (32, 8), out, a.copy(), factor, backend=backend
        )
    except Exception as e:  # noqa: BLE001 - report the reader's error, whatever it is
        return None, f"{h} x {w} matrix: the kernel failed: {type(e).__name__}: {e}"
    want = factor * a
    bad = np.argwhere(~np.isclose(out, want))
    if len(bad):
        r, c = bad[0]
        never = " (never written)" if np.isnan(out[r, c]) else ""
        return None, (
            f"{h} x {w} matrix: wrong output: {len(bad)} of {h * w} elements differ, first "
            f"at [{r}, {c}]: got {out[r, c]:.9g}{never}, expected {want[r, c]:.9g}"
        )
    return rep, None


def check_scale(kernel, backend="sim", seed=None) -> CheckResult:
    """Exercise: a kernel scale(out, a, factor) computing out = factor * a on a square float32
    matrix, launched with block (32, 8) and grid ceil(n/32) x ceil(n/8). Sides of 64 and of a
    random multiple of 32 must be right with coalesced loads (at most 4 sectors per global load
    request: 32 lanes x 4 bytes); a random side that is not a multiple of 32 must be right too.
    New random data and sizes on every call unless ``seed``."""
    if (start := untouched(kernel, judge=check_scale, backend=backend, seed=seed)) is not None:
        return start
    rng = np.random.default_rng(seed)
    square = [64, 32 * int(rng.integers(3, 6))]
    spr = 0.0
    for n in square:
        rep, err = _scale_one(kernel, n, n, rng, backend)
        if err:
            return CheckResult(False, err)
        if backend != "sim":
            continue
        spr = rep.sectors_per_request("ld") or 0.0
        if spr > 4.0 + 1e-9:
            return CheckResult(
                False,
                f"{n} x {n} matrix: output correct, but {spr:.1f} sectors per "
                "load request (ideal 4): consecutive lanes (threadIdx.x) should "
                "read consecutive addresses, i.e. the last index of a[r, c]",
            )
    m = int(rng.integers(5, 150))
    m += m % 8 == 0  # a side that is a multiple of neither block side (32 columns, 8 rows), so a
    # kernel that guards only one side fails on every run (m = 40 spared a missing row guard)
    rep, err = _scale_one(kernel, m, m, rng, backend)
    if err:
        return CheckResult(False, err + " (guard both sides: row < a.shape[0] and col < a.shape[1])")
    return CheckResult(
        True,
        f"output correct on {' and '.join(f'{n} x {n}' for n in square)} "
        f"({spr:.1f} sectors per load request: coalesced) and on {m} x {m}",
    )
