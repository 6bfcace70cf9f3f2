"""Kernels and device functions declared with a signature, on a machine without a GPU.

``@cuda.jit("void(float32[:], float32)")`` makes numba.cuda compile eagerly for the current
device, so without a GPU the decorator raises ``CudaSupportError`` and the kernel never exists.
When gpulab finds no GPU, ``install()`` wraps ``numba.cuda.jit`` so that a signature no longer
asks for a device, while keeping everything numba does with it:

* a device function (``device=True``) is compiled by numba-cuda itself to LLVM IR for sm_90
  (no driver or NVVM needed) and then closed to new signatures, exactly as numba leaves it, so
  kernels calling it are typed against the declared signature with numba's own conversions;
* a kernel is type-checked at definition with numba's front end for the declared types (a
  typing error appears at definition, as on a GPU); the declared signatures stay on the lazy
  dispatcher (``_gpulab_signatures``); at launch the simulator accepts only arguments numba
  would convert to one of them, types the kernel with the declared types, and converts scalar
  arguments to them (a ``float32`` parameter is a float32 in the kernel, as on a GPU).

Why wrap the decorator: it is the one place where the signature is known and where numba asks
for a device; patching numba's dispatcher instead would also change lazy kernels launched
directly, and a start-up hook (a ``.pth`` file) would alter Python for every program. The
price: a kernel decorated with a signature *before* ``import gpulab`` still meets numba's
unwrapped decorator and its ``CudaSupportError``; gpulab cannot run code before it is
imported, so the book and the homework import gpulab first (``SIGNATURE_HINT`` says so).
"""

from . import typecheck

SIGNATURE_HINT = (
    "`import gpulab` before defining kernels with a signature "
    '(@cuda.jit("void(float32[:])")) on a machine without a GPU, then re-run the '
    "cell that defines the kernel; or drop the signature (@cuda.jit) to let numba "
    "compile lazily."
)

_ORIGINAL = []


def _is_signature_spec(value):
    from numba.cuda.core import sigutils

    return sigutils.is_signature(value) or (
        isinstance(value, list) and value and all(sigutils.is_signature(s) for s in value)
    )


def jit(func_or_sig=None, device=False, **kws):
    """``numba.cuda.jit`` for a machine without a GPU: signatures are typed, not compiled."""
    original = _ORIGINAL[0]
    if not _is_signature_spec(func_or_sig):
        return original(func_or_sig, device=device, **kws)
    from numba.cuda import types
    from numba.cuda.core import sigutils

    specialized = not isinstance(func_or_sig, list)
    signatures = [func_or_sig] if specialized else list(func_or_sig)

    def decorate(func):
        disp = original(func, device=device, **kws)
        normalized = [sigutils.normalize_signature(s) for s in signatures]
        if device:
            from numba.cuda.core import typeinfer

            with typecheck.fake_device(), typeinfer.register_dispatcher(disp):
                for argtypes, restype in normalized:
                    disp.compile_device(argtypes, restype)
            disp._specialized = specialized
            disp.disable_compile()
        else:
            for argtypes, restype in normalized:
                if restype and restype != types.void:
                    raise TypeError("CUDA kernel must have void return type.")
                typecheck.check(func, argtypes)
            disp._gpulab_signatures = [argtypes for argtypes, _ in normalized]
        return disp

    return decorate


jit._gpulab_nogpu = True


def install():
    """Make ``numba.cuda.jit`` accept signatures without a GPU (call only when there is none)."""
    if not typecheck.enabled():
        return  # NUMBA_ENABLE_CUDASIM=1: numba's simulator already accepts signatures
    import numba.cuda
    import numba.cuda.decorators as decorators
    import numba.cuda.device_init as device_init

    if getattr(numba.cuda.jit, "_gpulab_nogpu", False):
        return
    _ORIGINAL[:] = [decorators.jit]
    jit.__doc__ = (jit.__doc__ or "") + "\n\n" + (decorators.jit.__doc__ or "")
    for mod in (numba.cuda, decorators, device_init):
        mod.jit = jit


def explain_earlier_failure():
    """If this session's last error was numba's CudaSupportError (a kernel with a signature
    defined before ``import gpulab``), say what to do now that gpulab is imported."""
    import sys

    last = getattr(sys, "last_value", None)
    if type(last).__name__ == "CudaSupportError":
        print(
            "gpulab: the last error in this session was numba's CudaSupportError, most likely "
            "from a kernel with a signature defined before gpulab was imported. What to do: "
            + SIGNATURE_HINT,
            file=sys.stderr,
        )


def declared_types(kernel, actual, names):
    """The declared argument types a launch uses, or ``actual`` for a lazily compiled kernel.

    Refuses arguments numba's dispatcher would refuse (no matching definition), naming them.
    """
    from .. import errors

    sigs = getattr(kernel, "_gpulab_signatures", None)
    if not sigs:
        return actual
    from numba.cuda.descriptor import cuda_target

    ctx = cuda_target.typing_context
    for sig in sigs:
        if len(sig) == len(actual) and all(
            a is not None and (a == d or ctx.can_convert(a, d) is not None) for a, d in zip(actual, sig)
        ):
            return tuple(sig)
    declared = " or ".join("(" + ", ".join(map(str, s)) + ")" for s in sigs)
    bad = ""
    if len(sigs) == 1 and len(sigs[0]) == len(actual):
        for name, a, d in zip(names, actual, sigs[0]):
            if a is None or (a != d and ctx.can_convert(a, d) is None):
                bad = f" Argument `{name}` is {a}, which does not convert to {d}."
                break
    raise errors.LaunchConfigError(
        f"kernel `{kernel.py_func.__name__}` was declared for argument types {declared}, but "
        f"this launch passes ({', '.join(map(str, actual))}): numba.cuda would refuse it with "
        f"'No matching definition'.{bad} Pass arrays of the declared dtype and dimensions."
    )


def convert_scalars(values, argtypes):
    """Scalar arguments converted to their declared numba types (arrays are left alone)."""
    from numba.cuda import types
    from numba.np.numpy_support import as_dtype

    out = []
    for v, t in zip(values, argtypes):
        if isinstance(t, (types.Number, types.Boolean)) and not hasattr(v, "_gpulab_array"):
            v = as_dtype(t).type(v)
        out.append(v)
    return out


def declared_device_signature(disp):
    """(argument dtypes, return dtype) of a device function compiled for one declared signature,
    None otherwise; scalar types only (None in a slot: leave that argument alone)."""
    if getattr(disp, "_can_compile", True) or len(getattr(disp, "overloads", {})) != 1:
        return None
    from numba.cuda import types
    from numba.np.numpy_support import as_dtype

    argtypes, cres = next(iter(disp.overloads.items()))

    def dt(t):
        return as_dtype(t) if isinstance(t, (types.Number, types.Boolean)) else None

    return [dt(t) for t in argtypes], dt(cres.signature.return_type)
