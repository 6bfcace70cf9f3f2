"""Device-wide inclusive prefix sum of int32 values: reduce-then-scan, three kernels.

1. ``scan_reduce``: every block sums its tile (one element per thread) into ``totals[block]``.
2. ``scan_totals``: one block turns ``totals`` into exclusive block offsets, in place, in chunks
   of its own size with a running carry, so any number of blocks works.
3. ``scan_apply``: every block scans its tile again and adds its block's offset.

The input is read twice and the output written once (3n element transfers), against 4n for
scan-then-propagate, which writes the block-local scan and later reads and rewrites it. Integers
keep the result exact, so it can be compared with ``numpy.cumsum`` bit for bit; sums wrap around
modulo 2**32 as int32 arithmetic does on a GPU. Within a block, warps scan by shuffle
(gpulab.kernels.warp) and one shared slot per warp carries the warp totals.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32

from gpulab.kernels.warp import (
    MAX_WARPS_PER_BLOCK,
    block_reduce_shfl,
    warp_scan_exclusive,
    warp_scan_inclusive,
)


@cuda.jit(device=True)
def block_scan_int(v, offsets):
    """Inclusive int32 scan over the block with two barriers (``offsets``: a slot per warp).

    Warps scan by shuffle, the last lane of each posts the warp total, warp 0 scans the totals
    into exclusive warp offsets, every thread adds its warp's offset.
    """
    lane = cuda.laneid
    wid = cuda.threadIdx.x // cuda.warpsize
    nwarps = (cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize
    inc = warp_scan_inclusive(v)
    if lane == cuda.warpsize - 1:
        offsets[wid] = inc
    cuda.syncthreads()
    if wid == 0:
        t = int32(0)
        if lane < nwarps:
            t = offsets[lane]
        ex = warp_scan_exclusive(t)
        if lane < nwarps:
            offsets[lane] = ex
    cuda.syncthreads()
    return inc + offsets[wid]


@cuda.jit
def scan_reduce(x, totals):
    """Pass 1: totals[b] = sum of block b's tile of x (elements past the end count as 0)."""
    partial = cuda.shared.array(MAX_WARPS_PER_BLOCK, int32)
    i = cuda.grid(1)
    v = int32(0)
    if i < x.shape[0]:
        v = x[i]
    t = block_reduce_shfl(v, partial)
    if cuda.threadIdx.x == 0:
        totals[cuda.blockIdx.x] = t


@cuda.jit
def scan_totals(totals):
    """Pass 2, one block: totals becomes its exclusive scan (each block's
    offset), in place."""
    offsets = cuda.shared.array(MAX_WARPS_PER_BLOCK, int32)
    chunk_total = cuda.shared.array(1, int32)
    m = totals.shape[0]
    carry = int32(0)
    base = 0
    while base < m:  # the same trip count in every thread: barriers are safe
        j = base + cuda.threadIdx.x
        v = int32(0)
        if j < m:
            v = totals[j]
        inc = block_scan_int(v, offsets)
        if j < m:
            totals[j] = carry + inc - v
        if cuda.threadIdx.x == cuda.blockDim.x - 1:
            chunk_total[0] = inc
        cuda.syncthreads()  # chunk_total written; offsets read by every warp
        carry += chunk_total[0]  # rewritten only after the next chunk's two barriers
        base += cuda.blockDim.x


@cuda.jit
def scan_apply(x, out, block_offsets):
    """Pass 3: out[i] = block-local inclusive scan + the block's offset from pass 2."""
    offsets = cuda.shared.array(MAX_WARPS_PER_BLOCK, int32)
    base = cuda.shared.array(1, int32)
    i = cuda.grid(1)
    v = int32(0)
    if i < x.shape[0]:
        v = x[i]
    if cuda.threadIdx.x == 0:  # one load per block, not one per warp;
        base[0] = block_offsets[cuda.blockIdx.x]  # the scan's barriers order it before the reads
    r = block_scan_int(v, offsets) + base[0]
    if i < out.shape[0]:
        out[i] = r


# Simulator time per element and pass: about 0.4 us on the 2-core CPU machine (2**20 elements:
# 0.4 s a pass, under 2 s with the machine loaded several times over). The budget below allows
# ten times that on top of the default, so a runaway loop still stops within seconds.
SIM_SECONDS_PER_ELEMENT = 4e-6


def device_scan(x, block: int = 1024, backend: str = "sim", timeout_s: float | None = None):
    """Inclusive prefix sum of the int32 array ``x`` with the three passes above.

    Returns ``(out, reports)``: the scan and the three launches' Reports, in order (reduce,
    totals, apply), whose counters show what each pass costs. ``timeout_s`` bounds each simulated
    launch; by default it grows with the size, since a million elements take seconds to simulate.
    """
    import gpulab
    from gpulab.launch import DEFAULT_TIMEOUT_S

    x = np.asarray(x)
    if x.ndim != 1 or x.dtype != np.int32:
        raise TypeError(
            f"device_scan needs a 1-D int32 array, got {x.dtype} with shape {x.shape}; "
            "convert with x.astype(np.int32)"
        )
    if x.size == 0:
        raise ValueError("device_scan needs at least one element")
    if block % 32 or not 32 <= block <= 1024:
        raise ValueError(f"block={block}: use a multiple of 32 from 32 to 1024 threads")
    blocks = -(-x.size // block)
    if timeout_s is None:
        timeout_s = DEFAULT_TIMEOUT_S + SIM_SECONDS_PER_ELEMENT * blocks * block
    totals = np.zeros(blocks, np.int32)
    out = np.zeros_like(x)
    kw = {"backend": backend, "timeout_s": timeout_s}
    reps = [
        gpulab.launch(scan_reduce, blocks, block, x, totals, **kw),
        gpulab.launch(scan_totals, 1, block, totals, **kw),
        gpulab.launch(scan_apply, blocks, block, x, out, totals, **kw),
    ]
    return out, reps


def traffic(reports) -> dict:
    """Global-memory bytes the launches request, from their L1 sector counters (32 B each):
    {"ld": bytes, "st": bytes}. On a GPU part of it may be served by the L2 cache."""
    from gpulab import metrics as M

    return {
        op: sum(r.metrics.get(M.GLOBAL_SECTORS[op], 0) for r in reports) * M.SECTOR_BYTES
        for op in ("ld", "st")
    }


def describe(reports, n: int) -> str:
    """One line per pass: blocks, barriers per block, shuffles, and global bytes per element."""
    from gpulab import metrics as M

    lines = [
        f"{'':12s} {'':>7s} {'barriers':>9s} {'shuffles':>10s} {'global bytes/element':>21s}",
        f"{'pass':12s} {'blocks':>7s} {'/block':>9s} {'(warp)':>10s} {'loads':>10s} {'stores':>10s}",
    ]
    for r in reports:
        shuffles = sum(v for k, v in r.intrinsics.items() if k.startswith("shfl"))
        ld, st = (r.metrics.get(M.GLOBAL_SECTORS[op], 0) * M.SECTOR_BYTES / n for op in ("ld", "st"))
        lines.append(
            f"{r.kernel:12s} {int(np.prod(r.grid)):7,d} {r.barriers:9d} {shuffles:10,d} {ld:10.3f} {st:10.3f}"
        )
    return "\n".join(lines)
