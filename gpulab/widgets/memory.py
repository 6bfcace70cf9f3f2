"""Explorers for chapters 05-07: a warp's global access pattern, a shared-memory column read,
and the halo cost of a tiled stencil.

Each writes the current setting and its counts into a variable (default ``answer``) of the
namespace it is given, so a check (or an autograder) reads a value, not a slider position.
Counts come from :mod:`gpulab.metrics` through :mod:`gpulab.plots.memory`.
"""

from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt

from gpulab.widgets import figure as wf

from gpulab.models.memory import halo_cost  # noqa: F401 (re-exported)
from gpulab.models.occupancy import Arch
from gpulab.plots import memory as pm
from gpulab.checks.answers import mark_starting

_STYLE = {"description_width": "150px"}
_LAYOUT = W.Layout(width="480px")


class _Explorer:
    def __init__(self, namespace, name):
        self.namespace = namespace if namespace is not None else {}
        self.name = name
        self.fig_out = wf.image()  # not an Output area: see gpulab.widgets.figure
        self.text = W.HTML()

    def _show(self, draw):
        fig, ax = plt.subplots(figsize=(6.6, 2.8))
        draw(ax)
        fig.tight_layout()
        wf.show(self.fig_out, fig)
        plt.close(fig)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.box)


class CoalescingExplorer(_Explorer):
    """Stride, offset and element size of a warp's load -> sectors per request and efficiency."""

    def __init__(self, namespace=None, name="answer"):
        super().__init__(namespace, name)
        self.stride = W.IntSlider(
            value=1, min=0, max=40, description="stride (elements)", style=_STYLE, layout=_LAYOUT
        )
        self.offset = W.IntSlider(
            value=0, min=0, max=32, description="offset (elements)", style=_STYLE, layout=_LAYOUT
        )
        self.elem = W.Dropdown(
            options=[1, 2, 4, 8, 16], value=4, description="element bytes", style=_STYLE, layout=_LAYOUT
        )
        for w in (self.stride, self.offset, self.elem):
            w.observe(self._update, names="value")
        self.box = W.VBox([self.stride, self.offset, self.elem, self.text, self.fig_out])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def compute(self) -> dict:
        """Addresses of the current pattern and their sector count."""
        addr = pm.warp_addresses(self.stride.value, self.offset.value, self.elem.value)
        s = pm.coalescing_summary(addr, self.elem.value)
        return {"stride": self.stride.value, "offset": self.offset.value, "elem_bytes": self.elem.value, **s}

    def _update(self, *_):
        r = self.compute()
        self.namespace[self.name] = r
        self.text.value = (
            f"<b>{r['sectors']}</b> sectors per request, {r['bytes_moved']} bytes "
            f"moved for {r['bytes_used']} used: efficiency <b>{r['efficiency']:.0%}</b>. "
            f"<code>{self.name}</code> holds stride {r['stride']}, offset {r['offset']}, "
            f"{r['elem_bytes']}-byte elements."
        )
        addr = pm.warp_addresses(r["stride"], r["offset"], r["elem_bytes"])
        self._show(lambda ax: pm.plot_sectors(addr, r["elem_bytes"], ax=ax))


class BankExplorer(_Explorer):
    """A warp reading one column of a shared tile: element size and row width -> wavefronts."""

    def __init__(self, namespace=None, name="answer"):
        super().__init__(namespace, name)
        self.elem = W.Dropdown(
            options=[4, 8], value=4, description="element bytes", style=_STYLE, layout=_LAYOUT
        )
        self.width = W.IntSlider(
            value=32, min=16, max=48, description="row width (elements)", style=_STYLE, layout=_LAYOUT
        )
        for w in (self.elem, self.width):
            w.observe(self._update, names="value")
        self.box = W.VBox([self.elem, self.width, self.text, self.fig_out])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def addresses(self):
        """Byte offsets of lane k reading tile[k, 0] of a row-major tile."""
        words = self.elem.value // 4
        return (
            pm.column_addresses(0, self.width.value * words, 4)
            if words == 1
            else pm.warp_addresses(self.width.value, 0, self.elem.value)
        )

    def compute(self) -> dict:
        """Wavefronts of the column read for the current element size and row width."""
        s = pm.bank_summary(self.addresses(), self.elem.value)
        return {"elem_bytes": self.elem.value, "row_width": self.width.value, **s}

    def _update(self, *_):
        r = self.compute()
        self.namespace[self.name] = r
        self.text.value = (
            f"column read of a tile {r['row_width']} elements wide: "
            f"<b>{r['wavefronts']}</b> wavefronts (ideal {r['ideal']}, "
            f"{r['conflicts']} conflicts). <code>{self.name}</code> holds "
            f"{r['elem_bytes']}-byte elements, row width {r['row_width']}."
        )
        addr, eb = self.addresses(), r["elem_bytes"]
        self._show(lambda ax: pm.plot_banks(addr, eb, ax=ax))


class HaloExplorer(_Explorer):
    """Tile size and radius of a tiled box blur -> global loads per pixel, threads, shared bytes."""

    def __init__(self, namespace=None, name="answer"):
        super().__init__(namespace, name)
        self.tile = W.IntSlider(
            value=16, min=8, max=64, step=8, description="TILE", style=_STYLE, layout=_LAYOUT
        )
        self.radius = W.IntSlider(value=4, min=1, max=8, description="radius R", style=_STYLE, layout=_LAYOUT)
        for w in (self.tile, self.radius):
            w.observe(self._update, names="value")
        self.box = W.VBox([self.tile, self.radius, self.text])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def _update(self, *_):
        r = halo_cost(self.tile.value, self.radius.value)
        self.namespace[self.name] = r
        ok = "fits" if r["threads_per_block"] <= Arch.max_threads_per_block else "<b>exceeds</b>"
        self.text.value = (
            f"naive: <b>{r['naive_loads_per_pixel']}</b> global loads per pixel; "
            f"tiled: <b>{r['tiled_loads_per_pixel']:.3f}</b>. "
            f"{r['threads_per_block']} threads per block ({ok} the {Arch.max_threads_per_block} limit), "
            f"{r['shared_bytes'] / 1024:.1f} KB shared. <code>{self.name}</code> holds "
            f"TILE {self.tile.value}, R {self.radius.value}."
        )


def coalescing(namespace=None, name="answer"):
    """Build the access-pattern explorer (display it by leaving it last in a cell)."""
    return CoalescingExplorer(namespace, name)


def banks(namespace=None, name="answer"):
    """Build the shared-memory column-read explorer."""
    return BankExplorer(namespace, name)


def halo(namespace=None, name="answer"):
    """Build the tiled-blur halo explorer."""
    return HaloExplorer(namespace, name)
