"""What a loop of warp shuffles leaves in every lane: each lane's value followed as an exact sum
of the warp's inputs, step by step.

A step is the source lane of every lane (``ShuffleStep.src``) and the active mask; the source
lanes come from CUDA's rule, whose one home is :func:`gpulab.sim.shuffle_rule.source_lanes`, or
from the simulator's trace (:func:`gpulab.plots.shuffle.steps_from_report`). Pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpulab.models.occupancy import WARP

FULL_MASK = (1 << WARP) - 1
MAX_LOOP_STEPS = 8  # the shuffle-loop exercise's limit: log2(32) = 5 steps, and room to try more


def loop_offsets_problem(offsets) -> str | None:
    """Why ``offsets`` (whole numbers, None for one that is not) cannot be a shuffle loop's
    offsets, or None if they can: 1 to MAX_LOOP_STEPS lane offsets, each 0 to 31."""
    if not 1 <= len(offsets) <= MAX_LOOP_STEPS or any(d is None or not 0 <= d < WARP for d in offsets):
        return f"give 1 to {MAX_LOOP_STEPS} whole numbers between 0 and {WARP - 1}"
    return None


@dataclass
class ShuffleStep:
    """One warp-wide shuffle: its label, the source lane per lane, and the active mask."""

    label: str
    src: np.ndarray
    mask: int = FULL_MASK
    kind: str = ""
    line: int | None = None


def coefficients(steps, lanes: int = WARP, combine: str = "add") -> list[np.ndarray]:
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


def lanes_with_total(steps, lanes: int = WARP, combine: str = "add") -> list[int]:
    """Lanes whose final value is exactly the sum of all the warp's inputs, each counted once."""
    c = coefficients(steps, lanes, combine)[-1]
    return [i for i in range(lanes) if np.all(c[i] == 1)]


def coverage(steps, lanes: int = WARP, combine: str = "add") -> list[np.ndarray]:
    """How many distinct inputs each lane's value depends on, after each step."""
    return [np.count_nonzero(c, axis=1) for c in coefficients(steps, lanes, combine)]
