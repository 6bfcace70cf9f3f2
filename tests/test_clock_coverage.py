"""Every result recorded on a GPU carries the SM clock it ran at, or says why not (issue 23, "the
clock"). A GPU result is one whose recorded environment names a GPU (gpulab.plots.measured's
reader); results made on a CPU need no clock.

A new GPU results file without a clock record fails here until its script records one
(benchmarks/benchenv.py: ClockSampler inside the timed regions, ncu_clock under Nsight Compute) or
it is listed, with the reason, in gpulab.results_views.CLOCK_NOT_RECORDED.
"""

import json

import pytest

from gpulab import results, results_views as rv
from gpulab.plots import measured

NAMES = sorted(p.stem for p in results.RESULTS_DIR.glob("*.json"))


def _load(name):
    return json.loads((results.RESULTS_DIR / f"{name}.json").read_text())


@pytest.mark.parametrize("name", NAMES)
def test_every_gpu_result_records_its_clock_or_is_listed_with_a_reason(name):
    res = _load(name)
    recs = rv.clock_records(res)
    if name in rv.CLOCK_NOT_RECORDED:
        kind, why = rv.CLOCK_NOT_RECORDED[name]
        assert kind in ("no GPU timing", "not re-measured") and len(why) > 20
        assert not recs, f"{name}.json now records its clock: remove it from CLOCK_NOT_RECORDED"
        return
    if not recs and "gpu" not in measured.environment(res, name):
        return  # made on a CPU (predictions, simulator, ptxas): no GPU clock to record
    assert recs, (
        f"{name}.json has no SM clock record: record one with benchmarks/benchenv.py (ClockSampler "
        "inside the timed regions, or ncu_clock) or list it with the reason in CLOCK_NOT_RECORDED"
    )
    for where, r in recs.items():
        assert 1 <= r["samples"], where
        assert 300 <= r["min_MHz"] <= r["median_MHz"] <= r["max_MHz"] <= 3000, (name, where, r)
        assert r["source"], where


def test_every_exception_names_a_recorded_result():
    assert set(rv.CLOCK_NOT_RECORDED) <= set(NAMES)


def test_clock_records_finds_nested_records_and_nothing_else():
    rec = {"source": "s", "samples": 2, "min_MHz": 1500.0, "median_MHz": 1600.0, "max_MHz": 1700.0}
    res = {"sm_clock": rec, "rows": [{"ms": 1.0, "sm_clock": rec}, {"ms": 2.0}], "env": {"x": 1}}
    assert sorted(rv.clock_records(res)) == ["rows[0].sm_clock", "sm_clock"]
    assert rv.clock_records({"nvidia_smi": "580, 1980 MHz", "max_sm_clock_kHz": 1980000}) == {}


def test_result_clock_reads_the_whole_run_and_says_why_not():
    rec = {"source": "s", "samples": 2, "min_MHz": 1500.0, "median_MHz": 1600.0, "max_MHz": 1700.0}
    deep = {**rec, "median_MHz": 1650.0}
    c = rv.result_clock("x", {"rows": [{"sm_clock": deep}], "sm_clock": rec})
    assert c["clock"]["GHz"] == pytest.approx(1.6) and c["where"] == ["rows[0].sm_clock", "sm_clock"]
    assert c["text"].startswith("SM clock 1600 MHz") and c["not_recorded"] is None
    ar = rv.result_clock("allreduce_alpha_beta")
    assert ar["clock"] is None and ar["text"].startswith("SM clock: not recorded (")
    assert "2 GPUs" in ar["not_recorded"]


@pytest.mark.parametrize(
    "name, rows",
    [
        ("amdahl_gpu", lambda r: r["rows"]),
        ("strided_copy", lambda r: r["rows"] + r["ncu"]["rows"]),
        ("divergence_paths", lambda r: r["rows"] + r["ncu"]["rows"]),
        ("reduction", lambda r: r["device_sum"]["runs"] + list(r["device_sum"]["libraries"].values())),
        ("perf_model", lambda r: list(r["clock_rerun"]["cases"].values())),
        ("transpose_variants", lambda r: list(r["variants"].values())),
        ("stall_reasons", lambda r: list(r["kernels"].values())),
        ("perf_blind", lambda r: list(r["clock_rerun"]["cases"].values())),
        ("tensor_cores_throughput", lambda r: [c for v in r["sweep_sm_clock"].values() for c in v.values()]),
        ("launch_overhead", lambda r: list(r["clock_rerun"]["launch_parts"].values())),
        ("instruction_costs", lambda r: [r]),
    ],
)
def test_re_measured_results_record_the_clock_with_every_timing(name, rows):
    r = _load(name)
    assert rv.result_clock(name, r)["clock"], f"{name}.json: no clock for the run"
    assert all(rv.measured_clock(x) for x in rows(r)), f"{name}.json: a timing row without its clock"
