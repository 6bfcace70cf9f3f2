"""Matplotlib figures inside widgets as PNG ``Image`` widgets, never as ``Output`` areas.

Why: when a notebook is executed headless (nbclient: Jupyter Book, nbconvert, Otter), nbclient
imitates a browser for every ``ipywidgets.Output`` that receives output. It sends a ``comm_msg``
back to the kernel on the shell channel while it is itself awaiting the cell's ``execute_reply``
on that same socket, and jupyter_client's ``Session.send`` writes it through a blocking shadow of
the asyncio socket (jupyter/nbclient#312, jupyter/jupyter_client#1059). That send consumes the
socket's edge-triggered wake-up, so a reply that arrives meanwhile is only noticed when the
cell's timeout fires: the cell "takes" exactly the timeout and then succeeds. An ``Image``
widget's value is plain widget state: nbclient stores it and sends nothing back.
"""

from __future__ import annotations

import io

import ipywidgets as W


def figure(figsize: tuple[float, float]):
    """A new (figure, axes) pair that no pyplot backend will display by itself, in the book's
    style (gpulab.plots.style: no text below its minimum size)."""
    from matplotlib.figure import Figure

    from gpulab.plots import style

    style.apply()
    fig = Figure(figsize=figsize)
    return fig, fig.add_subplot()


def png(fig, dpi: int | None = None) -> bytes:
    """The figure rendered as PNG bytes (tight bounding box), at the style's PNG resolution
    (``savefig.dpi``: 2 pixels per displayed pixel, sharp on high-DPI screens and in print)."""
    from gpulab.plots import style

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or style.RC["savefig.dpi"], bbox_inches="tight")
    return buf.getvalue()


def png_width(data: bytes) -> int:
    """Pixel width of PNG bytes, read from the IHDR chunk."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not PNG data: expected the 8-byte PNG signature")
    return int.from_bytes(data[16:20], "big")


def image() -> W.Image:
    """An empty PNG image widget to show figures in."""
    return W.Image(format="png")


def show(view: W.Image, fig, dpi: int | None = None) -> None:
    """Put ``fig`` into the image widget ``view``, drawn at ``dpi`` (the style's PNG resolution
    by default) but displayed at the figure's size at ``figure.dpi`` (100 px per inch), so a
    high-resolution PNG is sharp rather than twice as large."""
    from gpulab.plots import style

    dpi = dpi or style.RC["savefig.dpi"]
    data = png(fig, dpi)
    view.value = data
    view.width = str(round(png_width(data) * style.RC["figure.dpi"] / dpi))
