"""Every bug class ends in a clear gpulab error naming the line and the threads; correct kernels pass."""

import time

import numpy as np
import pytest
from numba import cuda, float32

import gpulab
from gpulab import errors


def run(kernel, grid, block, *args, **kw):
    return gpulab.launch(kernel, grid, block, *args, backend="sim", **kw)


@cuda.jit
def unguarded(out):
    i = cuda.grid(1)
    out[i] = 1.0


def test_out_of_bounds_names_line_and_thread():
    with pytest.raises(errors.OutOfBounds) as e:
        run(unguarded, 2, 32, np.zeros(40))
    msg = str(e.value)
    assert "out[i] = 1.0" in msg and "index 40" in msg and "thread (8, 0, 0) of block (1, 0, 0)" in msg
    assert e.value.line is not None


@cuda.jit
def left_neighbour(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i - 1]


def test_negative_index_is_caught_not_wrapped():
    with pytest.raises(errors.OutOfBounds, match="wrap"):
        run(left_neighbour, 1, 32, np.zeros(32), np.zeros(32))


def test_2d_out_of_bounds_names_dimension():
    @cuda.jit
    def k(a):
        x, y = cuda.grid(2)
        if x < a.shape[0]:
            a[x, y] = 1

    with pytest.raises(errors.OutOfBounds, match="dimension 1"):
        run(k, (1, 1), (8, 8), np.zeros((8, 4)))


@cuda.jit
def barrier_in_branch(out):
    sh = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    if t < 48:
        sh[t] = t
        cuda.syncthreads()
    out[t] = sh[t]


def test_barrier_divergence():
    with pytest.raises(errors.BarrierDivergence) as e:
        run(barrier_in_branch, 1, 64, np.zeros(64))
    assert "cuda.syncthreads()" in str(e.value) and "thread (48, 0, 0)" in str(e.value)


def test_barrier_after_early_exit_is_allowed():
    @cuda.jit
    def k(out, n):
        sh = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        if t >= n:
            return
        sh[t] = t
        cuda.syncthreads()
        out[t] = sh[n - 1 - t]

    out = np.zeros(64)
    run(k, 1, 64, out, 50)
    assert np.array_equal(out[:50], np.arange(50)[::-1])


@cuda.jit
def missing_barrier(out, a):
    sh = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    out[t] = sh[63 - t]


def test_read_after_write_race_between_warps():
    with pytest.raises(errors.SharedMemoryRace, match="read-after-write"):
        run(missing_barrier, 1, 64, np.zeros(64), np.zeros(64))


def test_same_warp_exchange_needs_syncwarp():
    """Lanes of one warp are not in lockstep (Volta and later): racecheck reports a
    "(Warp Level Programming)" hazard without syncwarp and none with it (DESIGN.md §4)."""

    @cuda.jit
    def k(out, a):
        sh = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        sh[t] = a[t]
        out[t] = sh[t ^ 1]  # partner lane is in the same warp

    @cuda.jit
    def k_synced(out, a):
        sh = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        sh[t] = a[t]
        cuda.syncwarp()
        out[t] = sh[t ^ 1]

    out, a = np.zeros(64), np.arange(64.0)
    with pytest.raises(errors.WarpLevelRace, match="Warp Level Programming"):
        run(k, 1, 64, out, a)
    run(k_synced, 1, 64, out, a)
    assert np.array_equal(out, a[np.arange(64) ^ 1])


def test_write_after_read_race():
    @cuda.jit
    def k(out):
        sh = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        sh[t] = t
        cuda.syncthreads()
        v = sh[(t + 32) % 64]
        sh[t] = v + 1
        out[t] = v

    with pytest.raises(errors.SharedMemoryRace, match="write-after-read"):
        run(k, 1, 64, np.zeros(64))


def test_write_after_write_race():
    @cuda.jit
    def k(out):
        sh = cuda.shared.array(1, float32)
        t = cuda.threadIdx.x
        sh[0] = t
        cuda.syncthreads()
        out[t] = sh[0]

    with pytest.raises(errors.SharedMemoryRace, match="write-after-write"):
        run(k, 1, 64, np.zeros(64))


def test_shuffle_mask_naming_inactive_lanes():
    @cuda.jit
    def k(out):
        t = cuda.threadIdx.x
        if t < 16:
            out[t] = cuda.shfl_down_sync(0xFFFFFFFF, t, 1)

    with pytest.raises(errors.WarpMaskError, match="not active"):
        run(k, 1, 32, np.zeros(32))


def test_shuffle_mask_naming_exited_lanes():
    @cuda.jit
    def k(out, n):
        t = cuda.threadIdx.x
        if t >= n:
            return
        out[t] = cuda.shfl_xor_sync(0xFFFFFFFF, t, 1)

    with pytest.raises(errors.WarpMaskError, match="exited"):
        run(k, 1, 32, np.zeros(32), 20)


def test_activemask_makes_partial_shuffle_legal():
    @cuda.jit
    def k(out):
        t = cuda.threadIdx.x
        if t < 16:
            out[t] = cuda.shfl_sync(cuda.activemask(), t, 0)

    out = np.full(32, -1.0)
    run(k, 1, 32, out)
    assert (out[:16] == 0).all() and (out[16:] == -1).all()


