"""Chapter 10 explorers: Amdahl's curve, "which p is worth buying", and scaling out.

Each explorer writes its current answer into a variable of the namespace it is given (default
``answer``), so later cells and an autograder read a value, not a slider position. Figures are
drawn to PNG images so that the static book keeps a snapshot of them.
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from gpulab.models import amdahl as A
from gpulab.models import comms as C
from gpulab.plots import amdahl as P
from gpulab.widgets import figure as F
from gpulab.checks.answers import mark_starting

__all__ = [
    "AmdahlExplorer",
    "WorthBuying",
    "ScalingExplorer",
    "amdahl_explorer",
    "worth_buying",
    "scaling_explorer",
]

_STYLE = {"description_width": "190px"}
_LAY = W.Layout(width="560px")
_POWERS = [2**k for k in range(13)]


class _Explorer:
    def __init__(self, namespace, name):
        self.namespace = namespace if namespace is not None else {}
        self.name = name

    def _ipython_display_(self):
        from IPython.display import display

        display(self.box)


class AmdahlExplorer(_Explorer):
    """f and p sliders; the curve S(p) for that f, the point, the ceiling and the waste.
    Writes S(p) (rounded to 0.1) into ``namespace[name]``."""

    def __init__(self, namespace=None, name="answer", f=0.95, p=100):
        super().__init__(namespace, name)
        self.f = W.FloatSlider(
            value=f,
            min=0.0,
            max=0.999,
            step=0.001,
            readout_format=".3f",
            description="parallel fraction f",
            style=_STYLE,
            layout=_LAY,
        )
        self.p = W.IntSlider(value=p, min=1, max=4096, description="processors p", style=_STYLE, layout=_LAY)
        self.img = F.image()
        self.out = W.HTML()
        for w in (self.f, self.p):
            w.observe(self._update, names="value")
        self.box = W.VBox([self.f, self.p, self.out, self.img])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def compute(self) -> dict:
        """The model's numbers for the current slider values."""
        f, p = self.f.value, self.p.value
        return {
            "speedup": A.speedup(f, p),
            "limit": A.limit(f),
            "efficiency": A.efficiency(f, p),
            "wasted": A.wasted(f, p),
        }

    def _update(self, *_):
        r = self.compute()
        self.namespace[self.name] = round(r["speedup"], 1)
        lim = "no ceiling" if np.isinf(r["limit"]) else f"ceiling {r['limit']:.1f}x"
        self.out.value = (
            f"S = <b>{r['speedup']:.2f}x</b> ({lim}); efficiency "
            f"<b>{100 * r['efficiency']:.0f}%</b>; about <b>{r['wasted']:.0f}</b> of "
            f"{self.p.value} processors' worth buys nothing. "
            f"<code>{self.name} = {self.namespace[self.name]}</code>"
        )
        fig, ax = F.figure((6, 3.2))
        pm = max(4096, self.p.value)
        grid = np.logspace(0, np.log2(pm), 100, base=2)
        ax.plot(grid, grid, color="0.6", lw=0.8, label="ideal")
        P.draw_speedup(ax, self.f.value, pm, mark_p=self.p.value)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("p")
        ax.set_ylabel("S(p)")
        ax.legend(loc="upper left")
        F.show(self.img, fig)


