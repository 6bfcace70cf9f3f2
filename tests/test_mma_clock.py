"""The clock a datasheet's tensor-core peak assumes, and the peak at a measured clock."""

import math

from gpulab.models import mma


def test_h100_sxm_fp16_peak_implies_its_1830_mhz_boost_clock():
    # H100 SXM5 whitepaper: 989.4 dense FP16 TFLOP/s on 132 SMs; A100: 312 on 108 SMs at 1410 MHz
    f = mma.implied_clock_ghz(989.4, 132, mma.HOPPER_SM_DENSE_FMA_PER_CLK["fp16"])
    assert math.isclose(f, 1.83, abs_tol=0.005)
    assert math.isclose(mma.implied_clock_ghz(312, 108, 1024), 1.41, abs_tol=0.005)


def test_every_format_of_the_h200_datasheet_implies_the_same_clock():
    peaks = mma.H200_DATASHEET["peak_tflops"]
    clocks = {f: mma.implied_clock_ghz(peaks[f], 132, n) for f, n in mma.HOPPER_SM_DENSE_FMA_PER_CLK.items()}
    assert max(clocks.values()) - min(clocks.values()) < 0.01, clocks


def test_peak_at_clock_inverts_implied_clock():
    for mhz in (1470, 1830, 1980):
        p = mma.peak_at_clock(mhz, 132, 2048)
        assert math.isclose(mma.implied_clock_ghz(p, 132, 2048) * 1000, mhz)
    assert mma.peak_at_clock(1000, 1, 1) == 2e-3
