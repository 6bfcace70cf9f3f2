"""The simulator runs only what numba.cuda compiles: numba's own CUDA front end types each kernel
on the CPU before a launch (gpulab/sim/typecheck.py), and array proxies refuse what numba refuses."""

import importlib
import pkgutil
import time

import numpy as np
import pytest
from numba import cuda

import gpulab
import gpulab.kernels
from gpulab import errors
from gpulab.sim import typecheck

# argument types of every kernel in gpulab.kernels, as the book launches them
KERNEL_TYPES = {
    "divergence.paths": "void(float32[::1], float32[::1], int64)",
    "divergence.shade": "void(float32[::1], float32[::1])",
    "divergence.varying_loop": "void(float32[::1], int32[::1], int32[::1])",
    "histogram.histogram_global": "void(int32[::1], uint8[::1])",
    "histogram.histogram_shared": "void(int32[::1], uint8[::1])",
    "image.blur_naive": "void(float32[:, ::1], float32[:, ::1])",
    "image.blur_tiled": "void(float32[:, ::1], float32[:, ::1])",
    "image.blur_tiled_rows": "void(float32[:, ::1], float32[:, ::1])",
    "image.grey_aos": "void(float32[::1], float32[:, ::1])",
    "image.grey_aos_staged": "void(float32[::1], float32[::1])",
    "image.grey_soa": "void(float32[::1], float32[:, ::1])",
    "indirect.cull": "void(int32[::1], int32[::1], float32[::1], float64)",
    "indirect.shade_all": "void(float32[::1], float32[::1], float64)",
    "indirect.shade_survivors": "void(float32[::1], int32[::1], int32[::1], float32[::1])",
    "image.invert_contrast": "void(float32[:, :, ::1], float32[:, :, ::1], float32)",
    "image.invert_contrast_unguarded": "void(float32[:, :, ::1], float32[:, :, ::1], float32)",
    "indexing.who_1d": "void(int32[:, ::1], int32[:, ::1], int64)",
    "indexing.who_2d": "void(int32[:, ::1], int32[:, ::1], int32[:, ::1], int32[:, ::1], int64, int64)",
    "matmul.matmul_naive": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "matmul.matmul_tiled": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "matmul.matmul_tiled_one_barrier": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "memory.copy": "void(float32[::1], float32[::1])",
    "memory.copy_grid_stride": "void(float32[::1], float32[::1])",
    "memory.copy_offset": "void(float32[::1], float32[::1], int64)",
    "memory.copy_streaming": "void(float32[::1], float32[::1])",
    "memory.copy_strided": "void(float32[::1], float32[::1], int64)",
    "memory.gather": "void(float32[::1], float32[::1], int64[::1])",
    "memory.poly_const": "void(float32[::1], float32[::1])",
    "memory.poly_global": "void(float32[::1], float32[::1], float32[::1])",
    "memory.scale_rows": "void(float32[:, ::1], float32[:, ::1], float32)",
    "memory.scale_rows_wrong_order": "void(float32[:, ::1], float32[:, ::1], float32)",
    "reduce.reduce_sum": "void(float32[::1], float32[::1])",
    "reduce.reduce_sum_barrier_in_if": "void(float32[::1], float32[::1])",
    "scan.scan_apply": "void(int32[::1], int32[::1], int32[::1])",
    "scan.scan_reduce": "void(int32[::1], int32[::1])",
    "scan.scan_totals": "void(int32[::1])",
    "sgemm.sgemm_1d": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "sgemm.sgemm_2d": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "sgemm.sgemm_prefetch": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "sgemm.sgemm_vec": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "stalls.conflicted_stores": "void(float32[::1], int64)",
    "stalls.dependent_loads": "void(int64[::1], int64[::1], int64)",
    "stalls.one_warp_works": "void(float32[::1], int64)",
    "transpose.row_sums_shared": "void(float32[::1], float32[:, ::1])",
    "transpose.transpose_naive": "void(float32[:, ::1], float32[:, ::1])",
    "transpose.transpose_padded": "void(float32[:, ::1], float32[:, ::1])",
    "transpose.transpose_padded_wide": "void(float32[:, ::1], float32[:, ::1])",
    "transpose.transpose_shared": "void(float32[:, ::1], float32[:, ::1])",
    "warp.block_scan": "void(float32[::1], float32[::1])",
    "warp.block_sum_shfl": "void(float32[::1], float32[::1])",
    "warp.block_sum_tree": "void(float32[::1], float32[::1])",
    "warp.compact_positive": "void(float32[::1], float32[::1], int32[::1])",
    "warp.device_sum": "void(float32[::1], float32[::1])",
    "warp.device_sum_pairs": "void(complex64[::1], float32[::1])",
    "warp.article_reduce_as_written": "void(float32[::1], float32[::1])",
    "warp.article_reduce_barrier_moved": "void(float32[::1], float32[::1])",
    "warp.article_scan_as_written": "void(float32[::1], float32[::1])",
    "warp.article_scan_fixed": "void(float32[::1], float32[::1])",
    "warp.shuffle_loop": "void(float32[::1], int32[::1], int64, float32[::1])",
    "warp.warp_allsum_xor": "void(float32[::1], float32[::1])",
    "warp.warp_scan_kernel": "void(float32[::1], float32[::1], int64)",
    "warp.warp_sum_down": "void(float32[::1], float32[::1])",
}


