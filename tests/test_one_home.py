"""Rules with one home (issue 18): the shuffle figure's sources come from the simulator's rule,
the simulator's budgets from gpulab.launch, widget figures through gpulab.widgets.figure, and the
perf figure's text at the book's minimum size."""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest


@pytest.mark.parametrize("kind", ["idx", "up", "down", "xor"])
@pytest.mark.parametrize("width", [32, 16, 8, 4])
def test_shuffle_figure_uses_the_simulators_rule(kind, width):
    from gpulab.plots import shuffle as sh
    from gpulab.sim import shuffle_rule

    for arg in range(32):
        got = sh.shuffle_sources(kind, arg, width=width)
        want = shuffle_rule.source_lanes(kind, arg, np.arange(32), width)
        np.testing.assert_array_equal(got, want)
    # xor 1 swaps neighbours, down 1 leaves the segment's last lane alone: the rule, not a copy
    np.testing.assert_array_equal(sh.shuffle_sources("xor", 1)[:4], [1, 0, 3, 2])
    assert sh.shuffle_sources("down", 1, width=8)[7] == 7


def test_simulator_budgets_come_from_launch(monkeypatch):
    """runner.run's defaults are gpulab.launch's: change them there and the simulator follows."""
    import gpulab
    from gpulab import errors
    from gpulab.sim import runner

    launch_mod = sys.modules["gpulab.launch"]
    assert inspect.signature(runner.run).parameters["max_steps"].default is None
    assert launch_mod.launch.__kwdefaults__["max_steps"] == launch_mod.DEFAULT_MAX_STEPS
    assert launch_mod.launch.__kwdefaults__["timeout_s"] == launch_mod.DEFAULT_TIMEOUT_S
    from numba import cuda

    @cuda.jit
    def spin(out):
        i = 0
        while i < 1000:
            i += 1
        out[0] = i

    out = np.zeros(1, np.int64)
    gpulab.launch(spin, 1, 32, out, backend="sim")  # fits the default budget
    assert out[0] == 1000
    monkeypatch.setattr(launch_mod, "DEFAULT_MAX_STEPS", 50)
    ctx_args = {}
    real = runner.Context

    def spy(layout, name, traced, max_steps, timeout_s):
        ctx_args.update(max_steps=max_steps, timeout_s=timeout_s)
        return real(layout, name, traced, max_steps, timeout_s)

    monkeypatch.setattr(runner, "Context", spy)
    from gpulab.sim.layout import Layout

    with pytest.raises(errors.StepBudgetExceeded):
        runner.run(spin, Layout((1, 1, 1), (32, 1, 1)), (out,))
    assert ctx_args == {"max_steps": 50, "timeout_s": launch_mod.DEFAULT_TIMEOUT_S}


def test_amdahl_widgets_draw_through_the_figure_helper():
    from gpulab.plots import style
    from gpulab.widgets import amdahl, figure

    src = inspect.getsource(amdahl)
    assert "dpi=80" not in src and "savefig" not in src
    for make in (amdahl.amdahl_explorer, amdahl.scaling_explorer):  # worth_buying is a table
        w = make({})
        data = w.img.value
        # drawn at the style's PNG resolution, shown at the figure's size
        assert int(w.img.width) * style.RC["savefig.dpi"] == pytest.approx(
            figure.png_width(data) * style.RC["figure.dpi"], abs=style.RC["savefig.dpi"]
        )
        assert figure.png_width(data) > 6 * style.RC["savefig.dpi"] * 0.8


def test_perf_figure_text_is_legible():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.text import Text

    from gpulab.perf import plot
    from gpulab.plots import style

    rows = [
        {
            "name": f"k{i}",
            "role": "calibrate" if i % 2 else "holdout",
            "measured_us": 10.0 * (i + 1),
            "predicted_us": 10.0 * (i + 1) * (2.0 if i == 3 else 1.05),
            "ratio": 2.0 if i == 3 else 1.05,
        }
        for i in range(6)
    ]
    fig = plot.predicted_vs_measured({"rows": rows, "summary": {}})
    fig.canvas.draw()
    sizes = {t.get_text(): t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()}
    assert "k3" in sizes, "the 2x outlier is annotated"
    small = {k: v for k, v in sizes.items() if v < style.MIN_FONT_PT}
    assert not small, small
