"""Launch shapes: how a grid of blocks covers an array, and how blocks fold into warps of 32.

Pure arithmetic (no kernel runs): grid sizes by ceiling division, threads launched, threads that
fall outside the data (idle behind an edge guard), warps per block and lanes of a block's last
warp that do not exist because the block size is not a multiple of 32.
"""

from __future__ import annotations

import math

from gpulab.models.occupancy import WARP, Arch

MAX_THREADS_PER_BLOCK = Arch.max_threads_per_block
MAX_BLOCK_DIMS = Arch.max_block_dims
MAX_GRID_DIMS = Arch.max_grid_dims


def _tuple(v):
    return (int(v),) if isinstance(v, (int,)) or hasattr(v, "__index__") else tuple(int(a) for a in v)


def grid_for(shape, block):
    """Blocks per dimension so that ``block`` tiles cover ``shape`` (ceil division per axis).

    ``shape`` and ``block`` are given x first (width, height), as CUDA orders dimensions."""
    shape, block = _tuple(shape), _tuple(block)
    if len(shape) != len(block):
        raise ValueError(f"shape {shape} and block {block} need the same number of dimensions")
    return tuple(math.ceil(s / b) for s, b in zip(shape, block))


def summary(shape, block) -> dict:
    """Counts for covering ``shape`` (x first) with ``block``: grid, threads, idle threads, warps,
    lanes per block left empty because the block is not a multiple of 32."""
    shape, block = _tuple(shape), _tuple(block)
    grid = grid_for(shape, block)
    per_block = math.prod(block)
    blocks = math.prod(grid)
    warps_per_block = math.ceil(per_block / WARP)
    elements = math.prod(shape)
    threads = blocks * per_block
    return {
        "grid": grid,
        "block": block,
        "blocks": blocks,
        "threads_per_block": per_block,
        "threads": threads,
        "elements": elements,
        "idle_threads": threads - elements,
        "warps_per_block": warps_per_block,
        "warps": blocks * warps_per_block,
        "empty_lanes_per_block": warps_per_block * WARP - per_block,
        "lane_utilization": elements / (blocks * warps_per_block * WARP),
        "valid": per_block <= MAX_THREADS_PER_BLOCK
        and all(b <= m for b, m in zip(block, MAX_BLOCK_DIMS))
        and all(g <= m for g, m in zip(grid, MAX_GRID_DIMS)),
    }


def block_shapes(max_threads: int = MAX_THREADS_PER_BLOCK, multiple: int = WARP):
    """All 2-D block shapes (bx, by) with bx*by a multiple of ``multiple`` and at most
    ``max_threads`` threads, within the per-dimension limits."""
    out = []
    for bx in range(1, MAX_BLOCK_DIMS[0] + 1):
        for by in range(1, max_threads // bx + 1):
            t = bx * by
            if t % multiple == 0 and by <= MAX_BLOCK_DIMS[1]:
                out.append((bx, by))
    return out


def fewest_idle(shape, threads: int | None = None):
    """(idle threads, list of block shapes) with the fewest idle threads covering a 2-D ``shape``
    (x first); only blocks of exactly ``threads`` threads if given, else any multiple of 32."""
    best, shapes = None, []
    for b in block_shapes():
        if threads is not None and b[0] * b[1] != threads:
            continue
        idle = summary(shape, b)["idle_threads"]
        if best is None or idle < best:
            best, shapes = idle, [b]
        elif idle == best:
            shapes.append(b)
    return best, shapes
