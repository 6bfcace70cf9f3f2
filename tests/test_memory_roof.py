"""The book's one measured HBM roof (gpulab.results_views.memory_roof): no recorded read of HBM
is faster, copies peak below it, and it stays under the datasheet's nominal rate."""

from gpulab import results
from gpulab import results_views as rv
from gpulab.models import latency as lm


def test_the_roof_is_the_fastest_recorded_read_and_copies_stay_below_it():
    roof = rv.memory_roof()
    red, bw = results.load("reduction"), results.load("bandwidth")
    assert roof is not None and red and bw
    reads = [r["GBps"] for r in red["device_sum"]["runs"] if not r.get("launch_bound")]
    reads += [v["GBps"] for v in red["device_sum"]["libraries"].values()]
    assert roof["GBps"] == max(reads)
    copies = [k["GBps"] for k in bw["copy"]["kernels"].values()] + [bw["copy"]["torch"]["GBps"]]
    assert roof["copy_GBps"] == max(copies) < roof["GBps"]
    assert roof["GBps"] < lm.H200.bandwidth / 1e9


def test_no_result_no_roof():
    assert rv.memory_roof(reduction={}, bandwidth={}) is None
