"""Figures for chapter 02: a launch folded into blocks and warps, and which thread of which
block and warp handled each element of an image. Both draw what a kernel run recorded
(:mod:`gpulab.kernels.indexing`), not a formula."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from gpulab.kernels import indexing as ix
from gpulab.plots import palette
from gpulab.plots.style import MIN_FONT_PT


def fold(n: int, block: int, result: dict | None = None, ax=None, backend: str = "sim"):
    """One row per block, one cell per lane (padded to whole warps of 32): blue lanes work,
    orange hatched lanes run but fail the edge guard (i >= n), white lanes do not exist because
    the block size is not a multiple of 32 (the hardware still schedules the whole warp)."""
    r = result or ix.fold_1d(n, block, backend=backend)
    state = r["state"]
    grid, width = state.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 1.6 + grid * 0.45))  # the column's width
    cmap = ListedColormap(["white", palette.WORK, palette.IDLE])
    ax.imshow(state, cmap=cmap, vmin=0, vmax=2, aspect="auto", interpolation="nearest")
    # idle lanes are hatched as well as coloured: told apart without colour vision
    for b, t in np.argwhere(state == 2):
        ax.add_patch(
            Rectangle((t - 0.5, b - 0.5), 1, 1, fill=False, hatch=palette.IDLE_HATCH, lw=0, ec="0.25")
        )
    for w in range(0, width + 1, 32):
        ax.axvline(w - 0.5, color="k", lw=1.5)
    for b in range(grid + 1):
        ax.axhline(b - 0.5, color="k", lw=0.8)
    ax.set_xticks(np.arange(0, width, 32) + 15.5, [f"warp {w}" for w in range(width // 32)])
    ax.set_yticks(range(grid), [f"block {b}" for b in range(grid)])
    ax.tick_params(length=0)
    # lane numbers halfway between labelled lanes, so none sits on a warp's boundary line; a
    # number at MIN_FONT_PT needs ~5 lanes of room
    step = 8 if width <= 64 else 16
    for b in range(grid):
        for t in range(step // 2, width, step):
            dark = state[b, t] == 1  # white digits on the dark "works" colour
            ax.text(t, b, str(t), ha="center", va="center", fontsize=MIN_FONT_PT, color="w" if dark else "k")
    plural = lambda k, word: f"{k} {word}{'' if k == 1 else 's'}"  # noqa: E731
    ax.set_title(
        f"n = {n} elements, {plural(block, 'thread')} per block: "
        f"{plural(grid, 'block')}, {plural(grid * (width // 32), 'warp')}"
    )
    ax.legend(
        handles=[
            Patch(color=palette.WORK, label="works (i < n)"),
            Patch(
                facecolor=palette.IDLE,
                hatch=palette.IDLE_HATCH,
                edgecolor="0.25",
                label="launched, idle (i >= n)",
            ),
            Patch(facecolor="white", edgecolor="k", label="lane not in the block"),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        ncol=3,
        fontsize=MIN_FONT_PT,
        frameon=False,
    )
    return ax.figure


def owners(
    width: int,
    height: int,
    block,
    result: dict | None = None,
    ax=None,
    labels: bool | None = None,
    backend: str = "sim",
):
    """Every launched thread of a 2-D launch as one cell at its (x, y): colour = its block,
    shade = its warp within the block, hatched = outside the image (idle behind the guard).
    Each warp is labelled "block:warp" at the centre of its threads where the label fits."""
    r = result or ix.owners_2d(width, height, block, backend=backend)
    bid, warp, inside = r["block_id"], r["warp"], r["inside"]
    H, W = bid.shape
    cell = min(5.6 / W, 6.0 / H)  # inches per thread: the figure fits the column
    if ax is None:
        _, ax = plt.subplots(figsize=(1.3 + W * cell, 1.2 + H * cell))
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
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, hatch="///", lw=0, ec="grey"))
    # one "block:warp" label per warp, at the centre of its threads, where it fits at
    # MIN_FONT_PT (digits ~0.08 in, the colon ~0.04 in)
    groups = {}
    for (y, x), b in np.ndenumerate(bid):
        groups.setdefault((int(b), int(warp[y, x])), []).append((x, y))
    if labels is None:
        widths = [(max(x for x, _ in p) - min(x for x, _ in p) + 1) * cell for p in groups.values()]
        digits = len(f"{bid.max()}{warp.max()}")
        labels = len(groups) <= 80 and min(widths) >= 0.08 * digits + 0.1
    if labels:
        for (b, w), pts in groups.items():
            xs, ys = zip(*pts)
            ax.text(
                np.mean(xs),
                np.mean(ys),
                f"{b}:{w}",
                ha="center",
                va="center",
                fontsize=MIN_FONT_PT,
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8),
            )
    ax.set_xlabel("x (threadIdx.x direction, columns)")
    ax.set_ylabel("y (rows)")
    gx, gy = r["grid"]
    ax.set_title(
        f"{width} x {height} image, block ({bx}, {by}), grid ({gx}, {gy}): "
        f"{int((inside == 0).sum())} idle threads (hatched)",
        fontsize=10,
    )
    return ax.figure
