"""On a real GPU: backend="gpu" gives the simulator's results, updates arrays in place, times
the kernel with CUDA events. Skips cleanly where there is no GPU (as in CI)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import gpulab

needs_gpu = pytest.mark.skipif(not gpulab.gpu_available(), reason="no CUDA GPU on this machine")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from blind_runner import kernels_of  # noqa: E402


def _cases():
    return kernels_of("fidelity").cases()  # benchmarks/fidelity/kernels.py, under its own name


@needs_gpu
@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_gpu_equals_sim(case):
    on_gpu, on_sim = case.make(), case.make()
    rep = gpulab.launch(case.kernel, case.grid, case.block, *on_gpu, backend="gpu")
    gpulab.launch(case.kernel, case.grid, case.block, *on_sim, backend="sim")
    assert rep.backend == "gpu" and rep.kernel_s > 0
    for g, s in zip(on_gpu, on_sim):
        if isinstance(g, np.ndarray):
            np.testing.assert_allclose(g, s, rtol=2e-6, atol=1e-6)


@needs_gpu
def test_auto_uses_the_gpu():
    assert gpulab.BACKEND == "gpu" and "GPU" in gpulab.describe()


class _FakeClock:
    """A host clock, CUDA events on it, and a kernel whose first launch would compile."""

    def __init__(self):
        self.now = 0.0

    def event(self):
        clock = self

        class Event:
            def record(self):
                self.t = clock.now

            def synchronize(self):
                pass

        return Event()

    def event_elapsed_time(self, a, b):
        return (b.t - a.t) * 1e3  # milliseconds, like numba.cuda


class _FakeKernel:
    COMPILE_S, RUN_S = 0.8, 2e-5

    def __init__(self, clock):
        self.clock, self.compiled, self.launched = clock, set(), []

    def typeof_pyval(self, a):
        return type(a).__name__

    def compile(self, argtypes):
        if argtypes not in self.compiled:  # numba compiles once per signature
            self.clock.now += self.COMPILE_S
            self.compiled.add(argtypes)

    def __getitem__(self, config):
        def run(*args):
            self.compile(tuple(self.typeof_pyval(a) for a in args))
            self.clock.now += self.RUN_S
            self.launched.append((config, args))

        return run


def test_kernel_time_excludes_the_first_launch_compile():
    from gpulab.backends import gpu

    clock = _FakeClock()
    kern = _FakeKernel(clock)
    args = (np.zeros(4), 1.0)
    compile_s, kernel_s = gpu.timed_launch(clock, kern, (1, 1, 1), (32, 1, 1), args, 0)
    assert kernel_s == pytest.approx(_FakeKernel.RUN_S)
    assert compile_s >= 0 and len(kern.launched) == 1
    assert kern.launched[0][0] == ((1, 1, 1), (32, 1, 1), 0, 0)
    compile_s, kernel_s = gpu.timed_launch(clock, kern, (1, 1, 1), (32, 1, 1), args, 0)
    assert kernel_s == pytest.approx(_FakeKernel.RUN_S)  # the second launch: same time


def test_kernels_with_declared_signatures_are_not_recompiled():
    from gpulab.backends import gpu

    class Disabled(_FakeKernel):
        def compile(self, argtypes):
            raise RuntimeError("Compilation disabled")

    clock = _FakeClock()
    kern = Disabled(clock)
    kern.compile = Disabled.compile.__get__(kern)
    kern.__class__.__getitem__ = lambda self, cfg: lambda *a: setattr(clock, "now", clock.now + 1e-5)
    compile_s, kernel_s = gpu.timed_launch(clock, kern, (1, 1, 1), (32, 1, 1), (1.0,), 0)
    assert kernel_s == pytest.approx(1e-5)
