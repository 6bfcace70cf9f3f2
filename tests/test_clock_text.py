"""results_views.clock_text: the "measured on" line's clock, taken only from a clock record."""

import sys
from pathlib import Path

from gpulab import results_views as rv
from gpulab.plots import reduction_bench as rb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import benchenv  # noqa: E402


def test_clock_text_says_not_recorded_without_a_record():
    assert rv.clock_text(None) == "SM clock: not recorded"
    # a maximum or a one-off nvidia-smi query is not a record of the clock during the run
    env = {"nvidia_smi": "580.159.04, 1980 MHz, 3201 MHz", "max_sm_clock_kHz": 1980000}
    assert rv.clock_text({"environment": env, "max_sm_clock_GHz": 1.98}) == "SM clock: not recorded"


def test_clock_text_gives_the_median_and_the_range_it_moved_over():
    rec = benchenv.clock_summary([1500.0, 1600.0, 1980.0], "NVML")
    assert rv.clock_text({"sm_clock": rec}) == (
        "SM clock 1600 MHz (min 1500, max 1980), median of 3 samples during the timed runs"
    )
    flat = benchenv.clock_summary([1980.0] * 4, "NVML")
    assert rv.clock_text(flat) == "SM clock 1980 MHz, median of 4 samples during the timed runs"


def test_reduction_summary_labels_the_nvidia_smi_query_and_the_clock():
    res = {"environment": {"gpu": "G", "date_utc": "d", "nvidia_smi": "1, 1980 MHz"}, "block_sums": []}
    text = rb.summary(res)
    assert "SM clock: not recorded" in text
    assert "nvidia-smi before the run (not a clock record):\n    1, 1980 MHz" in text
    res["sm_clock"] = benchenv.clock_summary([1755.0, 1755.0], "NVML")
    assert "SM clock 1755 MHz, median of 2 samples" in rb.summary(res)


def test_a_run_with_one_clock_record_per_case_is_pooled():
    """A result that keeps one record per case (no whole-run record) is described by all of them,
    not by its first case's few samples."""
    from gpulab import results_views as rv

    rec = lambda med, lo, hi, n: {
        "source": "NVML",
        "samples": n,
        "min_MHz": lo,
        "median_MHz": med,
        "max_MHz": hi,
    }  # noqa: E731
    res = {
        "cases": {"a": {"sm_clock": rec(1980, 1980, 1980, 1)}, "b": {"sm_clock": rec(1900, 1850, 1980, 4)}}
    }
    clk = rv.result_clock("no_such_result", res)["clock"]
    assert clk["samples"] == 5 and clk["min_GHz"] == 1.85 and clk["max_GHz"] == 1.98
    assert clk["GHz"] == 1.94  # the median of the two cases' medians
