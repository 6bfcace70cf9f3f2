"""Pick a number format per tensor for a small layer Y = X @ W and see the error at once.

Every change reruns the CPU emulation (gpulab.models.formats.mixed_matmul) and writes the
current choice into a variable (default ``choice``) of the namespace it is given, so the
self-check and an autograder read a value, not the dropdowns' positions.
"""

from __future__ import annotations

import ipywidgets as W

from gpulab.models import formats as F
from gpulab.checks.answers import mark_starting


class FormatPicker:
    """Dropdowns for the storage format of X and W and for the accumulator, plus a verdict."""

    def __init__(
        self,
        namespace: dict | None = None,
        name: str = "choice",
        problem: F.BudgetProblem | None = None,
        start: dict | None = None,
    ):
        self.namespace = namespace if namespace is not None else {}
        self.name = name
        self.problem = problem or F.default_problem()
        start = start or {"x": "fp32", "w": "fp32", "acc": "fp32"}
        style = {"description_width": "150px"}
        lay = W.Layout(width="380px")
        p = self.problem
        self.x = W.Dropdown(
            options=p.x_formats, value=start["x"], description="X (activations)", style=style, layout=lay
        )
        self.w = W.Dropdown(
            options=p.w_formats, value=start["w"], description="W (weights)", style=style, layout=lay
        )
        self.acc = W.Dropdown(
            options=p.accs, value=start["acc"], description="accumulator", style=style, layout=lay
        )
        self.out = W.HTML()
        for d in (self.x, self.w, self.acc):
            d.observe(self._update, names="value")
        shown = [self.x, self.w] + ([self.acc] if len(p.accs) > 1 else [])  # one accumulator: no menu
        self.box = W.VBox(shown + [self.out])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    @property
    def value(self) -> dict:
        """The current choice as {'x': fmt, 'w': fmt, 'acc': fmt}."""
        return {"x": self.x.value, "w": self.w.value, "acc": self.acc.value}

    def evaluate(self) -> dict:
        """Error and bytes of the current choice, through the emulation."""
        c = self.value
        return dict(c, error=self.problem.error(c), bytes=self.problem.bytes(c))

    def _update(self, *_):
        r = self.evaluate()
        self.namespace[self.name] = self.value
        ok = r["error"] <= self.problem.budget
        verdict = "<span style='color:green'>within</span>" if ok else "<span style='color:red'>over</span>"
        note = ""
        if self.problem.pairs is not None and (r["x"], r["w"]) not in self.problem.pairs:
            note = (
                " <span style='color:red'>No tensor-core instruction multiplies this pair</span>: "
                "the emulation computes it, the hardware would not."
            )
        self.out.value = (
            f"relative error <b>{r['error']:.3%}</b> ({verdict} the "
            f"{self.problem.budget:.0%} budget), X + W = <b>{r['bytes']}</b> bytes."
            f"{note} <code>{self.name} = {self.value}</code>"
        )

    def _ipython_display_(self):
        from IPython.display import display

        display(self.box)


def picker(namespace: dict | None = None, name: str = "choice", **kw) -> FormatPicker:
    """Build and return the picker (display it by leaving it last in a cell)."""
    return FormatPicker(namespace, name, **kw)
