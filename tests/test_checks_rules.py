"""Rules and checks agree (issue 26, point 4): for each homework question, the number or rule its
text states is read from the master notebook and compared with what its check enforces, and the
check is tried on the rule's edge cases (the answer on the boundary, just past it, typed another
way). A question whose text changes without its check, or the reverse, fails here.

Kernel questions are graded by counters; their thresholds are compared with the check's own
parameters here, their behaviour on kernels in tests/test_grading_heldout_style.py.
"""

from __future__ import annotations

import inspect
import math
import os
import re

import nbformat
import numpy as np
import pytest

from gpulab.checks import (
    amdahl,
    divergence,
    memory,
    occupancy,
    precision,
    reduction,
    roofline,
    sgemm,
    shared,
    simt,
    tree_reduction,
    warp,
)
from gpulab.models import formats as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def question_text(hw: str, q: str) -> str:
    """The markdown of question ``q`` in the master notebook of ``hw`` (one line)."""
    nb = nbformat.read(os.path.join(ROOT, "exercises", hw, f"{hw}.ipynb"), as_version=4)
    for c in nb.cells:
        if c.cell_type == "markdown" and c.source.startswith(f"**{q}."):
            return " ".join(c.source.split())
    raise AssertionError(f"{hw}: no markdown cell starts with **{q}.")


def default(fn, name):
    return inspect.signature(fn).parameters[name].default


def passes(res) -> bool:
    return bool(res)


# ---- thresholds stated in the text = the check's parameters ------------------------------------


def test_hw03_q1_efficiency_bar():
    text = question_text("hw03_04_divergence_occupancy", "q1")
    bar = float(re.search(r"efficiency of at least ([0-9.]+)", text).group(1))
    assert default(divergence.check_parity_scale, "min_efficiency") == bar


def test_hw05_q7_predicted_fraction_bar():
    text = question_text("hw05_06_memory", "q7")
    pct = float(re.search(r"at least (\d+)% of the fraction", text).group(1))
    assert default(roofline.check_copy_efficiency, "min_ratio") == pytest.approx(pct / 100)
    n = re.search(r"`n = 2\*\*(\d+)`", text).group(1)
    assert default(roofline.check_copy_efficiency, "n") == 2 ** int(n)


def test_hw05_q2_loads_and_stores_are_both_conflict_free():
    """check_row_sums refuses conflicted shared stores as well as loads: the text says both (it
    said loads only, and a transposed store that makes the loads conflict-free lost the points)."""
    text = question_text("hw05_06_memory", "q2")
    assert "**every shared load and store in one wavefront**" in text
    assert "load *and* store" in shared.check_row_sums.__doc__


def test_hw11_b_read_once_per_k_and_one_request_per_tile():
    """hw11: "read ``B[k, tx]`` from the shared tile once into a register and multiply it with 8
    values of A" bounds the shared loads at 9 per warp and value of k (reading B again for every
    sum, 16, passed before issue 26); "at most one per warp for each of the two tiles per K step"
    bounds the global load requests."""
    text = question_text("hw11_sgemm", "q1")
    assert "read `B[k, tx]` from the shared tile once into a register" in text
    assert "at most one per warp for each of the two tiles per K step" in text
    warps = (64 * 8) // 32  # one block of (64, 8) threads
    assert sgemm.register_blocking_shared_load_bound(64, 8, 64) == warps * 8 * (1 + 8)
    assert sgemm.register_blocking_load_bound(64, 8, 64) == warps * 2


def test_hw07_q1_one_barrier():
    text = question_text("hw07_08_reduction", "q1")
    assert "**at most one** `cuda.syncthreads()`" in text
    assert default(reduction.check_block_sum, "max_barriers") == 1


def test_hw07_q5_barriers_of_a_tree():
    text = question_text("hw07_08_reduction", "q5")
    m = re.search(r"at most 1 \+ log2\((\d+)\) = (\d+) `syncthreads`", text)
    block, most = int(m.group(1)), int(m.group(2))
    assert most == 1 + int(math.log2(block)) == tree_reduction.tree_barriers(block)


