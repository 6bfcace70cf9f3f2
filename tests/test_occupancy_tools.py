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


@pytest.mark.parametrize(
    "wrong, words",
    [
        (lambda t, r: (65536 // (32 * r)) // -(-t // 32), "multiple of 256"),
        (lambda t, r: (65536 // (-(-32 * r // 256) * 256)) // -(-t // 32), "sub-partitions"),
        (lambda t, r: 16384 // (-(-32 * r // 256) * 256) * 4, "whole blocks"),
        (lambda t, r: None, "None"),
        (lambda t, r: 1 / 0, "ZeroDivisionError"),
    ],
)
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
    for f in (
        plots.sm_diagram,
        plots.shared_staircase,
        plots.block_size_map,
        lambda: plots.latency_hiding_ilp(max_warps=6),
        lambda: plots.tail_effect(2, 4),
    ):
        fig = f()
        assert fig.axes
    fig = plots.tail_effect(2, 4, max_waves=2)
    y = fig.axes[0].lines[0].get_ydata()
    assert y.max() == 1.0 and np.isclose(y[8], 9 / 16)  # 9 blocks of 8 per wave -> 2 rounds


def test_driver_check_description(tmp_path):
    assert "not" in occ.describe_driver_check(None) or "no driver" in occ.describe_driver_check(None)
    data = {
        "device": "GPU X",
        "arch": "sm_90",
        "driver_version": 1,
        "summary": {"default": {"configurations": 10, "match": 9, "distinct_register_counts": 3}},
        "device_limits_vs_gpulab": {
            "MAX_BLOCKS_PER_MULTIPROCESSOR": [32, 32],
            "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": [1, 2],
        },
        "kernels": [
            {
                "accumulators": 4,
                "max_registers": None,
                "static_shared_floats": 0,
                "registers": 40,
                "local_bytes_per_thread": 0,
            }
        ],
    }
    text = occ.describe_driver_check(data)
    assert "9/10" in text and text.count("differs") == 1
    assert "75.0%" in occ.describe_register_counts(data, threads=256)


def test_pressure_kernel_source_is_python_with_k_accumulators():
    from gpulab.kernels import pressure

    src = pressure.source(5, shared_floats=64)
    compile(src, "x", "exec")
    assert (
        sum(line.strip().startswith("a4 = ") for line in src.splitlines()) == 2
        and "cuda.shared.array(64, float32)" in src
    )
    assert pressure.python_function(3).__name__ == "kern"
    with pytest.raises(ValueError):
        pressure.source(0)


@pytest.mark.parametrize("script", ["occupancy_vs_driver.py", "divergence_paths.py"])
def test_gpu_benchmarks_skip_cleanly_without_a_gpu(script):
    import subprocess
    import sys
    from pathlib import Path

    from numba import cuda

    if cuda.is_available():
        pytest.skip("a GPU is present: the script would run for real")
    root = Path(__file__).resolve().parents[1]
    p = subprocess.run(
        [sys.executable, str(root / "benchmarks" / script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
    )
    assert p.returncode == 0 and "skipped" in p.stdout
