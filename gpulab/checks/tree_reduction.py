"""Check for the shared-memory tree reduction the reader writes in chapter 07 (seed 002's
group reduction), shared with the homework.

``kernel(partial, values)``, launched with ``ceil(n/block)`` blocks of ``block`` threads, writes
each block's sum to ``partial[blockIdx.x]``. Graded on fresh random inputs of lengths that are
and are not multiples of the block (the reference is computed after the run), then by the
simulator's counters and the traced warp's addresses: the tree the homework prescribes (strides
block/2, block/4, ..., 1; each thread t < s adds element t + s; one ``syncthreads`` after filling
shared memory and one after each round, 1 + log2(block) in all), no atomics, and a tree's number
of loads, so a serial loop in one thread fails. The simulator
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


def tree_offsets(rep, block: int) -> tuple[list[int], str | None]:
    """The strides, in order, at which the traced warp (block 0, warp 0) read shared memory
    relative to its own element, and the first departure from the prescribed tree: every
    shared load reads element ``lane + c`` for one constant c per instruction (0: its own,
    s: the element s places above), and the loads at stride s are made by exactly the lanes
    below s. None when the pattern holds or cannot be judged (no trace, a truncated trace)."""
    if rep.truncated.get("accesses"):
        return [], None
    base = None
    strides: list[int] = []
    lanes = np.arange(metrics.WARP)
    for acc in rep.accesses_of(space="shared"):
        m = np.asarray(acc["mask"], bool)
        if not m.any():
            continue
        rel = (np.asarray(acc["addresses"])[m] - lanes[m] * acc["size"]) // acc["size"]
        if np.unique(rel).size != 1:
            return strides, (
                f"line {acc['line']}: the lanes of warp 0 read shared elements that are not their "
                f"own index plus one stride (lane t should read element t or t + s)"
            )
        if base is None:
            if acc["op"] != "st":
                return strides, (
                    f"line {acc['line']}: warp 0 reads shared memory before storing its own elements"
                )
            base = int(rel[0])
            continue
        off = int(rel[0]) - base
        if acc["op"] == "ld" and off:
            want = lanes < min(off, metrics.WARP)
            if not np.array_equal(m, want):
                return strides, (
                    f"line {acc['line']}: at stride {off} lanes {np.flatnonzero(m).tolist()[:8]}... of "
                    f"warp 0 read; the threads below the stride (t < {off}) should"
                )
            if not strides or strides[-1] != off:
                strides.append(off)
    return strides, None


def _lengths(segment, rng):
    return [segment, 1, segment - 1, 3 * segment + 7, int(rng.integers(2 * segment, 20 * segment))]


def check_tree_reduce(
    kernel,
    block: int = 256,
    items_per_thread: int = 1,
    seed=None,
    backend: str = "sim",
    prescribed: bool = False,
) -> CheckResult:
    """Grade a block-sum kernel ``(partial, values)`` as a shared-memory tree (module docstring):
    block b sums ``values[b*S:(b+1)*S]`` with S = block x items_per_thread (each thread adds
    ``items_per_thread`` values while loading). ``prescribed`` (the homework's question) asks for
    the textbook tree, read from the traced warp's shared addresses: strides halving from block/2,
    each thread t < s adding element t + s, every round wider than a warp in shared memory (the
    last five may be shuffles); without it, any tree within the barriers and loads passes (a
    first round folded into the load, as chapter 07 allows)."""
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
        if prescribed and n == segment and block & (block - 1) == 0:
            strides, why = tree_offsets(rep, block)
            want = [block >> k for k in range(1, int(math.log2(block)) + 1)]
            # the rounds wider than a warp in shared memory; the last ones may be shuffles
            shared_rounds = [x for x in want if x >= metrics.WARP] or want[:1]
            if why is None and (strides != want[: len(strides)] or len(strides) < len(shared_rounds)):
                why = (
                    f"warp 0 read shared memory at strides {strides}, where the prescribed tree "
                    f"halves the stride each round, {want} (the rounds within one warp may be "
                    f"shuffles instead), each thread t < s adding element t + s"
                )
            if why is not None:
                return CheckResult(False, f"{case}: right sums, but {why}")
        most_bar, most_loads = max(most_bar, bars), max(most_loads, loads_per_block)
    msg = f"right block sums for n = {', '.join(map(str, lengths))}"
    if backend == "sim":
        msg += (
            f"; at most {most_bar} syncthreads and {most_loads:.0f} warp-level loads per block "
            f"(limits {max_bar} and {max_loads})"
        )
    return CheckResult(True, msg)
