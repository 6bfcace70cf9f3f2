"""On a real GPU: backend="gpu" gives the simulator's results, updates arrays in place, times
the kernel with CUDA events. Skips cleanly where there is no GPU (as in CI)."""
import sys
from pathlib import Path

import numpy as np
import pytest

import gpulab

pytestmark = pytest.mark.skipif(not gpulab.gpu_available(), reason="no CUDA GPU on this machine")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks" / "fidelity"))


def _cases():
    import kernels
    return kernels.cases()


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_gpu_equals_sim(case):
    on_gpu, on_sim = case.make(), case.make()
    rep = gpulab.launch(case.kernel, case.grid, case.block, *on_gpu, backend="gpu")
    gpulab.launch(case.kernel, case.grid, case.block, *on_sim, backend="sim")
    assert rep.backend == "gpu" and rep.kernel_s > 0
    for g, s in zip(on_gpu, on_sim):
        if isinstance(g, np.ndarray):
            np.testing.assert_allclose(g, s, rtol=2e-6, atol=1e-6)


def test_auto_uses_the_gpu():
    assert gpulab.BACKEND == "gpu" and "GPU" in gpulab.describe()
