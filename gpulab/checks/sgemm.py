"""Check for chapter 11's exercise (1-D register blocking), shared with the homework.

:func:`check_register_blocking` runs the reader's kernel on gpulab's simulator on fresh random
inputs of several sizes, computes the float64 reference only after the kernel has run, and then
counts what the step is about: global load requests per multiply-add, which must fall to at most
what a 64 x 64 block tile allows, a quarter of chapter 06's 16 x 16 shared-tile kernel; and how
the tiles are staged: coalesced global loads (at most 4 sectors per request, 32 lanes x 4 bytes)
and no shared-memory bank conflicts, as chapters 05 and 06 teach.
"""

from __future__ import annotations

import numpy as np

from gpulab import metrics
from gpulab.checks.result import CheckResult
from gpulab.checks.tiling import _mismatch, _warps, launch_or_fail, matmul_load_bound
from gpulab.checks.result import untouched

__all__ = [
    "check_register_blocking",
    "register_blocking_load_bound",
    "register_blocking_shared_load_bound",
    "coalesced_sectors",
    "BM",
    "BN",
    "BK",
    "TM",
]

BM, BN, BK, TM = 64, 64, 8, 8  # the exercise's block tile, K step and outputs per thread


def register_blocking_load_bound(m: int, k: int, n: int) -> int:
    """Global load requests of a correct kernel: per block and K step, one request per warp
    for its share of the 64 x 8 tile of A and one for the 8 x 64 tile of B (512 threads,
    one element of each)."""
    grid = (n // BN, m // BM)
    return 2 * (k // BK) * _warps(grid, (BN, BM // TM))


def register_blocking_shared_load_bound(m: int, k: int, n: int) -> int:
    """Shared-memory load instructions of a correct kernel: per warp, K step and each of its 8
    values of k, one read of ``B[k, tx]`` into a register and 8 of A, (TM + 1) * BK per warp and K
    step. Reading B's value again for each of the 8 sums (what the question says not to do)
    makes it 2 * TM * BK."""
    grid = (n // BN, m // BM)
    return (TM + 1) * BK * (k // BK) * _warps(grid, (BN, BM // TM))


def coalesced_sectors() -> int:
    """Sectors one warp's float32 load touches when its 32 lanes read 32 consecutive, aligned
    floats (or 4 rows of 8, as A's 64 x 8 tile is read): 32 x 4 bytes / 32-byte sectors = 4."""
    return metrics.WARP * 4 // metrics.SECTOR_BYTES


def _sizes(rng):
    """(M, K, N), all within the contract (M, N multiples of 64, K of 8): one tile; K longer;
    several blocks each way; one random size; and one tile with a random K from 72 to 128, so a
    kernel right only up to some K (the public test's 16, or any fixed size) fails on every run."""
    sizes = [(BM, BK, BN), (BM, 5 * BK, BN), (2 * BM, 3 * BK, 3 * BN)]
    sizes.append((BM * int(rng.integers(1, 4)), BK * int(rng.integers(1, 9)), BN * int(rng.integers(1, 4))))
    sizes.append((BM, BK * int(rng.integers(9, 17)), BN))
    return sizes


def check_register_blocking(kernel, seed=None, backend: str = "sim") -> CheckResult:
    """Grade ``kernel(c, a, b)``: C = A B in float32 (A of shape (M, K), B (K, N)), launched with
    block ``(64, 8)`` and grid ``(N // 64, M // 64)``, each thread computing 8 outputs of one
    column of its block's 64 x 64 tile of C. Size contract: M and N multiples of 64, K of 8.

    Right values on every size; then (simulator) at most :func:`register_blocking_load_bound`
    global load requests (a kernel that re-stages tiles per output, or reads A or B from global
    memory in its inner loop, issues more), shared-memory loads in use but at most
    :func:`register_blocking_shared_load_bound` (B's value read once per k, as the question
    says), at most
    :func:`coalesced_sectors` sectors per global load request (a warp reading 32 rows of A, one
    float each, needs 32) and no shared-memory bank conflicts on loads or stores."""
    if (start := untouched(kernel, judge=check_register_blocking, seed=seed, backend=backend)) is not None:
        return start
    rng = np.random.default_rng(seed)
    ld_req = metrics.GLOBAL_REQUESTS["ld"]
    sh_ld = metrics.SHARED_INSTRUCTIONS["ld"]
    sizes = _sizes(rng)
    ratios, runs = [], []
    for m, k, n in sizes:
        case = f"A {m}x{k}, B {k}x{n}"
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        c = np.full((m, n), np.nan, np.float32)
        rep, fail = launch_or_fail(
            kernel, (n // BN, m // BM), (BN, BM // TM), (c, a.copy(), b.copy()), case, backend
        )
        if fail is not None:
            return fail
        want = a.astype(np.float64) @ b.astype(np.float64)  # only after the run
        bad = _mismatch(c, want, 1e-4, 1e-5 * k + 1e-5, case, "C")
        if bad is not None:
            bad.message += (
                ". Thread (tx, ty) owns C[row0 + ty*8 + i, col0 + tx] for i < 8; each "
                "K step stages A[row0:row0+64, k0:k0+8] and B[k0:k0+8, col0:col0+64]"
            )
            return bad
        if backend == "sim":
            runs.append((case, rep, m, k, n))
    # the counters only once C is right on every size: a wrong kernel hears about its values first
    for case, rep, m, k, n in runs:
        req, bound = int(rep.metrics.get(ld_req, 0)), register_blocking_load_bound(m, k, n)
        tiled = matmul_load_bound(m, k, n, 16)  # chapter 06's 16 x 16 shared-tile kernel
        if req > bound:
            return CheckResult(
                False,
                f"{case}: right values, but {req} global load requests "
                f"({req / (m * n * k):.3g} per multiply-add); one 64 x 8 tile of "
                f"A and one 8 x 64 tile of B per block and K step need {bound} "
                f"({bound / (m * n * k):.3g}), and chapter 06's 16 x 16 shared "
                f"tiles {tiled}. Stage each tile once per K step and keep the 8 "
                f"running sums in registers (cuda.local.array) across it",
            )
        if not rep.metrics.get(sh_ld, 0):
            return CheckResult(
                False,
                f"{case}: right values with few global loads, but no shared-memory "
                f"loads: the exercise is to reuse tiles staged in shared memory",
            )
        sh, sh_bound = int(rep.metrics.get(sh_ld, 0)), register_blocking_shared_load_bound(m, k, n)
        if sh > sh_bound:
            return CheckResult(
                False,
                f"{case}: right values, but {sh} shared-memory load instructions where "
                f"{sh_bound} do (per warp and K step, {TM + 1} per value of k: B[k, tx] "
                f"read once into a register, then {TM} values of A). Read B's value from the "
                f"shared tile once per k, outside the loop over the {TM} sums",
            )
        sectors, ideal = rep.sectors_per_request("ld"), coalesced_sectors()
        if sectors > ideal:
            return CheckResult(
                False,
                f"{case}: right values, but {sectors:.1f} sectors per global load "
                f"request (coalesced tile loads need {ideal}): consecutive lanes "
                f"(tx) must read consecutive addresses. Stage A with the flat thread "
                f"index t = ty * 64 + tx, sa[t // 8, t % 8] = a[row0 + t // 8, "
                f"k0 + t % 8], not a[row0 + tx, k0 + ty] (one row, one sector per lane)",
            )
        for op in ("ld", "st"):
            conflicts = rep.bank_conflicts(op)
            if conflicts:
                wf = rep.wavefronts_per_instruction(op)
                return CheckResult(
                    False,
                    f"{case}: right values, but {conflicts} shared-memory bank "
                    f"conflicts on {'loads' if op == 'ld' else 'stores'} ({wf:.1f} "
                    f"wavefronts per instruction; 1 is conflict-free): lanes of a "
                    f"warp hit one bank at different addresses. Store A's tile row-"
                    f"major, sa[t // 8, t % 8], or pad a k-major tile "
                    f"(cuda.shared.array((8, 68), float32): 64 + 4 columns, written as one constant)",
                )
        ratios.append(req / tiled)
    return CheckResult(
        True,
        f"C = A B right on {len(sizes)} sizes "
        f"({', '.join(f'{m}x{k}x{n}' for m, k, n in sizes)}), with "
        f"{max(ratios) if ratios else float('nan'):.3g} of the 16 x 16 shared-tile "
        f"kernel's global load requests, {coalesced_sectors()} sectors per load request, "
        f"no bank conflicts",
    )
