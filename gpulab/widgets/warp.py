"""Shuffle-loop explorer: choose a shuffle kind and its offsets, see where every lane reads from.

The widget writes ``{"kind": ..., "offsets": [...]}`` into a variable (default ``answer``) of the
namespace it is given, so the check cell after it (and an autograder) reads a value, not a widget.
"""

from __future__ import annotations

import ipywidgets as W

from gpulab.models.shuffle import loop_offsets_problem
from gpulab.plots import shuffle as sh
from gpulab.widgets import figure as wf
from gpulab.checks.answers import mark_starting


def parse_offsets(text: str) -> list[int]:
    """'16, 8,4 2' -> [16, 8, 4, 2]; raises ValueError on anything else."""
    parts = [p for p in text.replace(",", " ").split() if p]
    offs = [int(p) for p in parts]
    problem = loop_offsets_problem(offs)
    if problem:
        raise ValueError(problem)
    return offs


class ShuffleLoopExplorer:
    """Pick ``v += shfl_<kind>_sync(FULL_MASK, v, d)`` offsets; see lane movement and who has the total."""

    def __init__(
        self,
        namespace: dict | None = None,
        name: str = "answer",
        kind: str = "down",
        offsets: str = "16, 8, 4, 2, 1",
    ):
        self.namespace = namespace if namespace is not None else {}
        self.name = name
        style = {"description_width": "110px"}
        self.kind = W.Dropdown(options=list(sh.KINDS), value=kind, description="shuffle kind", style=style)
        self.offsets = W.Text(
            value=offsets, description="offsets d", style=style, layout=W.Layout(width="330px")
        )
        self.check = W.Button(description="Check my answer", button_style="info")
        self.status = W.HTML()
        self.verdict = W.HTML()
        self.plot = wf.image()  # not an Output area: see gpulab.widgets.figure
        self.kind.observe(self._update, names="value")
        self.offsets.observe(self._update, names="value")
        self.check.on_click(self._check)
        self.box = W.VBox(
            [W.HBox([self.kind, self.offsets]), self.status, self.plot, W.HBox([self.check, self.verdict])]
        )
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def _update(self, *_):
        self.verdict.value = ""
        try:
            offs = parse_offsets(self.offsets.value)
        except ValueError as e:
            self.status.value = f"<span style='color:#b00'>offsets: {e}</span>"
            return
        kind = self.kind.value
        self.namespace[self.name] = {"kind": kind, "offsets": offs}
        steps = sh.steps_from_rule(kind, offs)
        good = sh.lanes_with_total(steps)
        who = (
            "every lane"
            if len(good) == 32
            else "no lane"
            if not good
            else "lane(s) " + ", ".join(map(str, good))
        )
        self.status.value = (
            f"<code>{self.name} = {self.namespace[self.name]}</code> &mdash; "
            f"after the loop, <b>{who}</b> hold(s) the warp total"
        )
        # within the book's text column (6.7 in at 100 px per inch) for up to 8 offsets
        fig, ax = wf.figure((max(3.8, min(6.6, 2.4 + 0.75 * len(offs))), 5.4))
        sh.draw_shuffles(steps, ax=ax, title=f"v += shfl_{kind}_sync(FULL_MASK, v, d)")
        wf.show(self.plot, fig)

    def _check(self, *_):
        from gpulab.checks.warp import check_allreduce_loop

        res = check_allreduce_loop(self.namespace.get(self.name))
        color = "#070" if res.passed else "#b00"
        self.verdict.value = f"<span style='color:{color}'>{res!r}</span>"

    def _ipython_display_(self):
        from IPython.display import display

        display(self.box)


def explorer(namespace: dict | None = None, name: str = "answer", **kw) -> ShuffleLoopExplorer:
    """Build and return the explorer (display it by leaving it last in a cell)."""
    return ShuffleLoopExplorer(namespace, name, **kw)
