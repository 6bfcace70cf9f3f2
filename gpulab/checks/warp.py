"""Self-checks for chapter 08 (warp primitives), shared with the homework's tests.

Kernels are graded by running them on gpulab's simulator on random inputs, sizes that are and
are not multiples of 32 included, and by the number of barriers and shared-memory accesses the
simulator counted: a warp-level reduction or scan needs neither.
"""

from __future__ import annotations

import math

import numpy as np

from gpulab import metrics
from gpulab.checks.answers import as_whole
from gpulab.checks.result import CheckResult  # noqa: F401 (re-exported)
from gpulab.models.shuffle import WARP, ShuffleStep, lanes_with_total, loop_offsets_problem
from gpulab.sim.shuffle_rule import KINDS, source_lanes
from gpulab.checks.result import untouched

SHARED_LD = metrics.SHARED_INSTRUCTIONS["ld"]
SHARED_ST = metrics.SHARED_INSTRUCTIONS["st"]
#: the shuffle intrinsics, as ``Report.intrinsics`` names them (after ``cuda.``)
SHUFFLES = ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")
#: combining 32 lanes by shuffles takes log2(32) = 5 steps per warp (each step at most doubles
#: the lanes a value depends on); a tree needs no more than twice that
MIN_SHUFFLES = int(math.log2(WARP))
MAX_SHUFFLES = 2 * MIN_SHUFFLES
#: one lane adding up the others in a loop leaves 31 lanes idle: E ~ 0.06; the shuffle tree ~ 0.94
MIN_EFFICIENCY = 0.5


def _cases(seed):
    """(n, block) pairs: full warps, partial warps, one element, several blocks, one random size."""
    rng = np.random.default_rng(seed)
    cases = [(32, 32), (1, 32), (31, 32), (33, 64), (100, 64), (257, 128)]
    cases.append((int(rng.integers(300, 700)), int(rng.choice([96, 128, 256]))))
    return cases


def barriers_per_block(rep) -> int:
    """The most syncthreads any block executed, from ``rep.barriers`` (an int or one per block)."""
    b = rep.barriers
    if isinstance(b, dict):
        b = list(b.values())
    arr = np.atleast_1d(np.asarray(b))
    return int(arr.max()) if arr.size else 0


def shared_accesses(rep) -> int:
    """Warp-level shared-memory load and store instructions the simulator counted."""
    m = rep.metrics
    return int(m.get(SHARED_LD, 0) + m.get(SHARED_ST, 0))


def shuffles(rep) -> int:
    """Warp-level shuffle executions the simulator counted (all four kinds)."""
    counts = getattr(rep, "intrinsics", None) or {}
    return int(sum(counts.get(k, 0) for k in SHUFFLES))


def _shuffle_problem(rep, n, block) -> str | None:
    """Why the launch is not a warp-level shuffle tree, or None: too few shuffle steps for the
    warps that hold data (a serial loop in one lane), too many (32 broadcasts instead of a
    tree), or lanes left idle (warp execution efficiency)."""
    grid = max(1, math.ceil(n / block))
    warps_total = grid * math.ceil(block / WARP)
    warps_data = math.ceil(n / WARP)
    sh = shuffles(rep)
    if sh < MIN_SHUFFLES * warps_data:
        return (
            f"correct values, but {sh} shuffles for {warps_data} warp(s) holding data: combining "
            f"32 lanes takes log2(32) = {MIN_SHUFFLES} shuffle steps per warp. One lane adding up "
            f"the others in a loop (or atomics) is not the warp-level primitive the exercise asks for"
        )
    if sh > MAX_SHUFFLES * warps_total:
        return (
            f"correct values, but {sh / warps_total:.0f} shuffles per warp: a tree of "
            f"{MIN_SHUFFLES} steps (offsets 16, 8, 4, 2, 1, or 1, 2, 4, 8, 16) is enough"
        )
    eff = rep.warp_efficiency
    if eff is not None and eff < MIN_EFFICIENCY:
        return (
            f"correct values, but warp execution efficiency {eff:.2f} < {MIN_EFFICIENCY}: most "
            f"lanes idle while a few work serially; every lane should take part in each step"
        )
    return None


