"""Numba's own CUDA simulator, as a reference for the semantics it supports.

It runs one OS thread per CUDA thread (slow) and has no warp intrinsics; gpulab uses it to
cross-check its own simulator. Works whether or not NUMBA_ENABLE_CUDASIM is set.
"""

import numpy as np

from .. import errors
from ..report import Report
from ..sim.jitted import is_jitted, python_function

NAME = "numba-sim"


def available():
    """Numba's simulator ships with numba-cuda and needs no GPU: always True."""
    return True


def launch(kernel, grid, block, args, shared_bytes, **_simulator_options):
    """Run the launch on Numba's simulator (one OS thread per CUDA thread); arrays in place."""
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    fn = python_function(kernel)
    if fn is None:
        raise errors.LaunchConfigError(f"{kernel!r} is not a numba.cuda kernel.")
    # device functions the kernel calls, and those they call, must be simulator functions too
    swapped = []  # (globals, name, original)
    todo, seen = [fn], set()
    while todo:
        f = todo.pop()
        if f.__code__ in seen:
            continue
        seen.add(f.__code__)
        g = f.__globals__
        for name in f.__code__.co_names:
            value = g.get(name)
            if value is not None and is_jitted(value) and type(value).__name__ != "FakeCUDAKernel":
                swapped.append((g, name, value))
                g[name] = FakeCUDAKernel(python_function(value), device=True)
                todo.append(python_function(value))
    try:
        fake = FakeCUDAKernel(fn, device=False)
        arrays = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in args]
        fake[grid, block, 0, shared_bytes](*arrays)
        for orig, used in zip(args, arrays):
            if isinstance(orig, np.ndarray) and used is not orig:
                orig[...] = used
    finally:
        for g, name, value in reversed(swapped):
            g[name] = value
    return Report(kernel=fn.__name__, backend=NAME, grid=grid, block=block)
