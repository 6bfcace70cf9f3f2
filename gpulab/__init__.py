"""gpulab: GPU architecture you can run.

``gpulab.launch(kernel, grid, block, *args)`` runs a ``numba.cuda`` kernel on a GPU when there
is one and otherwise on gpulab's SIMT simulator, and returns a report whose counters carry
Nsight Compute's metric names. ``import gpulab`` prints one line saying which it will be.
"""

import os as _os

from . import errors, metrics  # noqa: F401
from .errors import KernelError  # noqa: F401
from .launch import gpu_available, last_report, launch  # noqa: F401
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


def simulate(on=True, *, max_steps=None, timeout_s=None):
    """Run ordinary numba.cuda programs on gpulab's simulator: ``kernel[grid, block](...)``,
    ``cuda.to_device``, ``device_array``, ``copy_to_host``, streams and events (no-ops), each
    launch through ``gpulab.launch`` with every check (``gpulab.last_report()``). On without a
    GPU; with one, ``simulate()`` (or ``GPULAB_SIMULATE=1``) asks for it and ``simulate(False)``
    gives numba.cuda back. Returns whether launches now run on the simulator."""
    global BACKEND
    from .sim import numba_api

    if not on:
        numba_api.uninstall()
        BACKEND = "gpu" if gpu_available() else "sim"
        return False
    done = numba_api.install(max_steps=max_steps, timeout_s=timeout_s)
    BACKEND = "sim" if done else BACKEND
    return done


if BACKEND == "sim" or _os.environ.get("GPULAB_SIMULATE") == "1":
    simulate()


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
    if gpu_available():
        return f"gpulab {__version__}: CPU: gpulab simulator (asked for; a GPU is present)"
    return f"gpulab {__version__}: CPU: gpulab simulator (no GPU found)"


if _os.environ.get("GPULAB_QUIET") != "1":
    print(describe())

# inside a Jupyter kernel: the book's figure style, SVG figures, widgets' starting states
from . import show  # noqa: E402
from .show import install_line, show_source  # noqa: E402,F401

show.setup_notebook()
