"""Where every lane of a launch sits: block, warp, lane, thread index.

The simulator runs a whole launch as one vector of lanes: block after block, each block
padded to whole warps of 32 (the padding lanes are the idle lanes of a partial last warp and
never run).
"""

from dataclasses import dataclass, field

import numpy as np

from ..metrics import WARP  # noqa: F401  (one home: models.occupancy.Arch.warp_size)


@dataclass
class Layout:
    grid: tuple
    block: tuple
    threads_per_block: int = field(init=False)
    warps_per_block: int = field(init=False)
    lanes_per_block: int = field(init=False)
    blocks: int = field(init=False)
    lanes: int = field(init=False)

    def __post_init__(self):
        bx, by, bz = self.block
        gx, gy, gz = self.grid
        self.threads_per_block = bx * by * bz
        self.warps_per_block = -(-self.threads_per_block // WARP)
        self.lanes_per_block = self.warps_per_block * WARP
        self.blocks = gx * gy * gz
        self.lanes = self.blocks * self.lanes_per_block
        g = np.arange(self.lanes, dtype=np.int64)
        self.all_lanes = g
        self.block_of = g // self.lanes_per_block  # linear block index of each lane
        self.thread_of = g % self.lanes_per_block  # linear thread index within block
        self.exists = self.thread_of < self.threads_per_block
        self.warp_of = g // WARP  # global warp index
        self.lane_id = g % WARP
        self.tid = self._unflatten(self.thread_of, self.block)
        self.bid = self._unflatten(self.block_of, self.grid)

    @staticmethod
    def _unflatten(linear, dims):
        """x, y, z per lane; a dimension of size 1 is the scalar 0 (uniform, and cheaper)."""
        x = linear % dims[0]
        y = (linear // dims[0]) % dims[1] if dims[1] > 1 else 0
        z = linear // (dims[0] * dims[1]) if dims[2] > 1 else 0
        if dims[0] == 1:
            x = 0
        return x, y, z

    @property
    def warps(self):
        return self.lanes // WARP

    def thread_name(self, lane):
        """'thread (x,y,z) of block (x,y,z)' for a global lane index."""

        def pick(v):
            return int(v[lane]) if isinstance(v, np.ndarray) else int(v)

        t = tuple(pick(v) for v in self.tid)
        b = tuple(pick(v) for v in self.bid)
        return f"thread {t} of block {b} (warp {int(self.thread_of[lane]) // WARP}, lane {lane % WARP})"

    def describe(self, lanes, limit=3):
        """Name up to ``limit`` of the given global lanes, and say how many more there are."""
        lanes = list(lanes)
        names = [self.thread_name(int(l)) for l in lanes[:limit]]
        more = len(lanes) - limit
        text = "; ".join(names)
        if more > 0:
            text += f"; and {more} more thread(s)"
        return text
