"""numba.cuda on a real GPU: copy in, compile, launch timed with CUDA events, copy back in place.

numba compiles a kernel on the first launch of each argument signature. That compile (often
hundreds of milliseconds) happens on the host before the kernel is queued, so events recorded
around the first launch would include it. ``timed_launch`` therefore compiles first, outside
the events, and reports the compile time on its own (``Report.compile_s``).
"""

import os
import time

import numpy as np

from .. import errors
from ..report import Report


NAME = "gpu"


def available():
    """True when numba.cuda sees a real GPU (not Numba's simulator)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


def _require_gpu():
    if not available():
        raise errors.BackendUnavailable(
            "backend='gpu' needs an NVIDIA GPU that numba.cuda can use, and none was found "
            "(numba.cuda.is_available() is False, or NUMBA_ENABLE_CUDASIM=1 is set). "
            "Use backend='sim' (gpulab's simulator) or backend='auto'. "
            "Run `gpulab doctor` to see why no GPU was found."
        )


def compile_for(kernel, dargs):
    """Compile ``kernel`` for these (device) arguments now; return the seconds it took."""
    started = time.perf_counter()
    argtypes = tuple(kernel.typeof_pyval(a) for a in dargs)
    try:
        kernel.compile(argtypes)  # compiles, links and loads; a no-op when cached
    except RuntimeError as e:
        # declared signatures compile at definition and then refuse more ("Compilation is
        # disabled"); the launch itself reports arguments that match none of them
        if "disabled" not in str(e).lower():
            raise
    return time.perf_counter() - started


def timed_launch(cuda, kernel, grid, block, dargs, shared_bytes):
    """(compile seconds, kernel seconds): compile first, then time only the launch.

    ``cuda`` is numba.cuda's host API (``numba.cuda.api``: numba's own functions even while
    ``gpulab.simulate()`` routes ``numba.cuda``'s names to the simulator)."""
    from ..sim.numba_api import gpu_configured

    compile_s = compile_for(kernel, dargs)
    start, end = cuda.event(), cuda.event()
    start.record()
    gpu_configured(kernel, grid, block, 0, shared_bytes)(*dargs)
    end.record()
    end.synchronize()
    return compile_s, cuda.event_elapsed_time(start, end) / 1e3


def launch(kernel, grid, block, args, shared_bytes, **_simulator_options):
    """Copy numpy arrays in, launch timed, copy them back in place; only timings are reported."""
    _require_gpu()
    from numba.cuda import api as cuda  # numba's own, also while gpulab.simulate() is on

    if not hasattr(kernel, "py_func") or not hasattr(kernel, "__getitem__"):
        raise errors.LaunchConfigError(f"{kernel!r} is not a numba.cuda kernel (decorate it with @cuda.jit).")
    dargs, back = [], []
    for a in args:
        if isinstance(a, np.ndarray) and a.ndim > 0:
            d = cuda.to_device(np.ascontiguousarray(a))
            dargs.append(d)
            back.append((a, d))
        else:
            dargs.append(a)
    compile_s, kernel_s = timed_launch(cuda, kernel, grid, block, dargs, shared_bytes)
    for host, dev in back:
        host[...] = dev.copy_to_host()
    name = getattr(kernel, "__name__", None) or kernel.py_func.__name__
    return Report(kernel=name, backend=NAME, grid=grid, block=block, kernel_s=kernel_s, compile_s=compile_s)
