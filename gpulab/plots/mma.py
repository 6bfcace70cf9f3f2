"""Figures for warp-level MMA: who holds which element, and the roofline with its ridge points."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from gpulab.models import mma


def fragment_layout(operand: str = "A", ax=None):
    """Draw an m16n8k16 operand: each cell coloured by its lane's groupID and labelled
    'T<lane>' and the register element (a0..a7, b0..b3, c0..c3) that holds it."""
    lane, idx = mma.owner_map(operand)
    rows, cols = lane.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(0.55 * cols + 1, 0.45 * rows + 1))
    ax.imshow(lane // 4, cmap="tab10", vmin=0, vmax=9, alpha=0.45)
    letter = {"A": "a", "B": "b", "C": "c", "D": "c"}[operand]
    for r in range(rows):
        for c in range(cols):
            ax.text(c, r, f"T{lane[r, c]}\n{letter}{idx[r, c]}", ha="center", va="center",
                    fontsize=6)
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.tick_params(labelsize=7)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.set_title(f"mma.m16n8k16 {operand} ({rows}x{cols}): colour = groupID = lane // 4")
    return ax


def roofline(peaks: dict, bandwidth_tbs: float, measured: dict | None = None,
             measured_intensity: float | None = None, ax=None):
    """Roofline per precision (TFLOP/s against FLOP/byte, log-log) with each ridge point
    marked; ``measured`` TFLOP/s are drawn as points at ``measured_intensity``."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 5))
    ai = np.logspace(-1, 4, 200)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, (name, peak) in enumerate(peaks.items()):
        col = colors[j % len(colors)]
        ax.loglog(ai, mma.roofline(ai, peak, bandwidth_tbs), color=col, label=f"{name} peak {peak:.0f}")
        rp = mma.ridge_point(peak, bandwidth_tbs)
        ax.plot([rp], [peak], "o", color=col)
        ax.annotate(f"{rp:.0f}", (rp, peak), textcoords="offset points", xytext=(-10, 5), fontsize=7,
                    color=col)
        if measured and name in measured and measured_intensity:
            ax.plot([measured_intensity], [measured[name]], "*", ms=11, color=col)
    ax.set_xlabel("arithmetic intensity (FLOP / byte of DRAM traffic)")
    ax.set_ylabel("TFLOP/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"roofline, {bandwidth_tbs} TB/s; dots = ridge points (FLOP/byte), stars = measured")
    return ax


def throughput_bars(record, peaks: dict, ax=None):
    """Measured matmul TFLOP/s next to the dense datasheet peak, per precision."""
    names = [n for n in peaks if n in record.tflops]
    x = np.arange(len(names))
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.bar(x - 0.2, [peaks[n] for n in names], 0.4, label="datasheet (dense)", color="#c7c7c7")
    ax.bar(x + 0.2, [record.tflops[n] for n in names], 0.4, label="measured", color="#1f77b4")
    for i, n in enumerate(names):
        ax.text(i + 0.2, record.tflops[n], f"{record.tflops[n] / peaks[n]:.0%}", ha="center",
                va="bottom", fontsize=8)
    ax.set_xticks(x, names)
    ax.set_ylabel("TFLOP/s")
    ax.legend(fontsize=8)
    ax.set_title(f"{record.device}: {record.source}", fontsize=9)
    return ax
