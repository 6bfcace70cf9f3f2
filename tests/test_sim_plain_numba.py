"""Ordinary numba.cuda programs, unchanged, on gpulab's simulator (issue 22, point 1).

The first part is the host side as tutorials write it (``kernel[grid, block]``, ``to_device``,
``device_array(_like)``, ``copy_to_host``, streams, events, ``forall``); the second runs kernels
in the patterns of numba-cuda's ``tests/cudapy`` (atomics, warp ops, sync, intrinsics, const and
local memory, device functions, complex numbers, records), our own, with results compared to
numpy. Every launch goes through ``gpulab.launch`` (``gpulab.last_report()`` is its report).
"""

import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from numba import cuda, float32, int32

import gpulab
from gpulab import errors
from gpulab.sim import numba_api
from gpulab.sim.devicearray import DeviceArray

pytestmark = pytest.mark.skipif(gpulab.gpu_available(), reason="checks the simulator; a GPU is present")


@cuda.jit
def add_one(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + 1


# -- the host API ---------------------------------------------------------------------------------
def test_launch_on_numpy_arrays_updates_them_in_place_and_reports():
    a, out = np.arange(100.0), np.zeros(100)
    add_one[4, 32](out, a)
    assert np.array_equal(out, a + 1)
    rep = gpulab.last_report()
    assert rep.backend == "sim" and rep.grid == (4, 1, 1) and rep.block == (32, 1, 1)
    assert rep.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] == 4


def test_device_arrays_round_trip():
    a = np.arange(50, dtype=np.float32)
    d_a = cuda.to_device(a)
    d_out = cuda.device_array_like(a)
    assert isinstance(d_out, DeviceArray)
    assert (d_out.shape, d_out.dtype, d_out.size, d_out.ndim, len(d_out)) == ((50,), np.float32, 50, 1, 50)
    assert np.isnan(d_out.copy_to_host()).all()  # undefined contents, not zeros
    a[:] = -1  # to_device copied: the host array is independent
    add_one[2, 32](d_out, d_a)
    got = d_out.copy_to_host()
    assert np.array_equal(got, np.arange(50, dtype=np.float32) + 1)
    host = np.empty(50, np.float32)
    assert d_out.copy_to_host(host) is host and np.array_equal(host, got)
    assert d_out[3] == 4 and np.array_equal(np.asarray(d_out), got)
    d_out[...] = np.zeros(50, np.float32)
    d_out[10:20] = 7
    assert d_out.copy_to_host().sum() == 70
    with pytest.raises(TypeError, match="shape"):
        d_out.copy_to_host(np.empty(49, np.float32))


def test_device_array_shapes_and_views():
    d = cuda.device_array((4, 6), dtype=np.int32)
    assert d.shape == (4, 6) and d.dtype == np.int32 and (d.copy_to_host() == -1).all()
    d.copy_to_device(np.arange(24, dtype=np.int32).reshape(4, 6))
    row = d[1]
    assert isinstance(row, DeviceArray) and np.array_equal(row.copy_to_host(), np.arange(6, 12))

    @cuda.jit
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    double[1, 32](row)  # a view: the kernel writes through to the parent allocation
    assert np.array_equal(d.copy_to_host()[1], 2 * np.arange(6, 12))
    assert d.reshape(24).shape == (24,) and d.T.shape == (6, 4)


def test_stream_shared_bytes_and_sync_are_accepted():
    @cuda.jit
    def reverse(out, a):
        buf = cuda.shared.array(0, dtype=float32)
        t = cuda.threadIdx.x
        buf[t] = a[t]
        cuda.syncthreads()
        out[t] = buf[cuda.blockDim.x - 1 - t]

    s = cuda.stream()
    a = np.arange(64, dtype=np.float32)
    d_a, d_out = cuda.to_device(a, stream=s), cuda.device_array(64, np.float32, stream=s)
    reverse[1, 64, s, 64 * 4](d_out, d_a)
    s.synchronize()
    cuda.synchronize()
    assert np.array_equal(d_out.copy_to_host(stream=s), a[::-1])
    with s.auto_synchronize():
        pass


