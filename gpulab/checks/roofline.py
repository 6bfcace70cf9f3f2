"""Self-check graded by predicted efficiency: how close a copy kernel comes to the DRAM roofline
on an H200, according to gpulab's performance model (:func:`gpulab.predict`).

The grade is relative to the book's own copy (:func:`gpulab.kernels.memory.copy`, one element
per thread, coalesced), not to the DRAM bound itself: the model predicts that even that ideal
copy spends part of its time outside the DRAM transfer (launch, ramp-up, latency), so an
absolute "80% of the DRAM bound" would be out of every kernel's reach.
"""

from __future__ import annotations

import numpy as np

from gpulab.checks.result import CheckResult
from gpulab.models.occupancy import WARP, Arch


def _launch_config(grid, block, n):
    """(grid, block) for n elements: ``grid`` may be None (one thread per element), a number,
    a tuple, or a callable n -> grid."""
    if callable(grid):
        grid = grid(n)
    if grid is None:
        grid = -(-n // block)
    return grid, block


def _behaves(kernel, grid, block, rng):
    """Run ``kernel(out, a)`` on the simulator with fresh random data of a size that is not a
    multiple of the block; None if out == a, else the failure message."""
    import gpulab

    n = int(rng.integers(3 * block, 9 * block))
    n += n % block == 0  # a partial last block
    a = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    g, b = _launch_config(grid, block, n)
    try:
        gpulab.launch(kernel, g, b, out, a.copy(), backend="sim")
    except Exception as e:  # noqa: BLE001 - report the reader's error, whatever it is
        return f"n = {n}, grid {g}, block {b}: the kernel failed: {type(e).__name__}: {e}"
    bad = np.flatnonzero(out != a)
    if len(bad):
        k = bad[0]
        never = " (never written)" if np.isnan(out[k]) else ""
        return (
            f"n = {n}, grid {g}, block {b}: wrong output: {len(bad)} of {n} elements differ, "
            f"first at [{k}]: got {out[k]:.9g}{never}, expected {a[k]:.9g}"
        )
    return None


def _too_few_blocks(grid, block, n, gpu):
    """A message when the launch at ``n`` has fewer blocks than ``gpu`` has SMs, else None.
    Such a grid leaves SMs without work, and each block copies so many elements that simulating
    one for the prediction runs past the grading limit (4 blocks: over 60 s, stopped as if it
    looped forever); grids of one block per SM or more are predicted within seconds."""
    from gpulab.perf import gpus

    g, _ = _launch_config(grid, block, n)
    blocks = int(np.prod(np.atleast_1d(np.asarray(g, dtype=np.int64))))
    sms = gpus.get(gpu).sms
    if blocks >= sms:
        return None
    return (
        f"at n = {n:,} your grid has {blocks} block(s) of {block} threads, fewer than the "
        f"{sms} SMs of an {gpu}: {sms - blocks} SMs get no work and each block copies about "
        f"{-(-n // max(blocks, 1)):,} elements, too few bytes in flight to approach the DRAM "
        f"bound (not predicted: simulating one such block takes longer than grading allows). "
        f"Launch one thread per element, or a grid-stride loop over several blocks per SM"
    )


def copy_fraction(kernel, n, grid=None, block=256, gpu="H200", budget_s=2.0):
    """(predicted DRAM-roofline fraction, Prediction) of ``kernel(out, a)`` copying n float32:
    (8n bytes / the GPU's DRAM bandwidth) / predicted time."""
    import gpulab

    a = np.zeros(n, dtype=np.float32)
    out = np.empty_like(a)
    g, b = _launch_config(grid, block, n)
    p = gpulab.predict(kernel, g, b, out, a, gpu=gpu, budget_s=budget_s)
    return p.dram_roofline_fraction(2 * a.nbytes), p


def check_copy_efficiency(
    kernel, grid=None, block=256, n=2**24, min_ratio=0.8, gpu="H200", seed=None, budget_s=2.0
) -> CheckResult:
    """Homework: a copy ``kernel(out, a)`` (out[i] = a[i] for every i < out.shape[0]) that comes
    within ``min_ratio`` of the book's copy in predicted DRAM-roofline fraction on ``gpu``.

    ``grid``: None for one thread per element (ceil(n / block) blocks), a fixed grid (e.g. for a
    grid-stride loop), or a callable n -> grid. First the kernel must copy correctly on the
    simulator (fresh random data, a size with a partial last block); then both kernels are
    predicted at n elements and compared. The reference is computed after the reader's call.
    """
    most = Arch.max_threads_per_block
    if not isinstance(block, (int, np.integer)) or not 0 < block <= most or block % WARP:
        return CheckResult(
            False, f"block should be a whole number of warps up to {most} threads, got {block!r}"
        )
    rng = np.random.default_rng(seed)
    err = _behaves(kernel, grid, block, rng)
    if err:
        return CheckResult(False, err)
    few = _too_few_blocks(grid, block, n, gpu)
    if few:
        return CheckResult(False, few)
    try:
        frac, p = copy_fraction(kernel, n, grid, block, gpu, budget_s)
    except Exception as e:  # noqa: BLE001
        return CheckResult(False, f"predicting n = {n:,}: {type(e).__name__}: {e}")
    moved = {k: p.metrics.get(f"dram__bytes_{k}.sum", 0.0) / (4 * n) for k in ("read", "write")}
    if min(moved.values()) < 0.95:
        return CheckResult(
            False,
            f"at n = {n:,} the prediction reads {moved['read']:.0%} and writes "
            f"{moved['write']:.0%} of the array's bytes: a copy must read and "
            f"write every element at every size, not only small ones",
        )
    from gpulab.kernels import memory as km

    ref, pr = copy_fraction(km.copy, n, None, 256, gpu, budget_s)
    need = min_ratio * ref
    head = (
        f"predicted on an {p.gpu} for {n:,} float32: {p.time_us:.1f} us, "
        f"{frac:.0%} of the DRAM roofline, limited by {p.limiter}; the book's copy: "
        f"{pr.time_us:.1f} us, {ref:.0%}"
    )
    if frac < need:
        return CheckResult(
            False,
            head + f". Needed at least {min_ratio:.0%} of the book's, "
            f"{need:.0%}: look at sectors per request (coalescing) "
            f"and at bytes in flight",
        )
    return CheckResult(True, head + f" (needed {need:.0%})")
