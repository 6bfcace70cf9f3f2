"""gpulab: GPU architecture you can run.

``gpulab.launch(kernel, grid, block, *args)`` runs a ``numba.cuda`` kernel on a GPU when there
is one and otherwise on gpulab's SIMT simulator, and returns a report whose counters carry
Nsight Compute's metric names. ``import gpulab`` prints one line saying which it will be.
"""

import os as _os

from . import errors, metrics  # noqa: F401
from .errors import KernelError  # noqa: F401
from .launch import gpu_available, launch  # noqa: F401
from .report import Report  # noqa: F401


def predict(kernel, grid, block, *args, gpu="H200", **options):
    """Predicted time of ``kernel[grid, block](*args)`` on ``gpu`` ("H200", "A100", "T4"),
    from a simulation of a sample of its blocks on this CPU: a ``gpulab.perf.Prediction``
    (time, limiter, speed-of-light breakdown, per-line costs). See :mod:`gpulab.perf`."""
    from .perf import predict as _predict

    return _predict(kernel, grid, block, *args, gpu=gpu, **options)


__version__ = "0.1.0"

BACKEND = "gpu" if gpu_available() else "sim"

if BACKEND == "sim":
    # without a GPU, @cuda.jit("signature") must not ask numba for a device (gpulab/sim/eager.py)
    from .sim import eager as _eager

    _eager.install()
    _eager.explain_earlier_failure()


def describe():
    """One line: what ``backend="auto"`` runs on here."""
    if BACKEND == "gpu":
        try:
            from numba import cuda

            name = cuda.get_current_device().name
            name = name.decode() if isinstance(name, bytes) else name
        except Exception:
            name = "NVIDIA GPU"
        return f"gpulab {__version__}: GPU: {name} (numba.cuda)"
    return f"gpulab {__version__}: CPU: gpulab simulator (no GPU found)"


if _os.environ.get("GPULAB_QUIET") != "1":
    print(describe())

# inside a Jupyter kernel: the book's figure style, SVG figures, widgets' starting states
from . import show  # noqa: E402
from .show import install_line, show_source  # noqa: E402,F401

show.setup_notebook()