def _launch(kernel, n, block, x, out, backend):
    import gpulab

    grid = max(1, math.ceil(n / block))
    return gpulab.launch(kernel, grid, block, x, out, backend=backend)


def _run_cases(kernel, reference, what, backend, seed, out_len):
    """Run ``kernel(x, out)`` on every case; compare with ``reference(x)``; return (result, reps)."""
    from gpulab.errors import KernelError

    rng = np.random.default_rng(seed)
    reps = []
    cases = _cases(seed)
    for n, block in cases:
        x = rng.integers(1, 10, n).astype(np.float32)  # positive: exact sums; a lane left out always shows
        grid = max(1, math.ceil(n / block))
        out = np.full(out_len(n, grid * block), np.nan, dtype=np.float32)
        try:
            rep = _launch(kernel, n, block, x.copy(), out, backend)  # x stays for the reference
        except KernelError as e:
            return CheckResult(False, f"n={n}, block={block}: the simulator stopped your kernel.\n{e}"), reps
        except Exception as e:  # an ordinary error from the reader's code or the launch
            return CheckResult(False, f"n={n}, block={block}: {type(e).__name__}: {e}"), reps
        want = reference(x, out.size)
        bad = np.flatnonzero(~np.isclose(out, want))
        if bad.size:
            k = int(bad[0])
            got = out[k]
            hint = ""
            if np.isnan(got):
                hint = " (never written: is the lane that should write it inactive or skipped?)"
                if sum(rep.atomics.values()):
                    hint = (
                        " (out starts undefined, NaN here: an atomic add adds to whatever is "
                        "there; store the result with a plain write)"
                    )
            return CheckResult(
                False,
                f"n={n}, block={block}: {what} wrong at out[{k}]: "
                f"expected {want[k]:.9g}, got {got:.9g}{hint} "
                f"({bad.size} of {out.size} outputs wrong)",
            ), reps
        b = barriers_per_block(rep)
        if b:
            return CheckResult(
                False,
                f"n={n}, block={block}: correct values, but {b} syncthreads per "
                f"block; the lanes of a warp exchange values by shuffle, "
                f"no barrier needed",
            ), reps
        s = shared_accesses(rep)
        if s:
            return CheckResult(
                False,
                f"n={n}, block={block}: correct values, but {s} shared-memory "
                f"instructions; use shuffles instead of shared memory",
            ), reps
        if backend == "sim":
            why = _shuffle_problem(rep, n, block)
            if why:
                return CheckResult(False, f"n={n}, block={block}: {why}"), reps
        reps.append(rep)
    sizes = ", ".join(str(n) for n, _ in cases)
    return CheckResult(
        True,
        f"correct for n = {sizes}, with 0 barriers, no shared memory and "
        f"{MIN_SHUFFLES} to {MAX_SHUFFLES} shuffle steps per warp",
    ), reps


def warp_sums_reference(x: np.ndarray, nwarps: int | None = None) -> np.ndarray:
    """Sum of every 32-element segment of x, for ``nwarps`` warps (warps past the end sum zeros)."""
    n = x.shape[0]
    nwarps = math.ceil(n / WARP) if nwarps is None else nwarps
    pad = np.zeros(max(nwarps, math.ceil(n / WARP)) * WARP, dtype=np.float64)
    pad[:n] = x
    return pad.reshape(-1, WARP).sum(axis=1)[:nwarps]


def warp_scan_reference(x: np.ndarray, size: int | None = None, inclusive: bool = True) -> np.ndarray:
    """Prefix sums of x restarting at every 32-element segment (``size`` is ignored: len(x))."""
    n = x.shape[0]
    pad = np.zeros(math.ceil(n / WARP) * WARP, dtype=np.float64)
    pad[:n] = x
    seg = pad.reshape(-1, WARP)
    inc = np.cumsum(seg, axis=1)
    res = inc if inclusive else inc - seg
    return res.reshape(-1)[:n]


