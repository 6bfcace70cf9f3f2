"""Figures for chapter 10: Amdahl curves, Gustafson, fits to measurements, scaling out."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from gpulab.models import amdahl as A
from gpulab.models import comms as C
from gpulab.plots.palette import IDLE_HATCH
from gpulab.plots.style import MIN_FONT_PT, log_tick_labels

__all__ = [
    "speedup_curves",
    "amdahl_vs_gustafson",
    "fit_plot",
    "allreduce_vs_size",
    "stall_shares",
    "scaling_plot",
    "shade_beyond",
    "draw_speedup",
]


def draw_speedup(ax, f: float, p_max: int = 1024, mark_p: float | None = None, label=None):
    """One Amdahl curve on log2-p axes with its ceiling dashed; optionally a marked point."""
    p = np.logspace(0, np.log2(p_max), 200, base=2)
    (line,) = ax.plot(p, A.speedup(f, p), label=label or f"f = {f:g}")
    if f < 1:
        ax.axhline(A.limit(f), ls="--", lw=0.8, color=line.get_color())
    if mark_p is not None:
        s = A.speedup(f, mark_p)
        ax.plot([mark_p], [s], "o", color=line.get_color())
        ax.annotate(
            f"S({mark_p:g}) = {s:.1f}", (mark_p, s), textcoords="offset points", xytext=(6, -12), fontsize=9
        )
    return line


def speedup_curves(fs=(0.5, 0.75, 0.9, 0.95, 0.99), p_max: int = 1024, mark=(0.95, 100), ax=None):
    """S(p) for several f, with the ideal S = p and each curve's ceiling 1/(1-f) dashed."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 4.2))
    p = np.logspace(0, np.log2(p_max), 200, base=2)
    ax.plot(p, p, color="0.6", lw=0.8, label="ideal S = p")
    for f in fs:
        draw_speedup(ax, f, p_max, mark_p=mark[1] if mark and np.isclose(f, mark[0]) else None)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_ylim(1, p_max)
    ax.set_xlabel("processors p")
    ax.set_ylabel("speedup S(p)")
    ax.set_title("Amdahl: each curve flattens at 1/(1-f) (dashed)")
    ax.legend(loc="upper left")
    log_tick_labels(ax)
    return ax


