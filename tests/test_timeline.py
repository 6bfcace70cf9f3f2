"""Tests for gpulab.timeline (the recorder) and gpulab.plots.timeline (the figure)."""

import time

import matplotlib

matplotlib.use("Agg")
import pytest

from gpulab.timeline import Timeline, _gpu_available
from gpulab.plots.timeline import draw


class FakeClock:
    """A clock the test advances by hand, so intervals are exact."""

    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def make(**kw):
    clock = FakeClock()
    calls = []

    def launcher(kernel, grid, block, *args, **kwargs):
        calls.append((kernel, grid, block, args))
        clock.t += 0.004  # the "kernel" takes 4 ms of host time
        return "report"

    tl = Timeline(backend="sim", launcher=launcher, clock=clock, **kw)
    return tl, clock, calls


def test_host_and_sim_launch_intervals_exact():
    tl, clock, calls = make()
    for _ in range(3):
        with tl.host("prepare"):
            clock.t += 0.006
        assert tl.launch(len, 2, 32, "x", name="k") == "report"
    assert len(calls) == 3 and calls[0][1:] == (2, 32, ("x",))
    k = tl.lane("kernel")
    assert [round(i.start, 9) for i in k] == [0.006, 0.016, 0.026]
    assert all(i.duration == pytest.approx(0.004) for i in k)
    s = tl.summary()
    assert s["total_s"] == pytest.approx(0.030)
    assert s["kernel_busy_s"] == pytest.approx(0.012)
    assert s["host_busy_s"] == pytest.approx(0.030)  # the simulator runs on the host
    assert s["kernel_share"] == pytest.approx(0.4)
    gaps = tl.gaps("kernel")
    assert len(gaps) == 3 and sum(e - s for s, e in gaps) == pytest.approx(0.018)


def test_gaps_and_busy_merge_overlaps():
    tl, _, _ = make()
    tl.add("kernel", "a", 0.0, 2.0)
    tl.add("kernel", "b", 1.0, 3.0)  # overlaps a
    tl.add("kernel", "c", 5.0, 6.0)
    tl.add("host", "h", 0.0, 8.0)
    assert tl.busy("kernel") == pytest.approx(4.0)
    assert tl.gaps("kernel") == [(3.0, 5.0), (6.0, 8.0)]
    assert tl.gaps("host") == []
    with pytest.raises(ValueError):
        tl.add("host", "bad", 2.0, 1.0)


def test_real_clock_measures_sleep():
    tl = Timeline(backend="sim", launcher=lambda *a, **k: None)
    with tl.host("sleep"):
        time.sleep(0.02)
    (iv,) = tl.lane("host")
    assert 0.019 <= iv.duration < 0.5


def test_draw_lanes_and_gap_shading():
    tl, clock, _ = make()
    with tl.host("prepare"):
        clock.t += 0.006
    tl.launch(len, 1, 32, name="k")
    ax = draw(tl)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["host", "kernel"]
    # host bars + kernel bars + one collection of red gaps
    assert len(ax.collections) == 3
    assert "busy 40%" in ax.get_title()  # kernel idle 6 of 10 ms
    matplotlib.pyplot.close("all")


def test_bad_backend():
    with pytest.raises(ValueError):
        Timeline(backend="tpu")


@pytest.mark.skipif(not _gpu_available(), reason="needs a CUDA GPU")
def test_gpu_events_place_kernels_after_their_launch():
    import numpy as np
    from numba import cuda

    @cuda.jit
    def inc(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1.0

    d = cuda.to_device(np.zeros(1 << 20, np.float32))
    tl = Timeline(backend="gpu")
    for _ in range(5):
        tl.launch(inc, 4096, 256, d)
    tl.finish()
    launches, kernels = tl.lane("host"), tl.lane("kernel")
    assert len(kernels) == 5
    for h, k in zip(launches, kernels):
        assert k.start >= h.start - 50e-6 and k.duration > 0
    assert d.copy_to_host()[0] == 5.0


def test_median_time_and_records_roundtrip(tmp_path, monkeypatch):
    from gpulab.timeline import median_time, load_result, from_records

    calls = []
    assert median_time(lambda: calls.append(1), repeat=3, warmup=2) >= 0 and len(calls) == 5
    tl, clock, _ = make()
    with tl.host("a"):
        clock.t += 0.5
    tl.launch(len, 1, 32, name="k")
    tl2 = from_records([vars(i) for i in tl.intervals])
    assert tl2.summary() == tl.summary()
    import json

    (tmp_path / "x_test.json").write_text(json.dumps({"v": 3}))
    monkeypatch.setenv("GPULAB_RESULTS", str(tmp_path))
    assert load_result("x_test") == {"v": 3}
    assert load_result("no_such_result_file") is None


def test_auto_never_picks_numbas_simulator_as_a_gpu(monkeypatch):
    """Under NUMBA_ENABLE_CUDASIM=1 numba.cuda.is_available() says True; that is not a GPU."""
    from numba import cuda

    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    monkeypatch.setattr(cuda, "is_available", lambda: True)
    assert _gpu_available() is False
    assert Timeline(backend="auto").backend == "sim"
