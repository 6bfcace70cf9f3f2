"""Checks for block-level reductions (chapters 07-08), shared with the homework: one sum per block
on any length, graded by value on random inputs and by the simulator's barrier count (warp
shuffles first, shared memory only between warps, so one ``syncthreads`` is enough). The
barrier counting is :func:`gpulab.checks.warp.barriers_per_block`'s."""

from __future__ import annotations

import math

import numpy as np

from gpulab.checks.kernels import CheckResult
from gpulab.checks.warp import _shuffle_problem, barriers_per_block


def block_sums_reference(x: np.ndarray, block: int, nblocks: int) -> np.ndarray:
    """Sum of each block-sized segment of x (segments past the end sum zeros), in float64."""
    pad = np.zeros(nblocks * block, dtype=np.float64)
    pad[: x.shape[0]] = x
    return pad.reshape(nblocks, block).sum(axis=1)


def check_block_sum(kernel, seed=None, max_barriers: int = 1, backend: str = "sim") -> CheckResult:
    """``kernel(x, out)`` launched with ceil(n/block) blocks writes the sum of its block's elements
    to ``out[blockIdx.x]``; lengths that are not multiples of the block or of 32; small random
    integers (sums exact in float32); at most ``max_barriers`` syncthreads per block, and each
    warp reduced by a shuffle tree (:func:`gpulab.checks.warp._shuffle_problem`'s rule): thread 0
    adding up its block in a loop needs no barrier at all and must not pass."""
    import gpulab
    from gpulab.errors import KernelError

    rng = np.random.default_rng(seed)
    cases = [(32, 32), (1, 64), (100, 64), (256, 256), (1000, 128), (777, 96)]
    cases.append((int(rng.integers(300, 5000)), int(rng.choice([64, 128, 256, 512]))))
    most = 0
    for n, block in cases:
        x = rng.integers(1, 10, n).astype(np.float32)  # > 0: an omission always shows
        nblocks = math.ceil(n / block)
        out = np.full(nblocks, np.nan, np.float32)
        try:
            rep = gpulab.launch(kernel, nblocks, block, x.copy(), out, backend=backend)
        except KernelError as e:
            return CheckResult(False, f"n={n}, block={block}: the simulator stopped your kernel.\n{e}")
        except Exception as e:  # the reader's code or the launch
            return CheckResult(False, f"n={n}, block={block}: {type(e).__name__}: {e}")
        want = block_sums_reference(x, block, nblocks)
        bad = np.flatnonzero(~np.isclose(out, want))
        if bad.size:
            k = int(bad[0])
            never = " (never written)" if np.isnan(out[k]) else ""
            if np.isnan(out[k]) and sum(rep.atomics.values()):
                never = (
                    " (out starts undefined, NaN here: an atomic add adds to whatever is "
                    "there; store the block's sum with a plain write)"
                )
            return CheckResult(
                False,
                f"n={n}, block={block}: out[{k}] = {out[k]:g}{never}, expected "
                f"{want[k]:g} ({bad.size} of {nblocks} block sums wrong)",
            )
        if backend == "sim":
            b = barriers_per_block(rep)
            most = max(most, b)
            if b > max_barriers:
                return CheckResult(
                    False,
                    f"n={n}, block={block}: correct sums, but {b} syncthreads per "
                    f"block (at most {max_barriers}): reduce within each warp by "
                    f"shuffles, and use shared memory only to combine the warps",
                )
            why = _shuffle_problem(rep, n, block)  # one thread summing in a loop needs no barrier
            if why:
                return CheckResult(False, f"n={n}, block={block}: {why}")
    return CheckResult(
        True, f"correct block sums on {len(cases)} lengths, at most {most} syncthreads per block"
    )