def amdahl_vs_gustafson(serial: float = 0.05, p_max: int = 1024, ax=None):
    """Fixed-size (Amdahl, f = 1 - serial) against scaled-size (Gustafson) speedup."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 4))
    p = np.logspace(0, np.log2(p_max), 200, base=2)
    ax.plot(p, p, color="0.6", lw=0.8, label="ideal")
    ax.plot(p, A.gustafson(serial, p), label=f"Gustafson, serial share {serial:g} of the scaled run")
    ax.plot(p, A.speedup(1 - serial, p), label=f"Amdahl, serial share {serial:g} of the one-processor run")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("processors p")
    ax.set_ylabel("speedup")
    ax.legend()
    ax.set_title("Same 5%, different questions: fixed problem vs problem grown with p")
    log_tick_labels(ax)
    return ax


def fit_plot(fit: A.AmdahlFit, ps, times, used=None, ax=None, unit: str = "ms"):
    """Measured times against the fitted T(p) = serial + parallel/p; points used for the fit
    filled, held-out points hollow."""
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[unit]
    ps, times = np.asarray(ps, float), np.asarray(times, float)
    used = np.ones(ps.size, bool) if used is None else np.asarray(used, bool)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4))
    grid = np.logspace(0, np.log2(max(ps.max(), 2) * 2), 200, base=2)
    ax.plot(grid, np.asarray(fit.time(grid)) * scale, label=f"fit: f = {fit.f:.3f}")
    ax.axhline(fit.serial_s * scale, ls="--", lw=0.8, color="0.4", label="serial floor")
    ax.plot(ps[used], times[used] * scale, "o", color="C1", label="measured, used in the fit")
    if (~used).any():
        ax.plot(ps[~used], times[~used] * scale, "o", mfc="none", color="C3", label="measured, held out")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("p")
    ax.set_ylabel(f"time ({unit})")
    ax.legend()
    log_tick_labels(ax)
    return ax


def allreduce_vs_size(
    p: int,
    alpha: float,
    links=("PCIe 5.0 x16", "NVLink 4 (H100/H200 SXM)"),
    ax=None,
    alpha_source: str = "measured",
):
    """All-reduce time against message size, ring and binomial tree, for each named link; the
    title says where ``alpha`` (seconds per step) comes from."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 4))
    n = np.logspace(2, 10, 120)
    for k, name in enumerate(links):
        B = C.LINKS[name].per_direction
        ax.plot(n, [C.ring_allreduce(p, x, alpha, B) for x in n], color=f"C{k}", label=f"ring, {name}")
        ax.plot(
            n,
            [C.tree_allreduce(p, x, alpha, B) for x in n],
            color=f"C{k}",
            ls=":",
            label=f"binomial tree, {name}",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes all-reduced")
    ax.set_ylabel("time (s)")
    ax.set_title(f"alpha-beta model, p = {p}, alpha = {alpha * 1e6:.3g} us ({alpha_source})")
    ax.legend()
    log_tick_labels(ax)
    return ax


def shade_beyond(ax, p_valid: int, label: str | None = None):
    """Hatch the p > ``p_valid`` part of a speedup-against-p plot (call it once the x scale and
    limits are set): where the model's inputs (a constant per-GPU bandwidth, alpha measured on
    few GPUs) stop holding, so its curves there are the model's shape, not a prediction."""
    lo, hi = ax.get_xlim()
    if hi > p_valid:
        ax.axvspan(p_valid, hi, facecolor="0.92", edgecolor="0.6", hatch=IDLE_HATCH, lw=0, label=label)
        ax.set_xlim(lo, hi)


def scaling_plot(models: dict, ps=None, mode: str = "strong", ax=None, p_valid: int | None = None):
    """Speedup against p for several StepModels (e.g. the same job on PCIe and on NVLink);
    with ``p_valid``, the range past it is hatched as outside what the model's inputs support."""
    ps = np.unique(np.logspace(0, 10, 60, base=2).astype(int)) if ps is None else np.asarray(ps)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 4))
    ax.plot(ps, ps, color="0.6", lw=0.8, label="ideal")
    for label, m in models.items():
        ax.plot(ps, C.scaling(m, ps, mode)["speedup"], label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    if p_valid is not None:
        ax.set_xlim(ps.min(), ps.max())
        shade_beyond(ax, p_valid, f"p > {p_valid}: outside the model's inputs")
    ax.set_xlabel("GPUs p")
    ax.set_ylabel("speedup" if mode == "strong" else "scaled speedup")
    ax.set_title(f"{mode} scaling with an all-reduce every step")
    ax.legend()
    log_tick_labels(ax)
    return ax


def launch_chain(rows, k_key: str = "k", ax=None):
    """Time per element-wise step against array size: K separate launches (numba, torch ops) and one
    fused launch, from benchmarks/launch_overhead.py's "chain" rows. Flat = launch-bound."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 4))
    n = np.array([r["n"] for r in rows])
    k = np.array([r[k_key] for r in rows])
    ax.plot(
        n, np.array([r["numba_unfused_s"] for r in rows]) / k * 1e6, "o-", label="numba, one launch per step"
    )
    if "torch_unfused_s" in rows[0]:
        ax.plot(
            n,
            np.array([r["torch_unfused_s"] for r in rows]) / k * 1e6,
            "s-",
            label="torch, two small ops per step",
        )
    ax.plot(
        n,
        np.array([r["numba_fused_s"] for r in rows]) / k * 1e6,
        "^-",
        label="numba, all steps fused in one launch",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("array elements n")
    ax.set_ylabel("time per step (us)")
    ax.legend()
    ax.set_title("Small arrays: the launch, not the work, sets the time")
    log_tick_labels(ax)
    return ax


def stall_shares(res: dict, top: int = 4, ax=None):
    """Each stall kernel's warp-state breakdown from gpulab/data/results/stall_reasons.json
    (Nsight Compute, ``share_of_stalls`` per kernel): one bar per kernel, its ``top`` largest
    reasons stacked and the rest as "other"; the reason each kernel was built for is named."""
    kernels = (res or {}).get("kernels")
    if not kernels:
        raise ValueError(
            "stall_shares needs gpulab/data/results/stall_reasons.json's dict (key "
            "'kernels'); run python benchmarks/ncu_runs.py stalls on a GPU with ncu"
        )
    if ax is None:
        _, ax = plt.subplots(
            figsize=(6.3, 0.9 * len(kernels) + 1.8)
        )  # tick labels stick out: stays in the column
    names = list(kernels)
    reasons = []
    for k in names:
        sh = {r: x for r, x in kernels[k]["share_of_stalls"].items() if x and r != "selected"}
        for r in sorted(sh, key=lambda r: -sh[r])[:top]:
            if r not in reasons:
                reasons.append(r)
    left = np.zeros(len(names))
    palette = [c for i, c in enumerate(plt.cm.tab10.colors) if i != 7] + list(plt.cm.Set2.colors)  # no grey
    for j, r in enumerate(reasons + ["other"]):
        w = np.array(
            [
                (1.0 - sum((kernels[k]["share_of_stalls"].get(x) or 0) for x in reasons if x != "selected"))
                if r == "other"
                else (kernels[k]["share_of_stalls"].get(r) or 0)
                for k in names
            ]
        )
        w = np.clip(w, 0, None)
        color = "0.85" if r == "other" else palette[j % len(palette)]
        ax.barh(names, w, left=left, color=color, label=r.replace("_", " "))
        left += w
    ax.set_yticks(
        range(len(names)),
        [f"{k}\n(built for {kernels[k]['built_for'].replace('_', ' ')})" for k in names],
        fontsize=MIN_FONT_PT,
    )
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of stall cycles per issued instruction (Nsight Compute warp state)")
    ax.legend(ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    return ax
