"""Figures for number formats: bit layouts, ranges, dot-product error against K, FP8 scaling."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from gpulab.models import formats as F
from gpulab.plots.style import MIN_FONT_PT

WIDTH_IN = 6.7  # the book's text column (676 CSS px = 6.76 in at 100 dpi): figures are no wider


def plain_log_ticks(ax):
    """Label log axes 0.001, 1e-06, 100 instead of mathtext powers of ten, whose exponents are
    drawn at 70 % of the tick size (below MIN_FONT_PT)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
        if scale == "log":
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())
    return ax


_COLORS = {"sign": "#d62728", "exponent": "#1f77b4", "mantissa": "#2ca02c", "int": "#9467bd"}


def bit_layout(names=None, ax=None):
    """One bar per format, split into sign, exponent and mantissa bits."""
    names = list(names or F.FORMATS)
    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH_IN, 0.45 * len(names) + 0.9))
    for y, n in enumerate(names):
        f = F.get(n)
        parts = (
            [("int", 8)]
            if f.kind == "int"
            else [("sign", 1), ("exponent", f.exp_bits), ("mantissa", f.man_bits)]
        )
        x0 = 0
        for part, w in parts:
            ax.barh(y, w, left=x0, color=_COLORS[part], edgecolor="white")
            if w >= 2:
                ax.text(x0 + w / 2, y, str(w), ha="center", va="center", color="white", fontsize=MIN_FONT_PT)
            x0 += w
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("bits")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in _COLORS.values()]
    ax.legend(handles, ["sign", "exponent", "mantissa", "integer (two's complement)"], loc="lower right")
    ax.set_title("bit layouts (tf32 is 19 bits kept in a 32-bit register)")
    return ax


def ranges(names=("fp32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3"), values=None, ax=None):
    """Representable magnitudes per format on a log axis: subnormal range (light), normal range
    (dark); optionally a histogram of |values| underneath to see what overflows or underflows."""
    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH_IN, 0.5 * len(names) + 1.5))
    for y, n in enumerate(names):
        f = F.get(n)
        lo, mn, hi = np.log10([f.min_subnormal, f.min_normal, f.max])
        ax.barh(y, mn - lo, left=lo, color="#aec7e8")
        ax.barh(y, hi - mn, left=mn, color="#1f77b4")
        ax.text(hi + 0.3, y, f"max {f.max:.3g}", va="center", fontsize=MIN_FONT_PT)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("log10 |value|")
    if values is not None:
        v = np.abs(np.asarray(values, dtype=float))
        v = v[v > 0]
        ax2 = ax.twinx()
        ax2.hist(np.log10(v), bins=80, color="orange", alpha=0.4)
        ax2.set_yticks([])
    ax.set_title("range of each format: light = subnormal, dark = normal")
    return ax


def dot_error_vs_k(results, ax=None):
    """Median relative error of a length-K dot product against K, one line per
    (input format, accumulator) from :func:`gpulab.models.formats.dot_errors`."""
    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH_IN, 4.5))
    styles = {"fp32": "-o", "fp16": "--s", "bf16": ":^", "fp64": "-."}
    for res in results:
        for acc in ("fp32", "fp16", "bf16", "fp64"):
            if acc in res:
                err = np.maximum(np.asarray(res[acc]), 1e-12)
                ax.loglog(res["k"], err, styles[acc], label=f"{res['in_fmt']} inputs, {acc} accumulate")
    ax.set_xlabel("K (length of the dot product)")
    ax.set_ylabel("median relative error")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title("dot-product error against K (inputs uniform in [0, 1))")
    return plain_log_ticks(ax)


def scaling_error(x, fmt="fp8_e4m3", ax=None):
    """Per-element relative error of storing ``x`` in FP8 without and with a per-tensor amax
    scale, against the element's magnitude."""
    x = np.asarray(x, dtype=float).ravel()
    raw = F.quantize(x, fmt, saturate=True)
    scaled, s = F.quantize_scaled(x, fmt)
    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH_IN, 4))
    ax.loglog(
        np.abs(x), np.maximum(np.abs(raw - x) / np.abs(x), 1e-6), ".", ms=3, label="unscaled", alpha=0.6
    )
    ax.loglog(
        np.abs(x),
        np.maximum(np.abs(scaled - x) / np.abs(x), 1e-6),
        ".",
        ms=3,
        label=f"scaled by amax (scale = {s:.3g})",
        alpha=0.6,
    )
    ax.axhline(F.get(fmt).unit_roundoff, color="k", lw=0.8, ls=":", label="unit roundoff")
    ax.set_xlabel("|x|")
    ax.set_ylabel("relative error (floored at 1e-6)")
    ax.legend()
    ax.set_title(f"{fmt}: error per element, 1.0 = lost entirely")
    return plain_log_ticks(ax)
