"""The SM clock recorded with GPU results (issue 23): the sampler, the record, and the helper the
chapters convert cycles with."""

import sys
import time
from pathlib import Path

import pytest

from gpulab import results, results_views as rv
from gpulab.models import latency as lat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import benchenv  # noqa: E402


def test_sampler_samples_only_inside_timed_regions():
    clk = benchenv.ClockSampler(period_s=0.001)
    readings = iter(range(1000, 10**6))
    clk._read = lambda: (float(next(readings)), 0x4)  # a fake NVML: rising MHz, power capped
    with clk:
        time.sleep(0.03)
        assert clk.take() is None  # nothing timed, nothing recorded
        with clk.timed():
            time.sleep(0.03)
        rec = clk.take()
        with clk.timed():
            pass  # shorter than a period: still one sample, read at its end
        short = clk.take()
    assert rec["samples"] >= 3 and rec["min_MHz"] <= rec["median_MHz"] <= rec["max_MHz"]
    assert rec["clock_reasons_seen"] == {"sw_power_cap": rec["samples"]}
    assert short["samples"] == 1 and short["min_MHz"] > rec["max_MHz"]
    assert len(clk.all_samples) == rec["samples"] + 1


def test_sample_now_reads_in_the_calling_thread_and_counts_like_a_region():
    """launch_overhead's host-timed loops: one sample at each end, none from the thread meanwhile."""
    clk = benchenv.ClockSampler(period_s=0.001)
    readings = iter(range(1500, 10**6))
    clk._read = lambda: (float(next(readings)), 0x4)
    with clk:
        clk.sample_now()
        time.sleep(0.02)  # no region active: the sampling thread takes nothing
        clk.sample_now()
        rec = clk.take()
    assert rec["samples"] == 2 and (rec["min_MHz"], rec["max_MHz"]) == (1500.0, 1501.0)
    assert rec["clock_reasons_seen"] == {"sw_power_cap": 2}
    assert clk.whole_run()["samples"] == 2
    benchenv.sample_now(None)  # the CPU path: no sampler, nothing happens


def test_clock_summary_refuses_no_samples_and_takes_the_median():
    with pytest.raises(ValueError, match="no SM clock samples"):
        benchenv.clock_summary([], "x")
    s = benchenv.clock_summary([1980, 1500, 1600, 1700], "x")
    assert (s["min_MHz"], s["median_MHz"], s["max_MHz"], s["samples"]) == (1500, 1650, 1980, 4)
    n = benchenv.ncu_clock([1.9e9, 2.0e9, 1.95e9])
    assert n["median_MHz"] == pytest.approx(1950) and "sm__cycles_elapsed.avg.per_second" in n["source"]


def test_measured_clock_reads_a_result_a_row_or_a_record_and_never_guesses():
    rec = benchenv.clock_summary([1500.0, 1600.0], "test")
    assert rv.measured_clock(rec)["GHz"] == pytest.approx(1.55)
    assert rv.measured_clock({"sm_clock": rec})["min_GHz"] == pytest.approx(1.5)
    assert rv.cycles(100.0, {"sm_clock": rec}) == pytest.approx(155.0)
    assert rv.measured_clock({"max_sm_clock_GHz": 1.98}) is None  # a maximum is not a measurement
    assert rv.cycles(100.0, {}) is None and rv.measured_clock(None) is None


def test_the_recorded_results_carry_their_clock():
    chase, bw, fma = results.load("latency"), results.load("bandwidth"), results.load("fma_loop")
    assert rv.measured_clock(chase) and all(rv.measured_clock(g) for g in chase["global"])
    assert all(rv.measured_clock(k) for k in bw["copy"]["kernels"].values())
    assert rv.measured_clock(bw["copy"]["torch"]) and rv.measured_clock(bw["transpose"])
    assert all("Nsight Compute" in rv.measured_clock(c)["source"] for c in fma["cases"].values())
    # the ladder's cycles are converted at the recorded clock, and say so
    lv = lat.ladder_levels(chase)
    ghz = rv.measured_clock(chase)["GHz"]
    assert all(v["clock_measured"] and v["cycles"] == pytest.approx(v["ns"] * ghz) for v in lv.values())


def test_fma_loop_view_is_consistent_with_the_counters():
    v = rv.fma_loop()
    for name, c in v["cases"].items():
        assert c["cycles_per_iteration"] == pytest.approx(c["sm_cycles"] / c["iterations"])
        # cycles / clock is the kernel's time (within the launch's edges)
        assert c["sm_cycles"] / c["clock_GHz"] / 1e3 == pytest.approx(c["time_us"], rel=0.02)
    mix = v["loop_mix"]["fma_chain"]
    assert mix["total"] == sum(mix[k] for k in ("fp32", "int_alu", "int_mad", "branch", "load", "other"))
    assert mix["fp32"] == 4  # numba's range loop unrolled by 4: four FFMAs per pass
    assert rv.sass_mix(["@P0 BRA `(.L_x_3)", "FFMA R0, R0, R1, R2", "ISETP.GT.AND P0, PT, R1, RZ, PT"]) == {
        "fp32": 1,
        "int_alu": 1,
        "int_mad": 0,
        "branch": 1,
        "load": 0,
        "other": 0,
        "total": 3,
    }


def test_loop_finder_reads_labels_and_addresses():
    import fma_loop

    listing = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_2:
        /*0010*/                   FFMA R0, R0, R11, 0.001 ;
        /*0020*/               @P1 BRA `(.L_x_2) ;
        /*0030*/                   IADD3 R2, R2, 0x1, RZ ;
        /*0040*/               @P0 BRA 0x30 ;
        /*0050*/                   EXIT ;"""
    assert fma_loop.loops(listing) == [
        ["FFMA R0, R0, R11, 0.001", "@P1 BRA `(.L_x_2)"],
        ["IADD3 R2, R2, 0x1, RZ", "@P0 BRA 0x30"],
    ]


def test_launch_overhead_clock_rerun_and_host_runs():
    """launch_overhead.json keeps 2026-12-01's figures, its GPU-side parts re-measured with the
    clock agree (within 5%), and the host launch costs of every run are recorded: the sampling
    thread did not slow numba's launches (interleaved check), the host's state did."""
    lo = results.load("launch_overhead")
    rr = lo["clock_rerun"]["launch_parts"]
    for fw in ("numba", "torch"):
        assert rv.measured_clock(rr[fw]) and all(abs(v - 1) < 0.05 for v in rr[fw]["vs_this_file"].values())
    runs = lo["host_launch_runs"]["runs"]
    assert len(runs) >= 3 and all(r["numba_host_launch_s"] > r["torch_host_launch_s"] for r in runs)
    check = lo["host_launch_runs"]["sampler_check"]["numba_tiny"]
    none = check["none"]["median"]
    assert all(abs(check[m]["median"] / none - 1) < 0.05 for m in check)