def test_infinite_loop_is_stopped_quickly():
    @cuda.jit
    def k(out):
        i = 0
        while i < 10:
            out[0] = i

    t0 = time.perf_counter()
    with pytest.raises(errors.StepBudgetExceeded, match="infinite loop"):
        run(k, 1, 32, np.zeros(1))
    assert time.perf_counter() - t0 < 10


def test_step_budget_is_configurable():
    @cuda.jit
    def k(out, n):
        s = 0
        for j in range(n):
            s += j
        out[0] = s

    with pytest.raises(errors.StepBudgetExceeded):
        run(k, 1, 32, np.zeros(1, np.int64), 1000, max_steps=100)
    out = np.zeros(1, np.int64)
    run(k, 1, 32, out, 1000, max_steps=10_000)
    assert out[0] == 499500


@pytest.mark.parametrize(
    "grid,block,match",
    [
        (1, 1025, "1024 threads per block"),
        (1, (32, 33), "1024 threads per block"),
        (1, (1, 1, 65), "limit of 64"),
        ((1, 70000), 32, "65,535"),
        (0, 32, "≥ 1"),
        ((1, 2, 3, 4), 32, "1 to 3"),
        (1.5, 32, "int"),
    ],
)
def test_launches_the_hardware_refuses(grid, block, match):
    with pytest.raises(errors.LaunchConfigError, match=match):
        run(unguarded, grid, block, np.zeros(10**5))


def test_static_shared_over_48kb():
    @cuda.jit
    def k(out):
        sh = cuda.shared.array(12289, float32)
        sh[0] = 1

    with pytest.raises(errors.KernelError, match="48 KB"):
        run(k, 1, 32, np.zeros(1))


def test_dynamic_shared_over_48kb():
    with pytest.raises(errors.LaunchConfigError, match="48 KB"):
        run(unguarded, 1, 32, np.zeros(32), shared_bytes=49153)


def test_code_numba_refuses_names_its_line():
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        out[i] = out.no_such_attribute

    line = k.py_func.__code__.co_firstlineno + 3  # the refused statement, in this file
    with pytest.raises(errors.NotCompilable, match=f"line {line} .*\n.*no_such_attribute") as e:
        run(k, 1, 32, np.zeros(32))
    assert "Unknown attribute 'no_such_attribute'" in str(e.value)


def test_array_proxies_refuse_numpy_even_unchecked(monkeypatch):
    """Second line of defence: with numba's typing switched off, .data and methods still fail."""
    from gpulab.sim import typecheck

    monkeypatch.setattr(typecheck, "enabled", lambda: False)

    @cuda.jit
    def k(out, x):
        out.data[:] = 2 * x.data

    @cuda.jit
    def k2(out, x):
        out[0] = x.sum()

    for kern in (k, k2):
        with pytest.raises(errors.UnsupportedFeature, match="is not available in a kernel") as e:
            run(kern, 1, 32, np.zeros(32), np.ones(32))
        assert "`x.data`" in str(e.value) or "`x.sum`" in str(e.value)
        assert e.value.line is not None and e.value.threads


def test_wrong_number_of_arguments():
    with pytest.raises(errors.LaunchConfigError, match="takes 1 argument"):
        run(unguarded, 1, 32, np.zeros(32), np.zeros(32))


def test_session_stays_usable_after_errors():
    for _ in range(3):
        with pytest.raises(errors.KernelError):
            run(unguarded, 2, 32, np.zeros(40))
    out = np.zeros(64)
    run(unguarded, 2, 32, out)
    assert (out == 1).all()


SIDE = 32


def test_non_constant_shared_shape_is_refused_as_numba_does():
    """numba rejects (TILE, TILE + 1) as a shape (seen on the H200): a name in arithmetic is
    not folded to a constant; so must the simulator. (Literal arithmetic such as 32 + 1 is
    folded by CPython and accepted: tests/test_sim_features.py.)"""

    @cuda.jit
    def k(out):
        tile = cuda.shared.array((SIDE, SIDE + 1), float32)
        tile[0, 0] = 1

    with pytest.raises((errors.UnsupportedFeature, errors.NotCompilable), match="compile-time constant"):
        run(k, 1, 32, np.zeros(1))


def test_shuffle_reading_an_inactive_lane_is_caught():
    """Reported by the chapter 08 author: the value read from an inactive lane is undefined."""

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        v = x[i]
        if cuda.laneid < 16:
            v = cuda.shfl_down_sync(cuda.activemask(), v, 8)
        out[i] = v

    with pytest.raises(errors.WarpMaskError, match="reads lane 16"):
        run(k, 1, 32, np.arange(32, dtype=np.int32), np.zeros(32, np.int32))


def test_race_message_names_two_threads_of_different_warps():
    """Reported by the chapter 06 author: the message named the writer as its own reader."""

    @cuda.jit
    def k(out):
        sh = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        sh[t] = t
        cuda.syncthreads()
        v = sh[0] + sh[t] + 1  # element 0 is read by both warps
        sh[0] = v  # thread 0 (warp 0) writes it: warp 1 read it
        out[t] = v

    with pytest.raises(errors.SharedMemoryRace) as e:
        run(k, 1, 64, np.zeros(64))
    msg = str(e.value)
    assert "thread (0, 0, 0)" in msg and "(warp 1," in msg
