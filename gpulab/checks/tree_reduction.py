"""Check for the shared-memory tree reduction the reader writes in chapter 07 (seed 002's
group reduction), shared with the homework.

``kernel(partial, values)``, launched with ``ceil(n/block)`` blocks of ``block`` threads, writes
each block's sum to ``partial[blockIdx.x]``. Graded on fresh random inputs of lengths that are
and are not multiples of the block (the reference is computed after the run), then by the
simulator's counters: at most one ``syncthreads`` per round (1 + log2(block) per block), no
atomics, and a tree's number of loads, so a serial loop in one thread fails. The simulator
itself raises on a missing barrier (a race), a barrier inside the ``if`` and out-of-bounds reads.
"""

from __future__ import annotations

import math

import numpy as np

from gpulab import metrics
from gpulab.checks.result import CheckResult
from gpulab.checks.tiling import launch_or_fail
from gpulab.checks.warp import barriers_per_block
from gpulab.checks.result import untouched

__all__ = ["CheckResult", "check_tree_reduce", "tree_barriers", "tree_load_bound"]


def tree_barriers(block: int) -> int:
    """Barriers of the textbook tree: one after filling shared memory, one per halving round."""
    return 1 + int(math.ceil(math.log2(block)))


def tree_load_bound(block: int, items_per_thread: int = 1) -> int:
    """Most warp-level load instructions (global + shared) one block of a tree reduction needs:
    two global loads per warp and value a thread sums (an add during the load is allowed) and,
    per round of stride s,
    two shared loads for each of the ceil(s/32) warps with work, plus one per round of slack.
    A serial sum in one thread needs ``block`` loads or more."""
    w = metrics.WARP
    rounds, s, loads = 0, block // 2, 0
    while s >= 1:
        loads += 2 * math.ceil(s / w)
        rounds += 1
        s //= 2
    return 2 * items_per_thread * math.ceil(block / w) + loads + rounds


def _lengths(segment, rng):
    return [segment, 1, segment - 1, 3 * segment + 7, int(rng.integers(2 * segment, 20 * segment))]


def check_tree_reduce(
    kernel, block: int = 256, items_per_thread: int = 1, seed=None, backend: str = "sim"
) -> CheckResult:
    """Grade a block-sum kernel ``(partial, values)`` as a shared-memory tree (module docstring):
    block b sums ``values[b*S:(b+1)*S]`` with S = block x items_per_thread (each thread adds
    ``items_per_thread`` values while loading)."""
    if (
        start := untouched(
            kernel,
            judge=check_tree_reduce,
            block=block,
            items_per_thread=items_per_thread,
            seed=seed,
            backend=backend,
        )
    ) is not None:
        return start
    rng = np.random.default_rng(seed)
    most_bar = most_loads = 0
    segment = block * items_per_thread
    lengths = _lengths(segment, rng)
    max_bar, max_loads = tree_barriers(block), tree_load_bound(block, items_per_thread)
    for n in lengths:
        case = f"n={n}, block={block}" + (
            f", {items_per_thread} values per thread" if items_per_thread > 1 else ""
        )
        values = rng.integers(1, 10, n).astype(np.float32)  # > 0: an omission always shows
        nblocks = math.ceil(n / segment)
        partial = np.full(nblocks, np.nan, np.float32)
        rep, fail = launch_or_fail(kernel, nblocks, block, (partial, values.copy()), case, backend)
        if fail is not None:
            return fail
        pad = np.zeros(nblocks * segment)  # the reference, after the run
        pad[:n] = values
        want = pad.reshape(nblocks, segment).sum(axis=1)
        bad = np.flatnonzero(~np.isclose(partial, want))
        if bad.size:
            k = int(bad[0])
            never = " (never written)" if np.isnan(partial[k]) else ""
            hint = ""
            if k == nblocks - 1 and n % segment:
                hint = ": the last block is partly past the end; its missing values must count as 0"
            return CheckResult(
                False,
                f"{case}: partial[{k}] = {partial[k]:g}{never}, expected "
                f"{want[k]:g} ({bad.size} of {nblocks} block sums wrong){hint}",
            )
        if backend != "sim":
            continue
        atomics = sum(rep.atomics.values())
        if atomics:
            return CheckResult(
                False,
                f"{case}: right sums, but {atomics} atomic operations: the "
                f"exercise is a tree of additions in shared memory, no atomics",
            )
        bars = barriers_per_block(rep)
        if bars > max_bar:
            return CheckResult(
                False,
                f"{case}: right sums, but {bars} syncthreads per block; a tree "
                f"of {max_bar - 1} rounds needs one after filling shared memory "
                f"and one per round, {max_bar} in all",
            )
        m = rep.metrics
        loads = m.get(metrics.GLOBAL_REQUESTS["ld"], 0) + m.get(metrics.SHARED_INSTRUCTIONS["ld"], 0)
        loads_per_block = loads / nblocks
        if loads_per_block > max_loads:
            return CheckResult(
                False,
                f"{case}: right sums, but {loads_per_block:.0f} warp-level loads "
                f"per block where a tree needs at most {max_loads}: halve the "
                f"number of active threads each round instead of summing in "
                f"a loop",
            )
        most_bar, most_loads = max(most_bar, bars), max(most_loads, loads_per_block)
    msg = f"right block sums for n = {', '.join(map(str, lengths))}"
    if backend == "sim":
        msg += (
            f"; at most {most_bar} syncthreads and {most_loads:.0f} warp-level loads per block "
            f"(limits {max_bar} and {max_loads})"
        )
    return CheckResult(True, msg)
