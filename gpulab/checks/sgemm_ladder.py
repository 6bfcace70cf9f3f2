"""Check for homework 11 q2 (issue 27): reading chapter 11's generated steps from the counters
the H200 run recorded (``gpulab/data/results/sgemm.json``).

Step 6 (``prefetch``) was written out in full (``unroll``: slower) and then given 32-bit unsigned
indices (``unroll_u32``: 80% of torch). The reader computes, for each of the three, the share of
issued warp instructions that are FFMAs and the 256-thread blocks an SM holds with its
registers, and says which factor made ``unroll`` slower and which ones ``uint32`` improved. The
expected answer is computed here from the recorded file, never typed in.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from gpulab.checks.answers import as_number, as_text, as_whole
from gpulab.checks.result import CheckResult, untouched

__all__ = ["check_ladder_reading", "ladder_facts", "STEPS", "FACTORS", "SHARE_TOLERANCE"]

STEPS = ("prefetch", "unroll", "unroll_u32")
FACTORS = ("occupancy", "instruction overhead", "bank conflicts")
SHARE_TOLERANCE = 0.01  # FFMA share: absolute, as a fraction
# a factor counts as changed between two steps when it moved by more than this
SHARE_CHANGE = 0.02  # FFMA share (fraction of issued instructions)
CONFLICT_CHANGE = 0.05  # bank conflicts per shared-memory wavefront
THREADS = 256
# the file gpulab ships, read directly: $GPULAB_RESULTS (a reader's own GPU run) does not move the key
SHIPPED = Path(__file__).resolve().parents[1] / "data" / "results" / "sgemm.json"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
INST = "smsp__inst_executed.sum"
CONFLICTS = (
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
)
WAVEFRONTS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
)


def ladder_facts(res: dict | None = None) -> dict:
    """The right reading of ``res`` (default: the sgemm.json gpulab ships): per step the FFMA share
    (FFMA warp instructions, thread count / 32, over all warp instructions), blocks per SM
    (chapter 4's model: the step's registers and shared memory, 256 threads) and bank conflicts
    per shared wavefront; the factors that got worse from prefetch to unroll (``worse``) and
    those that improved from unroll to unroll_u32 (``improved``)."""
    from gpulab.models import occupancy as occ

    r = res if res is not None else json.loads(SHIPPED.read_text())
    if "ncu" not in r:
        raise FileNotFoundError("sgemm.json with Nsight Compute counters is not among gpulab's results")
    every = {**r.get("steps", {}), **r.get("steps_unrolled", {})}
    nc = r["ncu"]["kernels"]
    missing = [s for s in STEPS if s not in every or s not in nc]
    if missing:
        raise KeyError(f"sgemm.json has no timing or no Nsight Compute counters for {missing}")
    per = {}
    for s in STEPS:
        p, rec = nc[s], every[s]
        o = occ.occupancy(THREADS, rec["registers"], rec.get("shared_bytes") or 0)
        per[s] = {
            "ffma_share": p[FFMA] / 32 / p[INST],
            "blocks_per_sm": o.blocks_per_sm,
            "conflicts_per_wavefront": sum(p[k] for k in CONFLICTS) / max(1.0, sum(p[k] for k in WAVEFRONTS)),
            "tflops": rec["gflops"] / 1e3,
        }

    def changed(a, b):
        """Factors that were better in step b than in step a."""
        out = set()
        if per[b]["blocks_per_sm"] > per[a]["blocks_per_sm"]:
            out.add("occupancy")
        if per[b]["ffma_share"] > per[a]["ffma_share"] + SHARE_CHANGE:
            out.add("instruction overhead")
        if per[b]["conflicts_per_wavefront"] < per[a]["conflicts_per_wavefront"] - CONFLICT_CHANGE:
            out.add("bank conflicts")
        return out

    return {"steps": per, "worse": changed("unroll", "prefetch"), "improved": changed("unroll", "unroll_u32")}


def _number(v):
    x = as_number(v)
    return x is not None and math.isfinite(x)


def _form(ladder) -> str | None:
    """What is wrong with the answer's shape, or None."""
    if not isinstance(ladder, dict):
        return f"ladder must be a dict, got {type(ladder).__name__}"
    need = ("ffma_share", "blocks_per_sm", "unroll_alone", "uint32_fixed")
    if missing := [k for k in need if k not in ladder]:
        return f"ladder has no {', '.join(repr(k) for k in missing)} (keys: {', '.join(need)})"
    for key in ("ffma_share", "blocks_per_sm"):
        d = ladder[key]
        if not isinstance(d, dict) or set(d) != set(STEPS):
            return f"ladder[{key!r}] must be a dict with exactly the keys {list(STEPS)}"
        if not all(_number(v) for v in d.values()):
            return f"ladder[{key!r}] must hold numbers, got {d!r}"
    if not all(0 < as_number(v) <= 1 for v in ladder["ffma_share"].values()):
        return "ffma_share is a fraction of the issued instructions, between 0 and 1"
    if not all(as_whole(v) is not None and as_whole(v) >= 0 for v in ladder["blocks_per_sm"].values()):
        return "blocks_per_sm counts whole blocks"
    if as_text(ladder["unroll_alone"]) not in FACTORS:
        return f"ladder['unroll_alone'] must be one of {list(FACTORS)}, got {ladder['unroll_alone']!r}"
    fixed = ladder["uint32_fixed"]
    if not isinstance(fixed, (list, tuple, set)) or not all(as_text(f) in FACTORS for f in fixed):
        return f"ladder['uint32_fixed'] must be a list of factors from {list(FACTORS)}, got {fixed!r}"
    return None


