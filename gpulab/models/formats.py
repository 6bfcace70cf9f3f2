"""Number formats used by tensor cores, emulated on the CPU with numpy + ml_dtypes.

Every format is a real dtype (``ml_dtypes`` for bfloat16 and the FP8 pair), so rounding,
overflow and subnormals are the library's IEEE-style ones, not hand-written bit tricks.
TF32 has no storage dtype (it lives in 32-bit registers), so it is emulated by rounding the
float32 mantissa to 10 bits. INT8 and FP8 are used with a per-tensor scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product as _product

import ml_dtypes
import numpy as np

__all__ = [
    "Format",
    "FORMATS",
    "get",
    "format_table",
    "quantize",
    "round_tf32",
    "bit_fields",
    "amax_scale",
    "quantize_scaled",
    "DelayedScaling",
    "range_report",
    "sequential_dot",
    "dot_errors",
    "mixed_matmul",
    "relative_error",
    "BudgetProblem",
    "default_problem",
    "SM90_MMA_PAIRS",
    "native_pair",
    "native_problem",
]


@dataclass(frozen=True)
class Format:
    """One number format: its storage dtype, bit fields and how it is used (float or int)."""

    name: str
    dtype: object  # numpy / ml_dtypes dtype used for storage (float32 for tf32)
    bits: int  # bits of the value (19 for tf32: 1 + 8 + 10)
    storage_bytes: int  # bytes it takes in memory
    exp_bits: int
    man_bits: int
    kind: str = "float"  # "float" or "int"
    has_inf: bool = True

    # -- properties read from the dtype (ml_dtypes.finfo), not typed in by hand --
    @property
    def max(self) -> float:
        """Largest finite value."""
        if self.kind == "int":
            return float(ml_dtypes.iinfo(self.dtype).max)
        if self.name == "tf32":
            return float(np.float32((2 - 2.0**-10) * 2.0**127))
        return float(ml_dtypes.finfo(self.dtype).max)

    @property
    def min_normal(self) -> float:
        """Smallest positive normal value (1 for ints: the unit step)."""
        if self.kind == "int":
            return 1.0
        return float(ml_dtypes.finfo(self.dtype).smallest_normal)

    @property
    def min_subnormal(self) -> float:
        """Smallest positive value (subnormal); below half of it everything rounds to zero."""
        if self.kind == "int":
            return 1.0
        if self.name == "tf32":
            return 2.0 ** (-126 - 10)
        return float(ml_dtypes.finfo(self.dtype).smallest_subnormal)

    @property
    def eps(self) -> float:
        """Gap between 1 and the next representable value (2^-mantissa bits)."""
        if self.kind == "int":
            return 1.0
        if self.name == "tf32":
            return 2.0**-10
        return float(ml_dtypes.finfo(self.dtype).eps)

    @property
    def unit_roundoff(self) -> float:
        """Worst relative error of round-to-nearest for normal values: eps / 2."""
        return self.eps / 2

    @property
    def decimal_digits(self) -> float:
        """About how many significant decimal digits the mantissa carries."""
        return float(-np.log10(self.unit_roundoff)) if self.kind == "float" else float("nan")


def _fmt(name, dtype, exp_bits, man_bits, storage_bytes=None, kind="float", has_inf=True):
    bits = 1 + exp_bits + man_bits if kind == "float" else 8
    nbytes = storage_bytes or np.dtype(dtype).itemsize
    return Format(name, dtype, bits, nbytes, exp_bits, man_bits, kind, has_inf)


FORMATS: dict[str, Format] = {
    "fp32": _fmt("fp32", np.float32, 8, 23),
    "tf32": _fmt("tf32", np.float32, 8, 10, storage_bytes=4),
    "fp16": _fmt("fp16", np.float16, 5, 10),
    "bf16": _fmt("bf16", ml_dtypes.bfloat16, 8, 7),
    "fp8_e4m3": _fmt("fp8_e4m3", ml_dtypes.float8_e4m3fn, 4, 3, has_inf=False),
    "fp8_e5m2": _fmt("fp8_e5m2", ml_dtypes.float8_e5m2, 5, 2),
    "int8": _fmt("int8", np.int8, 0, 7, kind="int", has_inf=False),
}


def get(fmt) -> Format:
    """Accept a Format or its name."""
    return fmt if isinstance(fmt, Format) else FORMATS[fmt]


def format_table(names=None) -> list[dict]:
    """One row per format: bits, fields, range, epsilon; read from the dtypes themselves."""
    rows = []
    for n in names or FORMATS:
        f = get(n)
        rows.append(
            dict(
                format=f.name,
                bits=f.bits,
                bytes=f.storage_bytes,
                exponent=f.exp_bits,
                mantissa=f.man_bits,
                max=f.max,
                min_normal=f.min_normal,
                min_subnormal=f.min_subnormal,
                eps=f.eps,
                digits=round(f.decimal_digits, 1),
            )
        )
    return rows


# --------------------------------------------------------------------------- rounding


def round_tf32(x, mode: str = "rne") -> np.ndarray:
    """Round float32 values to TF32 (10 mantissa bits), returned as float32.

    ``rne``: round to nearest, ties to even (what this chapter's emulation uses);
    ``rna``: ties away from zero (PTX ``cvt.rna.tf32.f32``); ``trunc``: drop the low 13
    bits (what the PTX ISA says ``wgmma`` does with raw fp32 data).
    """
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    low = np.uint64(0x1FFF)
    if mode == "rne":
        u = u + np.uint64(0x0FFF) + ((u >> np.uint64(13)) & np.uint64(1))
    elif mode == "rna":
        u = u + np.uint64(0x1000)
    elif mode != "trunc":
        raise ValueError(f"unknown mode {mode!r}")
    out = (u & ~low).astype(np.uint32).view(np.float32)
    special = ~np.isfinite(x)  # inf / nan pass through unchanged
    return np.where(special, x, out).astype(np.float32)


def quantize(x, fmt, saturate: bool = False) -> np.ndarray:
    """Round values to a float format and return them as float64 (for error analysis).

    Without ``saturate`` out-of-range values do what the dtype does (inf for fp16/bf16/e5m2,
    NaN for e4m3, which has no infinity); with it they are clipped to +-max first, like
    PTX ``cvt ... .satfinite``. INT8 needs a scale: use :func:`quantize_scaled`.
    """
    f = get(fmt)
    x = np.asarray(x, dtype=np.float64)
    if f.kind == "int":
        raise ValueError("int8 needs a scale: use quantize_scaled(x, 'int8')")
    if saturate:
        x = np.clip(x, -f.max, f.max)
    if f.name == "tf32":
        with np.errstate(over="ignore"):
            return round_tf32(x.astype(np.float32)).astype(np.float64)
    if f.name == "fp32":
        with np.errstate(over="ignore"):
            return x.astype(np.float32).astype(np.float64)
    # ml_dtypes casts from float32 for the small types; go through float64 -> dtype directly
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(f.dtype).astype(np.float64)


def bit_fields(value, fmt) -> dict:
    """Sign, exponent and mantissa bit strings of one value stored in ``fmt``."""
    f = get(fmt)
    if f.kind == "int":
        v = np.array([value]).astype(np.int8)
        return dict(bits=format(int(v.view(np.uint8)[0]), "08b"), value=int(v[0]))
    if f.name == "tf32":
        v = round_tf32(np.array([value], dtype=np.float32))
        raw = format(int(v.view(np.uint32)[0]), "032b")[:19]  # top 19 bits hold tf32
        stored = float(v[0])
    else:
        v = np.array([value], dtype=np.float64).astype(f.dtype)
        width = np.dtype(f.dtype).itemsize * 8
        raw = format(int(v.view(f"uint{width}")[0]), f"0{width}b")
        stored = float(v.astype(np.float64)[0])
    return dict(
        sign=raw[0],
        exponent=raw[1 : 1 + f.exp_bits],
        mantissa=raw[1 + f.exp_bits : 1 + f.exp_bits + f.man_bits],
        bits=raw,
        value=stored,
    )


# --------------------------------------------------------------------------- scaling


def amax_scale(amax: float, fmt, margin: int = 0) -> float:
    """Per-tensor scale that maps |x| <= amax onto the format's range: max / amax / 2^margin.

    This is the recipe of NVIDIA Transformer Engine's FP8 scaling (scale = fp8_max / amax,
    divided by 2^margin for headroom); for INT8 the max is 127.
    """
    f = get(fmt)
    if not np.isfinite(amax) or amax <= 0:
        return 1.0
    return float(f.max / amax / 2.0**margin)


def quantize_scaled(x, fmt, scale: float | None = None, margin: int = 0):
    """Scale, round (saturating) and unscale: returns (dequantized float64 values, scale).

    ``scale=None`` takes it from the tensor's own amax (per-tensor current scaling).
    INT8 is symmetric: round half to even, clip to [-127, 127].
    """
    f = get(fmt)
    x = np.asarray(x, dtype=np.float64)
    if scale is None:
        scale = amax_scale(float(np.max(np.abs(x))) if x.size else 0.0, f, margin)
    y = x * scale
    if f.kind == "int":
        q = np.clip(np.rint(y), -127, 127)
    else:
        q = quantize(y, f, saturate=True)
    return q / scale, scale


class DelayedScaling:
    """FP8 'delayed scaling' in miniature: the scale for this step comes from the amax
    history of earlier steps, so a tensor that suddenly grows overflows (and is clipped)."""

    def __init__(self, fmt="fp8_e4m3", history_len: int = 16, margin: int = 0):
        self.fmt = get(fmt)
        self.history: list[float] = []
        self.history_len = history_len
        self.margin = margin

    def __call__(self, x):
        """Quantize ``x`` with the scale from the history, then record its amax."""
        x = np.asarray(x, dtype=np.float64)
        amax_now = float(np.max(np.abs(x)))
        amax = max(self.history) if self.history else amax_now
        scale = amax_scale(amax, self.fmt, self.margin)
        deq, _ = quantize_scaled(x, self.fmt, scale=scale)
        clipped = float(np.mean(np.abs(x * scale) > self.fmt.max))
        self.history = (self.history + [amax_now])[-self.history_len :]
        return deq, dict(scale=scale, amax_used=amax, amax_now=amax_now, clipped=clipped)


def range_report(values, fmts=("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")) -> list[dict]:
    """For each format: fraction of values that overflow (inf/NaN), flush to zero, or land
    in the subnormal range (fewer bits of precision), when stored unscaled."""
    v = np.asarray(values, dtype=np.float64).ravel()
    nz = v != 0
    rows = []
    for n in fmts:
        f = get(n)
        q = quantize(v, f)
        rows.append(
            dict(
                format=f.name,
                overflow=float(np.mean(~np.isfinite(q) & np.isfinite(v))),
                underflow=float(np.mean((q == 0) & nz)),
                subnormal=float(np.mean((np.abs(q) < f.min_normal) & (q != 0))),
            )
        )
    return rows


# --------------------------------------------------------------------------- dot products


def _acc_dtype(acc):
    return {"fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp64": np.float64}[acc]


def sequential_dot(a, b, acc="fp32") -> np.ndarray:
    """Dot products along the last axis, one product at a time, rounding the running sum to
    the accumulator format after every add (products of fp16/bf16/fp8 inputs are exact in
    float64, as they are inside a tensor core)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    dt = _acc_dtype(acc)
    s = np.zeros(np.broadcast_shapes(a.shape, b.shape)[:-1], dtype=dt)
    prods = a * b
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(prods.shape[-1]):
            s = (s.astype(np.float64) + prods[..., k]).astype(dt)
    return s.astype(np.float64)


