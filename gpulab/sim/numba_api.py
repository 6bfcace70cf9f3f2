"""Ordinary numba.cuda programs on gpulab's simulator: ``kernel[grid, block](...)`` and the host API.

With no GPU (or on request: ``gpulab.simulate()``, ``GPULAB_SIMULATE=1``), :func:`install` makes

* ``kernel[grid, block](...)``, ``kernel[grid, block, stream, shared_bytes](...)`` and
  ``kernel.forall(n)(...)`` call ``gpulab.launch(kernel, grid, block, *args, backend="sim")``:
  the one launch path, with every check; the report is ``gpulab.last_report()``;
* ``cuda.to_device``, ``device_array``, ``device_array_like``, ``pinned_array(_like)``,
  ``mapped_array(_like)``, ``managed_array``, ``pinned``/``mapped`` return simulated device
  arrays (``gpulab.sim.devicearray``) or host arrays;
* ``cuda.synchronize``, streams and events no-ops. An event's ``elapsed_time`` is not a GPU
  timing, so it returns NaN with a warning saying so (``gpulab.predict`` estimates GPU time);
* ``cuda.detect()`` says that no GPU is used and what runs the kernels; ``cuda.is_available()``
  keeps telling the truth about the GPU.

The dispatcher's ``configure`` is replaced on numba's class, so kernels made before
``import gpulab`` (and closures such as ``cuda.jit(make_kernel(cuda))``) launch on the simulator
too. Host functions are replaced on the ``numba.cuda`` module (``cuda.to_device`` looks them up
at call time); ``from numba.cuda import to_device`` done before ``import gpulab`` keeps numba's.
The GPU backend uses numba's originals (:func:`gpu_configured`), so ``backend="gpu"`` still runs
on the GPU. :func:`uninstall` puts everything back. Under ``NUMBA_ENABLE_CUDASIM=1`` (Numba's own
simulator replaces numba.cuda) nothing is installed.
"""

import contextlib
import math
import warnings

import numpy as np

from . import devicearray, typecheck

_SAVED = {}  # (owner, attribute) -> numba's original, while installed
_OPTIONS = {}  # launch options for kernel[grid, block] launches (max_steps, timeout_s)


class SimulatedTimingWarning(UserWarning):
    """An event timing asked of the simulator, which has no GPU time to give."""


class SimLaunch:
    """``kernel[grid, block, stream, shared_bytes]``: calling it launches on gpulab's simulator."""

    def __init__(self, dispatcher, griddim, blockdim, stream=0, sharedmem=0):
        self.dispatcher = dispatcher
        self.griddim, self.blockdim = griddim, blockdim
        self.stream, self.sharedmem = stream, sharedmem

    def __call__(self, *args):
        from gpulab.launch import launch  # the one launch path (launch imports the simulator)

        launch(
            self.dispatcher,
            _dims(self.griddim),
            _dims(self.blockdim),
            *args,
            backend="sim",
            shared_bytes=int(self.sharedmem or 0),
            **_OPTIONS,
        )


def _dims(value):
    """numba accepts ints, tuples, lists and Dim3-like objects; ``gpulab.launch`` ints or tuples."""
    if isinstance(value, list):
        return tuple(value)
    if hasattr(value, "x") and hasattr(value, "y") and hasattr(value, "z"):
        return (value.x, value.y, value.z)
    return value


def _configure(self, griddim, blockdim, stream=0, sharedmem=0):
    return SimLaunch(self, griddim, blockdim, stream, sharedmem)