def test_event_timings_say_they_are_not_gpu_timings():
    start, end = cuda.event(), cuda.event()
    start.record()
    add_one[1, 32](np.zeros(8), np.zeros(8))
    end.record()
    end.synchronize()
    with pytest.warns(numba_api.SimulatedTimingWarning, match="not GPU timings"):
        t = cuda.event_elapsed_time(start, end)
    assert math.isnan(t)
    with pytest.warns(numba_api.SimulatedTimingWarning):
        assert math.isnan(start.elapsed_time(end))


def test_detect_and_is_available_are_honest(capsys):
    assert cuda.is_available() is False  # there is no GPU, and numba says so
    assert cuda.detect() is False
    assert "No CUDA GPU" in capsys.readouterr().out


def test_forall_pinned_and_mapped():
    n = 300
    a = cuda.pinned_array(n, dtype=np.float64)
    a[:] = np.arange(n)
    out = cuda.mapped_array(n, dtype=np.float64)
    add_one.forall(n)(out, a)
    assert np.array_equal(out, np.arange(n) + 1)
    with cuda.pinned(a):
        pass
    with cuda.mapped(out) as d_out:
        add_one[10, 32](d_out, a)  # mapped: the kernel writes the host array
    assert cuda.is_cuda_array(d_out)


def test_bad_launches_are_refused_as_numba_would():
    with pytest.raises(errors.LaunchConfigError, match="1024"):
        add_one[1, 2048](np.zeros(4), np.zeros(4))
    with pytest.raises(errors.OutOfBounds):

        @cuda.jit
        def unguarded(out):
            out[cuda.grid(1)] = 1

        unguarded[1, 32](np.zeros(8))
    with pytest.raises(ValueError):
        add_one(np.zeros(4), np.zeros(4))  # not configured: numba's own message


def test_closure_over_cuda_gpu_puzzles_style():
    def make(cuda):
        def call(out, a, k):
            i = cuda.threadIdx.x
            if i < a.size:
                out[i] = a[i] * k

        return call

    kernel = cuda.jit(make(cuda))
    out = np.zeros(10)
    kernel[1, 16](out, np.arange(10.0), 3.0)
    assert np.array_equal(out, 3 * np.arange(10.0))


def test_a_kernel_defined_before_import_gpulab_and_the_env_switch(tmp_path):
    """A program that defines its kernel first and imports gpulab after (fresh interpreter);
    and simulate(False) gives numba.cuda back (without a GPU: numba's CudaSupportError)."""
    prog = textwrap.dedent(
        """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def k(out):
            out[cuda.grid(1)] = cuda.grid(1)

        import gpulab
        out = np.zeros(32)
        k[1, 32](out)
        assert (out == np.arange(32)).all(), out
        gpulab.simulate(False)
        try:
            k[1, 32](out)
        except Exception as e:
            print("after simulate(False):", type(e).__name__)
        gpulab.simulate()
        k[1, 32](out)
        print("ok", gpulab.last_report().backend)
        """
    )
    env = dict(os.environ, GPULAB_QUIET="1")
    script = tmp_path / "program.py"  # a file: the simulator reads the kernel's source
    script.write_text(prog)
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "after simulate(False): CudaSupportError" in res.stdout
    assert "ok sim" in res.stdout


def test_the_gpu_backend_keeps_numbas_launch_path():
    """backend='gpu' must not be routed to the simulator by the installed configure."""
    assert numba_api.installed()
    with pytest.raises(errors.BackendUnavailable):
        gpulab.launch(add_one, 1, 32, np.zeros(4), np.zeros(4), backend="gpu")


