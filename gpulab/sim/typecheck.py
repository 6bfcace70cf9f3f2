"""Type-check a kernel with numba.cuda's own front end on the CPU before the simulator runs it.

The simulator executes the kernel's Python source with numpy, so on its own it would run code
numba.cuda never compiles (``out.data[:] = x.data``, numpy calls, imports). Before a launch we
run numba-cuda's untyped and typed passes (bytecode → IR → type inference) for the argument
types of this launch, and stop there: no lowering, no NVVM, no driver, so it works on any CPU.
Results are cached per (function, argument types): a repeated launch costs one dict look-up.

Device functions the kernel calls are typed by numba through their dispatcher, which asks for
the current device's compute capability; with no GPU, :func:`fake_device` answers sm_90 for the
length of the check (compilation stays at LLVM IR, which needs no driver either).
"""

import contextlib
import re
import threading
import warnings
import types as _pytypes

from .. import errors

_CACHE = {}
_LOCK = threading.RLock()
CC = (9, 0)  # compute capability assumed when typing without a GPU (H200, sm_90)


def enabled():
    """False under NUMBA_ENABLE_CUDASIM=1, where numba.cuda is Numba's simulator (no compiler)."""
    try:
        from numba.cuda.core import config

        return not config.ENABLE_CUDASIM
    except Exception:
        return False


@contextlib.contextmanager
def fake_device():
    """Let numba-cuda type device functions without a GPU: report compute capability ``CC``."""
    import numba.cuda.dispatcher as disp
    from ..backends.gpu import available as gpu_available

    if gpu_available():
        yield
        return
    dev = _pytypes.SimpleNamespace(compute_capability=CC, name="gpulab-typing (no GPU)")
    with _LOCK:
        old = disp.get_current_device
        disp.get_current_device = lambda: dev
        try:
            yield
        finally:
            disp.get_current_device = old


def _pipeline_class():
    from numba.cuda import compiler
    from numba.cuda.core.compiler_machinery import FunctionPass, PassManager, register_pass

    @register_pass(mutates_CFG=False, analysis_only=True)
    class GpulabTypesDone(FunctionPass):
        """Ends the pipeline after type inference (nothing to lower: the simulator runs it)."""

        _name = "gpulab_types_done"

        def __init__(self):
            FunctionPass.__init__(self)

        def run_pass(self, state):
            state.cr = state.typemap
            return False

    class TypeOnlyCUDACompiler(compiler.CUDACompiler):
        """numba-cuda's CUDA pipeline up to and including type inference."""

        def define_pipelines(self):
            dpb = compiler.DefaultPassBuilder
            pm = PassManager("gpulab typing")
            for impl, desc in dpb.define_untyped_pipeline(self.state).passes:
                pm.add_pass(
                    compiler.CUDATranslateBytecode if impl is compiler.TranslateByteCode else impl, desc
                )
            for impl, desc in dpb.define_typed_pipeline(self.state).passes:
                pm.add_pass(impl, desc)
            pm.add_pass(GpulabTypesDone, "gpulab: stop after typing")
            pm.finalize()
            return [pm]

    return TypeOnlyCUDACompiler


_PIPELINE = []


def _type_only(fn, argtypes):
    from numba.cuda import compiler, utils
    from numba.cuda import types
    from numba.cuda.descriptor import cuda_target

    if not _PIPELINE:
        _PIPELINE.append(_pipeline_class())
    flags = compiler.CUDAFlags()
    flags.no_compile = flags.no_cpython_wrapper = flags.no_cfunc_wrapper = True
    flags.error_model = "numpy"
    flags.compute_capability = CC
    with utils.numba_target_override(), fake_device():
        pipe = _PIPELINE[0](
            cuda_target.typing_context,
            cuda_target.target_context,
            None,
            tuple(argtypes),
            types.void,
            flags,
            {},
        )
        pipe.compile_extra(fn)


_ARRAY_TYPES = {}


