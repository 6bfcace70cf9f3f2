"""Checks for kernels the reader writes in chapter 06 (shared memory), shared with the homework.

Each check is a pure function, kernel in and :class:`CheckResult` out. It runs the kernel on
gpulab's simulator on fresh random inputs of several sizes, some not a multiple of the tile,
computes the numpy reference only *after* the kernel has run (nothing expected is reachable
while the reader's code runs), and then checks the counters the lesson is about:

- :func:`check_tiled_matmul`: global load requests per warp at most 2 per tile step (the naive
  kernel issues 2 per multiply-add), and shared memory in use;
- :func:`check_padded_transpose`: both global sides coalesced, no shared-memory bank conflicts.

The simulator itself rejects out-of-bounds indices, divergent barriers and races.
"""

from __future__ import annotations

import math

import numpy as np

from gpulab import metrics
from gpulab.checks.kernels import first_mismatch
from gpulab.checks.result import CheckResult
from gpulab.checks.result import untouched

__all__ = [
    "CheckResult",
    "launch_or_fail",
    "check_tiled_matmul",
    "check_padded_transpose",
    "matmul_load_bound",
]


def launch_or_fail(kernel, grid, block, args, case: str, backend: str = "sim"):
    """Launch; return ``(report, None)``, or ``(None, CheckResult)`` saying why the run stopped
    (the simulator's message names the line and the threads)."""
    import gpulab
    from gpulab.errors import KernelError, OutOfBounds, SharedMemoryRace

    try:
        return gpulab.launch(kernel, grid, block, *args, backend=backend), None
    except OutOfBounds as e:
        return None, CheckResult(
            False,
            f"{case}: out-of-bounds access: threads whose index falls "
            f"outside the data must not touch it (check the guards).\n{e}",
        )
    except SharedMemoryRace as e:
        return None, CheckResult(
            False,
            f"{case}: a race on shared memory: some thread wrote or read "
            f"a shared element another warp uses with no syncthreads "
            f"between them.\n{e}",
        )
    except KernelError as e:
        return None, CheckResult(False, f"{case}: the simulator stopped your kernel.\n{e}")
    except Exception as e:  # the reader's code or the launch itself
        return None, CheckResult(False, f"{case}: {type(e).__name__}: {e}")


def _mismatch(got, want, rtol, atol, case, name):
    """CheckResult describing the first wrong element, or None when all match."""
    mm = first_mismatch(got, want, rtol, atol)
    if mm is None:
        return None
    idx, g, w, n = mm
    never = " (never written: no thread stored it)" if np.isnan(g) else ""
    where = ", ".join(map(str, idx))
    return CheckResult(
        False,
        f"{case}: {name}[{where}] = {g:.7g}{never}, expected {w:.7g}; {n} of {want.size} elements wrong",
    )


def _warps(grid, block) -> int:
    g = np.prod(np.atleast_1d(grid))
    b = int(np.prod(np.atleast_1d(block)))
    return int(g) * math.ceil(b / metrics.WARP)


# --------------------------------------------------------------------------- tiled matmul


def matmul_load_bound(m: int, k: int, n: int, tile: int) -> int:
    """Most global load requests a tiled C = A B may issue: each of the
    ceil(n/tile) x ceil(m/tile) blocks loads a tile x tile tile of A and one of B per step of
    ``tile`` along K, tile*tile/32 requests each when each warp request reads whole tile rows
    (for (tile, tile) blocks: 2 requests per warp per step), ceil(k/tile) steps."""
    grid = (math.ceil(n / tile), math.ceil(m / tile))
    return 2 * math.ceil(k / tile) * _warps(grid, (tile, tile))