# -- numba-cuda's tests/cudapy patterns ----------------------------------------------------------
def test_atomics_against_numpy():
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 16, 512).astype(np.int32)
    vals = rng.integers(-50, 50, 512).astype(np.int32)

    @cuda.jit
    def atomics(idx, vals, hist, mx, mn, bits):
        i = cuda.grid(1)
        if i < idx.size:
            cuda.atomic.add(hist, idx[i], 1)
            cuda.atomic.max(mx, idx[i], vals[i])
            cuda.atomic.min(mn, idx[i], vals[i])
            cuda.atomic.or_(bits, 0, 1 << (idx[i] % 31))

    hist, mx = np.zeros(16, np.int32), np.full(16, -1000, np.int32)
    mn, bits = np.full(16, 1000, np.int32), np.zeros(1, np.int32)
    atomics[4, 128](idx, vals, hist, mx, mn, bits)
    assert np.array_equal(hist, np.bincount(idx, minlength=16))
    for b in range(16):
        assert mx[b] == vals[idx == b].max() and mn[b] == vals[idx == b].min()
    assert bits[0] == np.bitwise_or.reduce(1 << (idx % 31))

    @cuda.jit
    def cas_counter(counter, old_seen):
        i = cuda.grid(1)
        while True:
            old = cuda.atomic.add(counter, 0, 0)  # an atomic read (a plain load would race)
            if cuda.atomic.cas(counter, 0, old, old + 1) == old:
                old_seen[i] = old
                break

    counter, seen = np.zeros(1, np.int32), np.zeros(64, np.int32)
    cas_counter[2, 32](counter, seen)
    assert counter[0] == 64 and np.array_equal(np.sort(seen), np.arange(64))

    @cuda.jit
    def float_sum(out, x):
        cuda.atomic.add(out, 0, x[cuda.grid(1)])

    x = rng.random(256)
    out = np.zeros(1)
    float_sum[2, 128](out, x)
    assert np.isclose(out[0], x.sum())


def test_warp_ops_against_numpy():
    @cuda.jit
    def warp_ops(a, shfl, up, down, xor, ballot, any_, all_, match):
        i = cuda.grid(1)
        v = a[i]
        shfl[i] = cuda.shfl_sync(0xFFFFFFFF, v, 3)
        up[i] = cuda.shfl_up_sync(0xFFFFFFFF, v, 1)
        down[i] = cuda.shfl_down_sync(0xFFFFFFFF, v, 2)
        xor[i] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)
        ballot[i] = cuda.ballot_sync(0xFFFFFFFF, v % 2 == 0)
        any_[i] = cuda.any_sync(0xFFFFFFFF, v > 60)
        all_[i] = cuda.all_sync(0xFFFFFFFF, v >= 0)
        match[i] = cuda.match_any_sync(0xFFFFFFFF, v % 4)

    a = np.arange(64, dtype=np.int32)
    outs = [np.zeros(64, np.int32) for _ in range(8)]
    warp_ops[1, 64](a, *outs)
    shfl, up, down, xor, ballot, any_, all_, match = outs
    lane, base = a % 32, a - a % 32
    assert np.array_equal(shfl, base + 3)
    assert np.array_equal(up, np.where(lane >= 1, a - 1, a))
    assert np.array_equal(down, np.where(lane < 30, a + 2, a))
    assert np.array_equal(xor, a ^ 1)
    assert (ballot.astype(np.uint32) == 0x55555555).all()
    assert np.array_equal(any_, np.repeat([0, 1], 32)) and (all_ == 1).all()
    want = np.array([sum(1 << k for k in range(32) if k % 4 == l % 4) for l in range(32)] * 2, np.uint32)
    assert np.array_equal(match.astype(np.uint32), want)


def test_full_masks_in_ten_thread_blocks_as_numba_cudas_own_tests():
    """useless_syncwarp(_with_mask), match_any_sync, match_all_sync: 10 threads, full mask."""

    @cuda.jit
    def useless_syncwarp(ary):
        i = cuda.grid(1)
        cuda.syncwarp()
        ary[i] = i

    @cuda.jit
    def useless_syncwarp_with_mask(ary):
        i = cuda.grid(1)
        cuda.syncwarp(0xFFFF)
        ary[i] = i

    @cuda.jit("void(int32[:], int32[:])")
    def match_any(ary_in, ary_out):
        i = cuda.grid(1)
        ary_out[i] = cuda.match_any_sync(0xFFFFFFFF, ary_in[i])

    @cuda.jit("void(int32[:], int32[:])")
    def match_all(ary_in, ary_out):
        i = cuda.grid(1)
        ballot, pred = cuda.match_all_sync(0xFFFFFFFF, ary_in[i])
        ary_out[i] = ballot if pred else 0

    for k in (useless_syncwarp, useless_syncwarp_with_mask):
        ary = np.zeros(10, np.int32)
        k[1, 10](ary)
        assert np.array_equal(ary, np.arange(10))
    out = np.zeros(10, np.int32)
    match_any[1, 10](np.arange(10, dtype=np.int32) % 2, out)
    assert np.array_equal(out, np.tile((0b0101010101, 0b1010101010), 5))
    match_all[1, 10](np.zeros(10, np.int32), out)
    assert (out == 0b1111111111).all()
    ins = np.zeros(10, np.int32)
    ins[1] = 4
    match_all[1, 10](ins, out)
    assert (out == 0).all()


