"""The book's colours: the Okabe-Ito palette, safe for the common colour-vision deficiencies,
with a marker and a line style per series so that no line is told apart by colour alone.

``SERIES[i]`` is the i-th line's look ({"color", "marker", "linestyle"}); ``style.apply()`` sets
matplotlib's colour cycle to ``COLORS`` so that figures without explicit colours use it too.
``tests/test_palette.py`` checks the colours stay distinguishable under simulated deuteranopia,
protanopia and tritanopia (Machado, Oliveira and Fernandes 2009, severity 1).
"""

from __future__ import annotations

# Okabe & Ito, "Color Universal Design" (2002/2008): black first for reference lines
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"

# the line colours in order of use, ordered so that the first three and four stay furthest apart
# under every simulated deficiency (yellow last: weak on white)
COLORS = (BLUE, VERMILLION, SKY_BLUE, REDDISH_PURPLE, BLUISH_GREEN, ORANGE, YELLOW)
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 2)))
SERIES = tuple({"color": c, "marker": m, "linestyle": s} for c, m, s in zip(COLORS, MARKERS, LINESTYLES))

# two-state cells (works / idle, hit / miss): colour plus a hatch on the second state
WORK, IDLE, IDLE_HATCH = BLUE, ORANGE, "///"


def series(i: int) -> dict:
    """The look of the i-th series (cycling): colour, marker and line style differ together."""
    return dict(SERIES[i % len(SERIES)])


# -- colour-vision simulation (for the tests and for checking a new figure by hand) -------------
# Machado, Oliveira & Fernandes (2009), "A Physiologically-based Model for Simulation of Color
# Vision Deficiency", IEEE TVCG 15(6): matrices for severity 1.0, applied to linear RGB.
MACHADO = {
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}


def _hex_to_srgb(c: str) -> tuple[float, float, float]:
    c = c.lstrip("#")
    return tuple(int(c[i : i + 2], 16) / 255 for i in (0, 2, 4))


def _to_linear(v: float) -> float:
    return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4


def _to_srgb(v: float) -> float:
    v = min(1.0, max(0.0, v))
    return 12.92 * v if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055


def simulate(color: str, deficiency: str = "deuteranopia") -> tuple[float, float, float]:
    """sRGB (0..1) of ``color`` as seen with ``deficiency`` (a key of :data:`MACHADO`)."""
    if deficiency not in MACHADO:
        raise ValueError(f"unknown deficiency {deficiency!r}: one of {', '.join(MACHADO)}")
    lin = [_to_linear(v) for v in _hex_to_srgb(color)]
    m = MACHADO[deficiency]
    return tuple(_to_srgb(sum(m[r][k] * lin[k] for k in range(3))) for r in range(3))


def lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB colour given as three floats in 0..1."""
    r, g, b = (_to_linear(v) for v in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t):
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(c1: str, c2: str, deficiency: str | None = None) -> float:
    """CIE76 colour difference between two hex colours, as seen with ``deficiency`` (or normal
    vision when None). About 2 is just noticeable; lines need far more."""
    a = simulate(c1, deficiency) if deficiency else _hex_to_srgb(c1)
    b = simulate(c2, deficiency) if deficiency else _hex_to_srgb(c2)
    return sum((p - q) ** 2 for p, q in zip(lab(a), lab(b))) ** 0.5
