"""Chapter 04 tools: the self-checks accept right answers and reject wrong ones with a reason,
the explorer writes its answer, the figures draw what the model says."""
import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from gpulab.checks import occupancy as chk
from gpulab.models import occupancy as occ
from gpulab.plots import occupancy as plots
from gpulab.widgets.occupancy import explorer


def _right(t, r):
    warps = -(-t // 32)
    per_warp = -(-32 * r // 256) * 256
    return (16384 // per_warp * 4) // warps


def test_register_check_accepts_the_rule():
    assert chk.check_register_limit(_right).passed


@pytest.mark.parametrize("wrong, words", [
    (lambda t, r: (65536 // (32 * r)) // -(-t // 32), "multiple of 256"),
    (lambda t, r: (65536 // (-(-32 * r // 256) * 256)) // -(-t // 32), "sub-partitions"),
    (lambda t, r: 16384 // (-(-32 * r // 256) * 256) * 4, "whole blocks"),
    (lambda t, r: None, "None"),
    (lambda t, r: 1 / 0, "ZeroDivisionError"),
])
def test_register_check_rejects_with_a_reason(wrong, words):
    res = chk.check_register_limit(wrong)
    assert not res.passed and words in res.message


def test_budget_check_follows_the_widget():
    ns = {}
    ex = explorer(ns, arch="sm_90", threads=256, registers=32)
    assert ns["answer"]["occupancy"] == 1.0
    best = chk.largest_registers_for(0.75, 256, "sm_90")
    assert occ.occupancy(256, best, 0, "sm_90").occupancy >= 0.75
    assert occ.occupancy(256, best + 1, 0, "sm_90").occupancy < 0.75
    ex.registers.value = best
    assert chk.check_register_budget(ns["answer"]).passed
    ex.registers.value = best + 1
    assert "go down" in chk.check_register_budget(ns["answer"]).message
    ex.registers.value = best - 10
    assert "go up" in chk.check_register_budget(ns["answer"]).message
    ex.threads.value = 128
    assert "threads" in chk.check_register_budget(ns["answer"]).message
    assert not chk.check_register_budget(None).passed


def test_explorer_reports_limits_and_non_fitting_blocks():
    ns = {}
    ex = explorer(ns, name="cfg", arch="sm_86", threads=1024, registers=16)
    assert ns["cfg"]["active_warps"] == 32 and ns["cfg"]["limiter"] == "warps"
    ex.registers.value = 70
    assert ns["cfg"]["blocks_per_sm"] == 0 and "does not fit" in ex.out.value


def test_staircase_lines_are_the_model():
    fig = plots.staircase(threads=(256,), arch="sm_90", max_registers=80)
    line = fig.axes[0].lines[0]
    x, y = line.get_xdata(), line.get_ydata()
    for r in (32, 33, 40, 41, 64, 80):
        assert y[list(x).index(r)] == occ.occupancy(256, r, 0, "sm_90").occupancy
    naive = fig.axes[0].lines[1].get_ydata()
    assert naive[list(x).index(40)] == pytest.approx(51 / 64)


def test_other_figures_draw():
    for f in (plots.sm_diagram, plots.shared_staircase, plots.block_size_map,
              lambda: plots.latency_hiding_ilp(max_warps=6), lambda: plots.tail_effect(2, 4)):
        fig = f()
        assert fig.axes
    fig = plots.tail_effect(2, 4, max_waves=2)
    y = fig.axes[0].lines[0].get_ydata()
    assert y.max() == 1.0 and np.isclose(y[8], 9 / 16)     # 9 blocks of 8 per wave -> 2 rounds
