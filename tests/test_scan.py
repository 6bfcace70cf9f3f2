"""The device-wide scan (gpulab.kernels.scan): reduce-then-scan, three kernels, exact on int32."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gpulab.kernels import scan


@pytest.mark.parametrize(
    "n, block",
    [
        (1, 32),
        (31, 32),
        (1000, 64),
        (4097, 128),
        # more blocks than the middle kernel's block: several chunks
        (70 * 64 + 5, 64),
    ],
)
def test_scan_equals_numpy_cumsum(n, block):
    rng = np.random.default_rng(n)
    x = rng.integers(-50, 50, n).astype(np.int32)
    out, reps = scan.device_scan(x, block=block)
    assert out.dtype == np.int32 and np.array_equal(out, np.cumsum(x))
    assert [r.kernel for r in reps] == ["scan_reduce", "scan_totals", "scan_apply"]


def test_scan_of_2_to_the_20_elements_and_its_counters():
    """The source article's size: 2**20 int32 values, compared with numpy.cumsum element by
    element; the input is requested twice and the output once (in 32-byte sectors)."""
    n = 1 << 20
    x = np.random.default_rng(20).integers(0, 10, n).astype(np.int32)
    out, reps = scan.device_scan(x, block=1024)
    assert np.array_equal(out, np.cumsum(x))
    t = scan.traffic(reps)
    assert 2.0 <= t["ld"] / x.nbytes < 2.01 and 1.0 <= t["st"] / x.nbytes < 1.01
    assert [r.barriers for r in reps] == [1, 3, 2]
    assert "scan_apply" in scan.describe(reps, n)


def test_int32_sums_wrap_as_on_a_gpu():
    x = np.full(3, 2**30, np.int32)
    out, _ = scan.device_scan(x, block=32)
    assert out.tolist() == np.cumsum(x, dtype=np.int32).tolist() == [2**30, -(2**31), -(2**30)]


@pytest.mark.parametrize(
    "x, block, match",
    [
        (np.arange(10, dtype=np.float32), 32, "int32"),
        (np.zeros((4, 4), np.int32), 32, "1-D"),
        (np.zeros(0, np.int32), 32, "at least one"),
        (np.arange(10, dtype=np.int32), 48, "multiple of 32"),
        (np.arange(10, dtype=np.int32), 2048, "multiple of 32"),
    ],
)
def test_bad_input_is_refused_with_the_reason(x, block, match):
    with pytest.raises((TypeError, ValueError), match=match):
        scan.device_scan(x, block=block)


def test_a_missing_barrier_in_the_middle_kernel_is_caught(tmp_path, monkeypatch):
    """Without the barrier after chunk_total is written, threads read it before it is written
    and the next chunk's warps overwrite offsets other warps still read: the simulator must
    report the race, not return a sum."""
    import importlib
    import inspect

    import gpulab
    from gpulab import errors

    src = inspect.getsource(scan.scan_totals.py_func)
    racy = re.sub(r"^( +)cuda\.syncthreads\(\) +# chunk_total written", r"\1# ", src, flags=re.M)
    assert racy != src
    (tmp_path / "racy_scan.py").write_text(
        "from numba import cuda, int32\n"
        "from gpulab.kernels.scan import MAX_WARPS_PER_BLOCK, block_scan_int\n\n\n"
        "@cuda.jit\n" + racy
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    kern = importlib.import_module("racy_scan").scan_totals
    totals = np.ones(64 * 3, np.int32)
    with pytest.raises(errors.KernelError, match="(?i)race"):
        gpulab.launch(kern, 1, 64, totals, backend="sim")
    good = np.ones(64 * 3, np.int32)
    gpulab.launch(scan.scan_totals, 1, 64, good, backend="sim")
    assert np.array_equal(good, np.arange(64 * 3))