def check_warp_reduce(kernel, backend: str = "sim", seed=None) -> CheckResult:
    """Grade a kernel ``(x, out)`` that writes each warp's 32-element sum to ``out[warp]``.

    ``out`` has one slot per warp of the grid; warps past the end of ``x`` sum zeros. Besides
    the values: no barrier, no shared memory, at least log2(32) shuffle steps per warp holding
    data and no lane doing the others' work serially (warp execution efficiency).
    """
    if (start := untouched(kernel, judge=check_warp_reduce, backend=backend, seed=seed)) is not None:
        return start
    res, _ = _run_cases(
        kernel, warp_sums_reference, "warp sum", backend, seed, lambda n, threads: threads // WARP
    )
    return res


def check_warp_scan(kernel, backend: str = "sim", seed=None) -> CheckResult:
    """Grade a kernel ``(x, out)`` that writes inclusive prefix sums within each warp to ``out``
    (same rules as :func:`check_warp_reduce`: shuffles only, log2(32) steps, no serial lane)."""
    if (start := untouched(kernel, judge=check_warp_scan, backend=backend, seed=seed)) is not None:
        return start
    res, _ = _run_cases(
        kernel, warp_scan_reference, "inclusive warp scan", backend, seed, lambda n, threads: n
    )
    if not res.passed and "wrong at" in res.message:
        res.message += " (inclusive: out[i] includes x[i] itself)"
    return res


# ---- the widget exercise: a shuffle loop that leaves the warp total in every lane ----------


def check_allreduce_loop(answer, backend: str = "sim") -> CheckResult:
    """Grade ``answer = {"kind": ..., "offsets": [...]}``: after ``v += shfl_<kind>(v, d)`` for each
    d, must every lane hold the warp total? Checked by the CUDA rules and by running it."""
    if (start := untouched(answer, judge=check_allreduce_loop, backend=backend)) is not None:
        return start
    if not isinstance(answer, dict) or "kind" not in answer or "offsets" not in answer:
        return CheckResult(
            False,
            "answer should be a dict with 'kind' and 'offsets' (the widget writes it; did you run its cell?)",
        )
    kind = str(answer["kind"])
    if kind not in KINDS:
        return CheckResult(False, f"kind must be one of {KINDS}, not {kind!r}")
    try:
        offsets = [as_whole(d) for d in answer["offsets"]]  # 16.0 is lane offset 16; 16.5 is none
    except TypeError:  # not a list
        offsets = [None]
    problem = loop_offsets_problem(offsets)
    if problem:
        return CheckResult(False, f"offsets: {problem}, got {answer['offsets']!r}")
    good = lanes_with_total([ShuffleStep(f"{kind} {d}", source_lanes(kind, d)) for d in offsets])
    if len(good) != WARP:
        which = f"only lane(s) {good} hold" if good else "no lane holds"
        return CheckResult(
            False,
            f"with shfl_{kind} and offsets {offsets}, {which} the warp "
            f"total (each input counted exactly once) at the end",
        )
    out = run_shuffle_loop(kind, offsets, backend=backend)
    if not np.all(out == out[0]):
        return CheckResult(False, f"the CUDA rules say every lane has the total, but the run gave {out}")
    return CheckResult(
        True,
        f"shfl_{kind} with offsets {offsets}: all 32 lanes hold the total "
        f"({len(offsets)} shuffles, checked by running it on the simulator)",
    )


def run_shuffle_loop(kind, offsets, x=None, backend: str = "sim", trace: bool = False):
    """Run gpulab.kernels.warp.shuffle_loop on one warp; return out (and the report if trace)."""
    import gpulab
    from gpulab.kernels.warp import SHUFFLE_KIND_CODES, shuffle_loop

    if x is None:
        x = (np.arange(WARP) + 1).astype(np.float32)
    out = np.zeros(WARP, dtype=np.float32)
    offs = np.asarray(offsets, dtype=np.int32)
    rep = gpulab.launch(shuffle_loop, 1, WARP, x, offs, SHUFFLE_KIND_CODES[kind], out, backend=backend)
    return (out, rep) if trace else out
