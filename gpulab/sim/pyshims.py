"""Vectorised stand-ins for what kernels call from Python: ``math``, builtins, numba types.

numba compiles ``math.sqrt(x)`` or ``min(a, b)`` per thread; the simulator evaluates them for
all lanes at once, so each name maps to its numpy equivalent with numba's result types
(``math.floor`` returns an integer, ``int()`` truncates, ...).
"""

import builtins
import math as _math
import types

import numpy as np


def _int(x):
    return np.trunc(x).astype(np.int64) if isinstance(x, np.ndarray) else int(x)


def _float(x):
    return np.asarray(x, dtype=np.float64) if isinstance(x, np.ndarray) else np.float64(x)


def _is_float32(x):
    return getattr(x, "dtype", None) == np.float32


def _complex(real=0, imag=None):
    """``complex(re, im)`` as numba types it: complex64 when every argument is float32, else
    complex128 (for all lanes at once)."""
    dt = np.complex64 if _is_float32(real) and (imag is None or _is_float32(imag)) else np.complex128
    imag = 0 if imag is None else imag
    re, im = np.asarray(real), np.asarray(imag)
    if re.dtype.kind == "c" or im.dtype.kind == "c":
        raise TypeError("complex() only support for numbers (numba takes real and imaginary parts)")
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dtype=dt)
    out.real, out.imag = re, im
    return out if out.ndim else out[()]


def _bool(x):
    return np.asarray(x) != 0 if isinstance(x, np.ndarray) else bool(x)


def _minmax(fn, name):
    py = getattr(builtins, name)

    def f(*args):
        if len(args) == 1:
            return py(args[0])
        out = args[0]
        for a in args[1:]:
            out = fn(out, a)
        return out

    f.__name__ = name
    return f


def _round(x, ndigits=None):
    if ndigits is None:
        r = np.rint(x)
        return r.astype(np.int64) if isinstance(r, np.ndarray) else int(r)
    return np.round(x, ndigits)


def _len(x):
    return x.shape[0] if hasattr(x, "shape") else builtins.len(x)


def _to_int(fn):
    def f(x):
        r = fn(x)
        return r.astype(np.int64) if isinstance(r, np.ndarray) else int(r)

    return f


def _float_fn(fn):
    """numba promotes integer arguments of math functions to float64."""

    def f(*args):
        args = [
            a.astype(np.float64)
            if isinstance(a, np.ndarray) and a.dtype.kind in "iub"
            else (float(a) if isinstance(a, (int, np.integer)) else a)
            for a in args
        ]
        return fn(*args)

    return f


def _erf(x):
    v = np.vectorize(_math.erf, otypes=[np.float64])(x)
    return v.astype(x.dtype) if isinstance(x, np.ndarray) and x.dtype == np.float32 else v


def _erfc(x):
    v = np.vectorize(_math.erfc, otypes=[np.float64])(x)
    return v.astype(x.dtype) if isinstance(x, np.ndarray) and x.dtype == np.float32 else v


def _gamma(x):
    return np.vectorize(_math.gamma, otypes=[np.float64])(x)


def _lgamma(x):
    return np.vectorize(_math.lgamma, otypes=[np.float64])(x)


MATH = types.SimpleNamespace(
    pi=_math.pi,
    e=_math.e,
    tau=_math.tau,
    inf=_math.inf,
    nan=_math.nan,
    sqrt=_float_fn(np.sqrt),
    exp=_float_fn(np.exp),
    expm1=_float_fn(np.expm1),
    log=_float_fn(np.log),
    log2=_float_fn(np.log2),
    log10=_float_fn(np.log10),
    log1p=_float_fn(np.log1p),
    sin=_float_fn(np.sin),
    cos=_float_fn(np.cos),
    tan=_float_fn(np.tan),
    asin=_float_fn(np.arcsin),
    acos=_float_fn(np.arccos),
    atan=_float_fn(np.arctan),
    atan2=_float_fn(np.arctan2),
    sinh=_float_fn(np.sinh),
    cosh=_float_fn(np.cosh),
    tanh=_float_fn(np.tanh),
    asinh=_float_fn(np.arcsinh),
    acosh=_float_fn(np.arccosh),
    atanh=_float_fn(np.arctanh),
    hypot=_float_fn(np.hypot),
    fabs=_float_fn(np.fabs),
    pow=_float_fn(np.power),
    fmod=_float_fn(np.fmod),
    copysign=_float_fn(np.copysign),
    floor=_to_int(np.floor),
    ceil=_to_int(np.ceil),
    trunc=_to_int(np.trunc),
    isnan=np.isnan,
    isinf=np.isinf,
    isfinite=np.isfinite,
    radians=_float_fn(np.radians),
    degrees=_float_fn(np.degrees),
    erf=_erf,
    erfc=_erfc,
    gamma=_gamma,
    lgamma=_lgamma,
    ldexp=np.ldexp,
    frexp=np.frexp,
    modf=np.modf,
)

