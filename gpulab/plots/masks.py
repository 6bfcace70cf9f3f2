"""Figures for chapter 03: one warp's active-mask timeline (from ``rep.mask_history``),
efficiency per condition, and GPU time against the number of divergent paths."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter
from gpulab.models.occupancy import WARP
from gpulab.plots.style import MIN_FONT_PT


def mask_matrix(mask_history) -> np.ndarray:
    """32 x steps array of 0/1: lane l active at step s."""
    m = np.array([mask for _, mask in mask_history], dtype=np.uint64)
    lanes = np.arange(WARP, dtype=np.uint64)
    return ((m[None, :] >> lanes[:, None]) & np.uint64(1)).astype(np.uint8)


def mask_timeline(rep, ax=None, title: str | None = None, max_steps: int = 120):
    """The traced warp's active lanes at every executed statement: bars on top count active
    lanes, the grid below shows which (dark = active). The x axis is execution order, labelled
    with source line numbers; the panel below lists each line's source."""
    hist = rep.mask_history[:max_steps]
    if not hist:
        raise ValueError("the report has no mask history (run on the simulator)")
    mat = mask_matrix(hist)
    steps = mat.shape[1]
    lines = [ln for ln, _ in hist]
    src = {ln: rep.lines[ln].source.strip() for ln in dict.fromkeys(lines) if ln in rep.lines}
    listing = None
    if ax is None:  # the column's width; the source listing gets a panel of its own below
        n_src = max(len(src), 1)
        fig, (top, ax, listing) = plt.subplots(
            3,
            1,
            figsize=(6.6, 4.6 + 0.19 * n_src),
            gridspec_kw={"height_ratios": [1, 3, 0.19 * n_src / 0.95]},
        )
        ax.sharex(top)
    else:
        fig, top = ax.figure, None
    active = mat.sum(axis=0)
    if top is not None:
        top.bar(np.arange(steps), active, color=["#1b7837" if a == WARP else "#d6604d" for a in active])
        top.set_ylim(0, WARP + 2)
        top.set_ylabel("active")
        top.axhline(WARP, color="k", lw=0.5)
        eff = active.mean() / WARP
        top.set_title(
            title
            or f"warp {rep.traced_warp[1]} of block {rep.traced_warp[0]}: "
            f"{steps} statements, average {eff:.0%} of lanes active"
        )
    ax.imshow(mat, aspect="auto", cmap="Greys", vmin=0, vmax=1.4, interpolation="nearest", origin="lower")
    ax.set_ylabel("lane")
    ax.set_yticks([0, 8, 16, 24, 31])
    every = max(1, -(-steps // 36))  # at most 36 labels fit the column at MIN_FONT_PT
    ticks = list(range(0, steps, every))
    ax.set_xticks(ticks, [str(lines[i]) for i in ticks], rotation=90 if len(ticks) > 16 else 0)
    if top is not None:
        top.tick_params(labelbottom=False)
    ax.set_xlabel(
        "statements in execution order (source line" + (f", every {every}th labelled)" if every > 1 else ")")
    )
    text = "\n".join(f"line {ln:>3}: {s[:58]}" for ln, s in src.items())
    if listing is not None:
        listing.axis("off")
        listing.text(
            0.0,
            1.0,
            text,
            transform=listing.transAxes,
            va="top",
            ha="left",
            family="monospace",
            fontsize=MIN_FONT_PT,
            linespacing=1.25,
        )
    else:
        ax.text(
            1.01,
            1.0,
            text,
            transform=ax.transAxes,
            va="top",
            ha="left",
            fontsize=MIN_FONT_PT,
            family="monospace",
        )
    fig.tight_layout()
    return fig


def efficiency_bars(rows, ax=None):
    """Horizontal bars of warp execution efficiency per condition (rows from run_branch):
    the two branch bodies and the whole kernel."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 0.45 * len(rows) + 1.6))
    labels = [f"{r['condition']} ({r['data']})" for r in rows]
    y = np.arange(len(rows))
    then = [r["then_efficiency"] or 0 for r in rows]
    other = [r["else_efficiency"] or 0 for r in rows]
    ax.barh(y - 0.27, then, 0.27, label="if-body line", color="#4393c3")
    ax.barh(y, other, 0.27, label="else-body line", color="#f4a582")
    ax.barh(y + 0.27, [r["efficiency"] for r in rows], 0.27, label="whole kernel", color="#777")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("warp execution efficiency E (measured by the simulator)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)  # above, off the bars
    ax.grid(axis="x", alpha=0.3)
    ax.figure.tight_layout()
    return ax.figure


def paths_timing(data: dict, ax=None):
    """GPU time against number of paths (benchmarks/divergence_paths.py), relative to 1 path:
    the kernel's own time (Nsight Compute) where recorded, and CUDA events around one launch
    (which include the launch path) for divergent and warp-uniform path choice, with the model
    T ∝ P as a dotted line."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 5.4))
    rows = data["rows"]
    for iters in sorted({r["iters"] for r in rows}):
        for mode, style in (("divergent", "o-"), ("uniform", "s--")):
            rs = sorted(
                (r for r in rows if r["iters"] == iters and r["mode"] == mode), key=lambda r: r["paths"]
            )
            ax.plot(
                [r["paths"] for r in rs],
                [r["ratio_to_1_path"] for r in rs],
                style,
                label=f"{mode}, {iters}-iteration body, CUDA events (includes the launch path)",
            )
    for iters in sorted({r["iters"] for r in (data.get("ncu") or {}).get("rows") or []}):
        rs = sorted(
            (r for r in data["ncu"]["rows"] if r["iters"] == iters and r.get("mode") == "divergent"),
            key=lambda r: r["paths"],
        )
        if rs and rs[0]["paths"] == 1:  # the kernel's own time, the primary figure
            t1 = rs[0]["gpu__time_duration.sum"]
            ax.plot(
                [r["paths"] for r in rs],
                [r["gpu__time_duration.sum"] / t1 for r in rs],
                "D-",
                color="black",
                lw=2,
                label=f"divergent, {iters}-iteration body, kernel time (Nsight Compute)",
            )
    p = np.array([1, 32])
    ax.plot(p, p, "k:", lw=1, label="model, paths of equal length: T_warp = P x T_path")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    plain = FuncFormatter(lambda v, _: f"{v:g}")  # 1, 2, 4 ... (no small superscripts)
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.set_xlabel("distinct paths per warp P")
    ax.set_ylabel("time / time with 1 path")
    ax.set_title(f"{data.get('device', 'GPU')}: time against divergent paths")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.14), frameon=False)  # below, off the lines
    ax.figure.tight_layout()
    return ax.figure
