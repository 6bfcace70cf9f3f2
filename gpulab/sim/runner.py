"""Run one launch on gpulab's simulator: lay out the lanes, wrap the arguments, execute."""

import inspect
import sys
import time
import types

import numpy as np

from .. import errors
from . import eager, typecheck
from .context import UNDEF, Context
from .intrinsics import SimCuda
from .memory import ALLOC_ALIGN, GlobalArray
from .pyshims import BUILTINS, MATH, NUMPY, numba_type_to_numpy, widen
from .jitted import is_jitted, python_function  # noqa: F401  (python_function: public here too)
from .protocol import CTX, UNDEF as UNDEF_NAME
from .transform import transform

_CODE_CACHE = {}


def _is_cuda_module(value):
    return isinstance(value, types.ModuleType) and value.__name__ in (
        "numba.cuda",
        "numba.cuda.simulator",
        "numba.cuda.simulator.api",
    )


class _Compiled:
    """A kernel or device function rewritten for the simulator (cached per function)."""

    def __init__(self, fn):
        self.fn = fn
        key = fn.__code__
        if key not in _CODE_CACHE:
            _CODE_CACHE[key] = transform(fn)
        self.code, self.name, self.lines = _CODE_CACHE[key]


class _Launch:
    def __init__(self, ctx, sim):
        self.ctx, self.sim = ctx, sim
        self.functions = {}
        self.numba_shim = types.SimpleNamespace(
            cuda=sim,
            **{k: v for k, v in __import__("gpulab.sim.pyshims", fromlist=["x"]).NUMPY_TYPES.items()},
        )

    def build(self, fn):
        """The simulator's version of ``fn`` with its globals swapped for the simulated ones."""
        if fn in self.functions:
            return self.functions[fn]
        comp = _Compiled(fn)
        ns = dict(fn.__globals__)
        if fn.__closure__:
            ns.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
        for name, value in list(ns.items()):
            ns[name] = self._substitute(value)
        ns.update(BUILTINS)
        ns["print"] = self._print
        ns[CTX] = self.ctx
        ns[UNDEF_NAME] = UNDEF
        self.functions[fn] = None  # guard against recursion
        exec(comp.code, ns)
        built = ns[comp.name]
        self.functions[fn] = built
        self.ctx.lines.update(comp.lines)
        return built

    def _print(self, *args):
        """print() in a kernel: one line per active thread, as on a GPU (first 64 shown)."""
        ctx = self.ctx
        lanes = np.flatnonzero(ctx.mask)
        limit = 64
        for lane in lanes[:limit]:
            vals = [
                a[lane] if isinstance(a, np.ndarray) and a.ndim and a.shape[0] == ctx.mask.shape[0] else a
                for a in args
            ]
            print(*vals)
        if len(lanes) > limit:
            print(f"... ({len(lanes) - limit} more lines from other threads)")

    def _substitute(self, value):
        if _is_cuda_module(value):
            return self.sim
        if value is sys.modules.get("math"):
            return MATH
        if value is np:  # np.int32(x) casts as numba.int32(x) does
            return NUMPY
        if getattr(value, "__module__", None) == "math" and hasattr(MATH, getattr(value, "__name__", "")):
            return getattr(MATH, value.__name__)  # from math import sin
        if isinstance(value, types.ModuleType) and value.__name__ == "numba":
            return self.numba_shim
        t = numba_type_to_numpy(value)
        if t is not None:
            return t
        if is_jitted(value):
            return _LazyDevice(self, python_function(value), eager.declared_device_signature(value))
        return value


class _LazyDevice:
    """A device function, rewritten the first time the kernel calls it."""

    def __init__(self, launch, fn, signature=None):
        self.launch, self.fn, self.built = launch, fn, None
        self.signature = signature  # (argument dtypes, return dtype) when declared

    def __call__(self, *args, **kwargs):
        if self.built is None:
            self.built = self.launch.build(self.fn)
        if kwargs:  # f(b=2, a=1): numba binds keywords (and defaults) at compile time
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        if self.signature is None:
            return self.built(*args)
        # declared "float32(float32)": numba converts the arguments and the result
        arg_dtypes, ret_dtype = self.signature
        args = [a if dt is None else _cast(a, dt) for a, dt in zip(args, arg_dtypes)]
        out = self.built(*args)
        return out if ret_dtype is None or out is None else _cast(out, ret_dtype)