BUILTINS = {
    "min": _minmax(np.minimum, "min"),
    "max": _minmax(np.maximum, "max"),
    "abs": np.abs,
    "int": _int,
    "float": _float,
    "bool": _bool,
    "complex": _complex,
    "round": _round,
    "len": _len,
}

NUMPY_TYPES = {
    name: getattr(np, name)
    for name in (
        "float16",
        "float32",
        "float64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool_",
        "complex64",
        "complex128",
    )
}


def widen(value):
    """An integer narrower than 64 bits as numba computes with it: int64 (uint64 if unsigned),
    same value.

    numba types integer arithmetic at 64 bits at least (``int32 + int32`` is int64,
    ``uint32 * uint32`` is uint64), so values read from int32/uint32/... arrays or made by
    ``int32(x)`` must not wrap at 32 bits in the simulator; the store into a narrow array
    truncates, as on a GPU. Mixing uint64 with signed integers follows numba through
    ``Context.arith``."""
    dt = getattr(value, "dtype", None)
    if dt is not None and dt.kind in "iu" and dt.itemsize < 8:
        wide = np.uint64 if dt.kind == "u" else np.int64
        if not isinstance(value, np.ndarray):
            return _WIDE_SCALARS[(dt.kind, dt.itemsize * 8)](value)
        w = value.astype(wide).view(Widened)
        w.bits = dt.itemsize * 8  # the type numba gives the variable: bit intrinsics use it
        return w
    return value


class Widened(np.ndarray):
    """64-bit values of a variable numba types narrower (a load from an int32 array,
    ``int32(x)``): arithmetic on it gives plain 64-bit arrays, as numba computes, while
    ``cuda.popc``/``clz``/``ffs``/``brev`` still see its declared width in ``bits``
    (clz(int32(1)) is 31, not 63; popc(int32(-1)) is 32, not 64)."""

    bits = 64

    def __array_finalize__(self, obj):
        self.bits = getattr(obj, "bits", 64)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(x.view(np.ndarray) if isinstance(x, Widened) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, Widened) else o for o in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)


# uniform narrow values: 64-bit numpy scalars that remember their declared width (arithmetic on
# them gives plain np.int64 / np.uint64, as numba computes)
_WIDE_SCALARS = {
    (kind, bits): type(
        f"{'u' if kind == 'u' else ''}int{bits}_value",
        (np.uint64 if kind == "u" else np.int64,),
        {"bits": bits},
    )
    for kind in "iu"
    for bits in (8, 16, 32)
}


class NarrowInt:
    """``numba.int32`` (and the other integers narrower than 64 bits) inside a kernel: a dtype
    for arrays, and as a cast it truncates to its width, then widens (see :func:`widen`)."""

    def __init__(self, np_type):
        self.type, self.dtype = np_type, np.dtype(np_type)

    def __call__(self, x):
        if isinstance(x, (bool, int)):
            x = np.int64(x) if -(2**63) <= x < 2**63 else np.uint64(x % 2**64)
        with np.errstate(all="ignore"):
            v = np.asarray(x).astype(self.type)
        return widen(v if v.ndim else v[()])

    def __repr__(self):
        return str(self.dtype)


for _name in ("int8", "int16", "int32", "uint8", "uint16", "uint32"):
    NUMPY_TYPES[_name] = NarrowInt(NUMPY_TYPES[_name])


class _Numpy:
    """``numpy`` as a kernel sees it: the narrow integer types cast as numba's do (``NarrowInt``);
    everything else is numpy's own."""

    def __getattr__(self, name):
        t = NUMPY_TYPES.get(name)
        return t if isinstance(t, NarrowInt) else getattr(np, name)


NUMPY = _Numpy()


def numba_type_to_numpy(value):
    """A numba scalar type (``numba.float32``) used as a cast or dtype → its numpy type."""
    try:
        from numba.core import types as nbt
    except ImportError:
        return None
    if isinstance(value, (nbt.Integer, nbt.Float, nbt.Boolean, nbt.Complex)):
        name = str(value)
        if name == "bool":
            return np.bool_
        return NUMPY_TYPES.get(name)
    return None