class WorthBuying(_Explorer):
    """Pick a processor count p (powers of two) for a given f and a minimum efficiency: a table of
    what every doubling buys, and an immediate verdict on the pick. Writes the pick into
    ``namespace[name]``."""

    def __init__(self, namespace=None, name="answer", f=0.95, min_efficiency=0.5, p=1):
        super().__init__(namespace, name)
        self.f = W.FloatSlider(
            value=f,
            min=0.5,
            max=0.999,
            step=0.001,
            readout_format=".3f",
            description="parallel fraction f",
            style=_STYLE,
            layout=_LAY,
        )
        self.e = W.FloatSlider(
            value=min_efficiency,
            min=0.1,
            max=1.0,
            step=0.05,
            description="minimum efficiency S/p",
            style=_STYLE,
            layout=_LAY,
        )
        self.p = W.SelectionSlider(options=_POWERS, value=p, description="buy p =", style=_STYLE, layout=_LAY)
        self.table = W.HTML()
        self.verdict = W.HTML()
        self._touched = False  # no verdict (no red cross) before the reader has moved a control
        for w in (self.f, self.e, self.p):
            w.observe(self._on_change, names="value")
        self.box = W.VBox([self.f, self.e, self.p, self.verdict, self.table])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def _on_change(self, change):
        self._touched = True
        self._update(change)

    def best(self) -> int:
        """The largest power of two whose efficiency still meets the minimum."""
        ok = [p for p in _POWERS if A.efficiency(self.f.value, p) >= self.e.value - 1e-12]
        return max(ok) if ok else 1

    def _update(self, *_):
        f, e, pick = self.f.value, self.e.value, self.p.value
        self.namespace[self.name] = pick
        rows, prev = [], 1.0
        for p in _POWERS:
            s = A.speedup(f, p)
            eff = s / p
            style = ' style="background:#e8f4e8"' if p == pick else ""
            mark = "" if eff >= e - 1e-12 else ' style="color:#b00"'
            rows.append(
                f"<tr{style}><td>{p}</td><td>{s:.2f}</td><td>+{100 * (s / prev - 1):.0f}%</td>"
                f"<td{mark}>{100 * eff:.0f}%</td></tr>"
            )
            prev = s
        self.table.value = (
            "<table><tr><th>p</th><th>S(p)</th><th>gain over p/2</th>"
            "<th>efficiency</th></tr>" + "".join(rows) + "</table>"
        )
        best = self.best()
        if not self._touched:
            msg = (
                f"&#9998; Starting at p = {pick}: move <b>buy p</b> to the largest power of two whose "
                f"efficiency stays at &ge; {100 * e:.0f}%; the verdict appears here."
            )
        elif pick == best:
            msg = f"&#9989; p = {pick}: the largest power of two still at &ge; {100 * e:.0f}% efficiency."
        elif pick > best:
            msg = (
                f"&#10060; p = {pick} runs at {100 * A.efficiency(f, pick):.0f}% efficiency, below "
                f"{100 * e:.0f}%: you are paying for processors that mostly wait on the serial part."
            )
        else:
            msg = (
                f"&#10060; p = {pick} is affordable, but doubling still keeps efficiency at "
                f"{100 * A.efficiency(f, 2 * pick):.0f}% &ge; {100 * e:.0f}%: you can buy more."
            )
        self.verdict.value = msg + f" <code>{self.name} = {pick}</code>"


