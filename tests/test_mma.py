"""m16n8k16 fragment layouts (PTX ISA) and the warp-level MMA / wmma tile emulation."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpulab.checks import formats as C
from gpulab.models import mma


@pytest.mark.parametrize("op", ["A", "B", "C"])
def test_layout_is_a_bijection(op):
    rows, cols, n = mma.SHAPES[op]
    r, c = mma.fragment_coords(op)
    assert r.shape == (32, n)
    cells = set(zip(r.ravel().tolist(), c.ravel().tolist()))
    assert len(cells) == rows * cols == 32 * n
    assert cells == {(i, j) for i in range(rows) for j in range(cols)}


def test_layout_spot_checks_from_ptx_figures():
    # read off the PTX ISA figures for mma.m16n8k16 (f16 A, B; f32 C/D)
    ra, ca = mma.fragment_coords("A")
    assert list(zip(ra[0], ca[0])) == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    assert list(zip(ra[5], ca[5]))[0] == (1, 2)  # lane 5: groupID 1, threadID_in_group 1
    assert list(zip(ra[31], ca[31]))[-1] == (15, 15)
    rb, cb = mma.fragment_coords("B")
    assert list(zip(rb[0], cb[0])) == [(0, 0), (1, 0), (8, 0), (9, 0)]
    assert list(zip(rb[7], cb[7])) == [(6, 1), (7, 1), (14, 1), (15, 1)]
    rc, cc = mma.fragment_coords("C")
    assert list(zip(rc[0], cc[0])) == [(0, 0), (0, 1), (8, 0), (8, 1)]
    assert list(zip(rc[31], cc[31])) == [(7, 6), (7, 7), (15, 6), (15, 7)]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["A", "B", "C"]), st.integers(0, 2**31))
def test_load_store_roundtrip(op, seed):
    rows, cols, _ = mma.SHAPES[op]
    m = np.random.default_rng(seed).standard_normal((rows, cols))
    assert np.array_equal(mma.store_fragments(mma.load_fragments(m, op), op), m)


def test_mma_sync_computes_a_b_plus_c():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    c = rng.standard_normal((16, 8)).astype(np.float32)
    d = mma.mma_sync_m16n8k16(
        mma.load_fragments(a, "A"), mma.load_fragments(b, "B"), mma.load_fragments(c, "C")
    )
    ref = a.astype(np.float64) @ b.astype(np.float64) + c
    assert np.array_equal(mma.store_fragments(d, "D"), ref.astype(np.float32))


def test_wrong_layout_gives_wrong_answer():
    # the emulation really depends on the layout: lanes that swap registers get a different D
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    fa = mma.load_fragments(a, "A")
    fa_bad = fa[:, [0, 1, 4, 5, 2, 3, 6, 7]]  # a2,a3 <-> a4,a5: rows 8 and cols 8 mixed up
    c = np.zeros((32, 4), np.float32)
    good = mma.store_fragments(mma.mma_sync_m16n8k16(fa, mma.load_fragments(b, "B"), c), "D")
    bad = mma.store_fragments(mma.mma_sync_m16n8k16(fa_bad, mma.load_fragments(b, "B"), c), "D")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.allclose(good, ref, atol=1e-5) and not np.allclose(bad, ref, atol=1e-2)


def test_fragment_matmul_agrees_with_wmma_tiles_and_fp64():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((32, 64)).astype(np.float16)
    b = rng.standard_normal((64, 32)).astype(np.float16)
    d1 = mma.mma_matmul(a, b)
    d2 = mma.wmma_matmul(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = 4 * np.finfo(np.float32).eps * (np.abs(a).astype(float) @ np.abs(b).astype(float))
    assert np.all(np.abs(d1 - ref) <= bound) and np.all(np.abs(d2 - ref) <= bound)
    assert d1.dtype == d2.dtype == np.float32


def test_fp16_accumulator_loses_accuracy():
    rng = np.random.default_rng(3)
    a = rng.random((16, 1024)).astype(np.float16)
    b = rng.random((1024, 16)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    e32 = np.max(np.abs(mma.wmma_matmul(a, b, acc=np.float32) - ref) / ref)
    e16 = np.max(np.abs(mma.wmma_matmul(a, b, acc=np.float16) - ref) / ref)
    assert e16 > 30 * e32


def test_shape_errors():
    with pytest.raises(ValueError):
        mma.load_fragments(np.zeros((16, 8)), "A")
    with pytest.raises(ValueError):
        mma.wmma_matmul(np.zeros((16, 20)), np.zeros((20, 16)))


def test_operand_traffic_and_roofline():
    t = mma.operand_traffic(16, 16, 16)
    assert t["fma_operand_reads"] == 3 * 4096 and t["mma_operand_reads"] == 768
    peak, bw = 989.5, 4.8
    rp = mma.ridge_point(peak, bw)
    assert mma.roofline(rp, peak, bw) == pytest.approx(peak)
    assert mma.roofline(rp / 10, peak, bw) == pytest.approx(peak / 10)
    # a square n^3 fp16 matmul does n/3 FLOP per byte when C is also fp16
    assert mma.matmul_intensity(3000, 3000, 3000, 2) == pytest.approx(1000)


def test_throughput_records_fallback_and_files(tmp_path):
    recs = mma.load_throughput_records(search=(str(tmp_path),))
    assert recs[-1].source == mma.ISSUE7_RECORD["source"]
    (tmp_path / "tensor_cores_throughput_x.json").write_text(
        '{"source": "test", "device": "dev", "measured_at": "now", "method": "m", "tflops": {"fp16": 1.0}}'
    )
    recs = mma.load_throughput_records(search=(str(tmp_path),))
    assert recs[0].source == "test" and recs[0].tflops["fp16"] == 1.0


def test_check_c_owner():
    def right(r, c):
        return 4 * (r % 8) + c // 2, (c % 2) + 2 * (r >= 8)

    def wrong_idx(r, c):
        return 4 * (r % 8) + c // 2, c % 2

    assert C.check_c_owner(right)
    res = C.check_c_owner(wrong_idx)
    assert not res and "wrong element index" in res.message
    assert not C.check_c_owner(lambda r, c: None)


def test_sweep_record_and_plots(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gpulab.plots import mma as mp

    (tmp_path / "tensor_cores_throughput.json").write_text(
        '{"source": "s", "device": "d", "measured_at": "2026-12-01T00:00:00+00:00", "method": "m",'
        ' "tflops": {"fp16": 700.0}, "sweep_tflops": {"fp16": {"256": 10.0, "8192": 700.0}}}'
    )
    rec = mma.load_throughput_records(search=(str(tmp_path),))[0]
    assert rec.sweep == {"fp16": {256: 10.0, 8192: 700.0}}
    peaks = mma.H200_DATASHEET["peak_tflops"]
    ax = mp.roofline(peaks, 4.8, record=rec)
    stars = [ln for ln in ax.get_lines() if ln.get_marker() == "*"]
    assert len(stars) == 1 and list(stars[0].get_ydata()) == [10.0, 700.0]
    assert list(stars[0].get_xdata()) == [mma.matmul_intensity(n, n, n, 2) for n in (256, 8192)]
    ax = mp.fragment_layout("B")
    assert len(ax.texts) == 16 * 8
    mp.throughput_bars(mma.load_throughput_records(search=())[-1], peaks)
    plt.close("all")


def test_fragment_registers_pack_low_half_first():
    # tc_device.cu hands lane l the uint32 registers fa.view(uint32)[l]: element a_{2j} must be
    # the low 16 bits of register j, as the PTX ISA orders elements "low to high"
    a = np.arange(256, dtype=np.float16).reshape(16, 16)
    fa = np.ascontiguousarray(mma.load_fragments(a, "A"))
    regs = fa.view(np.uint32)
    assert regs.shape == (32, 4)
    low = (regs & 0xFFFF).astype(np.uint16).view(np.float16)
    high = (regs >> 16).astype(np.uint16).view(np.float16)
    assert np.array_equal(low, fa[:, 0::2]) and np.array_equal(high, fa[:, 1::2])


@pytest.mark.parametrize("script", ["run_mma.py", "matmul_throughput.py"])
def test_gpu_benchmarks_skip_cleanly_without_gpu(script):
    import subprocess
    import sys
    from pathlib import Path

    from numba import cuda

    if cuda.is_available():
        pytest.skip("a GPU is present: the benchmark would really run")
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "tensor_cores" / script
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "skipping" in r.stdout


def test_clock_readings_parse_the_nvidia_smi_line(tmp_path):
    import json

    p = tmp_path / "tensor_cores_throughput.json"
    p.write_text(json.dumps({"sm_clock_mhz_max_mhz_power_during_fp16_8192": "1470 MHz, 1980 MHz, 699.32 W"}))
    rec = mma.ThroughputRecord("s", "GPU", "2026-11-29", "m", {}, str(p))
    (r,) = mma.clock_readings(rec)
    assert r["during"] == "fp16 8192" and r["sm_mhz"] == 1470 and r["max_mhz"] == 1980
    assert abs(r["fraction"] - 1470 / 1980) < 1e-12 and r["power"] == "699.32 W"
    assert mma.clock_readings(mma.ThroughputRecord("s", "GPU", "x", "m", {})) == []