def dot_errors(
    ks, in_fmt="fp16", accs=("fp32", "fp16"), trials: int = 64, dist: str = "uniform", seed: int = 0
) -> dict:
    """Median relative error of a length-K dot product against K, per accumulator.

    Inputs are drawn in float64, rounded to ``in_fmt`` (scaled per vector for fp8/int8) and
    accumulated one term at a time in each accumulator format; the reference is the exact
    (float64) dot product of the *original* inputs, so input rounding and accumulation error
    both show. ``dist='uniform'`` draws from [0, 1) (sums grow with K, the hard case for a
    short accumulator); ``'normal'`` draws signed values that partly cancel.
    """
    rng = np.random.default_rng(seed)
    f = get(in_fmt)
    ks = [int(k) for k in ks]
    kmax = max(ks)
    if dist == "uniform":
        a, b = rng.random((2, trials, kmax))
    elif dist == "normal":
        a, b = rng.standard_normal((2, trials, kmax))
    else:
        raise ValueError(dist)
    out = {"k": ks, "in_fmt": f.name, "dist": dist, "trials": trials}
    for acc in accs:
        errs = []
        for k in ks:
            x, y = a[:, :k], b[:, :k]
            if f.kind == "int" or f.name.startswith("fp8"):
                qx = np.stack([quantize_scaled(r, f)[0] for r in x])
                qy = np.stack([quantize_scaled(r, f)[0] for r in y])
            else:
                qx, qy = quantize(x, f), quantize(y, f)
            got = sequential_dot(qx, qy, acc)
            ref = np.sum(x * y, axis=-1)
            errs.append(float(np.median(np.abs(got - ref) / np.abs(ref))))
        out[acc] = errs
    return out