def test_a_lane_named_by_the_mask_that_took_another_branch_is_still_an_error():
    @cuda.jit
    def half(out):
        i = cuda.threadIdx.x
        if i < 16:
            out[i] = cuda.ballot_sync(0xFFFFFFFF, True)

    with pytest.raises(errors.WarpMaskError, match="another branch"):
        half[1, 32](np.zeros(32, np.int32))


def test_sync_intrinsics():
    @cuda.jit
    def counts(a, out):
        t = cuda.threadIdx.x
        out[0, t] = cuda.syncthreads_count(a[t])  # int predicates, as numba types them
        out[1, t] = cuda.syncthreads_and(a[t])
        out[2, t] = cuda.syncthreads_or(max(a[t] - 5, 0))
        cuda.threadfence()
        cuda.threadfence_block()

    a = np.array([1, 0, 3, 4] * 16, np.int32)
    out = np.zeros((3, 64), np.int32)
    counts[1, 64](a, out)
    assert (out[0] == 48).all() and (out[1] == 0).all() and (out[2] == 0).all()


def test_bit_and_math_intrinsics():
    @cuda.jit
    def bits(x, out):
        i = cuda.grid(1)
        v = x[i]
        out[0, i] = cuda.popc(v)
        out[1, i] = cuda.clz(v)
        out[2, i] = cuda.ffs(v)
        out[3, i] = cuda.brev(v)
        out[4, i] = cuda.laneid
        out[5, i] = cuda.warpsize

    x = np.array([1, 2, 3, 0x80000000, 0, 255, 1024, 7] * 4, np.uint32)
    out = np.zeros((6, 32), np.int64)
    bits[1, 32](x, out)
    assert np.array_equal(out[0], [bin(int(v)).count("1") for v in x])
    assert np.array_equal(out[1], [32 - int(v).bit_length() for v in x])
    assert np.array_equal(out[2], [(int(v) & -int(v)).bit_length() for v in x])
    assert np.array_equal(out[3], [int(f"{int(v):032b}"[::-1], 2) for v in x])
    assert np.array_equal(out[4], np.arange(32)) and (out[5] == 32).all()

    @cuda.jit
    def maths(x, y, out):
        i = cuda.grid(1)
        out[0, i] = cuda.fma(x[i], y[i], 1.0)
        out[1, i] = cuda.cbrt(x[i])
        out[2, i] = cuda.selp(x[i] > y[i], x[i], y[i])
        out[3, i] = math.sqrt(x[i]) + math.exp(-y[i])

    rng = np.random.default_rng(3)
    x, y = rng.random(64), rng.random(64)
    out = np.zeros((4, 64))
    maths[2, 32](x, y, out)
    assert np.allclose(out[0], x * y + 1) and np.allclose(out[1], np.cbrt(x))
    assert np.allclose(out[2], np.maximum(x, y)) and np.allclose(out[3], np.sqrt(x) + np.exp(-y))


CONST1D = np.arange(10, dtype=np.float64) / 2.0
CONST2D = np.asfortranarray(np.arange(100, dtype=np.int32).reshape(10, 10))


