"""Check for the fragment-loading kernel the reader writes in chapter 09, shared with the homework.

Before ``mma.sync.aligned.m16n8k16`` each lane of the warp must hold its own elements of A, B
and C, in the places the PTX ISA fixes ("Matrix Fragments for mma.m16n8k16 with floating point
type"). The reader's ``kernel(frag, m)`` does that loading: launched with one 32-thread block
per tile, grid ``(tile columns, tile rows)``, block ``(bx, by)`` copies the tile of ``m`` at tile
row ``by``, tile column ``bx`` into ``frag[by, bx, lane, i]`` for i = 0 .. n-1 (n = 8 for A,
4 for B and C). The layout rule is :func:`gpulab.models.mma.fragment_coords`'s.

Graded on fresh random matrices of several tile counts (the reference fragments are built only
after the run), and by the simulator's request counts: every lane loads its own elements, at
most n load and n store requests per warp, so one lane copying for the whole warp fails.
"""

from __future__ import annotations

import numpy as np

from gpulab import metrics
from gpulab.checks.result import CheckResult
from gpulab.checks.tiling import launch_or_fail
from gpulab.models import mma
from gpulab.checks.result import untouched

__all__ = ["CheckResult", "check_fragment_load", "fragment_reference"]


def fragment_reference(m: np.ndarray, operand: str) -> np.ndarray:
    """(tile rows, tile cols, 32, n): each tile of ``m`` split into lanes by the PTX layout."""
    rows, cols, n = mma.SHAPES[operand]
    tr, tc = m.shape[0] // rows, m.shape[1] // cols
    out = np.empty((tr, tc, mma.WARP, n), m.dtype)
    for i in range(tr):
        for j in range(tc):
            out[i, j] = mma.load_fragments(m[i * rows : (i + 1) * rows, j * cols : (j + 1) * cols], operand)
    return out


def _where(tile, value):
    """(row, col) of ``value`` in the tile (its values are distinct), or None."""
    hit = np.argwhere(tile == value)
    return (int(hit[0][0]), int(hit[0][1])) if len(hit) else None


def _explain(operand, tile, got, lane, i):
    """Why frag[lane, i] is wrong, in terms of the layout."""
    r, c = mma.fragment_coords(operand)
    want_rc = (int(r[lane, i]), int(c[lane, i]))
    name = f"{operand.lower()}{i}"
    if np.isnan(got):
        return f"lane {lane}'s {name} was never written; it should hold {operand}{list(want_rc)}"
    src = _where(tile, got)
    if src is None:
        return (
            f"lane {lane}'s {name} = {got:g} is no element of the tile; it should hold "
            f"{operand}{list(want_rc)} (does the block read its own tile, at 16 x blockIdx?)"
        )
    hint = ""
    if src == want_rc[::-1]:
        hint = ": row and column are swapped"
    elif src[0] == want_rc[0] and src[1] != want_rc[1]:
        hint = ": right row, wrong column"
    elif src[1] == want_rc[1]:
        hint = ": right column, wrong row"
    return (
        f"lane {lane}'s {name} holds {operand}{list(src)} of its tile, but the PTX layout puts "
        f"{operand}{list(want_rc)} there{hint}"
    )


def check_fragment_load(kernel, operand: str = "A", seed=None, backend: str = "sim") -> CheckResult:
    """Grade ``kernel(frag, m)`` loading m16n8k16 fragments of ``operand`` ('A', 'B' or 'C')."""
    if (
        start := untouched(kernel, judge=check_fragment_load, operand=operand, seed=seed, backend=backend)
    ) is not None:
        return start
    if operand not in mma.SHAPES:
        raise ValueError(f"operand must be one of {sorted(mma.SHAPES)}, not {operand!r}")
    rows, cols, n = mma.SHAPES[operand]
    rng = np.random.default_rng(seed)
    shapes = [(1, 1), (2, 3), (3, 1), tuple(int(v) for v in rng.integers(1, 5, 2))]
    ld_req, st_req = metrics.GLOBAL_REQUESTS["ld"], metrics.GLOBAL_REQUESTS["st"]
    for tr, tc in shapes:
        case = f"{operand} of {tr * rows}x{tc * cols} ({tr}x{tc} tiles)"
        # distinct values, exact in fp16 (as the registers would hold them): a permutation of k/64
        m = rng.permutation(tr * rows * tc * cols).reshape(tr * rows, tc * cols) / 64 - 8
        m = m.astype(np.float16).astype(np.float32)
        frag = np.full((tr, tc, mma.WARP, n), np.nan, np.float32)
        rep, fail = launch_or_fail(kernel, (tc, tr), mma.WARP, (frag, m.copy()), case, backend)
        if fail is not None:
            return fail
        want = fragment_reference(m, operand)  # only after the run
        bad = np.argwhere(frag != want)
        if bad.size:
            ti, tj, lane, i = (int(v) for v in bad[0])
            tile = m[ti * rows : (ti + 1) * rows, tj * cols : (tj + 1) * cols]
            return CheckResult(
                False,
                f"{case}: tile ({ti}, {tj}): "
                f"{_explain(operand, tile, frag[ti, tj, lane, i], lane, i)} "
                f"({len(bad)} of {want.size} fragment values wrong)",
            )
        if backend != "sim":
            continue
        warps = tr * tc
        for key, what in ((ld_req, "load"), (st_req, "store")):
            per_warp = rep.metrics.get(key, 0) / warps
            if per_warp > n:
                return CheckResult(
                    False,
                    f"{case}: right fragments, but {per_warp:.0f} global {what} "
                    f"requests per warp where {n} suffice: each lane loads its "
                    f"own {n} elements, all 32 lanes at once",
                )
    return CheckResult(
        True,
        f"every lane holds its {n} elements of {operand} where the PTX layout "
        f"puts them, on {len(shapes)} matrices of "
        f"{', '.join(f'{a}x{b}' for a, b in shapes)} tiles, with at most {n} "
        f"load and store requests per warp",
    )
