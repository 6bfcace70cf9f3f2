"""Draw a gpulab.timeline.Timeline: one row per lane, idle gaps on the kernel lane shaded."""

from __future__ import annotations

import matplotlib.pyplot as plt

__all__ = ["draw"]

_COLORS = {"host": "tab:blue", "kernel": "tab:green"}


def draw(tl, ax=None, unit: str = "ms", gap_lane: str = "kernel", title: str | None = None):
    """Horizontal bars of each lane's intervals; the gaps of ``gap_lane`` in red (time the device
    waited for the host); host time spent launching or simulating kernels in light blue.
    Returns the matplotlib Axes."""
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[unit]
    lanes = tl.lanes()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 0.9 + 0.7 * max(len(lanes), 1)))
    for row, lane in enumerate(lanes):
        ivs = tl.lane(lane)
        bars = [(i.start * scale, i.duration * scale) for i in ivs]
        # on the host lane, time spent launching (or simulating) kernels is drawn lighter
        colors = [
            "tab:cyan"
            if lane == "host" and i.name.startswith(("launch", "simulate"))
            else _COLORS.get(lane, "tab:gray")
            for i in ivs
        ]
        ax.broken_barh(bars, (row - 0.35, 0.7), facecolors=colors, edgecolor="black", linewidth=0.3)
    if gap_lane in lanes:
        row = lanes.index(gap_lane)
        gaps = [(s * scale, (e - s) * scale) for s, e in tl.gaps(gap_lane)]
        ax.broken_barh(gaps, (row - 0.35, 0.7), facecolors="tab:red", alpha=0.25)
    ax.set_yticks(range(len(lanes)), lanes)
    ax.set_ylim(-0.6, len(lanes) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel(f"time since start ({unit})")
    t0, t1 = tl.span_s()
    share = tl.busy(gap_lane) / (t1 - t0) if t1 > t0 else 0.0
    ax.set_title(
        title
        or f"{gap_lane} lane busy {100 * share:.0f}% of {(t1 - t0) * scale:.3g} {unit}; red = {gap_lane} idle"
    )
    return ax
