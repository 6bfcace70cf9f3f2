"""Figures for chapter 01: constant-factor parallelism, latency hiding, bytes in flight."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from gpulab.models import latency as lat
from gpulab.plots.palette import series
from gpulab.plots.style import log_tick_labels


def constant_factors(workers=(1, 1000), n_max: float = 1e7, ax=None):
    """Log-log time of O(n^2) on 1 and P workers vs O(n log n) on one: parallelism shifts
    the curve down by log10(P) decades, it never changes the slope."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4))
    n = np.logspace(1, np.log10(n_max), 200)
    for i, p in enumerate(workers):
        look = series(i)
        look.pop("marker")  # 200 points: a line style, not markers
        ax.loglog(n, lat.parallel_time(n, p), label=f"O(n²) on {p:,} worker{'s' if p != 1 else ''}", **look)
    ax.loglog(n, n * np.log2(n), color="k", ls=(0, (1, 1.5)), lw=2, label="O(n log n) on 1 worker")
    ax.set_xlabel("problem size n")
    ax.set_ylabel("time (operations / worker)")
    ax.set_title("Parallelism buys a constant factor, not a better slope")
    ax.legend()
    ax.grid(True, which="major", alpha=0.3)
    log_tick_labels(ax, powers=True)  # every decade as 10ⁿ on both axes, one notation
    return ax.figure


def latency_hiding(
    latencies=(100, 400, 800),
    compute_cycles: int = 20,
    max_warps: int = 64,
    ax=None,
    simulate: bool = True,
    hw_limit: int | None = None,
    labels=None,
):
    """Issue-slot utilization of ONE warp scheduler vs the warps it holds: closed form (lines)
    and the cycle-level simulation (dots) for several latencies (cycles). ``hw_limit`` draws the
    most warps one scheduler can hold; ``labels`` names the latencies (e.g. "L2")."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4))
    w = np.arange(1, max_warps + 1)
    for i, L in enumerate(latencies):
        u = [lat.utilization(k, compute_cycles, L) for k in w]
        name = f"{labels[i]}: " if labels else ""
        look = series(i)  # colour, line style and marker all differ: no line told by colour alone
        marker = look.pop("marker")
        (line,) = ax.plot(w, u, label=f"{name}L = {L:.0f} cycles", lw=1.8, **look)
        if simulate:
            ws = w[::4]
            sim = [
                lat.simulate_issue(
                    int(k), compute_cycles, int(round(L)), 6 * (compute_cycles + int(round(L)))
                )
                for k in ws
            ]
            ax.plot(ws, sim, marker, ms=4.5, color=line.get_color(), ls="none")
    if hw_limit:
        ax.axvline(hw_limit, color="k", ls=":", label=f"most warps one scheduler holds ({hw_limit})")
    ax.set_xlabel("warps on one scheduler W")
    ax.set_ylabel("fraction of cycles issuing")
    ax.set_title(f"One scheduler hiding latency (C = {compute_cycles} cycles of work per load)")
    ax.set_ylim(0, 1.05)
    ax.legend()
    ax.grid(alpha=0.3)
    return ax.figure


def bandwidth_vs_warps(
    spec=lat.H200,
    latency: float = 700e-9,
    sizes=(4, 8, 16),
    requests_per_warp: int = 1,
    ax=None,
    measured: dict | None = None,
    peak: float | None = None,
    peak_label: str = "datasheet peak",
):
    """Little's law read backwards (a model): DRAM bandwidth reachable with W warps per SM, one
    `requests_per_warp` loads of 32 lanes × `sizes` bytes each, capped at ``peak`` (bytes/s;
    default the datasheet peak ``spec.bandwidth``), drawn dotted and labelled ``peak_label``.
    ``measured`` ({bytes per element: bytes *loaded* per second}) overlays measured copies as
    horizontal lines in the matching series' colour. The model counts loads only, so pass a
    copy's loads (half its read + write rate), never its whole rate, and for a copy a ``peak``
    of half the datasheet's: its writes share the DRAM bandwidth with its loads."""
    if peak is None:
        peak = spec.bandwidth
    if not peak > 0:
        raise ValueError(f"peak must be a positive bandwidth in bytes/s, got {peak!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4))
    w = np.arange(1, spec.max_warps_per_sm + 1)
    for s in sizes:
        bw = [lat.achievable_bandwidth(k, latency, spec.n_sm, 32 * s, peak, requests_per_warp) for k in w]
        look = series(sizes.index(s))
        look["markevery"] = 8
        ax.plot(w, np.array(bw) / 1e12, label=f"{s}-byte loads ({32 * s} B per warp request)", **look)
    ax.axhline(peak / 1e12, color="k", ls=":", label=peak_label)
    for s, bps in (measured or {}).items():
        i = list(sizes).index(s) if s in sizes else len(sizes)
        ax.axhline(
            bps / 1e12,
            color=series(i)["color"],
            lw=3,
            alpha=0.45,
            label=f"measured {s}-byte copy, loads only",
        )
    ax.set_xlabel("resident warps per SM (one load in flight each)")
    ax.set_ylabel("bandwidth (TB/s)")
    ax.set_title(
        f"Model: {spec.name}, latency {latency * 1e9:.0f} ns" + (", with measured copies" if measured else "")
    )
    if measured:  # below the axes: the lines fill the plot
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    else:
        ax.legend()
    ax.grid(alpha=0.3)
    return ax.figure
