"""Tests for gpulab.models.amdahl: the formulas, their inverses, and the fits."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gpulab.models import amdahl as A

fs = st.floats(0.0, 0.999, allow_nan=False)
ps = st.floats(1.0, 1e6, allow_nan=False)


def test_seed_example_16_8x_and_83_wasted():
    s = A.speedup(0.95, 100)
    assert round(s, 1) == 16.8
    assert A.limit(0.95) == pytest.approx(20.0)
    assert round(A.wasted(0.95, 100)) == 83
    assert A.efficiency(0.95, 100) == pytest.approx(s / 100)


def test_edge_cases():
    assert A.speedup(0.0, 1000) == 1.0  # nothing parallel: no gain
    assert A.speedup(1.0, 64) == pytest.approx(64)  # all parallel: linear
    assert A.limit(1.0) == math.inf
    assert A.speedup(0.7, 1) == 1.0
    with pytest.raises(ValueError):
        A.speedup(1.2, 4)
    with pytest.raises(ValueError):
        A.speedup(0.5, 0)
    with pytest.raises(ValueError):
        A.f_from_speedup(1.0, 1)


def test_vectorised():
    p = np.array([1, 2, 4, 8])
    s = A.speedup(0.9, p)
    assert isinstance(s, np.ndarray) and s.shape == (4,)
    assert np.all(np.diff(s) > 0)


@given(fs, ps)
def test_speedup_bounded_by_p_and_limit(f, p):
    s = A.speedup(f, p)
    assert 1.0 - 1e-12 <= s <= p * (1 + 1e-12)
    assert s <= A.limit(f) * (1 + 1e-12)


@given(fs, st.floats(1.0, 1e4), st.floats(1.0, 1e4))
def test_monotone_in_p(f, p1, p2):
    lo, hi = sorted((p1, p2))
    assert A.speedup(f, lo) <= A.speedup(f, hi) * (1 + 1e-12)


@given(st.floats(0.01, 0.999), st.floats(1.5, 1e4))
def test_f_from_speedup_inverts(f, p):
    assert A.f_from_speedup(A.speedup(f, p), p) == pytest.approx(f, rel=1e-9, abs=1e-9)


@given(st.floats(0.5, 0.999), st.floats(0.01, 0.99))
def test_p_for_speedup_inverts(f, frac):
    target = 1 + frac * (A.limit(f) - 1)
    p = A.p_for_speedup(f, target)
    assert A.speedup(f, p) == pytest.approx(target, rel=1e-9)
    assert A.p_for_speedup(f, A.limit(f)) == math.inf


def test_fit_times_two_points_exact_and_third_checks():
    serial, par = 0.3, 2.7  # f = 0.9
    t = lambda p: serial + par / p
    fit = A.fit_times([2, 8], [t(2), t(8)])
    assert fit.f == pytest.approx(0.9)
    assert fit.serial_s == pytest.approx(serial)
    assert fit.check(32, t(32)) == pytest.approx(0.0, abs=1e-12)
    # a third measurement that does NOT follow the model is flagged
    assert fit.check(32, 2 * t(32)) == pytest.approx(-0.5)


def test_fit_times_least_squares_with_noise():
    rng = np.random.default_rng(0)
    p = np.array([1, 2, 4, 8, 16, 32.0])
    t = (0.05 + 0.95 / p) * (1 + 0.01 * rng.standard_normal(p.size))
    fit = A.fit_times(p, t)
    assert abs(fit.f - 0.95) < 0.01
    with pytest.raises(ValueError):
        A.fit_times([4, 4], [1.0, 1.0])


def test_fit_speedups():
    p = [2, 4, 16]
    assert A.fit_speedups(p, A.speedup(0.8, np.array(p))) == pytest.approx(0.8)


@given(st.floats(0, 1), st.floats(1, 1e4))
def test_gustafson_at_least_amdahl_for_same_fraction(s, p):
    # with the same serial share, scaling the problem never does worse than fixing it
    assert A.gustafson(s, p) >= A.speedup(1 - s, p) * (1 - 1e-12)


def test_gustafson_values():
    assert A.gustafson(0.05, 100) == pytest.approx(95.05)
    assert A.gustafson(1.0, 100) == 1.0


def test_marginal_gain_shrinks():
    ps = np.array([1, 2, 4, 8, 16, 32, 64, 128])
    g = A.marginal_gain(0.95, ps)
    assert g.sum() == pytest.approx(A.speedup(0.95, 128) - 1)  # gains telescope from S(1) = 1
    per_processor = g[1:] / np.diff(ps)
    assert np.all(np.diff(per_processor) < 0)  # each added processor buys less than the last
    # the last doubling (64 more processors) buys barely 2x more speed
    assert 1.9 < g[-1] < 2.1


@given(st.floats(0.0, 0.999), st.floats(0.05, 1.0))
def test_p_at_efficiency_is_the_boundary(f, e):
    p = A.p_at_efficiency(f, e)
    assert A.efficiency(f, p) >= e * (1 - 1e-9) or p == 1.0
    if p > 1.0:
        assert A.efficiency(f, p * 1.01) < e


def test_p_at_efficiency_seed_numbers():
    assert A.p_at_efficiency(0.95, 0.5) == pytest.approx(21.0)
    assert A.p_at_efficiency(1.0, 0.5) == math.inf


# ---- self-checks ------------------------------------------------------------------------
from gpulab.checks import amdahl as K  # noqa: E402


def test_check_speedup_accepts_right_and_explains_wrong():
    assert K.check_speedup(lambda f, p: 1 / ((1 - f) + f / p))
    r = K.check_speedup(lambda f, p: 1 / (f + (1 - f) / p))
    assert not r and "parallel" in r.message
    r = K.check_speedup(lambda f, p: f * p + 1 - f)
    assert not r and "Gustafson" in r.message
    assert not K.check_speedup(lambda f, p: None)
    assert not K.check_speedup(lambda f, p: 1 / 0)


def test_interview_checks():
    assert K.check_interview_speedup(16.8, 20)
    assert not K.check_interview_speedup(95, 20)
    assert not K.check_interview_speedup(16.8, 100)
    assert K.check_divergence(2.0, 0.5)
    res = K.check_divergence(2, 50)  # a percentage: the questions ask for a fraction (issue 26)
    assert not res and "fraction" in res.message
    assert not K.check_divergence(32, 1 / 32)
    assert not K.check_divergence(1.0, 1.0)
    assert K.check_occupancy(False) and K.check_occupancy("no")
    assert not K.check_occupancy(True) and not K.check_occupancy("maybe")


def test_check_estimate_f():
    def right(p1, t1, p2, t2):
        fit = A.fit_times([p1, p2], [t1, t2])
        return fit.f

    assert K.check_estimate_f(right)
    wrong = lambda p1, t1, p2, t2: A.f_from_speedup(t1 / t2, p2 / p1)
    r = K.check_estimate_f(wrong)
    assert not r and "p1 is not 1" in r.message


def test_check_worth_buying():
    assert K.check_worth_buying(16)
    assert not K.check_worth_buying(32) and not K.check_worth_buying(8)
    assert K.check_worth_buying(64, f=0.99, min_efficiency=0.6)
    assert repr(K.check_worth_buying(16)).startswith("✅")
    for nonsense in (0, -4, 0.5):  # not "a larger power of two still does too": the input's fault
        r = K.check_worth_buying(nonsense)
        assert not r and "at least 1" in r.message


# ---- widgets ----------------------------------------------------------------------------
def test_widgets_write_their_answer():
    from gpulab.widgets import amdahl as WA

    ns = {}
    a = WA.amdahl_explorer(ns)
    assert ns["answer"] == 16.8 and a.img.value[:4] == b"\x89PNG"
    a.f.value, a.p.value = 0.9, 10
    assert ns["answer"] == round(A.speedup(0.9, 10), 1)
    w = WA.worth_buying(ns, "pick")
    # the starting state shows no verdict (no red cross before the reader moved anything)
    assert ns["pick"] == 1 and w.best() == 16 and "&#10060;" not in w.verdict.value
    assert "&#9998;" in w.verdict.value
    w.p.value = 2
    assert "&#10060;" in w.verdict.value and "you can buy more" in w.verdict.value
    w.p.value = 16
    assert ns["pick"] == 16 and "&#9989;" in w.verdict.value
    assert K.check_worth_buying(ns["pick"])
    s = WA.scaling_explorer(ns, "best")
    m = s.model()
    from gpulab.models import comms as C

    assert ns["best"] == C.best_p(m, 1024)
    s.alpha_us.value = 100.0  # costlier steps: the peak moves to fewer GPUs
    assert ns["best"] < C.best_p(m, 1024)


# ---- figures ----------------------------------------------------------------------------
def test_figures_draw_what_they_say():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gpulab.plots import amdahl as P
    from gpulab.models import comms as C

    ax = P.speedup_curves(fs=(0.9, 0.95))
    labels = [l.get_label() for l in ax.get_lines()]
    assert "f = 0.95" in labels and "ideal S = p" in labels
    s95 = [l for l in ax.get_lines() if l.get_label() == "f = 0.95"][0].get_ydata()
    assert s95.max() < 20 and s95.max() > 19  # flattens under its ceiling at p = 1024
    assert any("16.8" in t.get_text() for t in ax.texts)
    fit = A.fit_times([2, 8], [0.3 + 2.7 / 2, 0.3 + 2.7 / 8])
    ax = P.fit_plot(fit, [2, 8, 32], [1.65, 0.6375, 0.384], [True, True, False])
    assert "held out" in " ".join(l.get_label() for l in ax.get_lines())
    m = C.StepModel(1e-3, 0.2, 1e9, 10e-6, C.LINKS["PCIe 5.0 x16"].per_direction)
    ax = P.scaling_plot({"pcie": m}, ps=[1, 2, 4, 8])
    y = [l for l in ax.get_lines() if l.get_label() == "pcie"][0].get_ydata()
    assert np.allclose(y, C.scaling(m, [1, 2, 4, 8])["speedup"])
    ax = P.launch_chain([{"n": 1024, "k": 4, "numba_unfused_s": 4e-4, "numba_fused_s": 1e-4}])
    assert [l.get_ydata()[0] for l in ax.get_lines()] == pytest.approx([100.0, 25.0])
    plt.close("all")
