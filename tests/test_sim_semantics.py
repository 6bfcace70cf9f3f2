"""Small semantics the simulator must share with numba.cuda (issue 14, item 17)."""

import numpy as np
import pytest
from numba import cuda

import gpulab
from gpulab import errors
from gpulab.sim.context import Context
from gpulab.sim.intrinsics import SimCuda
from gpulab.sim.layout import Layout


@cuda.jit
def nan_extrema(out, vals):
    i = cuda.grid(1)
    if i < vals.shape[0]:
        cuda.atomic.nanmax(out, 0, vals[i])
        cuda.atomic.nanmin(out, 1, vals[i])
        cuda.atomic.max(out, 2, vals[i])
        cuda.atomic.min(out, 3, vals[i])


def test_nanmax_and_nanmin_ignore_nan():
    vals = np.array([np.nan, 3.0, -2.0, np.nan, 7.5, 1.0], np.float32)
    out = np.array([np.nan, np.nan, -np.inf, np.inf], np.float32)
    gpulab.launch(nan_extrema, 1, 32, out, vals, backend="sim")
    # nanmax/nanmin: NaN is missing, in memory and in the values (numba's documented rule)
    assert out[0] == 7.5 and out[1] == -2.0
    # max/min (numba-cuda's CAS loop): a NaN value leaves memory alone
    assert out[2] == 7.5 and out[3] == -2.0


def test_atomic_max_keeps_a_nan_already_in_memory():
    out = np.array([np.nan, 0, 0, 0], np.float32)
    gpulab.launch(
        nan_extrema, 1, 32, np.array([np.nan] * 4, np.float32), np.ones(3, np.float32), backend="sim"
    )
    res = np.array([np.nan, np.nan, np.nan, np.nan], np.float32)
    gpulab.launch(nan_extrema, 1, 32, res, np.array([1, 5, 2], np.float32), backend="sim")
    assert res[0] == 5 and res[1] == 1 and np.isnan(res[2]) and np.isnan(res[3])
    del out


@pytest.mark.parametrize("name", ["grid", "gridsize"])
@pytest.mark.parametrize("ndim", [0, 4, 2.0])
def test_grid_of_more_than_three_dimensions_is_an_error(name, ndim):
    ctx = Context(Layout((2, 1, 1), (32, 1, 1)), "k", 0, 1000, None)
    sim = SimCuda(ctx, 0)
    with pytest.raises(errors.KernelPythonError, match=f"cuda.{name}.*1, 2 or 3"):
        getattr(sim, name)(ndim)


def test_grid4_in_a_kernel_is_refused_naming_the_line():
    @cuda.jit
    def k(out):
        x, y, z, w = cuda.grid(4)
        out[0] = x

    with pytest.raises(errors.KernelError) as e:
        gpulab.launch(k, 1, 32, np.zeros(1), backend="sim")
    assert e.value.line == k.py_func.__code__.co_firstlineno + 2