def test_hw09_q3_efficiency_bar():
    text = question_text("hw09_10_formats_amdahl", "q3")
    f = float(re.search(r"For `f = ([0-9.]+)`", text).group(1))
    pct = float(re.search(r"at least (\d+) %", text).group(1))
    assert default(amdahl.check_worth_buying, "f") == f
    assert default(amdahl.check_worth_buying, "min_efficiency") == pytest.approx(pct / 100)


def test_hw09_q4_the_pairs_the_text_lists_are_the_models():
    """The text lists FP16 x FP16, BF16 x BF16, FP8 x FP8 (E4M3 and E5M2 in any mix), INT8 x INT8
    and FP32 x FP32; the check's native pairs must be exactly those."""
    text = question_text("hw09_10_formats_amdahl", "q4")
    for pair in ("FP16 x FP16", "BF16 x BF16", "FP8 x FP8", "INT8 x INT8", "FP32 x FP32"):
        assert pair in text
    listed = {("fp16", "fp16"), ("bf16", "bf16"), ("int8", "int8"), ("fp32", "fp32")}
    listed |= {(a, b) for a in ("fp8_e4m3", "fp8_e5m2") for b in ("fp8_e4m3", "fp8_e5m2")}
    names = list(F.FORMATS)
    native = {(a, b) for a in names for b in names if F.native_pair(a, b)}
    assert native == listed, native ^ listed


# ---- literal answers: the rule's edges -----------------------------------------------------------


@pytest.mark.parametrize(
    "block,ok",
    [
        ((8, 4), True),  # 240 idle, the fewest
        ((8, 12), True),  # also 240 idle: the text asks for *a* shape with the fewest
        ((10, 6), False),  # no idle thread, but 60 threads is not a multiple of 32
        ((32, 32), False),  # a multiple of 32 with more idle threads
        ((64, 32), False),  # 2048 threads: over 1024
        ((8.0, 4), True),  # an integral float is a whole number
        ((8.5, 4), False),
    ],
)
def test_hw02_q4_block_shape_edges(block, ok):
    text = question_text("hw02_simt", "q4")
    assert "multiple of 32 threads (at most 1024)" in text and "**fewest idle threads**" in text
    assert "**100 x 60**" in text
    res = simt.check_block_shape({"width": 100, "height": 60, "block": block})
    assert passes(res) == ok, res.message


@pytest.mark.parametrize(
    "registers,ok",
    [(40, True), (40.0, True), (np.int64(40), True), (41, False), (32, False), ("40", False), (True, False)],
)
def test_hw03_q3_register_budget_edges(registers, ok):
    text = question_text("hw03_04_divergence_occupancy", "q3")
    assert "**largest** number of registers" in text and "**75 %**" in text and "**256**" in text
    ans = {"arch": "sm_90", "threads": 256, "shared": 0, "registers": registers}
    assert passes(occupancy.check_register_budget(ans)) == ok


@pytest.mark.parametrize(
    "ratio,eff,ok,why",
    [
        (2.0, 0.5, True, None),
        (2, np.float32(0.5), True, None),
        (2.0, 50, False, "fraction"),  # the text: a fraction, not a percentage (issue 26)
        (2.0, 1.5, False, "fraction"),
        (2.0, -0.5, False, "fraction"),
        (32, 1 / 32, False, "time ratio"),
        (1.0, 1.0, False, "time ratio"),
    ],
)
def test_hw03_q4_divergence_edges(ratio, eff, ok, why):
    text = question_text("hw03_04_divergence_occupancy", "q4")
    assert "as a fraction between 0 and 1" in text and "a percentage is refused" in text
    res = amdahl.check_divergence(ratio, eff)
    assert passes(res) == ok, res.message
    if why:
        assert why in res.message


@pytest.mark.parametrize("stride,ok", [(8, True), (8.0, True), (7, False), (16, False), (9, False)])
def test_hw05_q3_own_sector_edges(stride, ok):
    text = question_text("hw05_06_memory", "q3")
    assert "**smallest stride**" in text and "element bytes 4, offset 0" in text
    assert passes(memory.check_own_sector({"stride": stride, "offset": 0, "elem_bytes": 4})) == ok


@pytest.mark.parametrize("width,ok", [(33, True), (33.0, True), (32, False), (34, False), (31, False)])
def test_hw05_q4_float64_padding_edges(width, ok):
    text = question_text("hw05_06_memory", "q4")
    assert "element bytes to 8" in text and "**narrowest tile row width** (at least 32)" in text
    assert passes(shared.check_float64_padding({"elem_bytes": 8, "row_width": width})) == ok


