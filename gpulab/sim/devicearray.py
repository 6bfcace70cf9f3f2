"""Device arrays on gpulab's simulator: host memory standing in for a GPU allocation.

``cuda.to_device``, ``cuda.device_array`` and friends return a :class:`DeviceArray` when
launches run on the simulator (``gpulab.sim.numba_api``). It behaves like numba's
``DeviceNDArray`` as far as ordinary programs use it (shape, dtype, size, ``copy_to_host``,
``copy_to_device``, indexing, ``[...] = host_data``, ``reshape``, ``ravel``) and a launch reads
and writes its storage in place. ``host_of`` is the one place that unwraps one for a launch.
"""

import numpy as np

#: what a fresh ``device_array`` holds: device memory starts undefined, so not zeros (0xFF bytes
#: read as NaN in a float array and -1 in an int array; a kernel that forgets to initialise
#: shows it in its result instead of silently getting zeros)
UNDEFINED_BYTE = 0xFF


class DeviceArray:
    """A simulated GPU allocation (numba's ``DeviceNDArray``, as far as programs use it)."""

    __gpulab_device_array__ = True

    def __init__(self, host, stream=0):
        if not isinstance(host, np.ndarray):
            raise TypeError(f"a device array wraps a numpy array, not {type(host).__name__}")
        self._host = host
        self.stream = stream

    # -- what numba's DeviceNDArray offers ----------------------------------------------------
    shape = property(lambda self: self._host.shape)
    strides = property(lambda self: self._host.strides)
    dtype = property(lambda self: self._host.dtype)
    size = property(lambda self: self._host.size)
    ndim = property(lambda self: self._host.ndim)
    nbytes = property(lambda self: self._host.nbytes)
    alloc_size = nbytes

    def __len__(self):
        return len(self._host)

    def __repr__(self):
        return f"<gpulab simulated device array shape={self.shape} dtype={self.dtype}>"

    def is_c_contiguous(self):
        return bool(self._host.flags.c_contiguous)

    def is_f_contiguous(self):
        return bool(self._host.flags.f_contiguous)

    def copy_to_host(self, ary=None, stream=0):
        """A host copy (a new array, or ``ary`` filled and returned), as numba's does."""
        if ary is None:
            return self._host.copy()
        _check_same(ary, self, "copy_to_host")
        ary[...] = self._host
        return ary

    def copy_to_device(self, ary, stream=0):
        """Fill this allocation from a host array or another device array."""
        src = host_of(ary)
        src = np.asarray(src)
        _check_same(src, self, "copy_to_device")
        self._host[...] = src

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(d)``: a host copy (numba copies to the host as well)."""
        return np.array(self._host, dtype=dtype, copy=True)

    def __getitem__(self, idx):
        out = self._host[idx]
        if isinstance(out, np.ndarray) and out.ndim > 0:
            return DeviceArray(out, self.stream)
        return out[()] if isinstance(out, np.ndarray) else out

    def __setitem__(self, idx, value):
        self._host[idx] = host_of(value)

    def setitem(self, key, value, stream=0):
        self[key] = value

    def getitem(self, key, stream=0):
        return self[key]

    def reshape(self, *newshape, order="C"):
        return DeviceArray(self._host.reshape(*newshape, order=order), self.stream)

    def ravel(self, order="C", stream=0):
        return DeviceArray(self._host.ravel(order=order), self.stream)

    def view(self, dtype):
        return DeviceArray(self._host.view(dtype), self.stream)

    def transpose(self, axes=None):
        return DeviceArray(self._host.transpose(axes), self.stream)

    T = property(transpose)

    def split(self, section, stream=0):
        return [
            DeviceArray(part, stream) for part in np.split(self._host, range(section, self.size, section))
        ]

    def bind(self, stream=0):
        return DeviceArray(self._host, stream)


def _check_same(host, dev, what):
    if host.shape != dev.shape or host.dtype != dev.dtype:
        raise TypeError(
            f"{what}: the arrays differ (host {host.shape} {host.dtype}, device {dev.shape} "
            f"{dev.dtype}); numba.cuda copies only between arrays of one shape and dtype."
        )


def is_device_array(value):
    """True for a simulated device array."""
    return getattr(value, "__gpulab_device_array__", False) is True


def host_of(value):
    """The numpy array a launch reads and writes for ``value`` (itself when not a device array)."""
    return value._host if is_device_array(value) else value


def to_device(obj, stream=0, copy=True, to=None):
    """``cuda.to_device``: a device array holding a copy of ``obj`` (or ``obj`` copied into ``to``)."""
    if to is not None:
        to.copy_to_device(obj, stream)
        return to
    if is_device_array(obj):
        return obj
    host = np.array(obj, copy=True, order="K", subok=False)
    if not copy:
        host[...] = _undefined(host.dtype)
    return DeviceArray(host, stream)


def _undefined(dtype):
    return np.frombuffer(bytes([UNDEFINED_BYTE]) * np.dtype(dtype).itemsize, dtype=dtype)[0]


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """``cuda.device_array``: an allocation whose contents are undefined (filled with 0xFF bytes)."""
    dtype = np.dtype(dtype)
    if strides is not None:
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        buf = np.full(max(1, _extent(shape, strides, dtype.itemsize)), UNDEFINED_BYTE, dtype=np.uint8)
        host = np.lib.stride_tricks.as_strided(buf.view(dtype), shape=shape, strides=strides)
    else:
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        buf = np.full(int(np.prod(shape)) * dtype.itemsize, UNDEFINED_BYTE, dtype=np.uint8)
        host = np.ndarray(shape, dtype=dtype, buffer=buf, order=order)
    return DeviceArray(host, stream)


def _extent(shape, strides, itemsize):
    return sum((n - 1) * s for n, s in zip(shape, strides)) // itemsize + 1


def device_array_like(ary, stream=0):
    """``cuda.device_array_like``: same shape, dtype and order as ``ary``, undefined contents."""
    ary = host_of(ary)
    order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    return device_array(ary.shape, ary.dtype, order=order, stream=stream)
