"""gpulab doctor: each known-bad combination is recognised from plain facts, and the real
command runs here and says what it runs on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpulab import doctor as d

GPU = dict(gpu="Tesla T4", compute_capability=(7, 5), backend="gpu")


def titles(findings):
    return " | ".join(f.title + " " + f.fix for f in findings)


def test_numpy_without_row_stack_and_numba_cuda_using_it_is_an_error():
    f = d.Facts(
        versions={"numpy": "2.5.0", "numba-cuda": "0.30.4"},
        numpy_has_row_stack=False,
        numba_cuda_uses_row_stack=True,
    )
    out = d.diagnose(f)
    assert [x.level for x in out] == ["error"]
    assert "numpy<2.5" in out[0].fix
    # either side fixed -> nothing to report
    assert not d.check_numpy_row_stack(d.Facts(numpy_has_row_stack=True, numba_cuda_uses_row_stack=True))
    assert not d.check_numpy_row_stack(d.Facts(numpy_has_row_stack=False, numba_cuda_uses_row_stack=False))


def test_the_row_stack_mechanism_is_real_here():
    """What the check guards against: without np.row_stack numba-cuda's array module fails to
    import (it is imported at the first kernel compile)."""
    code = "import numpy as np; del np.row_stack; import numba.cuda.np.arrayobj"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if d._numba_cuda_uses_row_stack():
        assert p.returncode != 0 and "row_stack" in p.stderr
    else:
        assert p.returncode == 0


@pytest.mark.parametrize(
    "toolkit,driver,nvjitlink,bad",
    [
        ((12, 5), (12, 4), False, True),  # Colab, Feb 2025 (colabtools#5081)
        ((12, 5), (12, 4), True, False),  # nvJitLink links the PTX itself
        ((12, 4), (12, 4), False, False),
        ((12, 2), (12, 4), False, False),
        ((13, 0), (12, 8), None, True),
    ],
)
def test_ptx_version_mismatch(toolkit, driver, nvjitlink, bad):
    f = d.Facts(toolkit_cuda=toolkit, driver_cuda=driver, have_nvjitlink=nvjitlink, **GPU)
    out = d.check_ptx_version(f)
    assert bool(out) == bad
    if bad:
        assert out[0].level == "error"
        assert "numba-cuda[cu12]" in out[0].fix and "NUMBA_CUDA_ENABLE_PYNVJITLINK" in out[0].fix
        assert "numba-cuda#120" in out[0].source and "colabtools#5081" in out[0].source


def test_no_gpu_means_no_ptx_finding():
    assert not d.check_ptx_version(d.Facts(toolkit_cuda=(12, 5), driver_cuda=(12, 4)))


@pytest.mark.parametrize(
    "msg,expect",
    [
        (
            "LinkerError: [222] Call to cuLinkAddData results in CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n"
            "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.5; current version is '8.4'",
            "numba-cuda[cu12]",
        ),
        ("AttributeError: module 'numpy' has no attribute 'row_stack'", "numpy<2.5"),
        ("CudaAPIError: [700] something else", "backend='sim'"),
    ],
)
def test_failed_test_kernel_is_explained(msg, expect):
    out = d.check_smoke_error(d.Facts(smoke_error=msg, **GPU))
    assert len(out) == 1 and out[0].level == "error" and expect in out[0].fix


def test_jupyter_book_2_and_untested_versions_warn():
    out = d.diagnose(d.Facts(versions={"jupyter-book": "2.0.1", "numba": "0.70.0", "numba-cuda": "0.31.0"}))
    assert all(x.level == "warning" for x in out)
    t = titles(out)
    assert ",<2" in t and "numba 0.70.0" in t and "numba-cuda 0.31.0" in t
    assert not d.diagnose(
        d.Facts(versions={"jupyter-book": "1.0.4.post1", "numba": "0.68.1", "numba-cuda": "0.30.4"})
    )


def test_cuda_bindings_newer_than_driver_warns():
    f = d.Facts(versions={"cuda-bindings": "13.5.0"}, driver_cuda=(12, 4), **GPU)
    out = d.check_bindings_vs_driver(f)
    assert out and "numba-cuda[cu12]" in out[0].fix
    f.versions["cuda-bindings"] = "12.9.10"
    assert not d.check_bindings_vs_driver(f)


def test_collect_sees_this_environment():
    f = d.collect(smoke=False)
    assert f.versions["numpy"] == np.__version__
    assert f.numpy_has_row_stack == hasattr(np, "row_stack")
    from numba import cuda

    if not cuda.is_available():
        assert f.gpu is None and f.backend in ("sim", "numba-sim")


def test_report_mentions_versions_backend_and_gpu():
    f = d.Facts(
        versions={"numpy": "2.4.6"}, driver_cuda=(12, 4), toolkit_cuda=(12, 5), have_nvjitlink=False, **GPU
    )
    text = d.report(f, d.diagnose(f))
    assert "2.4.6" in text and "Tesla T4" in text and "compute capability 7.5" in text
    assert "backend     gpu" in text and "[ERROR]" in text


def _run(args, **kw):
    env = dict(os.environ)
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, **kw)


def test_python_m_gpulab_runs_and_exits_0_here():
    p = _run([sys.executable, "-m", "gpulab", "--no-smoke"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "numpy" in p.stdout and np.__version__ in p.stdout and "backend" in p.stdout
    import gpulab

    assert gpulab.describe() in p.stdout  # the one line `import gpulab` prints is in the report


def test_doctor_exits_1_and_names_the_fix_when_numpy_lacks_row_stack():
    if not d._numba_cuda_uses_row_stack():
        pytest.skip("installed numba-cuda does not refer to np.row_stack")
    code = (
        "import numpy as np; del np.row_stack\n"
        "from gpulab.doctor import main; raise SystemExit(main(['doctor', '--no-smoke']))"
    )
    p = _run([sys.executable, "-c", code])
    assert p.returncode == 1 and "numpy<2.5" in p.stdout, p.stdout + p.stderr


def test_console_script():
    exe = Path(sys.executable).parent / "gpulab"
    if not exe.exists():
        pytest.skip("gpulab is not installed as a package in this environment (pip install -e .)")
    p = _run([str(exe), "doctor", "--no-smoke"])
    assert p.returncode == 0 and "gpulab doctor" in p.stdout


def test_ipywidgets_8_on_colab_is_an_error_and_7_is_fine():
    """Colab's frontend draws ipywidgets 7 only (googlecolab/colabtools#3020)."""
    out = d.diagnose(d.Facts(versions={"ipywidgets": "8.1.9"}, on_colab=True))
    assert [x.level for x in out] == ["error"] and "7.7.1" in out[0].fix
    assert not d.check_colab_widgets(d.Facts(versions={"ipywidgets": "7.7.1"}, on_colab=True))
    assert not d.check_colab_widgets(d.Facts(versions={"ipywidgets": "8.1.9"}, on_colab=False))