def argument_types(args):
    """numba's types for launch arguments, as numba.cuda's dispatcher would see them.

    An array's type depends only on dtype, ndim, layout and flags: cached on those, since
    numba's typeof costs tens of microseconds per array and a launch is often a millisecond.
    """
    import numpy as np
    from numba.core.typing.typeof import Purpose, typeof

    out = []
    for a in args:
        key = None
        if type(a) is np.ndarray:
            f = a.flags
            key = (a.dtype, a.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
            if key in _ARRAY_TYPES:
                out.append(_ARRAY_TYPES[key])
                continue
        try:
            t = typeof(a, Purpose.argument)
        except ValueError:
            t = None
        if key is not None:
            _ARRAY_TYPES[key] = t
        out.append(t)
    return tuple(out)


_NOISE = re.compile(
    r"^\s*(Failed in .* pipeline \(step: .*\)|During: .*|File \".*\", line \d+:|"
    r"\^|def .*:|There are \d+ candidate implementations:|- Of which .*|"
    r"Intrinsic of function .*|Overload of function .*|With argument\(s\): .*|No match\.|<source .*>|)\s*$"
)


def _summary(exc, fn):
    """numba's message without the pipeline banner, file excerpts and 'During:' trailers."""
    text = str(exc)
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # numba may colour its messages
    keep = []
    src_lines = {s.strip() for s in _source_lines(fn).values() if s.strip()}
    for line in text.splitlines():
        if _NOISE.match(line) or line.strip() in src_lines:
            continue
        if line.strip() not in keep:
            keep.append(line.strip())
    return "\n".join(keep[:6]) or type(exc).__name__


def _source_lines(fn):
    import inspect

    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return {}
    return {first + k: t.rstrip("\n") for k, t in enumerate(lines)}


def _line_of(exc, fn):
    """The kernel source line numba's error points at (its loc, else the last 'line N' of fn)."""
    loc = getattr(exc, "loc", None)
    fname = fn.__code__.co_filename
    if loc is not None and getattr(loc, "line", None) and getattr(loc, "filename", fname) == fname:
        return int(loc.line)
    hits = re.findall(r'File "([^"]*)", line (\d+)', str(exc))
    hits += re.findall(r"^During: .* at (.+) \((\d+)\)\s*$", str(exc), re.M)
    for f, n in reversed(hits):
        if f.endswith(fname.rsplit("/", 1)[-1]):
            return int(n)
    # some errors (numba core's TypingError inside numba-cuda's typing) carry no location: the
    # type-inference frame that raised it holds the statement being typed
    tb, found = exc.__traceback__, None
    while tb is not None:
        for name in ("loc", "inst", "self", "stmt"):
            v = tb.tb_frame.f_locals.get(name)
            v = v if name == "loc" else getattr(v, "loc", None)
            if getattr(v, "filename", None) == fname and getattr(v, "line", None):
                found = int(v.line)
                break
        tb = tb.tb_next
    if found is not None:
        return found
    return int(loc.line) if loc is not None and getattr(loc, "line", None) else None


def _is_numba_error(exc):
    """True for numba's verdicts on the code (typing, unsupported construct, bytecode, and
    numba's own internal errors: numba would fail the same way compiling it for a GPU)."""
    import numba.core.errors as core_errors
    from numba.cuda.core import errors as cuda_errors

    verdicts = (core_errors.NumbaError, cuda_errors.NumbaError, NotImplementedError)
    if isinstance(exc, verdicts) or type(exc).__name__ == "UnsupportedBytecodeError":
        return True
    # numba's typing also rejects some code with plain exceptions (cuda.grid(4): ValueError);
    # those come from numba's own frames. Failures of the check's set-up (imports, the
    # stand-in device) are not verdicts.
    if isinstance(exc, ImportError) or "SimpleNamespace" in str(exc):
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = tb.tb_frame.f_code.co_filename if tb is not None else ""
    return "/numba/" in where.replace("\\", "/")


_ARRAY_CALL = re.compile(r"function (shared|local)\.array .*?>>> array\((.*)\)", re.S)


def _hint(summary):
    """What to do about numba's refusal: the usual fix for a known case, else the general rule."""
    m = _ARRAY_CALL.search(summary)
    # a shape numba typed as a plain int (not Literal[int]) was computed, not a constant
    if m and re.search(r"\bu?int(8|16|32|64)\b", re.sub(r"class\([^)]*\)", "", m.group(2))):
        return (
            f"the shape of cuda.{m.group(1)}.array must be a compile-time constant: an int literal, "
            f"a global constant, or a tuple of those (not an expression such as TILE + 1, nor a "
            f"variable). Compute it at module level, e.g. TILE_PAD = TILE + 1, and use (TILE, TILE_PAD)."
        )
    return (
        "write the kernel in the subset of Python numba.cuda compiles: index arrays "
        "element by element (no .data, no numpy array methods or numpy calls on "
        "arrays), use math.* and cuda.* for the rest. gpulab runs only kernels numba "
        "would compile, so what passes here also compiles on a GPU."
    )


def check(fn, argtypes, what="kernel"):
    """Raise :class:`errors.NotCompilable` unless numba.cuda can type ``fn`` for ``argtypes``."""
    if not enabled() or any(t is None for t in argtypes):
        return
    key = (fn, tuple(argtypes))
    if key in _CACHE:
        if _CACHE[key] is not None:
            raise _CACHE[key]
        return
    err = None
    try:
        _type_only(fn, argtypes)
    except errors.GpulabError:
        raise
    except Exception as exc:
        if not _is_numba_error(exc):
            # a failure of the check itself, not a verdict on the kernel: say so, run it anyway
            warnings.warn(
                f"gpulab could not type-check `{fn.__name__}` with numba "
                f"({type(exc).__name__}: {exc}); running it unchecked.",
                stacklevel=3,
            )
            _CACHE[key] = None
            return
        line = _line_of(exc, fn)
        src = _source_lines(fn)
        summary = _summary(exc, fn)
        err = errors.NotCompilable(
            f"numba.cuda would refuse to compile this {what} for argument types "
            f"({', '.join(str(t) for t in argtypes)}):\n{summary}",
            kernel=fn.__name__,
            filename=fn.__code__.co_filename,
            line=line,
            source=src.get(line),
            hint=_hint(summary),
        )
        err.numba_error = exc
    _CACHE[key] = err
    if err is not None:
        raise err
