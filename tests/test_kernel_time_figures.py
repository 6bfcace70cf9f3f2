"""Figures of chapters 03 and 05 say what they time: the kernel's own time (Nsight Compute)
as its own line, CUDA events labelled as including the launch path."""

import matplotlib

matplotlib.use("Agg")

from gpulab.plots import masks  # noqa: E402
from gpulab.plots import memory as pm  # noqa: E402


def _paths(with_ncu):
    data = {
        "device": "X",
        "rows": [
            {"iters": 64, "mode": m, "paths": p, "ratio_to_1_path": p if m == "divergent" else 1.0}
            for m in ("divergent", "uniform")
            for p in (1, 2, 4)
        ],
    }
    if with_ncu:
        data["ncu"] = {
            "rows": [
                {"iters": 64, "mode": "divergent", "paths": p, "gpu__time_duration.sum": 100.0 * p * 0.9 + 10}
                for p in (1, 2, 4)
            ]
        }
    return data


def test_paths_timing_draws_the_kernel_time_when_recorded():
    ax = masks.paths_timing(_paths(True)).axes[0]
    labels = [ln.get_label() for ln in ax.lines]
    (kt,) = [ln for ln in ax.lines if "Nsight Compute" in ln.get_label()]
    assert list(kt.get_ydata()) == [1.0, 190 / 100, 370 / 100]  # relative to its own 1 path
    assert all("includes the launch path" in s for s in labels if "events" in s)
    assert sum("events" in s for s in labels) == 2
    assert len(masks.paths_timing(_paths(False)).axes[0].lines) == 3


def test_bandwidth_helpers_read_the_json_as_recorded():
    bw = {
        "environment": {"gpu": "G", "date_utc": "2026-01-02T00:00:00Z"},
        "copy": {
            "kernels": {"plain": {"GBps": 2000.0}, "broken": {"error": "no cupy"}},
            "best_GBps": 2000.0,
            "torch": {"GBps": 2500.0},
            "best_over_torch": 0.8,
        },
        "strided": [{"stride": 1, "useful_GBps": 1900.0}, {"stride": 2, "useful_GBps": 1000.0}],
    }
    lines = pm.copy_bandwidth_lines(bw)
    assert "2000 GB/s" in lines[0] and lines[1].strip().endswith("no cupy")
    assert "2500 GB/s" in lines[2] and "80%" in lines[3]
    del bw["copy"]["torch"]
    assert len(pm.copy_bandwidth_lines(bw)) == 2
    ax = pm.plot_stride_bandwidth(bw)
    assert list(ax.lines[0].get_ydata()) == [1900.0, 1000.0]
    assert "includes the launch path" in ax.lines[0].get_label()
    assert "G" in ax.get_title() and "2026-01-02" in ax.get_title()