class ScalingExplorer(_Explorer):
    """A data-parallel step on p GPUs: compute shrinks with p (strong) or not (weak), the gradient
    all-reduce does not. Writes the best p (strong scaling) into ``namespace[name]``."""

    def __init__(self, namespace=None, name="answer", alpha_us: float = 10.0):
        super().__init__(namespace, name)
        if not alpha_us > 0:
            raise ValueError(f"alpha_us (seconds per all-reduce step, in us) must be > 0, got {alpha_us}")
        self.link = W.Dropdown(
            options=list(C.LINKS),
            value="NVLink 4 (H100/H200 SXM)",
            description="link",
            style=_STYLE,
            layout=_LAY,
        )
        self.compute_ms = W.FloatLogSlider(
            value=200,
            base=10,
            min=0,
            max=4,
            step=0.05,
            description="compute on 1 GPU (ms)",
            style=_STYLE,
            layout=_LAY,
        )
        self.serial_ms = W.FloatSlider(
            value=1.0, min=0, max=50, step=0.5, description="serial per step (ms)", style=_STYLE, layout=_LAY
        )
        self.grad_gb = W.FloatLogSlider(
            value=1.0,
            base=10,
            min=-3,
            max=2,
            step=0.05,
            description="gradient bytes (GB)",
            style=_STYLE,
            layout=_LAY,
        )
        self.alpha_us = W.FloatLogSlider(
            value=alpha_us,
            base=10,
            min=-1,
            max=3,
            step=0.05,
            description="alpha per step (us)",
            style=_STYLE,
            layout=_LAY,
        )
        self.algo = W.ToggleButtons(options=["ring", "tree", "best"], value="ring", description="all-reduce")
        self.overlap = W.FloatSlider(
            value=0.0,
            min=0,
            max=1,
            step=0.05,
            description="all-reduce hidden by compute",
            style=_STYLE,
            layout=_LAY,
        )
        self.img = F.image()
        self.out = W.HTML()
        ctrls = (
            self.link,
            self.compute_ms,
            self.serial_ms,
            self.grad_gb,
            self.alpha_us,
            self.algo,
            self.overlap,
        )
        for w in ctrls:
            w.observe(self._update, names="value")
        self.box = W.VBox([*ctrls, self.out, self.img])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def model(self) -> C.StepModel:
        """The StepModel for the current controls."""
        return C.StepModel(
            serial_s=self.serial_ms.value / 1e3,
            compute_s=self.compute_ms.value / 1e3,
            grad_bytes=self.grad_gb.value * 1e9,
            alpha=self.alpha_us.value * 1e-6,
            bandwidth=C.LINKS[self.link.value].per_direction,
            algorithm=self.algo.value,
            overlap=self.overlap.value,
        )

    def _update(self, *_):
        m = self.model()
        best = C.best_p(m, 1024)
        s_best = C.scaling(m, [best])["speedup"][0]
        comm = C.allreduce(best, m.grad_bytes, m.alpha, m.bandwidth, m.algorithm)
        self.namespace[self.name] = best
        self.out.value = (
            f"strong scaling peaks at <b>p = {best}</b> with speedup <b>{s_best:.1f}x</b>; "
            f"there one all-reduce takes {comm * 1e3:.2f} ms against "
            f"{m.compute_s / best * 1e3:.2f} ms of compute per GPU. "
            f"<code>{self.name} = {best}</code>"
        )
        if best > C.NVSWITCH_DOMAIN_GPUS:
            self.out.value += (
                f"<br>Past {C.NVSWITCH_DOMAIN_GPUS} GPUs (hatched) the model keeps this link's "
                "bandwidth and alpha as set: a what-if, not a prediction for a real cluster."
            )
        fig, ax = F.figure((6, 3.2))
        ps = np.unique(np.logspace(0, 10, 60, base=2).astype(int))
        ax.plot(ps, ps, color="0.6", lw=0.8, label="ideal")
        ax.plot(ps, C.scaling(m, ps, "strong")["speedup"], label="strong (fixed batch)")
        ax.plot(ps, C.scaling(m, ps, "weak")["speedup"], label="weak (batch grows with p)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlim(ps.min(), ps.max())
        P.shade_beyond(ax, C.NVSWITCH_DOMAIN_GPUS, f"p > {C.NVSWITCH_DOMAIN_GPUS}: what-if")
        ax.set_xlabel("GPUs p")
        ax.set_ylabel("speedup")
        ax.legend()
        F.show(self.img, fig)


def amdahl_explorer(namespace=None, name="answer", **kw) -> AmdahlExplorer:
    """Build the f/p explorer (display it by leaving it last in a cell)."""
    return AmdahlExplorer(namespace, name, **kw)


def worth_buying(namespace=None, name="answer", **kw) -> WorthBuying:
    """Build the "which p is worth buying" explorer."""
    return WorthBuying(namespace, name, **kw)


def scaling_explorer(namespace=None, name="answer", **kw) -> ScalingExplorer:
    """Build the scaling-out explorer."""
    return ScalingExplorer(namespace, name, **kw)