def _matmul_sizes(tile, rng):
    """(M, K, N): one tile; whole tiles, K longer than one tile; nothing a multiple of the tile;
    thinner than a tile; and one random size."""
    sizes = [
        (tile, tile, tile),
        (2 * tile, 3 * tile, tile),
        (2 * tile + 5, 3 * tile + 5, tile + 13),
        (7, tile + 3, 2 * tile + 1),
    ]
    sizes.append(tuple(int(v) for v in rng.integers(tile // 2, 4 * tile, 3)))
    return sizes


def check_tiled_matmul(kernel, tile: int = 16, block=None, seed=None, backend: str = "sim") -> CheckResult:
    """Grade ``kernel(c, a, b)`` computing C = A B (float32, C of shape (M, N)) with one block per
    ``tile`` x ``tile`` tile of C, grid ``(ceil(N/tile), ceil(M/tile))``, x indexing columns, and
    block ``(tile, tile)`` or ``block`` (e.g. ``(tile, tile // 2)``: two outputs per thread).

    Right values on every size, then (simulator only) at most :func:`matmul_load_bound` global
    load requests and some shared-memory loads: a kernel that reads A and B from global memory
    for every product, or tiles only one of them, fails on the counters."""
    if (
        start := untouched(
            kernel, judge=check_tiled_matmul, tile=tile, block=block, seed=seed, backend=backend
        )
    ) is not None:
        return start
    rng = np.random.default_rng(seed)
    block = tuple(block) if block is not None else (tile, tile)
    ld_req = metrics.GLOBAL_REQUESTS["ld"]
    sh_ld = metrics.SHARED_INSTRUCTIONS["ld"]
    worst = 0.0
    sizes = _matmul_sizes(tile, rng)
    for m, k, n in sizes:
        case = f"A {m}x{k}, B {k}x{n}"
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        c = np.full((m, n), np.nan, np.float32)
        grid = (math.ceil(n / tile), math.ceil(m / tile))
        rep, fail = launch_or_fail(kernel, grid, block, (c, a.copy(), b.copy()), case, backend)
        if fail is not None:
            return fail
        want = a.astype(np.float64) @ b.astype(np.float64)  # only after the run
        bad = _mismatch(c, want, 1e-4, 1e-5 * k + 1e-5, case, "C")
        if bad is not None:
            if np.isnan(c).any():
                bad.message += (
                    ". Some elements of C were never stored: every output needs a thread that writes it"
                )
            elif m % tile or k % tile or n % tile:
                bad.message += (
                    ". Sizes here are not multiples of the tile: the parts of the "
                    "A and B tiles past the edges must be filled with zeros"
                )
            else:
                bad.message += (
                    ". Check which tile of A and of B each step loads, and that C[row, col] "
                    "takes row from y and col from x"
                )
            return bad
        if backend != "sim":
            continue
        req, bound = int(rep.metrics.get(ld_req, 0)), matmul_load_bound(m, k, n, tile)
        naive = 2 * k * _warps(grid, (tile, tile))  # one thread per output, all from global
        if req > bound:
            return CheckResult(
                False,
                f"{case}: right values, but {req} global load requests; a tiled "
                f"kernel needs at most {bound} (a {tile} x {tile} tile of A and "
                f"one of B per step, {tile} values per row), an untiled one up "
                f"to {naive}. Stage tiles of both A and B in "
                f"shared memory and read the products from there",
            )
        if not rep.metrics.get(sh_ld, 0):
            return CheckResult(
                False,
                f"{case}: right values with few global loads, but no shared-memory "
                f"loads: the exercise is to reuse tiles staged in shared memory",
            )
        worst = max(worst, req / naive)
    return CheckResult(
        True,
        f"C = A B right on {len(sizes)} sizes "
        f"({', '.join(f'{m}x{k}x{n}' for m, k, n in sizes)}), with at most "
        f"{worst:.3g} of the untiled kernel's global load requests",
    )


# --------------------------------------------------------------------------- padded transpose


def _transpose_sizes(tile, rng):
    sizes = [(tile, tile), (2 * tile, 3 * tile), (tile + 5, 2 * tile + 21), (5, 2 * tile + 6)]
    sizes.append(tuple(int(v) for v in rng.integers(tile // 2, 4 * tile, 2)))
    return sizes


def check_padded_transpose(
    kernel, tile: int = 32, rows: int = 8, seed=None, backend: str = "sim"
) -> CheckResult:
    """Grade ``kernel(out, a)`` writing ``out = a.T`` (float32, a of shape (h, w)) with block
    ``(tile, rows)`` and grid ``(ceil(w/tile), ceil(h/tile))``.

    Right values on every size, then (simulator only) no shared-memory bank conflicts on loads
    or stores and, where the sizes are whole tiles, at most 4 sectors per global request on both
    sides (32 lanes x 4 bytes): the naive kernel's stores need 32, an unpadded tile's column
    access is a 32-way conflict."""
    rng = np.random.default_rng(seed)
    sizes = _transpose_sizes(tile, rng)
    ideal = metrics.WARP * 4 // metrics.SECTOR_BYTES
    for h, w in sizes:
        case = f"a {h}x{w}"
        a = rng.standard_normal((h, w)).astype(np.float32)
        out = np.full((w, h), np.nan, np.float32)
        grid = (math.ceil(w / tile), math.ceil(h / tile))
        rep, fail = launch_or_fail(kernel, grid, (tile, rows), (out, a.copy()), case, backend)
        if fail is not None:
            return fail
        bad = _mismatch(out, a.T, 0, 0, case, "out")
        if bad is not None:
            return bad
        if backend != "sim":
            continue
        for op in ("ld", "st"):
            conflicts = rep.bank_conflicts(op)
            if conflicts:
                wf = rep.wavefronts_per_instruction(op)
                return CheckResult(
                    False,
                    f"{case}: right values, but {conflicts} shared-memory bank "
                    f"conflicts on {'loads' if op == 'ld' else 'stores'} "
                    f"({wf:.1f} wavefronts per instruction): a column of a "
                    f"{tile}-wide float32 tile sits in one bank; pad the rows",
                )
        if h % tile == 0 and w % tile == 0:
            for op in ("ld", "st"):
                s = rep.sectors_per_request(op)
                if s > ideal:
                    return CheckResult(
                        False,
                        f"{case}: right values, but {s:.1f} sectors per global "
                        f"{'load' if op == 'ld' else 'store'} request (ideal "
                        f"{ideal}): consecutive lanes must touch consecutive "
                        f"addresses on both sides; stage the tile in shared memory",
                    )
    return CheckResult(
        True,
        f"out = a.T right on {len(sizes)} sizes "
        f"({', '.join(f'{h}x{w}' for h, w in sizes)}), no bank conflicts, "
        f"{ideal} sectors per global request on whole tiles",
    )
