"""The shuffle source-lane rule: which lane each lane reads in one ``shfl_*_sync``.

CUDA C++ Programming Guide, "Warp Shuffle Functions": the warp is split into segments of
``width`` lanes (a power of two up to 32). ``idx`` reads lane ``arg mod width`` of the lane's own
segment; ``up``/``down`` read lane -/+ ``arg`` and keep their own value when that falls outside
the segment; ``xor`` reads lane ^ ``arg`` and keeps its own value when that lies in a later
segment (earlier segments may be read). The simulator and the shuffle figures both call
:func:`source_lanes`, so the rule has one home.
"""

import numpy as np

from ..metrics import WARP

KINDS = ("idx", "up", "down", "xor")


def source_lanes(kind, arg, lane=None, width=WARP):
    """Source lane of every lane: ``lane`` the lanes' ids within their warp (default 0..31),
    ``arg`` the source lane (idx), delta (up, down) or lane mask (xor), per lane or uniform."""
    lane = np.arange(WARP, dtype=np.int64) if lane is None else np.asarray(lane, dtype=np.int64)
    arg = np.asarray(arg, dtype=np.int64)
    seg = (lane // width) * width
    if kind == "idx":
        return arg % width + seg
    if kind == "up":
        src = lane - arg
        return np.where(src < seg, lane, src)
    if kind == "down":
        src = lane + arg
        return np.where(src >= seg + width, lane, src)
    if kind == "xor":
        src = lane ^ arg
        return np.where(src >= seg + width, lane, src)
    raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
