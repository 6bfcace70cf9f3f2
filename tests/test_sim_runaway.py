"""A runaway kernel stops within 5 s by default (2 cores), with an error naming the loop's line;
legitimate launches (the longest in the chapters takes well under a second) are not stopped."""

import time

import numpy as np
import pytest
from numba import cuda

import gpulab
from gpulab import errors


def run(kernel, grid, block, *args, **kw):
    return gpulab.launch(kernel, grid, block, *args, backend="sim", **kw)


@cuda.jit
def forgot_increment(out):
    i = 0
    while i < 10:
        out[0] = i


@cuda.jit
def empty_body(out, n):
    i = cuda.grid(1)
    while n > 0:
        pass
    out[i] = 1


@cuda.jit
def inner_loop_fine_outer_forever(out, n):
    i = cuda.grid(1)
    k = 0
    while k < n:
        for j in range(4):
            out[i] += j
        k -= 1


@cuda.jit
def wide_runaway(out):
    i = cuda.grid(1)
    x = 1.0
    while x > 0:
        x = x * 1.0000001
    out[i] = x


@pytest.mark.parametrize(
    "kernel,args,grid,block,loop_offset",
    [
        (forgot_increment, (np.zeros(1),), 1, 32, 3),  # co_firstlineno: the decorator
        (empty_body, (np.zeros(32), 1), 1, 32, 3),
        (inner_loop_fine_outer_forever, (np.zeros(32), 1), 1, 32, 4),
        (wide_runaway, (np.zeros(2**16),), 256, 256, 4),
    ],
)
def test_runaway_loop_stops_within_5s_naming_the_loop(kernel, args, grid, block, loop_offset):
    # the budget is CPU time (a busy machine must not stop a correct kernel): measure CPU time
    t0 = time.process_time()
    with pytest.raises(errors.StepBudgetExceeded) as e:
        run(kernel, grid, block, *args)
    took = time.process_time() - t0
    assert took < 5.0, f"took {took:.1f} s of CPU time"
    assert e.value.line == kernel.py_func.__code__.co_firstlineno + loop_offset
    assert "while" in e.value.source and "loop" in str(e.value)


def test_default_budget_is_far_above_the_longest_chapter_launch():
    """Chapters' longest simulated launch was 0.6 s of simulation on this 2-core machine
    (GPULAB_LAUNCH_LOG over chapters 02-10 and the homework); the default leaves 6x."""
    import inspect

    default = inspect.signature(gpulab.launch).parameters["timeout_s"].default
    assert 3.0 <= default <= 4.5


def test_a_long_legitimate_loop_is_not_stopped():
    @cuda.jit
    def long_loop(out, n):
        i = cuda.grid(1)
        acc = 0
        k = 0
        while k < n:
            acc += k % 7
            k += 1
        out[i] = acc

    out = np.zeros(64, np.int64)
    run(long_loop, 1, 64, out, 5000)
    assert out[0] == sum(k % 7 for k in range(5000))


def test_the_budget_is_cpu_time_not_the_wall_clock(monkeypatch):
    """A busy machine (wall clock running, this process not) must not stop a correct kernel:
    with the process's CPU clock frozen, a launch far past its wall-clock budget finishes; with
    the real CPU clock, the same budget stops it."""

    @cuda.jit
    def long_loop(out, n):
        i = cuda.grid(1)
        acc = 0
        k = 0
        while k < n:
            acc += k % 7
            k += 1
        out[i] = acc

    import gpulab.sim.context as context

    out = np.zeros(64, np.int64)
    with pytest.raises(errors.StepBudgetExceeded, match="CPU time"):
        gpulab.launch(long_loop, 1, 64, out, 5000, backend="sim", timeout_s=0.01)
    monkeypatch.setattr(context.time, "process_time", lambda: 0.0)
    gpulab.launch(long_loop, 1, 64, out, 5000, backend="sim", timeout_s=0.01)
    assert out[0] == sum(k % 7 for k in range(5000))