def _book_kernels():
    found = {}
    for info in pkgutil.iter_modules(gpulab.kernels.__path__):
        mod = importlib.import_module(f"gpulab.kernels.{info.name}")
        for name, value in vars(mod).items():
            if (
                type(value).__name__ == "CUDADispatcher"
                and value.py_func.__module__ == mod.__name__
                and not value.targetoptions.get("device")
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_book_kernel_typechecks_with_numba():
    from numba.cuda.core import sigutils

    kernels = _book_kernels()
    assert len(kernels) >= 45
    missing = sorted(set(kernels) - set(KERNEL_TYPES))
    assert not missing, f"add the argument types of {missing} to KERNEL_TYPES"
    for name, kernel in kernels.items():
        argtypes, _ = sigutils.normalize_signature(KERNEL_TYPES[name])
        typecheck.check(kernel.py_func, argtypes)  # raises NotCompilable if numba refuses


@cuda.jit
def axpy_escapes(out, a, x, y):
    out.data[:] = a * x.data + y.data


@cuda.jit
def imports_numpy(out, x):
    import numpy

    out[0] = numpy.float32(x[0])


@cuda.jit
def calls_sum_method(out, x):
    i = cuda.grid(1)
    out[i] = x.sum()


@cuda.jit
def adds_array_to_scalar(out, x):
    i = cuda.grid(1)
    out[i] = x + 1.0


def _args():
    return np.zeros(64, np.float32), np.ones(64, np.float32)


def test_escaping_through_data_is_refused_naming_the_line():
    out, x = _args()
    with pytest.raises(errors.NotCompilable) as e:
        gpulab.launch(axpy_escapes, 1, 64, out, np.float32(2), x, x, backend="sim")
    assert e.value.line == axpy_escapes.py_func.__code__.co_firstlineno + 2
    assert "Unknown attribute 'data'" in str(e.value) and "out.data[:]" in str(e.value)
    assert not out.any()  # nothing ran


@pytest.mark.parametrize(
    "kernel,words",
    [
        (imports_numpy, "IMPORT_NAME"),
        (calls_sum_method, "sum"),
        (adds_array_to_scalar, "array(float32, 1d, C)"),
    ],
)
def test_code_numba_refuses_fails_before_running(kernel, words):
    out, x = _args()
    with pytest.raises(errors.KernelError) as e:
        gpulab.launch(kernel, 1, 64, out, x, backend="sim")
    assert e.value.line is not None and words in str(e.value)
    assert not out.any()


def test_numba_typing_uses_this_launch_argument_types():
    @cuda.jit
    def store_int(out, v):
        i = cuda.grid(1)
        out[i] = v[i] // 2

    out = np.zeros(32, np.int32)
    gpulab.launch(store_int, 1, 32, out, np.arange(32, dtype=np.int32), backend="sim")
    assert out[5] == 2
    with pytest.raises(errors.NotCompilable, match="complex64"):  # // on complex: refused
        gpulab.launch(store_int, 1, 32, out, np.zeros(32, np.complex64), backend="sim")


def test_typing_is_cached_per_kernel_and_types(monkeypatch):
    calls = []
    real = typecheck._type_only
    monkeypatch.setattr(typecheck, "_type_only", lambda fn, t: (calls.append(t), real(fn, t)))

    @cuda.jit
    def scale(out, a, s):
        i = cuda.grid(1)
        out[i] = a[i] * s

    a = np.ones(32, np.float32)
    for _ in range(5):
        gpulab.launch(scale, 1, 32, np.zeros(32, np.float32), a, 2.0, backend="sim")
    assert len(calls) == 1
    gpulab.launch(scale, 1, 32, np.zeros(32, np.float64), a, 2.0, backend="sim")
    assert len(calls) == 2
    started = time.perf_counter()
    typecheck.check(scale.py_func, typecheck.argument_types((np.zeros(32, np.float32), a, 2.0)))
    assert time.perf_counter() - started < 0.005


def test_device_functions_are_typed_through_the_kernel():
    @cuda.jit(device=True)
    def half(v):
        return v.data  # refused, and only numba's typing of the caller sees it

    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        out[i] = half(x)

    out, x = _args()
    with pytest.raises(errors.NotCompilable, match="data"):
        gpulab.launch(k, 1, 64, out, x, backend="sim")


def test_a_failure_of_the_check_itself_warns_and_runs(monkeypatch):
    """An ImportError in gpulab's set-up is not numba's verdict: the kernel runs, with a warning."""

    def broken(fn, argtypes):
        raise ImportError("no module named numba.cuda.something")

    monkeypatch.setattr(typecheck, "_type_only", broken)

    @cuda.jit
    def fill(out):
        out[cuda.grid(1)] = 3

    out = np.zeros(32, np.int32)
    with pytest.warns(UserWarning, match="could not type-check `fill`"):
        gpulab.launch(fill, 1, 32, out, backend="sim")
    assert (out == 3).all()