@pytest.mark.parametrize(
    "kind,offsets,ok",
    [
        ("xor", [16, 8, 4, 2, 1], True),
        ("xor", [1, 2, 4, 8, 16], True),  # any order: each input still counted once
        ("down", [16, 8, 4, 2, 1], False),  # only lane 0 ends with the total
        ("xor", [1, 2, 4, 8, 16, 16], False),  # the last offset counts every input twice
        ("xor", [1, 2, 4, 8], False),  # half the warp
    ],
)
def test_hw07_q4_allreduce_edges(kind, offsets, ok):
    text = question_text("hw07_08_reduction", "q4")
    assert "every lane of the warp should hold the warp's total, each input counted once" in text
    assert passes(warp.check_allreduce_loop({"kind": kind, "offsets": offsets})) == ok


@pytest.mark.parametrize("p,ok", [(16, True), (16.0, True), (32, False), (8, False), (20, False)])
def test_hw09_q3_worth_buying_edges(p, ok):
    res = amdahl.check_worth_buying(p)
    assert passes(res) == ok, res.message
    if p == 20:
        assert "power of" in res.message


@pytest.mark.parametrize(
    "x,w,ok",
    [
        ("fp16", "fp16", True),
        ("fp8_e4m3", "int8", False),
        ("fp8_e4m3", "fp16", False),
        ("fp16", "int8", False),
    ],
)
def test_hw09_q4_format_choice_edges(x, w, ok):
    assert passes(precision.check_native_format_choice({"x": x, "w": w})) == ok


# ---- hw11 q2 (added after round 3): the ladder's reading, rules from the question's text --------


def _hw11_q2_right():
    """The right answer computed here by the text's rules from the shipped counters."""
    import json

    from gpulab.checks import sgemm_ladder as L

    r = json.loads(L.SHIPPED.read_text())
    every, ncu = {**r["steps"], **r["steps_unrolled"]}, r["ncu"]["kernels"]

    def blocks(regs):  # 65,536 registers per SM, per warp in units of 256; at most 2,048 threads
        return min(65536 // (-(-regs * 32 // 256) * 256) // 8, 2048 // 256)

    facts = L.ladder_facts()
    return {
        "ffma_share": {s: ncu[s][L.FFMA] / 32 / ncu[s][L.INST] for s in L.STEPS},
        "blocks_per_sm": {s: blocks(every[s]["registers"]) for s in L.STEPS},
        "unroll_alone": next(iter(facts["worse"])),
        "uint32_fixed": sorted(facts["improved"]),
    }


class _StrEqualToAnything(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


@pytest.mark.parametrize(
    "edit,ok",
    [
        (lambda a: None, True),
        (lambda a: a["ffma_share"].update(prefetch=a["ffma_share"]["prefetch"] + 0.009), True),
        (lambda a: a["ffma_share"].update(prefetch=a["ffma_share"]["prefetch"] + 0.011), False),
        (lambda a: a["ffma_share"].update(unroll=a["ffma_share"]["unroll"] * 100), False),  # a percentage
        (lambda a: a["blocks_per_sm"].update(unroll=float(a["blocks_per_sm"]["unroll"])), True),  # 1.0
        (lambda a: a["blocks_per_sm"].update(unroll=a["blocks_per_sm"]["unroll"] + 1), False),
        (lambda a: a.update(uint32_fixed=tuple(reversed(a["uint32_fixed"]))), True),
        (lambda a: a.update(unroll_alone=_StrEqualToAnything("bank conflicts")), False),
    ],
)
def test_hw11_q2_ladder_edges(edit, ok):
    from gpulab.checks import sgemm_ladder as L

    text = question_text("hw11_sgemm", "q2")
    assert "Within 0.01" in text and L.SHARE_TOLERANCE == 0.01
    for rule in ("65,536 registers", "units of 256", "2,048 threads", "256-thread blocks"):
        assert rule in text, rule
    for factor in L.FACTORS:
        assert f'"{factor}"' in text, factor
    answer = _hw11_q2_right()
    edit(answer)
    res = L.check_ladder_reading(answer)
    assert passes(res) == ok, res.message
