"""The book's palette stays distinguishable under simulated colour-vision deficiencies, and the
figures issue 25 named (Figure 1.2's L2 vs DRAM lines, Figure 2.2's works vs idle lanes) do not
rely on colour alone."""

import itertools
import re

import matplotlib
import pytest

matplotlib.use("Agg")

from matplotlib.lines import Line2D  # noqa: E402

from gpulab.plots import latency as latplots, launch as lp, palette  # noqa: E402

DEFICIENCIES = ("deuteranopia", "protanopia", "tritanopia")


def test_simulation_matches_known_values():
    # Machado 2009 at severity 1 leaves black and white alone and maps pure red and green,
    # which deuteranopes confuse, to colours far closer than they are in normal vision
    for c in ("#000000", "#ffffff"):
        assert palette.simulate(c, "deuteranopia") == pytest.approx(palette._hex_to_srgb(c), abs=0.01)
    assert palette.delta_e("#ff0000", "#00ff00", "deuteranopia") < 0.35 * palette.delta_e(
        "#ff0000", "#00ff00"
    )
    with pytest.raises(ValueError, match="unknown deficiency"):
        palette.simulate("#000000", "achromat")


@pytest.mark.parametrize("deficiency", (None,) + DEFICIENCIES)
def test_palette_colours_stay_apart(deficiency):
    first4 = min(palette.delta_e(a, b, deficiency) for a, b in itertools.combinations(palette.COLORS[:4], 2))
    every = min(palette.delta_e(a, b, deficiency) for a, b in itertools.combinations(palette.COLORS, 2))
    assert first4 >= 20, first4
    assert every >= 15, every


def test_each_series_differs_in_marker_and_line_style_too():
    assert len(set(palette.MARKERS)) == len(palette.SERIES)
    assert len({str(s) for s in palette.LINESTYLES}) == len(palette.SERIES)
    assert palette.series(len(palette.SERIES)) == palette.series(0)


def _lines(fig):
    return [ln for ln in fig.axes[0].get_lines() if isinstance(ln, Line2D) and ln.get_label()[:1] != "_"]


def test_figure_1_2_lines_are_told_apart_without_colour():
    fig = latplots.latency_hiding(
        latencies=(70, 307, 719), compute_cycles=20, max_warps=48, hw_limit=16, labels=["L1", "L2", "DRAM"]
    )
    lines = [ln for ln in _lines(fig) if ln.get_label().startswith(("L1", "L2", "DRAM"))]
    assert len(lines) == 3
    assert len({str(ln.get_linestyle()) for ln in lines}) == 3  # dashes differ
    dots = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() in ("None", "none", "")]
    assert len({ln.get_marker() for ln in dots}) == 3  # the simulated points differ in shape
    by = {ln.get_label()[:2]: matplotlib.colors.to_hex(ln.get_color()) for ln in lines}
    for d in DEFICIENCIES:
        assert palette.delta_e(by["L2"], by["DR"], d) >= 20


def test_figure_2_2_idle_lanes_are_hatched_labels_off_the_warp_lines_and_the_title_counts_right():
    fig = lp.fold(100, 128)
    ax = fig.axes[0]
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 28  # the 28 idle lanes of the last warp
    for d in DEFICIENCIES:
        assert palette.delta_e(palette.WORK, palette.IDLE, d) >= 40
    xs = [t.get_position()[0] for t in ax.texts if t.get_text().isdigit()]
    assert xs and all(x % 32 not in (0, 31) for x in xs)  # no lane number on a warp boundary
    title = ax.get_title()
    assert "1 block," in title and "1 blocks" not in title and "4 warps" in title
    assert "3 blocks" in lp.fold(100, 48).axes[0].get_title()


def test_figure_1_1_uses_one_tick_notation():
    ax = latplots.constant_factors().axes[0]
    ax.figure.canvas.draw()
    for axis in (ax.xaxis, ax.yaxis):
        labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
        assert labels and all(re.fullmatch("10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+", t) for t in labels), labels
