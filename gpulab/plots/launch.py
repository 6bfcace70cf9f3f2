"""Figures for chapter 02: a launch folded into blocks and warps, and which thread of which
block and warp handled each element of an image. Both draw what a kernel run recorded
(:mod:`gpulab.kernels.indexing`), not a formula."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from gpulab.kernels import indexing as ix


def fold(n: int, block: int, result: dict | None = None, ax=None, backend: str = "sim"):
    """One row per block, one cell per lane (padded to whole warps of 32): green lanes work,
    orange lanes run but fail the edge guard (i >= n), white lanes do not exist because the
    block size is not a multiple of 32 (the hardware still schedules the whole warp)."""
    r = result or ix.fold_1d(n, block, backend=backend)
    state = r["state"]
    grid, width = state.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(min(14, 2 + width * 0.13), 1.2 + grid * 0.45))
    cmap = ListedColormap(["white", "#5aae61", "#f1a340"])
    ax.imshow(state, cmap=cmap, vmin=0, vmax=2, aspect="auto", interpolation="nearest")
    for w in range(0, width + 1, 32):
        ax.axvline(w - 0.5, color="k", lw=1.5)
    for b in range(grid + 1):
        ax.axhline(b - 0.5, color="k", lw=0.8)
    ax.set_xticks(np.arange(0, width, 32) + 15.5,
                  [f"warp {w}" for w in range(width // 32)])
    ax.set_yticks(range(grid), [f"block {b}" for b in range(grid)])
    ax.tick_params(length=0)
    for b in range(grid):
        for t in range(0, width, 8):
            ax.text(t, b, str(t), ha="center", va="center", fontsize=6)
    ax.set_title(f"n = {n} elements, {block} threads per block -> grid of {grid} blocks, "
                 f"{grid * (width // 32)} warps")
    ax.legend(handles=[Patch(color="#5aae61", label="works (i < n)"),
                       Patch(color="#f1a340", label="launched, idle (i >= n)"),
                       Patch(facecolor="white", edgecolor="k", label="lane not in the block")],
              loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize=8, frameon=False)
    return ax.figure


def owners(width: int, height: int, block, result: dict | None = None, ax=None,
           labels: bool | None = None, backend: str = "sim"):
    """Every launched thread of a 2-D launch as one cell at its (x, y): colour = its block,
    shade = its warp within the block, hatched = outside the image (idle behind the guard).
    Small launches are labelled "block:warp"."""
    r = result or ix.owners_2d(width, height, block, backend=backend)
    bid, warp, inside = r["block_id"], r["warp"], r["inside"]
    H, W = bid.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(min(12, 1.5 + W * 0.28), min(9, 1.2 + H * 0.28)))
    base = plt.get_cmap("tab10")(bid % 10)[..., :3]
    shade = np.where((warp % 2 == 1)[..., None], 0.78, 1.0)
    rgb = base * shade + (1 - shade) * 0.0
    rgb = np.where((inside == 1)[..., None], rgb, 0.55 + 0.45 * rgb)
    ax.imshow(rgb, interpolation="nearest", origin="upper")
    bx, by = r["block"]
    for x in range(0, W + 1, bx):
        ax.axvline(x - 0.5, color="k", lw=1.2)
    for y in range(0, H + 1, by):
        ax.axhline(y - 0.5, color="k", lw=1.2)
    ax.add_patch(Rectangle((-0.5, -0.5), width, height, fill=False, ec="red", lw=2))
    out = np.argwhere(inside == 0)
    for y, x in out:
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, hatch="///", lw=0,
                               ec="grey"))
    if labels is None:
        labels = W * H <= 400
    if labels:
        for y in range(H):
            for x in range(W):
                ax.text(x, y, f"{bid[y, x]}:{warp[y, x]}", ha="center", va="center", fontsize=6)
    ax.set_xlabel("x (threadIdx.x direction, columns)")
    ax.set_ylabel("y (rows)")
    gx, gy = r["grid"]
    ax.set_title(f"{width} x {height} image, block ({bx}, {by}), grid ({gx}, {gy}): "
                 f"{int((inside == 0).sum())} idle threads (hatched)", fontsize=9)
    return ax.figure