# --------------------------------------------------------------------------- mixed matmul


def _q(x, fmt):
    f = get(fmt)
    if f.kind == "int" or f.name.startswith("fp8"):
        return quantize_scaled(x, f)[0]
    return quantize(x, f)


def mixed_matmul(x, w, fmt_x="fp16", fmt_w="fp16", acc="fp32") -> np.ndarray:
    """Y = X @ W with X and W stored in the given formats (FP8/INT8 with per-tensor amax
    scales) and the K-sum accumulated in ``acc`` one term at a time."""
    qx, qw = _q(x, fmt_x), _q(w, fmt_w)
    return sequential_dot(qx[:, None, :], qw.T[None, :, :], acc)


def relative_error(got, ref) -> float:
    """Frobenius-norm relative error ||got - ref|| / ||ref|| (inf if got is not finite)."""
    got = np.asarray(got, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


@dataclass
class BudgetProblem:
    """A small layer Y = X @ W: choose storage formats for X and W and an accumulator so the
    relative error stays under ``budget`` while moving as few bytes of X and W as possible."""

    x: np.ndarray
    w: np.ndarray
    budget: float
    x_formats: tuple = ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8")
    w_formats: tuple = ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8")
    accs: tuple = ("fp32", "fp16")
    pairs: frozenset | None = None  # allowed (x, w) format pairs; None: every pair

    @property
    def reference(self) -> np.ndarray:
        """The exact answer (float64)."""
        return self.x @ self.w

    def error(self, choice: dict) -> float:
        """Relative error of one choice {'x': fmt, 'w': fmt, 'acc': fmt} via the emulation."""
        y = mixed_matmul(self.x, self.w, choice["x"], choice["w"], choice.get("acc", self.accs[0]))
        return relative_error(y, self.reference)

    def bytes(self, choice: dict) -> int:
        """Bytes of X and W in memory for this choice (what a memory-bound layer pays)."""
        return self.x.size * get(choice["x"]).storage_bytes + self.w.size * get(choice["w"]).storage_bytes

    def all_choices(self):
        """Every combination, with its error and bytes (the grader's search space)."""
        rows = []
        for fx, fw, acc in _product(self.x_formats, self.w_formats, self.accs):
            if self.pairs is not None and (fx, fw) not in self.pairs:
                continue
            c = dict(x=fx, w=fw, acc=acc)
            rows.append(dict(c, error=self.error(c), bytes=self.bytes(c)))
        return rows


def default_problem(seed: int = 7) -> BudgetProblem:
    """The chapter's exercise: activations X with a few huge outlier channels (as found in
    transformer layers), well-behaved weights W, K = 512, error budget 3 %."""
    rng = np.random.default_rng(seed)
    m, k, n = 16, 512, 16
    x = rng.standard_normal((m, k))
    x[:, rng.choice(k, 4, replace=False)] *= 1000.0  # a few outlier channels
    x += 1.0  # an offset: sums do not cancel
    w = rng.standard_normal((k, n)) * 0.05 + 0.02
    return BudgetProblem(x=x, w=w, budget=0.03)


# --------------------------------------------------------------------------- what sm_90 multiplies

#: (x, w) operand formats a Hopper (sm_90) tensor-core instruction multiplies as they are, per the
#: PTX ISA's ``mma`` and ``wgmma`` type tables: FP16 x FP16, BF16 x BF16, TF32 x TF32, FP8 x FP8
#: (E4M3 and E5M2 in any combination), 8-bit integer x 8-bit integer (accumulating in s32);
#: FP32 x FP32 runs on the CUDA cores (FFMA). No instruction mixes families (FP8 x INT8,
#: FP16 x INT8, ...): such a layer converts one operand in registers first (dequantisation).
SM90_MMA_PAIRS = frozenset(
    [("fp32", "fp32"), ("bf16", "bf16"), ("fp16", "fp16"), ("int8", "int8")]
    + [(a, b) for a in ("fp8_e4m3", "fp8_e5m2") for b in ("fp8_e4m3", "fp8_e5m2")]
)


def native_pair(fmt_x: str, fmt_w: str) -> bool:
    """True when sm_90 multiplies X in ``fmt_x`` by W in ``fmt_w`` directly (SM90_MMA_PAIRS)."""
    return (fmt_x, fmt_w) in SM90_MMA_PAIRS


def native_problem(seed: int = 7) -> BudgetProblem:
    """:func:`default_problem` restricted to the pairs Hopper's tensor cores multiply, always
    accumulating in FP32 (s32 for INT8, which is exact): only the storage formats are chosen."""
    p = default_problem(seed)
    return BudgetProblem(x=p.x, w=p.w, budget=p.budget, accs=("fp32",), pairs=SM90_MMA_PAIRS)