def _forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
    """``kernel.forall(n)``: enough blocks of ``tpb`` threads (128 when not given) for ``n`` tasks."""
    tpb = int(tpb) or 128
    return SimLaunch(self, max(1, -(-int(ntasks) // tpb)), tpb, stream, sharedmem)


def gpu_configured(kernel, grid, block, stream=0, shared_bytes=0):
    """numba's own ``kernel[grid, block, stream, shared_bytes]``, whether or not this is installed."""
    from numba.cuda.dispatcher import CUDADispatcher

    if not isinstance(kernel, CUDADispatcher):
        return kernel[grid, block, stream, shared_bytes]
    configure = _SAVED.get((CUDADispatcher, "configure"), CUDADispatcher.configure)
    return configure(kernel, grid, block, stream, shared_bytes)


# -- host API -------------------------------------------------------------------------------------
def synchronize():
    """No-op: a simulated launch has finished when its call returns."""


class Stream:
    """A stream on the simulator: work runs when it is issued, so every wait is already over."""

    handle = 0

    def synchronize(self):
        """No-op."""

    @contextlib.contextmanager
    def auto_synchronize(self):
        yield self

    def add_callback(self, callback, arg=None):
        callback(self, None, arg)

    def __int__(self):
        return 0

    def __repr__(self):
        return "<gpulab simulated stream (launches run when issued)>"


def stream():
    return Stream()


class Event:
    """A CUDA event on the simulator: recording and waiting are no-ops; it has no GPU time."""

    def __init__(self, timing=True):
        self.timing = timing

    def record(self, stream=0):
        """No-op."""

    def synchronize(self):
        """No-op."""

    def wait(self, stream=0):
        """No-op."""

    def query(self):
        return True

    def elapsed_time(self, evtend):
        return event_elapsed_time(self, evtend)


def event(timing=True):
    return Event(timing)


def event_elapsed_time(evtstart, evtend):
    """NaN, with a warning: the simulator measures no GPU time and will not pretend to."""
    warnings.warn(
        "cuda.event timings are not GPU timings on gpulab's simulator (no GPU ran the kernel): "
        "elapsed_time returns NaN. For an estimate of the time on a GPU use "
        "gpulab.predict(kernel, grid, block, *args); gpulab.last_report().wall_s is how long the "
        "CPU took to simulate the last launch.",
        SimulatedTimingWarning,
        stacklevel=2,
    )
    return math.nan


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    return np.empty(shape, dtype=dtype, order=order)


def pinned_array_like(ary):
    return np.empty_like(devicearray.host_of(ary))


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False, wc=False):
    """Mapped memory is host memory a kernel reads and writes directly: a numpy array."""
    return np.zeros(shape, dtype=dtype, order=order)


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    return np.zeros_like(devicearray.host_of(ary))


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0, attach_global=True):
    return np.zeros(shape, dtype=dtype, order=order)


@contextlib.contextmanager
def pinned(*arylist):
    yield


@contextlib.contextmanager
def mapped(*arylist, **kws):
    """Device views of the host arrays: a kernel's writes land in them, as with mapped memory."""
    devs = [devicearray.DeviceArray(a) for a in arylist]
    yield devs[0] if len(devs) == 1 else devs


def is_cuda_array(obj):
    return devicearray.is_device_array(obj) or hasattr(obj, "__cuda_array_interface__")


def detect():
    """Say honestly what runs kernels here: no GPU is used; gpulab's simulator runs launches."""
    print(
        "No CUDA GPU is used: kernel launches run on gpulab's SIMT simulator on the CPU "
        "(gpulab.simulate(False) gives numba.cuda back where a GPU exists)."
    )
    return False


_HOST_API = {
    "to_device": devicearray.to_device,
    "device_array": devicearray.device_array,
    "device_array_like": devicearray.device_array_like,
    "pinned_array": pinned_array,
    "pinned_array_like": pinned_array_like,
    "mapped_array": mapped_array,
    "mapped_array_like": mapped_array_like,
    "managed_array": managed_array,
    "pinned": pinned,
    "mapped": mapped,
    "synchronize": synchronize,
    "stream": stream,
    "default_stream": stream,
    "legacy_default_stream": stream,
    "per_thread_default_stream": stream,
    "event": event,
    "event_elapsed_time": event_elapsed_time,
    "is_cuda_array": is_cuda_array,
    "detect": detect,
}


def installed():
    """True while kernel launches and the host API run on the simulator."""
    return bool(_SAVED)


def install(max_steps=None, timeout_s=None):
    """Route ``kernel[grid, block]`` and numba.cuda's host API to the simulator (idempotent)."""
    _OPTIONS.clear()
    if max_steps is not None:
        _OPTIONS["max_steps"] = max_steps
    if timeout_s is not None:
        _OPTIONS["timeout_s"] = timeout_s
    if installed():
        return True
    if not typecheck.enabled():
        return False  # NUMBA_ENABLE_CUDASIM=1: Numba's simulator is numba.cuda; leave it alone
    import numba.cuda
    from numba.cuda.dispatcher import CUDADispatcher

    for name, fn in (("configure", _configure), ("forall", _forall)):
        _SAVED[(CUDADispatcher, name)] = CUDADispatcher.__dict__[name]
        setattr(CUDADispatcher, name, fn)
    for name, fn in _HOST_API.items():
        if hasattr(numba.cuda, name):
            _SAVED[(numba.cuda, name)] = getattr(numba.cuda, name)
        setattr(numba.cuda, name, fn)
    return True


def uninstall():
    """Give numba.cuda back its own launch path and host API."""
    for (owner, name), original in _SAVED.items():
        setattr(owner, name, original)
    _SAVED.clear()
    _OPTIONS.clear()
