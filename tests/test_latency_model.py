"""Little's law / latency-hiding models, the chapter 01 check, widget and plots."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import pytest
from hypothesis import given, settings, strategies as st

from gpulab import results, results_views as rv
from gpulab.checks import latency as ch01
from gpulab.models import latency as lat


def test_h200_worked_example():
    # 4.8e12 B/s * 700e-9 s = 3.36e6 B; / 132 SMs = 25,454.5 B; / 128 B = 198.9 -> 199 warps
    assert lat.bytes_in_flight(4.8e12, 700e-9) == pytest.approx(3.36e6)
    assert lat.bytes_in_flight_per_sm(4.8e12, 700e-9, 132) == pytest.approx(25454.545, rel=1e-6)
    assert lat.warps_needed(4.8e12, 700e-9, 132, 128) == 199
    assert lat.warps_needed(4.8e12, 700e-9, 132, 512) == 50
    assert lat.warps_needed(4.8e12, 700e-9, 132, 128, requests_per_warp=4) == 50


def test_exact_multiple_does_not_round_up():
    # 1e12 B/s * 1e-6 s / 10 SMs = 1e5 B = exactly 781.25 * 128; 1e5 / 100 = 1000 exactly
    assert lat.warps_needed(1e12, 1e-6, 10, 100) == 1000


@settings(max_examples=200, deadline=None)
@given(
    bw=st.floats(1e9, 1e13),
    L=st.floats(1e-8, 5e-6),
    n_sm=st.integers(1, 256),
    b=st.sampled_from([4, 32, 64, 128, 256, 512]),
)
def test_warps_needed_is_the_smallest_sufficient_count(bw, L, n_sm, b):
    w = lat.warps_needed(bw, L, n_sm, b)
    per_sm = bw * L / n_sm
    assert w * b >= per_sm * (1 - 1e-9)
    assert (w - 1) * b < per_sm * (1 + 1e-9)
    # reading the law backwards: w warps reach the peak, w - 1 do not
    assert lat.achievable_bandwidth(w, L, n_sm, b, peak=bw) == pytest.approx(bw)
    if w > 1 and (w - 1) * b < per_sm * (1 - 1e-6):
        assert lat.achievable_bandwidth(w - 1, L, n_sm, b, peak=bw) < bw


@pytest.mark.parametrize("bad", [dict(bytes_per_request=0), dict(n_sm=0)])
def test_invalid_inputs_raise(bad):
    args = dict(bandwidth=1e12, latency=1e-6, n_sm=10, bytes_per_request=128) | bad
    with pytest.raises(ValueError):
        lat.warps_needed(**args)


@pytest.mark.parametrize("C,L", [(20, 100), (20, 400), (7, 50), (1, 30), (50, 0)])
def test_cycle_simulation_matches_closed_form(C, L):
    period = C + L
    for W in range(1, lat.warps_to_hide(C, L) + 3):
        sim = lat.simulate_issue(W, C, L, cycles=40 * period)
        assert sim == pytest.approx(lat.utilization(W, C, L), abs=0.03), (W, C, L)


def test_warps_to_hide_is_minimal():
    for C, L in [(20, 100), (20, 800), (3, 10), (10, 10)]:
        w = lat.warps_to_hide(C, L)
        assert lat.utilization(w, C, L) == 1.0
        assert lat.utilization(w - 1, C, L) < 1.0


def test_crossover_nlogn_is_a_sign_change():
    for P in (10, 1000, 1e6):
        n = lat.crossover_nlogn(P)
        assert n * math.log2(n) <= n * n / P * (1 + 1e-9)
        m = n * 0.99
        assert m * math.log2(m) > m * m / P
    assert lat.crossover_n(1000, 1, 2) == pytest.approx(1000)


# ---- the chapter's self-check -------------------------------------------------------------


def good(bw, L, n_sm, b):
    return math.ceil(bw * L / n_sm / b)


def test_check_accepts_a_correct_solution():
    r = ch01.check_warps_needed(good)
    assert r.passed and bool(r) and "correct" in repr(r)


@pytest.mark.parametrize(
    "fn,hint",
    [
        (lambda bw, L, n, b: math.floor(bw * L / n / b), "round up"),
        (lambda bw, L, n, b: math.ceil(bw * L / b), "number of SMs"),
        (lambda bw, L, n, b: None, "not solved"),
        (lambda bw, L, n, b: 1 / 0, "ZeroDivisionError"),
        (lambda bw, L, n, b: bw * L / n / b, "whole numbers"),
        (lambda bw, L, n, b: math.ceil(bw * L * 1e9 / n / b), "expected"),
    ],
)
def test_check_rejects_wrong_solutions_with_a_reason(fn, hint):
    r = ch01.check_warps_needed(fn)
    assert not r.passed
    assert hint in r.message


# ---- widget and plots ---------------------------------------------------------------------


def test_widget_writes_answer_and_follows_sliders():
    from gpulab.widgets import latency as latw

    ns = {}
    w = latw.explorer(ns, name="answer")
    assert ns["answer"] == lat.warps_needed(4.8e12, 700e-9, 132, 128) == 199
    w.req.value = 512
    assert ns["answer"] == 50
    w.latency.value = 1400
    assert ns["answer"] == 100
    w.inflight.value = 4
    assert ns["answer"] == 25
    assert "25" in w.out.value and w.compute()["fits"]


def test_plots_draw_their_curves():
    from gpulab.plots import latency as lp

    fig = lp.constant_factors(workers=(1, 1000))
    assert len(fig.axes[0].get_lines()) == 3
    fig = lp.latency_hiding(latencies=(100, 400), compute_cycles=20, max_warps=16)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4  # formula + simulation per latency
    fig = lp.bandwidth_vs_warps(sizes=(4, 16))
    y = fig.axes[0].get_lines()[0].get_ydata()
    assert max(y) <= lat.H200.bandwidth / 1e12 + 1e-12 and y[0] < y[-1]


def test_bandwidth_vs_warps_caps_the_model_at_the_given_peak():
    """A copy's loads get half the DRAM: with peak= the lines stop there, and the dotted
    ceiling moves and takes its label; the default stays the datasheet peak."""
    import numpy as np

    from gpulab.plots import latency as lp

    half = lat.H200.bandwidth / 2
    fig = lp.bandwidth_vs_warps(sizes=(4, 16), latency=363e-9, peak=half, peak_label="half")
    ax = fig.axes[0]
    lines = ax.get_lines()
    four, sixteen = lines[0].get_ydata(), lines[1].get_ydata()
    assert max(four) == pytest.approx(half / 1e12) and max(sixteen) == pytest.approx(half / 1e12)
    # 4-byte loads reach the cap only from ceil(half x L / (128 B x SMs)) warps per SM
    first = int(np.argmax(np.isclose(four, half / 1e12))) + 1
    assert first == int(np.ceil(half * 363e-9 / (128 * lat.H200.n_sm)))
    ceiling = [ln for ln in lines if ln.get_label() == "half"]
    assert len(ceiling) == 1 and ceiling[0].get_ydata()[0] == pytest.approx(half / 1e12)
    default = lp.bandwidth_vs_warps(sizes=(4, 16), latency=363e-9).axes[0].get_lines()
    assert max(default[0].get_ydata()) > half / 1e12  # uncapped at half: the datasheet peak
    with pytest.raises(ValueError, match="peak"):
        lp.bandwidth_vs_warps(peak=0)


def test_max_hidden_latency_is_the_edge_of_full_utilization():
    for W, C in [(16, 20), (4, 7), (1, 5)]:
        L = lat.max_hidden_latency(W, C)
        assert lat.utilization(W, C, L) == 1.0
        assert lat.utilization(W, C, L + 1) < 1.0
        assert lat.warps_to_hide(C, L) <= W
    with pytest.raises(ValueError):
        lat.max_hidden_latency(0, 20)


def test_max_latency_covered_inverts_warps_needed():
    L = lat.max_latency_covered(64, 128, 132, 4.8e12)
    assert L == pytest.approx(64 * 128 * 132 / 4.8e12)
    assert lat.warps_needed(4.8e12, L * 0.999, 132, 128) <= 64
    assert lat.warps_needed(4.8e12, L * 1.01, 132, 128) > 64


def _chase(sizes_ns, l2=60 << 20, ghz=2.0):
    return {
        "environment": {"l2_bytes": l2},
        "max_sm_clock_GHz": ghz,
        "global": [{"working_set_bytes": s, "ns": ns} for s, ns in sizes_ns],
    }


def test_ladder_levels_picks_rows_inside_each_level():
    MiB, GiB = 1 << 20, 1 << 30
    chase = _chase(
        [
            (16 << 10, 30),
            (64 << 10, 34),
            (512 << 10, 90),
            (8 * MiB, 150),
            (16 * MiB, 160),
            (64 * MiB, 250),
            (1 * GiB, 340),
            (2 * GiB, 350),
            (4 * GiB, 370),
        ]
    )
    lv = lat.ladder_levels(chase)
    assert lv["L1"]["ns"] == 32 and lv["L1"]["working_sets"] == [16 << 10, 64 << 10]
    assert lv["L2"]["ns"] == 150 and lv["L2"]["cycles"] == 300  # 64 MiB straddles L2 and DRAM
    assert lv["L2"]["working_sets"] == [512 << 10, 8 * MiB, 16 * MiB]
    assert lv["DRAM"]["ns"] == 350 and lv["DRAM"]["working_sets"] == [GiB, 2 * GiB, 4 * GiB]


def test_ladder_levels_and_the_recorded_views_share_one_rule():
    """Chapter 1 (lat.ladder_levels) and chapter 5 (rv.latency_levels) read the same rungs."""
    chase = results.load("latency")
    if chase is None:
        pytest.skip("no recorded latency.json")
    lv, views = lat.ladder_levels(chase), rv.latency_levels(chase)
    for level in ("L1", "L2", "DRAM"):
        assert lv[level]["ns"] == pytest.approx(views[level])
        assert lv[level]["working_sets"] == views[f"sizes_{level}"]


def test_ladder_levels_refuses_files_it_cannot_read():
    with pytest.raises(ValueError, match="global"):
        lat.ladder_levels({"shared": {}})
    assert "DRAM" not in lat.ladder_levels(_chase([(8 << 10, 30)]))
