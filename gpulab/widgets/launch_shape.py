"""Launch-shape explorer: image size and block shape -> grid, idle threads, and a picture of
which block and warp handles each pixel (drawn from a simulator run).

Writes the chosen shape and its counts into a variable (default ``answer``) of the namespace.
"""

from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt

from gpulab.widgets import figure as wf

from gpulab.models import launch as lm
from gpulab.checks.answers import mark_starting

SIDES = [1, 2, 4, 8, 12, 16, 20, 24, 32, 64, 128, 256, 512, 1024]


class LaunchShapeExplorer:
    """Sliders for a width x height image and a (bx, by) block; shows the launch it makes."""

    def __init__(
        self,
        namespace: dict | None = None,
        name: str = "answer",
        width: int = 20,
        height: int = 13,
        block=(8, 8),
        draw: bool = True,
        max_side: int = 128,
    ):
        self.namespace = namespace if namespace is not None else {}
        self.name = name
        self.draw = draw
        style = {"description_width": "120px"}
        self.width = W.IntSlider(value=width, min=1, max=max_side, description="image width", style=style)
        self.height = W.IntSlider(value=height, min=1, max=max_side, description="image height", style=style)
        self.bx = W.Dropdown(options=SIDES, value=block[0], description="block x", style=style)
        self.by = W.Dropdown(options=SIDES, value=block[1], description="block y", style=style)
        self.text = W.HTML()
        self.plot = wf.image()  # not an Output area: see gpulab.widgets.figure
        for w in (self.width, self.height, self.bx, self.by):
            w.observe(self._update, names="value")
        self.box = W.VBox(
            [W.HBox([W.VBox([self.width, self.height]), W.VBox([self.bx, self.by])]), self.text, self.plot]
        )
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def compute(self) -> dict:
        """Counts for the current shape (see :func:`gpulab.models.launch.summary`)."""
        return lm.summary((self.width.value, self.height.value), (self.bx.value, self.by.value))

    def _update(self, *_):
        s = self.compute()
        self.namespace[self.name] = {
            "width": self.width.value,
            "height": self.height.value,
            "block": s["block"],
            "grid": s["grid"],
            "threads_per_block": s["threads_per_block"],
            "idle_threads": s["idle_threads"],
            "valid": s["valid"],
        }
        warn = ""
        if not s["valid"]:
            warn = f"<br><b>not a valid launch</b>: {s['threads_per_block']} threads per block > 1024"
        elif s["empty_lanes_per_block"]:
            warn = (
                f"<br>{s['threads_per_block']} threads per block is not a multiple of 32: "
                f"{s['empty_lanes_per_block']} lanes of every block's last warp are empty"
            )
        self.text.value = (
            f"grid <b>{s['grid']}</b> of blocks <b>{s['block']}</b> = {s['blocks']} blocks, "
            f"{s['threads']:,} threads in {s['warps']:,} warps for {s['elements']:,} pixels: "
            f"<b>{s['idle_threads']:,}</b> idle threads; lanes doing work "
            f"{s['lane_utilization']:.1%}{warn}"
            f"<br><code>{self.name}['block'] = {s['block']}</code>"
        )
        if self.draw and s["valid"] and s["threads"] <= 20_000:
            from gpulab.plots import launch as lp

            fig = lp.owners(self.width.value, self.height.value, s["block"])
            wf.show(self.plot, fig)
            plt.close(fig)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.box)


def explorer(namespace: dict | None = None, name: str = "answer", **kw) -> LaunchShapeExplorer:
    """Build and return the explorer (display it by leaving it last in a cell)."""
    return LaunchShapeExplorer(namespace, name, **kw)
