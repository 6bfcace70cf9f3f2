"""One matplotlib style for every figure of the book: legible on a laptop screen and in print.

Notebook figures are emitted as SVG with text kept as text (``svg.fonttype: none``), so they
stay sharp at any zoom and tests can read every label's size; PNGs (savefig, widget images)
are drawn at 200 dpi. No text is smaller than ``MIN_FONT_PT`` at the figure's natural size.
"""

from __future__ import annotations

MIN_FONT_PT = 9.0  # the smallest text a figure may carry (tests/test_book_html.py enforces it)

RC = {
    "figure.dpi": 100,  # on-screen size in a notebook: 1 inch = 100 px
    "savefig.dpi": 200,  # PNG files: 2x pixels for high-DPI screens and print
    "svg.fonttype": "none",  # SVG text stays <text> (searchable, measurable), not paths
    "font.size": 10.0,
    "axes.titlesize": 11.0,
    "axes.labelsize": 10.0,
    "xtick.labelsize": 9.0,
    "ytick.labelsize": 9.0,
    "legend.fontsize": 9.0,
    "legend.title_fontsize": 9.0,
    "figure.titlesize": 11.0,
    "figure.constrained_layout.use": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def apply() -> None:
    """Set the book's rcParams (idempotent; cheap enough to call at import), the colour cycle
    included: the colour-blind-safe palette of :mod:`gpulab.plots.palette`."""
    import matplotlib
    from cycler import cycler

    from .palette import COLORS

    matplotlib.rcParams.update(RC)
    matplotlib.rcParams["axes.prop_cycle"] = cycler(color=list(COLORS))


def use_svg_inline() -> bool:
    """Inside an IPython kernel, make inline figures SVG; returns whether it did."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None or not hasattr(ip, "kernel"):
        return False
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return False
    set_matplotlib_formats("svg")
    return True


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_tick_labels(ax, axes: str = "xy", powers: bool = False) -> None:
    """Label the log-scale axes of ``ax`` with full-size text (1, 2, 4 ... 1024, or 10⁻⁵) instead
    of matplotlib's mathtext powers, whose superscripts fall below ``MIN_FONT_PT``. With
    ``powers``, every decade is written as a power (10¹, 10², ... 10⁷), so an axis that spans
    many decades does not mix 1000 with 10⁵."""
    import math

    from matplotlib.ticker import FuncFormatter, NullFormatter

    def label(v, _pos=None):
        if v <= 0:
            return ""
        if powers:
            e = math.log10(v)
            if abs(e - round(e)) < 1e-9:
                return "10" + str(round(e)).translate(_SUPERSCRIPT)
        if 1e-3 <= v < 1e5:
            return f"{v:g}"
        e = math.log10(v)
        if abs(e - round(e)) < 1e-9:
            return "10" + str(round(e)).translate(_SUPERSCRIPT)
        e2 = math.log2(v)
        if abs(e2 - round(e2)) < 1e-9:
            return "2" + str(round(e2)).translate(_SUPERSCRIPT)
        return f"{v:.3g}"

    for name in axes:
        axis = ax.xaxis if name == "x" else ax.yaxis
        if axis.get_scale() == "log":
            axis.set_major_formatter(FuncFormatter(label))
            axis.set_minor_formatter(NullFormatter())
