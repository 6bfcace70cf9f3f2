"""Lane-to-lane data movement of warp shuffles: who reads from whom at each step, as a figure.

Steps come either from the simulator's trace (``steps_from_report(rep)``, the shuffles the traced
warp really executed) or from CUDA's documented rules (``steps_from_rule``), so the two can be
compared. ``shuffle_sources`` is that rule: the lane each lane reads in one ``shfl_*_sync``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("idx", "up", "down", "xor")


def shuffle_sources(kind: str, arg: int, width: int = 32, lanes: int = 32) -> np.ndarray:
    """Source lane of every lane for one shuffle, as the CUDA Programming Guide defines them.

    idx: lane ``arg mod width`` of the lane's segment; up/down: lane -/+ ``arg``, or the lane
    itself when that falls outside its ``width``-lane segment; xor: lane ^ ``arg``, or the lane
    itself when that lies in a later segment (the Programming Guide lets a group read earlier
    groups, not later ones).
    """
    lane = np.arange(lanes)
    seg = (lane // width) * width
    if kind == "idx":
        return seg + (arg % width)
    if kind == "up":
        src = lane - arg
        return np.where(src >= seg, src, lane)
    if kind == "down":
        src = lane + arg
        return np.where(src < seg + width, src, lane)
    if kind == "xor":
        src = lane ^ arg                    # earlier segments may be read, later ones may not
        return np.where(src < seg + width, src, lane)
    raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")


@dataclass
class ShuffleStep:
    """One warp-wide shuffle: its label, the source lane per lane, and the active mask."""
    label: str
    src: np.ndarray
    mask: int = 0xFFFFFFFF
    kind: str = ""
    line: int | None = None


def steps_from_rule(kind: str, args, lanes: int = 32) -> list[ShuffleStep]:
    """The steps of a shuffle loop (e.g. kind="down", args=(16, 8, 4, 2, 1)) by CUDA's rules."""
    return [ShuffleStep(f"{kind} {a}", shuffle_sources(kind, a, lanes=lanes), kind=kind)
            for a in args]


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
    for arg in range(32):
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
        if np.ndim(mask):                      # one bool per lane -> 32-bit mask
            mask = int(sum(1 << k for k, a in enumerate(np.asarray(mask)) if a))
        mask = int(mask)
        label = {"shfl_sync": "idx", "shfl_up_sync": "up", "shfl_down_sync": "down",
                 "shfl_xor_sync": "xor"}.get(kind, kind)
        arg = _infer_arg(label, src)
        name = f"{label} {arg}" if arg is not None else label
        steps.append(ShuffleStep(f"{name} (line {line})", src, mask, kind=label, line=line))
    return steps


def coefficients(steps, lanes: int = 32, combine: str = "add") -> list[np.ndarray]:
    """Each lane's value as a sum c @ x of the warp's inputs, after every step (exact integers).

    combine="add": every active lane does ``v += shfl(v)`` (reduction loops; a lane whose source
    is out of range adds its own value, so it doubles); "scan": a lane adds only when its source
    is a lower lane (``if lane >= d`` in the shfl_up scan); "copy": ``v = shfl(v)``.
    Row ``i`` of a result is lane ``i``'s coefficient vector: all ones means the warp total.
    """
    c = np.eye(lanes, dtype=np.int64)
    out = [c.copy()]
    for st in steps:
        src = np.asarray(st.src, dtype=int)
        active = np.array([(st.mask >> lane) & 1 for lane in range(lanes)], dtype=bool)
        if combine == "copy":
            new = c[src]
        elif combine == "scan":
            new = c + np.where((src < np.arange(lanes))[:, None], c[src], 0)
        elif combine == "add":
            new = c + c[src]
        else:
            raise ValueError("combine must be 'add', 'scan' or 'copy'")
        c = np.where(active[:, None], new, c)
        out.append(c.copy())
    return out


def lanes_with_total(steps, lanes: int = 32, combine: str = "add") -> list[int]:
    """Lanes whose final value is exactly the sum of all the warp's inputs, each counted once."""
    c = coefficients(steps, lanes, combine)[-1]
    return [i for i in range(lanes) if np.all(c[i] == 1)]


def coverage(steps, lanes: int = 32, combine: str = "add") -> list[np.ndarray]:
    """How many distinct inputs each lane's value depends on, after each step."""
    return [np.count_nonzero(c, axis=1) for c in coefficients(steps, lanes, combine)]


def draw_shuffles(steps, ax=None, lanes: int = 32, combine: str | None = "add", title=None):
    """Draw lanes (rows) across steps (columns) with an arrow from each lane's source lane.

    Arrows that stay on their row are lanes reading their own value (source out of range);
    grey rows are inactive lanes. With ``combine``, dots are coloured by how many inputs the
    lane's value covers, so a finished reduction shows as a dark dot (32 inputs).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(1.6 + 1.5 * len(steps), 6.2))
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
                ax.annotate("", xy=(k + 1, lane), xytext=(k, s),
                            arrowprops=dict(arrowstyle="->", lw=0.7, color="tab:blue", alpha=0.8))
    for k in range(len(steps) + 1):
        if cov is not None:
            c = cov[k]
            ax.scatter(np.full(lanes, k), np.arange(lanes), c=c, cmap=cmap, vmin=1, vmax=lanes,
                       s=22, zorder=3, edgecolors="k", linewidths=0.3)
        else:
            ax.scatter(np.full(lanes, k), np.arange(lanes), color="k", s=6, zorder=3)
    if combine:
        done = lanes_with_total(steps, lanes, combine) if combine != "scan" else []
        ax.scatter(np.full(len(done), len(steps)), done, s=90, facecolors="none",
                   edgecolors="tab:red", linewidths=1.4, zorder=4,
                   label="holds the warp total" if done else None)
        if done:
            ax.legend(loc="lower left", fontsize=7, framealpha=0.9)
    ax.set_xticks(range(len(steps) + 1))
    ax.set_xticklabels(["start"] + [st.label for st in steps], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(0, lanes, 4))
    ax.set_ylabel("lane")
    ax.set_ylim(lanes - 0.5, -0.5)
    ax.set_xlim(-0.3, len(steps) + 0.3)
    if cov is not None:
        sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(1, lanes))
        ax.figure.colorbar(sm, ax=ax, fraction=0.05, pad=0.02,
                           label="inputs folded into the lane's value")
    if title:
        ax.set_title(title, fontsize=10)
    return ax
