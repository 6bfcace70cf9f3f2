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
    """A new (figure, axes) pair that no pyplot backend will display by itself."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.add_subplot()


def png(fig, dpi: int = 90) -> bytes:
    """The figure rendered as PNG bytes (tight bounding box)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def image() -> W.Image:
    """An empty PNG image widget to show figures in."""
    return W.Image(format="png")


def show(view: W.Image, fig, dpi: int = 90) -> None:
    """Put ``fig`` into the image widget ``view``."""
    view.value = png(fig, dpi)
