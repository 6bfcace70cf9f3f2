"""``cuda.fp16`` as a simulated kernel sees it: half-precision arithmetic, compares and math.

Each operation rounds its result to float16 once, as the GPU's half instructions do: the
arithmetic is computed in float32 (or float64 for ``hfma``, fused), which is wide enough that
rounding twice gives the correctly rounded half result. The transcendental functions (``hsin``,
``hexp``, ...) are approximations on a GPU; here they are float32's, rounded to half.
"""

import numpy as np

from .. import errors

F16 = np.float16


def _wide(x, dt=np.float32):
    return np.asarray(x, dtype=F16).astype(dt)


def _round(x):
    out = np.asarray(x).astype(F16)
    return out if out.ndim else out[()]


_UNARY = {
    "hneg": np.negative,
    "habs": np.abs,
    "hsqrt": np.sqrt,
    "hrsqrt": lambda x: 1 / np.sqrt(x),
    "hrcp": lambda x: 1 / x,
    "hexp": np.exp,
    "hexp2": np.exp2,
    "hexp10": lambda x: np.power(np.float32(10), x),
    "hlog": np.log,
    "hlog2": np.log2,
    "hlog10": np.log10,
    "hsin": np.sin,
    "hcos": np.cos,
    "htanh": np.tanh,
    "htanh_approx": np.tanh,
    "hfloor": np.floor,
    "hceil": np.ceil,
    "htrunc": np.trunc,
    "hrint": np.rint,
}
_BINARY = {
    "hadd": np.add,
    "hsub": np.subtract,
    "hmul": np.multiply,
    "hdiv": np.divide,
    "hmax": np.fmax,  # __hmax: a NaN operand gives the other one
    "hmin": np.fmin,
}
_COMPARE = {
    "heq": np.equal,
    "hne": np.not_equal,
    "hge": np.greater_equal,
    "hgt": np.greater,
    "hle": np.less_equal,
    "hlt": np.less,
}


class Fp16:
    """``cuda.fp16``: one method per function numba-cuda offers for kernels."""

    def __init__(self, sim):
        self._sim = sim

    def hfma(self, a, b, c):
        """a * b + c, rounded once (fused)."""
        self._sim._tally("fp16.hfma")
        with np.errstate(all="ignore"):
            return _round(_wide(a, np.float64) * _wide(b, np.float64) + _wide(c, np.float64))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        sim = self._sim
        for table, arity in ((_UNARY, 1), (_BINARY, 2), (_COMPARE, 2)):
            if name in table:
                fn = table[name]

                def op(*args, _fn=fn, _arity=arity, _cmp=table is _COMPARE):
                    sim._tally("fp16." + name)
                    if len(args) != _arity:
                        sim.ctx.error(
                            errors.KernelPythonError,
                            f"cuda.fp16.{name} takes {_arity} argument(s), got {len(args)}.",
                        )
                    with np.errstate(all="ignore"):
                        r = _fn(*(_wide(a) for a in args))
                    return r if _cmp else _round(r)

                return op
        sim.ctx.error(
            errors.UnsupportedFeature,
            f"cuda.fp16.{name} is not supported by gpulab's simulator (it has hfma, "
            f"{', '.join(sorted({**_UNARY, **_BINARY, **_COMPARE}))}).",
            hint="use the GPU backend for it, or plain float16 arithmetic (a * b + c).",
        )
