"""gpulab.models.tc_clock: chapter 9's sentences on the clock of its tensor-core runs, each branch
on fake records (the chapter glues them from tensor_cores_throughput.json and sgemm.json)."""

from __future__ import annotations

import pytest

from gpulab.models import mma, tc_clock

N_SM = 132
FMA16 = mma.HOPPER_SM_DENSE_FMA_PER_CLK["fp16"]
DENSE = mma.peak_at_clock(1830, N_SM, FMA16)  # a datasheet peak at 1830 MHz


def clk(mhz, samples=20, capped=0):
    rec = {"source": "s", "samples": samples, "min_MHz": mhz, "median_MHz": mhz, "max_MHz": mhz}
    if capped:
        rec["clock_reasons_seen"] = {"sw_power_cap": capped}
    return rec


def test_clock_share_is_the_part_of_the_gap_the_clock_explains():
    assert tc_clock.clock_share(1000, 900, 800) == pytest.approx(0.5)
    assert tc_clock.clock_share(1000, 1000, 800) == 0


def test_run_reading_with_a_sampled_fp32_clock_reads_fp32_at_that_clock():
    fp32_peak = mma.peak_at_clock(1980, N_SM, 128)
    tflops = {"fp16": 800.0, "fp32": 0.5 * fp32_peak}
    text = tc_clock.run_reading(tflops, 700.0, clk(1980), N_SM)
    assert "would be 700 TFLOP/s, below the measured 800" in text
    assert f"median 1980 MHz, where its peak is {fp32_peak:.0f}" in text and "is 50% of it" in text
    assert "against" in tc_clock.run_reading(tflops, 900.0, clk(1980), N_SM)


def test_run_reading_without_a_sampled_clock_says_one_sample_is_not_a_record():
    text = tc_clock.run_reading({"fp16": 630.0, "fp32": 50.0}, 700.0, None, N_SM)
    assert text.startswith("At that clock the tensor cores' peak is 700 TFLOP/s")
    assert "is 90% of it" in text and "One sample is not a clock record" in text


def test_run_power_names_the_cap_throughout_part_or_not_recorded():
    sweep = {"256": clk(1905, 10, 10), "8192": clk(1905, 20, 20)}
    text = tc_clock.run_power(sweep, clk(1905, 5, 5), 1980, 0.73)
    assert "in 30 of the 30 clock samples" in text and "from 256 to 8192" in text
    assert "and in 5 of the 5 during the copy" in text
    assert "throughout the FP16 sweep, even at n = 256" in text and "was 73% of" in text
    part = tc_clock.run_power({"256": clk(1905, 10, 4)}, {}, 1980, 0.73)
    assert "for part of the FP16 sweep" in part and "during the copy" not in part
    none = tc_clock.run_power({"256": clk(1905, 10)}, {}, 1980, 0.73)
    assert none.startswith("The GPU was most likely power-limited") and "73%" in none


def _batched(mhz=1755.0, tflops=700.0, capped=0):
    return {"tflops": tflops, "MHz": mhz, "samples": 50, "capped": capped}


def test_fp16_runs_compared_at_a_higher_clock_that_throughput_kept_pace_with():
    sweep = {"256": clk(1905, capped=20), "8192": clk(1905, capped=20)}
    out = tc_clock.fp16_runs(
        760.0, sweep, _batched(capped=40), DENSE, N_SM, [0.2], sessions=("06:43", "00:07")
    )
    c = out["compare"]
    assert "a median of 1905 MHz for FP16 at n = 8192" in c
    assert "read a higher clock than chapter 11's" in c and "kept pace with it: +9% throughput" in c
    assert "in both (20 of 20 samples here, 40 of 50 there)" in c
    assert "every FP16 size, from 256 to 8192, read the same 1905 MHz" in c
    assert "(chapter 11's at 00:07 UTC, this one at 06:43)" in c
    assert "none in this chapter's" in c  # 1905 MHz is above the datasheet's 1830
    s = out["summary"]
    assert s.startswith("FP16's clock differed between runs, NVML flagging the software power cap")
    assert "above the clock the datasheet implies" in s and "1755 MHz in chapter 11's" in s


