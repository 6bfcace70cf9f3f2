"""Global-memory access patterns (chapter 05): copies whose addresses differ only in layout.

Each kernel reads one element per thread so that one warp-level load touches 32 addresses
whose spacing is the pattern under study; the store is always coalesced.
"""

import numpy as np
from numba import cuda


@cuda.jit
def copy(out, a):
    """out[i] = a[i]: consecutive lanes read consecutive elements (the coalesced baseline)."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i]


@cuda.jit
def copy_grid_stride(out, a):
    """Grid-stride copy: a fixed grid walks the whole array, each thread several elements."""
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for i in range(start, out.shape[0], step):
        out[i] = a[i]


@cuda.jit
def copy_strided(out, a, stride):
    """out[i] = a[i * stride]: lane k reads element k*stride, so a warp spreads over stride*32 elements."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i * stride]


@cuda.jit
def copy_offset(out, a, offset):
    """out[i] = a[i + offset]: contiguous but shifted, so a warp's window straddles sector boundaries."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i + offset]


@cuda.jit
def gather(out, a, idx):
    """out[i] = a[idx[i]]: the addresses are whatever idx says (random when idx is a permutation)."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[idx[i]]


@cuda.jit
def scale_rows_wrong_order(out, a, factor):
    """out[r, c] = factor * a[r, c] with x mapped to ROWS: lanes walk down a column (strided)."""
    r, c = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = factor * a[r, c]


@cuda.jit
def scale_rows(out, a, factor):
    """out[r, c] = factor * a[r, c] with x mapped to COLUMNS: lanes walk along a row (coalesced)."""
    c, r = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = factor * a[r, c]


# Constant memory: a small table fixed at compile time, read by every thread of a warp at the
# same index (a broadcast: one read serves all lanes).
POLY = np.array([0.5, -1.0, 0.25, 2.0], dtype=np.float32)


@cuda.jit
def poly_const(out, x):
    """Evaluate a cubic with coefficients from constant memory (every lane reads the same c[k])."""
    c = cuda.const.array_like(POLY)
    i = cuda.grid(1)
    if i < out.shape[0]:
        v = x[i]
        out[i] = ((c[3] * v + c[2]) * v + c[1]) * v + c[0]


@cuda.jit
def poly_global(out, x, coeffs):
    """The same cubic with coefficients passed as an ordinary global array."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        v = x[i]
        out[i] = ((coeffs[3] * v + coeffs[2]) * v + coeffs[1]) * v + coeffs[0]


@cuda.jit
def copy_streaming(out, a):
    """copy with streaming cache hints (PTX ld.global.cs / st.global.cs: evict-first, still via L2).

    GPU only: the hints are inline PTX that the CPU simulators do not model.
    """
    i = cuda.grid(1)
    if i < out.shape[0]:
        cuda.stcs(out, i, cuda.ldcs(a, i))
