"""Divergence explorer: pick (or type) a branch condition, see one warp's masks and E.

Runs :func:`gpulab.kernels.divergence.run_branch` on the simulator for 4 warps and writes the
condition and what was measured into a variable (default ``answer``) of the namespace.
"""

from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt

from gpulab.widgets import figure as wf

from gpulab.kernels import divergence as kd
from gpulab.checks.answers import mark_starting


class DivergenceExplorer:
    """Dropdown of conditions (or your own), data kind, traced warp -> masks and efficiency."""

    def __init__(
        self,
        namespace: dict | None = None,
        name: str = "answer",
        choice: str = "17 / 15 split (lane < 17)",
        draw: bool = True,
    ):
        self.namespace = namespace if namespace is not None else {}
        self.name = name
        self.draw = draw
        style = {"description_width": "110px"}
        self.choice = W.Dropdown(
            options=list(kd.CONDITIONS) + ["your own"],
            value=choice,
            description="condition",
            style=style,
            layout=W.Layout(width="420px"),
        )
        self.custom = W.Text(
            value="lane < 8", description="your own", placeholder="lane, warp, i, x[i], n", style=style
        )
        self.kind = W.Dropdown(
            options=["random", "sorted"], value="random", description="data x", style=style
        )
        self.warp = W.IntSlider(value=0, min=0, max=3, description="traced warp", style=style)
        self.text = W.HTML()
        self.plot = wf.image()  # not an Output area: see gpulab.widgets.figure
        for w in (self.choice, self.custom, self.kind, self.warp):
            w.observe(self._update, names="value")
        self.box = W.VBox([self.choice, self.custom, W.HBox([self.kind, self.warp]), self.text, self.plot])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def condition(self):
        """(condition text, data kind) currently selected."""
        if self.choice.value == "your own":
            return self.custom.value, self.kind.value
        cond, kind = kd.CONDITIONS[self.choice.value]
        return cond, kind

    def _update(self, *_):
        cond, kind = self.condition()
        if self.choice.value != "your own":
            self.kind.unobserve(self._update, names="value")
            self.kind.value = kind
            self.kind.observe(self._update, names="value")
        warp = self.warp.value
        try:
            r = kd.run_branch(cond, self.kind.value, n=128, block=64, trace=(warp // 2, warp % 2))
        except Exception as e:  # a condition that does not compile or run
            self.namespace[self.name] = {"condition": cond, "error": f"{type(e).__name__}: {e}"}
            self.text.value = f"<b>cannot run</b> <code>{cond}</code>: {type(e).__name__}: {e}"
            self.plot.value = b""
            return
        self.namespace[self.name] = {
            k: r[k]
            for k in (
                "condition",
                "data",
                "efficiency",
                "then_efficiency",
                "else_efficiency",
                "then_instructions",
                "else_instructions",
                "threads_then",
                "threads_else",
            )
        }

        def pct(v):
            return "not executed" if v is None else f"{v:.1%}"

        self.text.value = (
            f"<code>if {cond}:</code> on {self.kind.value} data, 128 threads = 4 warps: "
            f"{r['threads_then']} threads take the if-branch, {r['threads_else']} the else.<br>"
            f"E of the if-body line <b>{pct(r['then_efficiency'])}</b> "
            f"({r['then_instructions']} warp instructions), else-body line "
            f"<b>{pct(r['else_efficiency'])}</b> ({r['else_instructions']}); whole kernel "
            f"<b>{r['efficiency']:.1%}</b>. <code>{self.name}['efficiency'] = "
            f"{r['efficiency']:.4f}</code>"
        )
        if self.draw:
            from gpulab.plots import masks

            fig = masks.mask_timeline(r["report"])
            wf.show(self.plot, fig)
            plt.close(fig)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.box)


def explorer(namespace: dict | None = None, name: str = "answer", **kw) -> DivergenceExplorer:
    """Build and return the explorer (display it by leaving it last in a cell)."""
    return DivergenceExplorer(namespace, name, **kw)
