"""Number formats: ranges and epsilons read through ml_dtypes must match the formats' specs;
rounding, scaling and the error-budget grader must behave as the chapter says."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpulab.checks import formats as C
from gpulab.models import formats as F


# Values from the specs (IEEE 754 binary16/32, bfloat16, OCP FP8 E4M3/E5M2), typed here on
# purpose: they check that the table reads the right dtype for each name.
SPEC = {
    "fp32": (3.4028234663852886e38, 2.0**-126, 2.0**-149, 2.0**-23),
    "fp16": (65504.0, 2.0**-14, 2.0**-24, 2.0**-10),
    "bf16": (3.3895313892515355e38, 2.0**-126, 2.0**-133, 2.0**-7),
    "fp8_e4m3": (448.0, 2.0**-6, 2.0**-9, 2.0**-3),
    "fp8_e5m2": (57344.0, 2.0**-14, 2.0**-16, 2.0**-2),
    "tf32": ((2 - 2.0**-10) * 2.0**127, 2.0**-126, 2.0**-136, 2.0**-10),
}


@pytest.mark.parametrize("name", SPEC)
def test_format_table_matches_spec(name):
    row = {r["format"]: r for r in F.format_table()}[name]
    mx, mn, sub, eps = SPEC[name]
    assert row["max"] == pytest.approx(mx, rel=1e-7)
    assert row["min_normal"] == mn and row["min_subnormal"] == sub and row["eps"] == eps
    assert row["bits"] == 1 + row["exponent"] + row["mantissa"]


def test_tf32_ties_to_even_and_modes():
    one = np.float32(1.0)
    tie_down = np.float32(1 + 2.0**-11)  # halfway between 1 and 1 + 2^-10 -> 1 (even)
    tie_up = np.float32(1 + 3 * 2.0**-11)  # halfway between 1+2^-10 and 1+2^-9 -> 1+2^-9
    assert F.round_tf32(tie_down) == one
    assert F.round_tf32(tie_up) == np.float32(1 + 2.0**-9)
    assert F.round_tf32(tie_down, "rna") == np.float32(1 + 2.0**-10)
    assert F.round_tf32(np.float32(1 + 2.0**-10 - 2.0**-23), "trunc") == one
    x = np.array([np.inf, -np.inf, np.nan], dtype=np.float32)
    r = F.round_tf32(x)
    assert np.isinf(r[0]) and np.isinf(r[1]) and np.isnan(r[2])


@settings(max_examples=300, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False).filter(lambda v: abs(v) < 3e38))
def test_tf32_is_nearest_tf32_value(v):
    x = np.float32(v)
    r = F.round_tf32(x)
    bits = int(np.array([r]).view(np.uint32)[0])
    assert bits & 0x1FFF == 0  # only 10 mantissa bits left
    # the two tf32 neighbours of x: truncation and one tf32 ulp further from zero
    lo = F.round_tf32(x, "trunc")
    lo_bits = int(np.array([lo]).view(np.uint32)[0])
    hi = np.array([lo_bits + 0x2000], dtype=np.uint32).view(np.float32)[0]
    d = abs(float(r) - float(x))
    assert d <= min(abs(float(lo) - float(x)), abs(float(hi) - float(x)))


def test_overflow_behaviour_per_format():
    assert np.isinf(F.quantize(70000.0, "fp16"))  # fp16 overflows to inf
    assert F.quantize(70000.0, "bf16") == pytest.approx(70000.0, rel=2**-8)  # bf16 keeps range
    assert np.isnan(F.quantize(500.0, "fp8_e4m3"))  # e4m3 has no inf: NaN
    assert F.quantize(500.0, "fp8_e4m3", saturate=True) == 448.0
    assert np.isinf(F.quantize(1e6, "fp8_e5m2"))
    assert F.quantize(1e-8, "fp16") == 0.0 and F.quantize(1e-8, "bf16") != 0.0


def test_bit_fields():
    b = F.bit_fields(1.0, "fp16")
    assert (b["sign"], b["exponent"], b["mantissa"]) == ("0", "01111", "0" * 10)
    b = F.bit_fields(-2.5, "bf16")  # -1.25 * 2^1
    assert (b["sign"], b["exponent"], b["mantissa"]) == ("1", "10000000", "0100000")
    b = F.bit_fields(448.0, "fp8_e4m3")  # 1.75 * 2^8, bias 7 -> exponent 15
    assert (b["exponent"], b["mantissa"]) == ("1111", "110")
    assert F.bit_fields(-5, "int8")["bits"] == "11111011"


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=1e-3, max_value=1e3))
def test_int8_scaled_error_is_half_a_step(amax):
    x = np.random.default_rng(0).uniform(-amax, amax, 257)
    x[0] = amax
    deq, scale = F.quantize_scaled(x, "int8")
    assert scale == pytest.approx(127 / amax)
    assert np.max(np.abs(deq - x)) <= 0.5 / scale * (1 + 1e-12)


def test_amax_scaling_rescues_small_tensor():
    x = np.random.default_rng(1).standard_normal(1000) * 1e-4  # mostly below e4m3's range
    raw = F.quantize(x, "fp8_e4m3", saturate=True)
    scaled, s = F.quantize_scaled(x, "fp8_e4m3")
    assert s == pytest.approx(448 / np.max(np.abs(x)))
    assert F.relative_error(raw, x) > 0.5  # most values flushed to zero
    assert F.relative_error(scaled, x) < 0.05


def test_delayed_scaling_clips_a_sudden_spike():
    ds = F.DelayedScaling("fp8_e4m3", history_len=4)
    rng = np.random.default_rng(2)
    for _ in range(4):
        _, info = ds(rng.standard_normal(256))
        assert info["clipped"] < 0.02  # only this step's new extremes
    _, info = ds(rng.standard_normal(256) * 100)  # 100x larger than the history
    assert info["clipped"] > 0.5
    _, info = ds(rng.standard_normal(256) * 100)  # history has caught up
    assert info["clipped"] < 0.02


def test_fp16_accumulation_error_grows_with_k_fp32_does_not():
    r = F.dot_errors([16, 256, 4096], "fp16", trials=16)
    assert r["fp16"][-1] > 10 * r["fp16"][0]
    assert r["fp16"][-1] > 0.01  # running sum stagnates near 1024
    assert max(r["fp32"]) < 1e-3
    assert r["fp32"][-1] < r["fp16"][-1] / 100


def test_sequential_dot_fp32_matches_float32_loop():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 100)).astype(np.float16)
    s = np.float32(0)
    for x, y in zip(a, b):
        s = np.float32(s + np.float32(x) * np.float32(y))
    assert F.sequential_dot(a, b, "fp32") == s


def test_range_report_bf16_vs_fp16():
    v = np.array([1e-9, 1e-6, 1.0, 1e5, 1e30])
    rows = {r["format"]: r for r in F.range_report(v)}
    assert rows["fp16"]["overflow"] == pytest.approx(2 / 5)
    assert rows["fp16"]["underflow"] == pytest.approx(1 / 5)
    assert rows["bf16"]["overflow"] == 0 and rows["bf16"]["underflow"] == 0


def test_budget_problem_and_grader():
    p = F.default_problem()
    assert p.error({"x": "fp32", "w": "fp32", "acc": "fp32"}) < 1e-6
    ok = [r for r in p.all_choices() if r["error"] <= p.budget]
    best = min(r["bytes"] for r in ok)
    winners = {(r["x"], r["w"]) for r in ok if r["bytes"] == best}
    assert winners == {("fp8_e4m3", "int8")}
    assert C.check_format_choice({"x": "fp8_e4m3", "w": "int8", "acc": "fp32"})
    res = C.check_format_choice({"x": "int8", "w": "int8", "acc": "fp32"})
    assert not res and "over" in res.message
    res = C.check_format_choice({"x": "bf16", "w": "bf16", "acc": "fp32"})
    assert not res and "bytes" in res.message
    assert not C.check_format_choice({"x": "fp9"})


def test_widget_writes_choice():
    pytest.importorskip("ipywidgets")
    from gpulab.widgets.formats import picker

    ns = {}
    w = picker(ns)
    assert ns["choice"] == {"x": "fp32", "w": "fp32", "acc": "fp32"}
    w.x.value = "fp8_e4m3"
    w.w.value = "int8"
    assert ns["choice"] == {"x": "fp8_e4m3", "w": "int8", "acc": "fp32"}
    assert math.isclose(w.evaluate()["error"], F.default_problem().error(ns["choice"]))


def test_format_plots_draw():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gpulab.plots import formats as fp

    ax = fp.bit_layout()
    widths = {}
    for patch in ax.patches:
        widths.setdefault(round(patch.get_y() + patch.get_height() / 2), []).append(patch.get_width())
    assert [sum(w) for w in widths.values()] == [32, 19, 16, 16, 8, 8, 8]
    res = F.dot_errors([16, 64], "fp16", trials=4)
    ax = fp.dot_error_vs_k([res])
    assert len(ax.get_lines()) == 2
    fp.ranges(values=np.logspace(-9, 6, 50))
    fp.scaling_error(np.linspace(1e-4, 1e-2, 50))
    plt.close("all")