def test_const_and_local_memory():
    @cuda.jit
    def const1d(out):
        c = cuda.const.array_like(CONST1D)
        i = cuda.grid(1)
        out[i] = c[i] + 1.0

    @cuda.jit
    def const2d(out):
        c = cuda.const.array_like(CONST2D)
        i, j = cuda.grid(2)
        out[i, j] = c[i, j]

    out = np.zeros(10)
    const1d[1, 10](out)
    assert np.array_equal(out, CONST1D + 1)
    out2 = np.zeros((10, 10), np.int32)
    const2d[(2, 2), (5, 5)](out2)
    assert np.array_equal(out2, CONST2D)

    @cuda.jit
    def local_reverse(out, a):
        tmp = cuda.local.array(8, dtype=float32)
        i = cuda.grid(1)
        for k in range(8):
            tmp[k] = a[i, k]
        for k in range(8):
            out[i, k] = tmp[7 - k]

    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    out3 = np.zeros_like(a)
    local_reverse[1, 8](out3, a)
    assert np.array_equal(out3, a[:, ::-1])


@cuda.jit(device=True)
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@cuda.jit(device=True)
def saxpy_one(a, x, y):
    return a * x + y


@cuda.jit("float32(float32, float32)", device=True)
def hypot32(x, y):
    return math.sqrt(x * x + y * y)


def test_device_functions():
    @cuda.jit
    def kern(out, x, y):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = clamp(saxpy_one(2.0, x[i], y[i]), 0.0, 10.0) + hypot32(x[i], y[i])

    x = np.linspace(-3, 3, 50).astype(np.float32)
    y = np.linspace(1, 2, 50).astype(np.float32)
    out = np.zeros(50, np.float32)
    kern[2, 32](out, x, y)
    want = np.clip(2 * x + y, 0, 10) + np.hypot(x, y)
    assert np.allclose(out, want, rtol=1e-5)


def test_complex_numbers():
    @cuda.jit
    def cplx(out, re, im, z):
        i = cuda.grid(1)
        w = complex(re[i], im[i])
        out[0, i] = w * z[i] + w.conjugate()
        out[1, i] = abs(w)
        out[2, i] = w.real - z[i].imag

    rng = np.random.default_rng(5)
    re, im = rng.random(32), rng.random(32)
    z = (rng.random(32) + 1j * rng.random(32)).astype(np.complex128)
    out = np.zeros((3, 32), np.complex128)
    cplx[1, 32](out, re, im, z)
    w = re + 1j * im
    assert np.allclose(out[0], w * z + np.conj(w))
    assert np.allclose(out[1], np.abs(w)) and np.allclose(out[2], re - z.imag)

    @cuda.jit
    def c64(out, re):
        i = cuda.grid(1)
        out[i] = complex(re[i], re[i]) * 2  # float32 parts: complex64, as numba types it

    out64 = np.zeros(8, np.complex64)
    c64[1, 8](out64, np.arange(8, dtype=np.float32))
    assert np.array_equal(out64, (np.arange(8) * (2 + 2j)).astype(np.complex64))


RECORD = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.float32)], align=True)


def test_records():
    @cuda.jit
    def set_fields(ary, v):
        i = cuda.grid(1)
        if i < ary.size:
            ary[i].a = v + i
            ary[i].b = i * 2
            ary[i].c = ary[i].a / 2

    @cuda.jit
    def read_fields(ary, out):
        i = cuda.grid(1)
        if i < ary.size:
            out[i] = ary[i].a + ary[i].b + ary[i]["c"]

    recs = np.zeros(20, dtype=RECORD)
    set_fields[1, 32](recs, 1.5)
    assert np.array_equal(recs["a"], 1.5 + np.arange(20))
    assert np.array_equal(recs["b"], 2 * np.arange(20))
    assert np.allclose(recs["c"], recs["a"] / 2)
    out = np.zeros(20)
    read_fields[1, 32](cuda.to_device(recs), out)
    assert np.allclose(out, recs["a"] + recs["b"] + recs["c"])


def test_simulate_flag_and_backend_auto():
    assert gpulab.simulate() is True and numba_api.installed()
    assert gpulab.launch(add_one, 1, 32, np.zeros(4), np.zeros(4)).backend == "sim"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumbaPerformanceWarning from numba's launch path
        add_one[1, 32](np.zeros(4), np.zeros(4))


def test_int32_kernel_arguments_keep_their_types():
    @cuda.jit
    def scale(out, k):
        i = cuda.grid(1)
        out[i] = out[i] * k

    out = np.arange(8, dtype=np.int32)
    scale[1, 8](out, int32(3))
    assert np.array_equal(out, 3 * np.arange(8))
