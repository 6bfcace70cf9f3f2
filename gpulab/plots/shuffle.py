"""Lane-to-lane data movement of warp shuffles: who reads from whom at each step, as a figure.

Steps come either from the simulator's trace (``steps_from_report(rep)``, the shuffles the traced
warp really executed) or from CUDA's documented rule (``steps_from_rule``), so the two can be
compared. The rule has one home, :func:`gpulab.sim.shuffle_rule.source_lanes`; what a loop of
steps leaves in each lane is :mod:`gpulab.models.shuffle` (re-exported here).
"""

from __future__ import annotations

import numpy as np

from gpulab.models.shuffle import (  # noqa: F401 (re-exported: chapters call them as plots.shuffle.*)
    WARP,
    ShuffleStep,
    coefficients,
    coverage,
    lanes_with_total,
)
from gpulab.sim.shuffle_rule import KINDS, source_lanes


def shuffle_sources(kind: str, arg: int, width: int = WARP, lanes: int = WARP) -> np.ndarray:
    """Source lane of each of ``lanes`` lanes for one shuffle (CUDA's rule, ``source_lanes``)."""
    return source_lanes(kind, arg, np.arange(lanes), width)


def steps_from_rule(kind: str, args, lanes: int = WARP) -> list[ShuffleStep]:
    """The steps of a shuffle loop (e.g. kind="down", args=(16, 8, 4, 2, 1)) by CUDA's rule."""
    return [ShuffleStep(f"{kind} {a}", shuffle_sources(kind, a, lanes=lanes), kind=kind) for a in args]


def _get(op, *names):
    """Field of a trace record, whether the simulator gives objects or dicts."""
    for n in names:
        if isinstance(op, dict) and n in op:
            return op[n]
        if hasattr(op, n):
            return getattr(op, n)
    raise AttributeError(f"shuffle record {op!r} has none of {names}")


def _infer_arg(kind: str, src: np.ndarray):
    """The offset / lane argument that reproduces ``src`` under CUDA's rule, or None."""
    if kind not in KINDS:
        return None
    for arg in range(WARP):
        if np.array_equal(shuffle_sources(kind, arg, lanes=len(src)), src):
            return arg
    return None


def steps_from_report(rep, lines=None) -> list[ShuffleStep]:
    """The traced warp's shuffles from ``rep.shuffles`` (optionally only those on given source lines)."""
    steps = []
    for op in rep.shuffles:
        line = _get(op, "line")
        if lines is not None and line not in lines:
            continue
        kind = str(_get(op, "kind"))
        src = np.asarray(_get(op, "src_lane", "src", "source", "sources"), dtype=int)
        mask = _get(op, "mask", "active_mask", "active")
        if np.ndim(mask):  # one bool per lane -> 32-bit mask
            mask = int(sum(1 << k for k, a in enumerate(np.asarray(mask)) if a))
        mask = int(mask)
        label = {
            "shfl_sync": "idx",
            "shfl_up_sync": "up",
            "shfl_down_sync": "down",
            "shfl_xor_sync": "xor",
        }.get(kind, kind)
        arg = _infer_arg(label, src)
        name = f"{label} {arg}" if arg is not None else label
        steps.append(ShuffleStep(f"{name} (line {line})", src, mask, kind=label, line=line))
    return steps


def draw_shuffles(
    steps, ax=None, lanes: int = WARP, combine: str | None = "add", title=None, colorbar: bool = True
):
    """Draw lanes (rows) across steps (columns) with an arrow from each lane's source lane.

    Arrows that stay on their row are lanes reading their own value (source out of range);
    grey rows are inactive lanes. With ``combine``, dots are coloured by how many inputs the
    lane's value covers, so a finished reduction shows as a dark dot (32 inputs), and red rings
    mark the lanes that end with the exact warp total. The figure fits the book's text column;
    ``colorbar=False`` leaves the colour scale out (e.g. for the left panel of a pair).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(min(6.6, 2.4 + 0.75 * len(steps)), 5.4))
    cov = coverage(steps, lanes, combine) if combine else None
    cmap = plt.get_cmap("viridis_r")
    for k, st in enumerate(steps):
        for lane in range(lanes):
            active = (st.mask >> lane) & 1
            s = int(st.src[lane])
            if not active:
                ax.plot([k, k + 1], [lane, lane], color="0.85", lw=0.8)
                continue
            if s == lane:
                ax.plot([k, k + 1], [lane, lane], color="0.6", lw=0.8, ls=":")
            else:
                ax.annotate(
                    "",
                    xy=(k + 1, lane),
                    xytext=(k, s),
                    arrowprops=dict(arrowstyle="->", lw=0.7, color="tab:blue", alpha=0.8),
                )
    for k in range(len(steps) + 1):
        if cov is not None:
            c = cov[k]
            ax.scatter(
                np.full(lanes, k),
                np.arange(lanes),
                c=c,
                cmap=cmap,
                vmin=1,
                vmax=lanes,
                s=22,
                zorder=3,
                edgecolors="k",
                linewidths=0.3,
            )
        else:
            ax.scatter(np.full(lanes, k), np.arange(lanes), color="k", s=6, zorder=3)
    if combine:
        done = lanes_with_total(steps, lanes, combine) if combine != "scan" else []
        ax.scatter(
            np.full(len(done), len(steps)),
            done,
            s=90,
            facecolors="none",
            edgecolors="tab:red",
            linewidths=1.4,
            zorder=4,
        )
    ax.set_xticks(range(len(steps) + 1))
    # "down 16 (line 42)" -> "down 16": short enough for a column of the book
    ax.set_xticklabels(["start"] + [st.label.split(" (line ")[0] for st in steps], rotation=45, ha="right")
    ax.set_yticks(range(0, lanes, 4))
    ax.set_ylabel("lane")
    ax.set_ylim(lanes - 0.5, -0.5)
    ax.set_xlim(-0.3, len(steps) + 0.3)
    if cov is not None and colorbar:
        sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(1, lanes))
        ax.figure.colorbar(sm, ax=ax, fraction=0.05, pad=0.02, label="inputs folded into the lane's value")
    if title:
        ax.set_title(title)
    return ax