def test_cuda_wheels_are_explained_without_a_gpu():
    """Colab's GPU image after the install cell (numba-cuda 0.30, CUDA 12.8 wheels, nvJitLink):
    the report says which toolkit compiles and that nvJitLink links."""
    f = d.Facts(
        versions={
            "numba-cuda": "0.30.4",
            "nvidia-cuda-nvcc-cu12": "12.8.93",
            "nvidia-nvjitlink-cu12": "12.8.93",
        }
    )
    text = "\n".join(d.cuda_wheels(f))
    assert "CUDA 12.8" in text and "nvJitLink 12.8.93" in text
    old = d.Facts(versions={"numba-cuda": "0.11.0", "nvidia-cuda-nvcc-cu12": "12.8.93"})
    assert "UNSUPPORTED_PTX_VERSION" in "\n".join(d.cuda_wheels(old))
    assert "toolkit     CUDA 12.8" in d.report(f, [])


def test_cuda_13_wheels_and_numbas_own_answer_count_as_nvjitlink():
    """The H200 image has CUDA 13's wheels (nvidia-nvjitlink, no -cu12): the run recorded in
    gpulab/data/results/chapters_from_wheel_gpu.json reported 'no nvJitLink' there before this."""
    f = d.Facts(versions={"numba-cuda": "0.30.4", "nvidia-nvjitlink": "13.0.88"})
    assert "nvJitLink 13.0.88" in "\n".join(d.cuda_wheels(f))
    g = d.Facts(versions={"numba-cuda": "0.30.4"}, have_nvjitlink=True)
    assert "numba-cuda links kernels itself" in "\n".join(d.cuda_wheels(g))
