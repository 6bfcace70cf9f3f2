"""Chapter 07's float3 layouts (AoS, SoA, AoS staged through shared memory) and its indirect
dispatch pattern (a device-side count read by a fixed grid), run on the simulator."""

import math

import numpy as np

import gpulab
from gpulab import metrics
from gpulab.kernels import image as kim, indirect as ki


def _grey(k, n, arg):
    out = np.full(n, np.nan, np.float32)
    rep = gpulab.launch(k, math.ceil(n / kim.BLOCK_1D), kim.BLOCK_1D, out, arg, backend="sim")
    return out, rep


def test_float3_layouts_agree_and_aos_costs_three_times_the_sectors():
    rng = np.random.default_rng()
    n = int(rng.integers(300, 2000))
    rgb = rng.random((n, 3), dtype=np.float32)
    want = 0.299 * rgb[:, 0] + 0.587 * rgb[:, 1] + 0.114 * rgb[:, 2]
    aos, ra = _grey(kim.grey_aos, n, rgb)
    soa, rs = _grey(kim.grey_soa, n, np.ascontiguousarray(rgb.T))
    st, rt = _grey(kim.grey_aos_staged, n, rgb.ravel())
    for got in (aos, soa, st):
        assert np.allclose(got, want, atol=1e-6)
    sec = metrics.GLOBAL_SECTORS["ld"]
    assert ra.metrics[sec] >= 2.4 * rs.metrics[sec]
    assert rt.metrics[sec] <= 1.05 * rs.metrics[sec]
    assert rt.bank_conflicts() == 0 and rt.wavefronts_per_instruction("ld") == 1.0


def test_indirect_pass_does_work_in_proportion_to_the_device_count():
    rng = np.random.default_rng()
    vals = rng.random(4096).astype(np.float32)
    work = {}
    for thr in (0.95, 0.5):
        count = np.zeros(1, np.int32)
        surv = np.full(vals.size, -1, np.int32)
        gpulab.launch(ki.cull, 32, 128, count, surv, vals, np.float32(thr), backend="sim")
        assert count[0] == int((vals > thr).sum())
        assert sorted(surv[: count[0]]) == list(np.flatnonzero(vals > thr))
        out = np.zeros_like(vals)
        rep = gpulab.launch(ki.shade_survivors, 8, 128, out, surv, count, vals, backend="sim")
        want = np.where(vals > thr, 2 * vals, 0).astype(np.float32)
        assert np.array_equal(out, want)
        work[thr] = rep.metrics[metrics.THREAD_INST_EXECUTED]
    assert work[0.5] > 2 * work[0.95]
