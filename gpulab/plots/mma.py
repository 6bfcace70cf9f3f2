"""Figures for warp-level MMA: who holds which element, and the roofline with its ridge points."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from gpulab.models import mma
from gpulab.plots.formats import plain_log_ticks
from gpulab.plots.style import MIN_FONT_PT

WIDTH_IN = 6.7  # the book's text column (676 CSS px = 6.76 in at 100 dpi): figures are no wider


def fragment_layout(operand: str = "A", ax=None):
    """Draw an m16n8k16 operand: each cell coloured by its lane's groupID and labelled
    'T<lane>' and the register element (a0..a7, b0..b3, c0..c3) that holds it."""
    lane, idx = mma.owner_map(operand)
    rows, cols = lane.shape
    if ax is None:  # cells wide enough for two lines of MIN_FONT_PT text
        _, ax = plt.subplots(figsize=(0.38 * cols + 0.9, 0.36 * rows + 0.9))
    ax.imshow(lane // 4, cmap="tab10", vmin=0, vmax=9, alpha=0.45)
    letter = {"A": "a", "B": "b", "C": "c", "D": "c"}[operand]
    for r in range(rows):
        for c in range(cols):
            ax.text(
                c,
                r,
                f"T{lane[r, c]}\n{letter}{idx[r, c]}",
                ha="center",
                va="center",
                fontsize=MIN_FONT_PT,
                linespacing=0.95,
            )
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.set_title(f"{operand} ({rows}x{cols})")
    return ax


def roofline(peaks: dict, bandwidth_tbs: float, record=None, bytes_per_element=None, ax=None):
    """Roofline per precision (TFLOP/s against FLOP/byte, log-log) with each ridge point marked.

    A ``record`` (:class:`gpulab.models.mma.ThroughputRecord`) with a size sweep is drawn as
    points at each square matmul's minimum-traffic intensity; without a sweep (sizes not
    recorded) its numbers are drawn as dashed levels right of the ridge point."""
    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH_IN, 5))
    bpe = bytes_per_element or {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
    ai = np.logspace(-1, 4, 200)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, (name, peak) in enumerate(peaks.items()):
        col = colors[j % len(colors)]
        ax.loglog(ai, mma.roofline(ai, peak, bandwidth_tbs), color=col, label=f"{name} peak {peak:.0f}")
        rp = mma.ridge_point(peak, bandwidth_tbs)
        ax.plot([rp], [peak], "o", color=col)
        ax.annotate(
            f"{rp:.0f}",
            (rp, peak),
            textcoords="offset points",
            xytext=(-10, 5),
            fontsize=MIN_FONT_PT,
            color=col,
        )
        if record is None:
            continue
        if record.sweep and name in record.sweep:
            pts = sorted(record.sweep[name].items())
            ax.plot(
                [mma.matmul_intensity(n, n, n, bpe[name]) for n, _ in pts],
                [t for _, t in pts],
                "*",
                ms=9,
                color=col,
            )
        elif name in record.tflops:
            ax.hlines(record.tflops[name], rp, ai[-1], colors=col, linestyles="--", lw=1)
    ax.set_xlabel("arithmetic intensity (FLOP / byte of minimum DRAM traffic)")
    ax.set_ylabel("TFLOP/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    how = (
        "stars = measured square matmuls"
        if record is not None and record.sweep
        else "dashed = measured (sizes not recorded)"
        if record is not None
        else ""
    )
    ax.set_title(
        f"roofline at {bandwidth_tbs} TB/s; dots = ridge points (FLOP/byte)" + (f"\n{how}" if how else "")
    )
    return plain_log_ticks(ax)


def throughput_bars(record, peaks: dict, ax=None):
    """Measured matmul TFLOP/s next to the dense datasheet peak, per precision."""
    names = [n for n in peaks if n in record.tflops]
    x = np.arange(len(names))
    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH_IN, 4))
    ax.bar(x - 0.2, [peaks[n] for n in names], 0.4, label="datasheet (dense)", color="#c7c7c7")
    ax.bar(x + 0.2, [record.tflops[n] for n in names], 0.4, label="measured", color="#1f77b4")
    for i, n in enumerate(names):
        ax.text(
            i + 0.2,
            record.tflops[n],
            f"{record.tflops[n] / peaks[n]:.0%}",
            ha="center",
            va="bottom",
            fontsize=MIN_FONT_PT,
        )
    ax.set_xticks(x, names)
    ax.set_ylabel("TFLOP/s")
    ax.legend()
    ax.set_title(f"{record.device}: {record.source}", fontsize=MIN_FONT_PT)
    return ax