def _cast(value, dtype):
    if isinstance(value, np.ndarray):
        return widen(value.astype(dtype, copy=False))
    if isinstance(value, (int, float, bool, np.generic)):
        return widen(dtype.type(value))
    return value


def _wrap_args(ctx, args, names):
    wrapped, base = [], ALLOC_ALIGN
    for name, a in zip(names, args):
        if isinstance(a, np.ndarray):
            if a.ndim == 0:
                wrapped.append(a[()])
                continue
            wrapped.append(GlobalArray(ctx, a, name, base))
            base += -(-max(a.nbytes, 1) // ALLOC_ALIGN) * ALLOC_ALIGN + ALLOC_ALIGN
        elif isinstance(a, bool) or isinstance(a, np.bool_):
            wrapped.append(bool(a))
        elif isinstance(a, int):
            wrapped.append(np.int64(a))
        elif isinstance(a, float):
            wrapped.append(np.float64(a))
        elif isinstance(a, (np.generic, complex)):
            wrapped.append(a)
        elif isinstance(a, tuple):
            wrapped.append(a)
        elif hasattr(a, "copy_to_host"):
            raise errors.LaunchConfigError(
                f"argument `{name}` is a device array; gpulab's simulator works on numpy arrays. "
                f"Pass the numpy array itself (it is updated in place)."
            )
        else:
            raise errors.LaunchConfigError(
                f"argument `{name}` has type {type(a).__name__}; kernels take numpy arrays and numbers."
            )
    return wrapped


def run(kernel, layout, args, *, shared_bytes=0, trace=(0, 0), max_steps=None, timeout_s=None):
    """Execute ``kernel`` over ``layout`` on the simulator; return the finished Context.
    ``max_steps`` and ``timeout_s`` default to the launch layer's budgets
    (``gpulab.launch.DEFAULT_MAX_STEPS``, ``DEFAULT_TIMEOUT_S``), kept in one place there."""
    if max_steps is None or timeout_s is None:
        from gpulab.launch import DEFAULT_MAX_STEPS, DEFAULT_TIMEOUT_S  # launch imports us

        max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    fn = python_function(kernel)
    if fn is None:
        raise errors.LaunchConfigError(f"{kernel!r} is not a numba.cuda kernel or a Python function.")
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    if len(args) != len(names):
        raise errors.LaunchConfigError(
            f"kernel `{fn.__name__}` takes {len(names)} argument(s) "
            f"({', '.join(names)}) but the launch passed {len(args)}."
        )
    tb, tw = trace
    if not (0 <= tb < layout.blocks and 0 <= tw < layout.warps_per_block):
        raise errors.LaunchConfigError(
            f"trace=({tb}, {tw}) names no warp: the launch has {layout.blocks} block(s) of "
            f"{layout.warps_per_block} warp(s)."
        )
    argtypes = eager.declared_types(kernel, typecheck.argument_types(args), names)
    typecheck.check(fn, argtypes)
    ctx = Context(layout, fn.__name__, tb * layout.warps_per_block + tw, max_steps, timeout_s)
    ctx.filename = fn.__code__.co_filename
    sim = SimCuda(ctx, shared_bytes)
    launch = _Launch(ctx, sim)
    body = launch.build(fn)
    wrapped = _wrap_args(ctx, args, names)
    if getattr(kernel, "_gpulab_signatures", None):
        wrapped = eager.convert_scalars(wrapped, argtypes)
    started = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            body(*wrapped)
    except errors.GpulabError:
        raise
    except RecursionError:
        raise errors.UnsupportedFeature(
            "recursion is not supported in kernels.",
            kernel=ctx.kernel_name,
            line=ctx.line,
            source=ctx.lines.get(ctx.line),
        ) from None
    except Exception as exc:
        lanes = np.flatnonzero(ctx.mask)
        raise errors.KernelPythonError(
            f"{type(exc).__name__}: {exc}\nwhile running {layout.describe(lanes)}.",
            kernel=ctx.kernel_name,
            filename=ctx.filename,
            line=ctx.line,
            source=ctx.lines.get(ctx.line),
            threads=[layout.thread_name(int(l)) for l in lanes[:8]],
        ) from exc
    ctx.elapsed = time.perf_counter() - started
    return ctx
