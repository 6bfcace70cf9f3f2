"""What the simulator records about the traced warp, as typed records with one cap per kind.

A launch keeps, for the one warp ``trace=(block, warp)`` names: its active mask at every
statement (:class:`MaskStep`), its memory instructions (:class:`GlobalAccess`,
:class:`SharedAccess`) and its shuffles (:class:`ShuffleRecord`). Each kind stops at its cap in
:data:`LIMITS`; ``Report.truncated[kind]`` then says so instead of the list silently ending.

Records also read like the dicts they replace (``rec["op"]``, ``rec.get("sectors")``), so code
written against the old traces keeps working.
"""

from dataclasses import dataclass, fields
from typing import NamedTuple, Optional

import numpy as np

#: the most records of each kind one launch keeps (memory stays bounded for long kernels)
LIMITS = {"mask_history": 200_000, "accesses": 20_000, "shuffles": 20_000}


class MaskStep(NamedTuple):
    """The traced warp's active lanes (bit k = lane k) when it executed ``line``."""

    line: int
    mask: int


class _Record:
    """Dict-style reading of a dataclass record: ``rec["field"]``, ``rec.get``, ``keys``."""

    def __getitem__(self, key):
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key, default=None):
        return getattr(self, key) if key in self.keys() else default

    def keys(self):
        return [f.name for f in fields(self)]

    def __contains__(self, key):
        return key in self.keys()


@dataclass
class MemoryAccess(_Record):
    """One warp-level load or store of the traced warp: byte addresses per lane (-1 inactive)."""

    line: int
    array: str
    space: str  # "global" or "shared"
    op: str  # "ld" or "st"
    addresses: np.ndarray
    mask: np.ndarray  # bool per lane
    size: int  # bytes per lane


@dataclass
class GlobalAccess(MemoryAccess):
    """A global-memory instruction and the 32-byte sectors it touched."""

    sectors: int = 0


@dataclass
class SharedAccess(MemoryAccess):
    """A shared-memory instruction, its wavefronts and bank conflicts."""

    wavefronts: int = 0
    bank_conflicts: int = 0


@dataclass
class ShuffleRecord(_Record):
    """One ``shfl_*_sync`` of the traced warp: the lane each lane read, and the member lanes."""

    line: Optional[int]
    kind: str
    src: np.ndarray
    mask: int


class Trace:
    """The traced warp's records of one launch, each kind capped at ``LIMITS``."""

    def __init__(self, limits=None):
        self.limits = dict(LIMITS if limits is None else limits)
        self.records = {kind: [] for kind in self.limits}
        self.truncated = {kind: False for kind in self.limits}

    def add(self, kind, make):
        """Append ``make()`` to ``kind`` unless the cap is reached (then note the truncation).

        ``make`` is a callable so a record past the cap costs nothing to build.
        """
        rec = self.records[kind]
        if len(rec) < self.limits[kind]:
            rec.append(make())
        else:
            self.truncated[kind] = True