def test_fp16_runs_compared_at_a_lower_or_equal_clock_and_sizes_that_differ():
    sweep = {"256": clk(1600), "8192": clk(1650)}
    out = tc_clock.fp16_runs(670.0, sweep, _batched(mhz=1755.0), DENSE, N_SM, [0.2])
    c = out["compare"]
    assert "read a lower clock than" in c and "kept pace with it: -4% throughput for -6% clock" in c
    assert "run. Within this run every FP16 size" in c  # no power-cap clause before it
    assert "read 1600 to 1650 MHz" in c and "flagged" not in c and "UTC" not in c
    here_share = tc_clock.clock_share(DENSE, mma.peak_at_clock(1650, N_SM, FMA16), 670.0)
    assert f"{here_share:.0%} in this chapter's run" in c
    assert f"where the clock is {here_share:.0%} of the gap" in out["summary"]
    same = tc_clock.fp16_runs(600.0, {"8192": clk(1760)}, _batched(), DENSE, N_SM, [0.2])
    assert "read about the same clock as" in same["compare"]
    slower = tc_clock.fp16_runs(500.0, {"8192": clk(1760)}, _batched(), DENSE, N_SM, [0.2])
    assert "did not keep pace with it" in slower["compare"]


def test_fp16_runs_without_a_sampled_clock_fall_back_to_the_single_reading():
    batched = _batched(mhz=1335.0, tflops=590.0)
    out = tc_clock.fp16_runs(640.0, None, batched, DENSE, N_SM, [0.2], reading={"sm_mhz": 1335.0})
    assert out["compare"].startswith("By the single reading above it accounts for")
    assert "this chapter's was 8% faster" in out["compare"]
    assert out["summary"].startswith("one sample during the FP16 run read 1335 MHz")
    with pytest.raises(AssertionError, match="clocks differ"):
        tc_clock.fp16_runs(640.0, None, batched, DENSE, N_SM, [0.2], reading={"sm_mhz": 1600.0})


FP8 = {"fp8": 1400.0, "fp8_fast_accum": 1420.0}


def test_fp8_modes_at_different_clocks_are_not_read_as_promotions_cost():
    clocks = {"fp8": {"8192": clk(1710, 20, 20)}, "fp8_fast_accum": {"8192": clk(1920, 20, 20)}}
    sweep = {"fp8": {"1024": 70.0, "8192": 1400.0}, "fp8_fast_accum": {"1024": 60.0, "8192": 1420.0}}
    text = tc_clock.fp8_accumulation(FP8, clocks, sweep, N_SM)
    assert "1400 TFLOP/s with promotion, at a median SM clock of 1710 MHz" in text
    assert "1420 without, at 1920 MHz, NVML flagging the software power cap" in text
    assert "The clocks differ by 12%, the throughputs by 1.4%" in text
    eff = FP8["fp8"] / mma.peak_at_clock(1710, N_SM, mma.HOPPER_SM_DENSE_FMA_PER_CLK["fp8"])
    assert f"the promoted run reached {eff:.0%} of the peak at its clock" in text
    assert "(promotion ahead at n = 1024, behind at 8192)" in text
    assert "cannot separate what promotion costs from the clock" in text and "cost 1" not in text
    one_way = {"fp8": {"8192": 1400.0}, "fp8_fast_accum": {"8192": 1420.0}}
    uncapped = {m: {"8192": clk(c["8192"]["median_MHz"])} for m, c in clocks.items()}
    text = tc_clock.fp8_accumulation(FP8, uncapped, one_way, N_SM)
    assert "power cap" not in text and "Across the sweep" not in text


def test_fp8_modes_at_one_clock_give_the_modes_cost_and_no_clock_says_so():
    same = {"fp8": {"8192": clk(1900)}, "fp8_fast_accum": {"8192": clk(1905)}}
    text = tc_clock.fp8_accumulation(FP8, same, None, N_SM)
    assert text.endswith(
        "both at a median SM clock of 1900 MHz, so on this GPU the accurate mode cost 1.4% of throughput."
    )
    none = tc_clock.fp8_accumulation(FP8, None, None, N_SM)
    assert "1420 without (+1.4%); the run recorded no clock per mode" in none
