"""The one way to launch a kernel: validate the launch, pick a backend, return a Report.

Limits checked here are the hardware's (CUDA C++ Programming Guide, compute capability
table), read from their one home, ``gpulab.models.occupancy.Arch``: threads per block, block
and grid dimensions, shared memory per block without an opt-in. Backends are the modules of
``gpulab.backends.REGISTRY``.
"""

import os
import time

import numpy as np

from . import backends, errors
from .sim.devicearray import host_of
from .models.occupancy import ARCHS

_LIMITS = ARCHS["sm_90"]  # the launch limits below are the same on every cc >= 3.0
MAX_THREADS_PER_BLOCK = _LIMITS.max_threads_per_block
MAX_BLOCK_DIMS = _LIMITS.max_block_dims
MAX_GRID_DIMS = _LIMITS.max_grid_dims
DEFAULT_SHARED_LIMIT = _LIMITS.shared_per_block_default
BACKENDS = ("auto",) + tuple(backends.REGISTRY)


def dim3(value, what):
    """Normalise an int or a 1-3 tuple to (x, y, z), with a clear error otherwise."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),)
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= 3:
        raise errors.LaunchConfigError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}.")
    out = []
    for v in value:
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise errors.LaunchConfigError(f"{what} {tuple(value)} contains {v!r}, not an int.")
        if v < 1:
            raise errors.LaunchConfigError(f"{what} {tuple(value)}: every dimension must be ≥ 1.")
        out.append(int(v))
    return tuple(out + [1] * (3 - len(out)))


def check_limits(grid, block, shared_bytes):
    """Refuse a launch the hardware would refuse, naming the limit."""
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_BLOCK:
        raise errors.LaunchConfigError(
            f"block {block} has {threads} threads; the limit is {MAX_THREADS_PER_BLOCK} threads "
            f"per block. Use a smaller block and more blocks."
        )
    for axis, v, lim in zip("xyz", block, MAX_BLOCK_DIMS):
        if v > lim:
            raise errors.LaunchConfigError(
                f"block dimension {axis} = {v} exceeds the limit of {lim} "
                f"(block dims are limited to {MAX_BLOCK_DIMS})."
            )
    for axis, v, lim in zip("xyz", grid, MAX_GRID_DIMS):
        if v > lim:
            raise errors.LaunchConfigError(
                f"grid dimension {axis} = {v} exceeds the limit of {lim:,} "
                f"(grid dims are limited to {MAX_GRID_DIMS})."
            )
    if not isinstance(shared_bytes, (int, np.integer)) or shared_bytes < 0:
        raise errors.LaunchConfigError(f"shared_bytes must be a non-negative int, got {shared_bytes!r}.")
    if shared_bytes > DEFAULT_SHARED_LIMIT:
        raise errors.LaunchConfigError(
            f"dynamic shared memory of {shared_bytes:,} bytes per block exceeds the "
            f"{DEFAULT_SHARED_LIMIT:,}-byte ({DEFAULT_SHARED_LIMIT // 1024} KB) default limit; "
            f"larger sizes need an explicit opt-in on the GPU (up to "
            f"{_LIMITS.shared_per_block_optin // 1024} KB on {_LIMITS.name})."
        )


def gpu_available():
    """True when numba.cuda sees a real GPU (not Numba's simulator)."""
    return backends.available("gpu")


def simulating():
    """True when ``gpulab.simulate()`` (or no GPU) routes numba.cuda's launches to the simulator."""
    from .sim import numba_api

    return numba_api.installed()


def resolve_backend(backend):
    """The backend a launch runs on: ``auto`` is the GPU when there is one and no simulation was
    asked for (``gpulab.simulate()``), else the simulator."""
    if backend not in BACKENDS:
        raise errors.LaunchConfigError(f"backend must be one of {BACKENDS}, got {backend!r}.")
    if backend == "auto":
        return "gpu" if gpu_available() and not simulating() else "sim"
    return backend


_LAST = []  # the last launch's Report


def last_report():
    """The Report of the last launch in this session (``gpulab.launch`` or ``kernel[grid, block]``)."""
    if not _LAST:
        raise LookupError("no kernel has been launched in this session yet, so there is no report.")
    return _LAST[0]


# The simulator's default time budget, in CPU seconds of this process (gpulab.sim.context): an
# infinite loop ends in an error within 5 s of CPU time, however busy the machine is.
# The longest simulated launch in chapters 02-10 and the homework took 0.6 s here (measured with
# GPULAB_LAUNCH_LOG, 2 cores, under load), so 4 s leaves a margin of six.
DEFAULT_TIMEOUT_S = 4.0
#: the simulator's step budget (statements plus loop iterations) per launch
DEFAULT_MAX_STEPS = 200_000


def launch(
    kernel,
    grid,
    block,
    *args,
    backend="auto",
    shared_bytes=0,
    trace=(0, 0),
    max_steps=DEFAULT_MAX_STEPS,
    timeout_s=DEFAULT_TIMEOUT_S,
):
    """Launch ``kernel[grid, block](*args)`` on a backend and return a :class:`Report`.

    numpy arrays (and the simulator's device arrays, ``gpulab.sim.devicearray``) are updated in
    place on every backend; the report is also ``gpulab.last_report()``. ``trace=(block, warp)`` picks the warp
    whose active masks and memory addresses the report keeps. ``max_steps`` (statements plus
    loop iterations) and ``timeout_s`` (CPU seconds of simulation, numba's typing not included)
    bound the simulator so an infinite loop ends in an error naming the loop, not a hung notebook.
    """
    grid, block = dim3(grid, "grid"), dim3(block, "block")
    check_limits(grid, block, shared_bytes)
    which = resolve_backend(backend)
    args = tuple(host_of(a) for a in args)  # a simulated device array: its storage, in place
    started = time.perf_counter()
    rep = backends.get(which).launch(
        kernel, grid, block, args, shared_bytes, trace=trace, max_steps=max_steps, timeout_s=timeout_s
    )
    rep.wall_s = time.perf_counter() - started
    _LAST[:] = [rep]
    if os.environ.get("GPULAB_LAUNCH_LOG"):  # one line per launch, to size time budgets
        with open(os.environ["GPULAB_LAUNCH_LOG"], "a") as log:
            log.write(f"{rep.wall_s:.4f}\t{rep.steps}\t{which}\t{rep.kernel}\t{grid}\t{block}\n")
    return rep
