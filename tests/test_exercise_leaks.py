"""Every chapter's exercises ask before the page tells (issue 25): each exercise has a solution,
and none of the text that would give its answer away (its key values, below) appears in what the
page shows above it. A new exercise needs its own entry here (a test checks that every exercise
has one). Built on tests/exercise_order.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import exercise_order as eo

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = {p.stem: p for p in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))}

# label -> regular expressions that must not appear in what the page shows above the exercise
KEYS = {
    "ex-ch01-warps": [r"warps_needed\(", r"math\.ceil\(per_sm", r"bandwidth \* latency / n_sm"],
    "ex-ch02-shape": [r"\(8, 4\)", r"240 idle", r"b_x = 8"],
    "ex-ch02-invert": [r"x >= img\.shape\[1\]", r"if x < img\.shape\[1\] and y < img\.shape\[0\]"],
    "ex-ch03-split": [r"i < 64", r"warp < 2"],
    "ex-ch03-uniform": [r"half = \(n \+ 1\) // 2", r"first half of the threads"],
    "ex-ch04-budget": [r"\b40 registers\b", r"1,365", r"at most 40"],
    "ex-ch04-registers": [r"16384 // per_warp", r"\(16,384 / 1,280\)"],
    "ex-ch05-sector": [r"stride 8\b", r"stride ≥ 8", r"1/8 of", r"Past stride"],
    "ex-ch05-scale": [r"c, r = cuda\.grid\(2\)"],
    "ex-ch06-f64-padding": [r"\b33 elements", r"odd row width", r"66 words"],
    "ex-ch06-rowsums": [r"PADDED = 33", r"TILE, PADDED\)", r"tile\[k, tx\]"],
    "ex-ch06-coarse": [r"acc1 \+=", r"def matmul_coarse\(c, a, b\):(?s:.*)acc0"],
    "ex-ch07-invert": [r"\+ 7\) ?//?", r"group - 1\) //", r"x >= img\.shape\[1\]"],
    "ex-ch07-halo": [r"1\.56", r"T = 32\b"],
    "ex-ch07-tree": [r"values\[i \+ GROUP\]", r"2 \* GROUP \* b"],
    "ex-ch08-warp-reduce": [r"shfl_down_sync\(", r"warp_reduce_down\)"],
    "ex-ch08-allreduce": [
        r"butterfly",
        r"warp_reduce_xor",
        r"warp_allsum_xor",
        r"xor[^\n]{0,80}every lane",
        r"every lane[^\n]{0,80}xor",
    ],
    "ex-ch08-warp-scan": [r"laneid >= d", r"warp_scan_inclusive\)"],
    "ex-ch09-owner": [r"4 \* \(row % 8\) \+ col // 2", r"col % 2 \+ \(2 if row >= 8"],
    "ex-ch09-load": [r"g \+ 8 \* \(\(i // 2\) % 2\)", r"2 \* t \+ i % 2 \+ 8 \* \(i // 4\)"],
    "ex-ch09-formats": [r"16-bit pair", r"cheapest pair"],
    "ex-ch10-speedup": [r"1\.0 / \(\(1\.0 - f\) \+ f / p\)", r"return 1 / \(\(1 - f\) \+ f / p\)"],
    "ex-ch10-estimate": [r"\(t1 - t2\) / \(1 / p1 - 1 / p2\)"],
    "ex-ch10-buy": [r"\(1/0\.5 - 0\.9\)/0\.1"],
    "ex-ch10-interview": [r"16\.8", r"1/0\.05 = 20"],
    "ex-ch11-reg1d": [r"sa\[t // RB_BK, t % RB_BK\] = a\[row0", r"B\[k0 \+ ty, col0 \+ tx\]"],
}

ALL = [(name, ex.label) for name, p in CHAPTERS.items() for ex in eo.exercises(p)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_exercise_has_a_solution_and_keys(chapter):
    path = CHAPTERS[chapter]
    assert eo.without_solution(path) == []
    missing = [ex.label for ex in eo.exercises(path) if ex.label not in KEYS]
    assert missing == [], f"add the key values of {missing} to KEYS"


@pytest.mark.parametrize("chapter,label", ALL)
def test_exercise_asks_before_the_page_tells(chapter, label):
    assert eo.leaks(CHAPTERS[chapter], label, KEYS[label]) == []


def test_the_checker_finds_a_solution_moved_above_its_exercise():
    """Not vacuous: chapter 1's solution code, and chapter 5's solution text, moved above their
    exercises, are caught."""
    nb = eo.load(CHAPTERS["01_latency_throughput"])
    ex = {e.label: e for e in eo.exercises(nb)}["ex-ch01-warps"]
    code = [nb["cells"][i] for i in ex.solution_cells if nb["cells"][i]["cell_type"] == "code"]
    assert code, "the exercise's solution has a code cell"
    nb["cells"].insert(
        ex.cell, {"cell_type": "code", "metadata": {}, "source": code[0]["source"], "outputs": []}
    )
    assert eo.leaks(nb, "ex-ch01-warps", KEYS["ex-ch01-warps"])
    nb = eo.load(CHAPTERS["05_memory"])
    ex = {e.label: e for e in eo.exercises(nb)}["ex-ch05-sector"]
    nb["cells"].insert(
        ex.cell, {"cell_type": "markdown", "metadata": {}, "source": eo.solution_text(nb, "ex-ch05-sector")}
    )
    assert eo.leaks(nb, "ex-ch05-sector", KEYS["ex-ch05-sector"])
