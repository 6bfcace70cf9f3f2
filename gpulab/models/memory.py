"""One warp's memory instruction in numbers: the byte addresses of textbook access patterns,
the sectors or bank wavefronts they cost, and the loads a tiled stencil saves.

Addresses are plain numpy arrays (one per lane); the counting rules themselves live in
:mod:`gpulab.metrics`, and the pictures in :mod:`gpulab.plots.memory`.
"""

from __future__ import annotations

import numpy as np

from gpulab import metrics
from gpulab.models.occupancy import WARP

FLOAT32_BYTES = 4


def warp_addresses(stride=1, offset=0, elem_bytes=4, base=0, lanes=WARP):
    """Byte addresses of lane k reading element ``offset + k*stride`` of an array at ``base``."""
    k = np.arange(lanes, dtype=np.int64)
    return base + (offset + k * stride) * elem_bytes


def random_addresses(n_elems, elem_bytes=4, seed=0, lanes=WARP):
    """Byte addresses of a warp gathering ``lanes`` random elements out of ``n_elems``."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_elems, size=lanes).astype(np.int64) * elem_bytes


def column_addresses(col=0, row_words=32, elem_bytes=4, lanes=WARP):
    """Shared byte offsets of lane k reading tile[k, col] from a row-major tile ``row_words`` wide."""
    k = np.arange(lanes, dtype=np.int64)
    return (k * row_words + col) * elem_bytes


def coalescing_summary(addresses, elem_bytes=4, mask=None):
    """Sectors, bytes moved, bytes used and efficiency of one warp-level global access."""
    addr = np.asarray(addresses, dtype=np.int64).reshape(1, -1)
    act = np.ones_like(addr, dtype=bool) if mask is None else np.asarray(mask, bool).reshape(1, -1)
    sectors = int(metrics.global_sectors(addr, elem_bytes, act)[0])
    used = int(act.sum()) * elem_bytes
    moved = sectors * metrics.SECTOR_BYTES
    return {
        "sectors": sectors,
        "bytes_moved": moved,
        "bytes_used": used,
        "efficiency": used / moved if moved else 0.0,
    }


def bank_summary(addresses, elem_bytes=4, mask=None):
    """Wavefronts, ideal wavefronts and bank conflicts of one warp-level shared access."""
    addr = np.asarray(addresses, dtype=np.int64).reshape(1, -1)
    act = np.ones_like(addr, dtype=bool) if mask is None else np.asarray(mask, bool).reshape(1, -1)
    wf, ideal = metrics.shared_wavefronts(addr, elem_bytes, act)
    return {"wavefronts": int(wf[0]), "ideal": int(ideal[0]), "conflicts": int(wf[0] - ideal[0])}


def halo_cost(tile: int, radius: int) -> dict:
    """Global loads per output pixel, threads and shared bytes of a TILE x TILE blur block.

    A naive (2R+1)^2 box reads every tap from global memory; a tiled block loads its
    (TILE+2R)^2 halo tile once (float32) and reads the taps from shared memory.
    """
    halo = tile + 2 * radius
    return {
        "tile": tile,
        "radius": radius,
        "naive_loads_per_pixel": (2 * radius + 1) ** 2,
        "tiled_loads_per_pixel": halo * halo / (tile * tile),
        "threads_per_block": tile * tile,
        "shared_bytes": halo * halo * FLOAT32_BYTES,
    }