def check_ladder_reading(ladder, res: dict | None = None) -> CheckResult:
    """Grade ``ladder`` = {"ffma_share": {step: fraction}, "blocks_per_sm": {step: int},
    "unroll_alone": factor, "uint32_fixed": [factors]} against :func:`ladder_facts`."""
    if (start := untouched(ladder, judge=check_ladder_reading, res=res)) is not None:
        return start
    if (why := _form(ladder)) is not None:
        return CheckResult(False, why)
    facts = ladder_facts(res)
    per = facts["steps"]
    for s in STEPS:
        got, want = as_number(ladder["ffma_share"][s]), per[s]["ffma_share"]
        if abs(got - want) > SHARE_TOLERANCE:
            return CheckResult(
                False,
                f"ffma_share[{s!r}] = {got:.3f} does not follow from the counters: FFMA warp "
                "instructions are the thread-level FFMA count / 32, over smsp__inst_executed.sum",
            )
    for s in STEPS:
        got, want = as_whole(ladder["blocks_per_sm"][s]), per[s]["blocks_per_sm"]
        if got != want:
            return CheckResult(
                False,
                f"blocks_per_sm[{s!r}] = {got} is not what {s}'s registers allow for 256-thread "
                "blocks (chapter 4: registers are allocated per warp, 65,536 per SM)",
            )
    worse = facts["worse"]
    alone = as_text(ladder["unroll_alone"])  # a plain str, whatever a subclass's __eq__ says
    if {alone} != worse:
        return CheckResult(
            False,
            f"unrolling alone did not slow the kernel through {alone!r}: compare "
            "the two steps' FFMA share, blocks per SM and conflicts. Which one got worse?",
        )
    fixed = {as_text(f) for f in ladder["uint32_fixed"]}
    if fixed != facts["improved"]:
        extra, lacking = fixed - facts["improved"], facts["improved"] - fixed
        what = []
        if extra:
            what.append(f"{sorted(extra)} did not change measurably from unroll to unroll_u32")
        if lacking:
            what.append(f"a factor that improved is missing ({len(lacking)})")
        return CheckResult(False, "uint32_fixed: " + "; ".join(what))
    return CheckResult(
        True,
        f"unrolling raised the FFMA share ({per['prefetch']['ffma_share']:.0%} -> "
        f"{per['unroll']['ffma_share']:.0%}) but cost a block per SM; uint32 indices won the block "
        f"back and raised the share again ({per['unroll_u32']['ffma_share']:.0%}, "
        f"{per['unroll_u32']['blocks_per_sm']} blocks per SM): {per['unroll_u32']['tflops']:.1f} TFLOP/s",
    )
