"""Kernels that record which thread handled which element, for chapter 02's launch pictures.

Every thread of the launch writes its own ids into arrays sized to the whole launch (not to the
data), so threads outside the data are visible too; ``inside`` says whether the edge guard would
let the thread work. Run through ``gpulab.launch`` on any backend.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from gpulab.models import launch as lm


@cuda.jit
def who_1d(state, lane, n):
    """state[block, t] = 1 if global index i < n (works), 2 if not (idle behind the guard)."""
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    if i < n:
        state[b, t] = 1
    else:
        state[b, t] = 2
    lane[b, t] = t % 32


@cuda.jit
def who_2d(block_id, warp, lane, inside, width, height):
    """Per launched thread at (y, x): linear block id, warp and lane in its block, in the data?"""
    x, y = cuda.grid(2)
    t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    block_id[y, x] = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
    warp[y, x] = t // 32
    lane[y, x] = t % 32
    if x < width and y < height:
        inside[y, x] = 1
    else:
        inside[y, x] = 0


def fold_1d(n: int, block: int, backend: str = "sim") -> dict:
    """Run :func:`who_1d` for ``n`` elements in blocks of ``block``; arrays are (blocks, lanes
    padded to whole warps), 0 where a lane does not exist (block not a multiple of 32)."""
    import gpulab

    grid = lm.grid_for(n, block)[0]
    width = -(-block // 32) * 32
    state = np.zeros((grid, width), np.int32)
    lane = np.full((grid, width), -1, np.int32)
    rep = gpulab.launch(who_1d, grid, block, state, lane, n, backend=backend)
    return {"n": n, "block": block, "grid": grid, "state": state, "lane": lane, "report": rep}


def owners_2d(width: int, height: int, block, backend: str = "sim") -> dict:
    """Run :func:`who_2d` over a width x height image with a 2-D ``block`` (bx, by)."""
    import gpulab

    bx, by = block
    gx, gy = lm.grid_for((width, height), (bx, by))
    shape = (gy * by, gx * bx)
    arrays = {k: np.full(shape, -1, np.int32) for k in ("block_id", "warp", "lane", "inside")}
    rep = gpulab.launch(
        who_2d,
        (gx, gy),
        (bx, by),
        arrays["block_id"],
        arrays["warp"],
        arrays["lane"],
        arrays["inside"],
        width,
        height,
        backend=backend,
    )
    return {"width": width, "height": height, "block": (bx, by), "grid": (gx, gy), "report": rep, **arrays}
