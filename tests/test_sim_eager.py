"""Kernels and device functions with explicit signatures run on the simulator without a GPU
(gpulab/sim/eager.py), with numba's typing of the declared types."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import cuda, float32, void

import gpulab
from gpulab import errors

pytestmark = pytest.mark.skipif(gpulab.BACKEND != "sim", reason="about machines without a GPU")


@cuda.jit("float32(float32, float32)", device=True)
def fma_dev(a, b):
    return a * b + float32(1.0)


@cuda.jit("void(float32[:], float32, float32[:], float32[:])")
def axpy_sig(out, a, x, y):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit(void(float32[:], float32[:]))
def twice_typed(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = fma_dev(x[i], float32(2.0)) - float32(1.0)


@cuda.jit(["void(float64[:], float64)", "void(int32[:], int32)"])
def fill_many(out, v):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = v


def test_string_signature_kernel_runs_like_a_lazy_one():
    x, y = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
    out = np.zeros(100, np.float32)
    rep = gpulab.launch(axpy_sig, 2, 64, out, 3.0, x, y)
    assert rep.backend == "sim"
    assert np.array_equal(out, np.float32(3.0) * x + y)


def test_scalar_argument_takes_the_declared_type():
    """a is declared float32: 1/3 is rounded to float32 before the kernel sees it, as on a GPU."""
    x, y = np.ones(32, np.float32), np.zeros(32, np.float32)
    out = np.zeros(32, np.float32)
    gpulab.launch(axpy_sig, 1, 32, out, 1 / 3, x, y)
    assert out[0] == np.float32(1 / 3)


def test_numba_types_signature_and_device_function_with_signature():
    x = np.arange(40, dtype=np.float32)
    out = np.zeros(40, np.float32)
    gpulab.launch(twice_typed, 2, 32, out, x)
    assert np.array_equal(out, 2 * x)


def test_list_of_signatures_picks_the_matching_one():
    a, b = np.zeros(32, np.float64), np.zeros(32, np.int32)
    gpulab.launch(fill_many, 1, 32, a, 2.5)
    gpulab.launch(fill_many, 1, 32, b, 7)
    assert (a == 2.5).all() and (b == 7).all()


def test_arguments_that_do_not_match_the_signature_are_refused():
    with pytest.raises(errors.LaunchConfigError, match="No matching definition.*`x` is array"):
        gpulab.launch(axpy_sig, 1, 32, np.zeros(32, np.float32), 1.0, np.zeros(32), np.zeros(32, np.float32))


def test_typing_errors_appear_at_definition_as_on_a_gpu():
    with pytest.raises(errors.NotCompilable, match="Unknown attribute 'data'"):

        @cuda.jit("void(float32[:])")
        def bad(out):
            out.data[0] = 1


def test_device_function_signature_is_checked_at_definition():
    with pytest.raises(Exception, match="(?i)typing|no implementation|cannot"):

        @cuda.jit("float32(float32[:])", device=True)
        def bad_dev(a):
            return a.no_such_attribute


def test_kernels_must_return_void():
    with pytest.raises(TypeError, match="void return type"):
        cuda.jit("int32(int32[:])")(lambda a: 0)


SCRIPT = textwrap.dedent("""
    import numpy as np
    from numba import cuda
    {before}
    @cuda.jit("void(float32[:], float32)")
    def k(out, v):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = v
    {after}
    out = np.zeros(8, np.float32)
    gpulab.launch(k, 1, 8, out, 1.5)
    print("sum", out.sum())
""")


def _run(tmp_path, before, after):
    env = dict(os.environ, GPULAB_QUIET="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT.format(before=before, after=after))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)


def test_fresh_process_import_gpulab_first(tmp_path):
    res = _run(tmp_path, "import gpulab", "")
    assert res.returncode == 0, res.stderr
    assert "sum 12.0" in res.stdout


def test_fresh_process_signature_before_import_is_numbas_error(tmp_path):
    """Documented limit: before ``import gpulab`` numba's own decorator needs a driver."""
    res = _run(tmp_path, "", "import gpulab")
    assert res.returncode != 0 and "CudaSupportError" in res.stderr


@cuda.jit("float32(float32)", device=True)
def third32(v):
    return v / 3.0  # float64 arithmetic, then the declared float32 result


@cuda.jit
def uses_third32(out, x):
    i = cuda.grid(1)
    out[i] = third32(x[i])


def test_device_function_signature_converts_arguments_and_result():
    x = np.full(32, 1.0, np.float64)
    out = np.zeros(32, np.float64)
    gpulab.launch(uses_third32, 1, 32, out, x)
    assert out[0] == np.float64(np.float32(1.0 / 3.0)) and out[0] != 1.0 / 3.0


def test_import_after_a_signature_failure_says_what_to_do(tmp_path):
    script = tmp_path / "session.py"
    script.write_text(
        textwrap.dedent("""
        import sys
        from numba import cuda
        try:
            @cuda.jit("void(float32[:])")
            def k(out):
                out[0] = 1
        except Exception as exc:        # what an interactive session keeps as sys.last_value
            sys.last_value = exc
        import gpulab
    """)
    )
    env = dict(os.environ, GPULAB_QUIET="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "CudaSupportError" in res.stderr and "`import gpulab` before defining" in res.stderr
