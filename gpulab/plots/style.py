"""One matplotlib style for every figure of the book: legible on a laptop screen and in print.

Notebook figures are emitted as SVG with text kept as text (``svg.fonttype: none``), so they
stay sharp at any zoom and tests can read every label's size; PNGs (savefig, widget images)
are drawn at 200 dpi. No text is smaller than ``MIN_FONT_PT`` at the figure's natural size.
"""
from __future__ import annotations

MIN_FONT_PT = 9.0  # the smallest text a figure may carry (tests/test_book_html.py enforces it)

RC = {
    "figure.dpi": 100,            # on-screen size in a notebook: 1 inch = 100 px
    "savefig.dpi": 200,           # PNG files: 2x pixels for high-DPI screens and print
    "svg.fonttype": "none",       # SVG text stays <text> (searchable, measurable), not paths
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
    """Set the book's rcParams (idempotent; cheap enough to call at import)."""
    import matplotlib

    matplotlib.rcParams.update(RC)


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
