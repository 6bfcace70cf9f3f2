"""Little's-law explorer: bandwidth, latency and bytes per request -> warps needed per SM.

The widget writes its current result into a variable (default ``answer``) of the namespace
it is given, so code after it (and an autograder) reads a value, not a slider position.
"""

from __future__ import annotations

import ipywidgets as W

from gpulab.models import latency as lat
from gpulab.checks.answers import mark_starting


class LittleExplorer:
    """Sliders for a GPU's memory system; shows bytes in flight and warps needed per SM."""

    def __init__(
        self, namespace: dict | None = None, name: str = "answer", spec=lat.H200, latency_ns: float = 700.0
    ):
        self.namespace = namespace if namespace is not None else {}
        self.name = name
        style = {"description_width": "170px"}
        lay = W.Layout(width="520px")
        self.bandwidth = W.FloatSlider(
            value=spec.bandwidth / 1e12,
            min=0.1,
            max=10,
            step=0.1,
            description="bandwidth (TB/s)",
            style=style,
            layout=lay,
        )
        self.latency = W.FloatSlider(
            value=latency_ns, min=50, max=2000, step=10, description="latency (ns)", style=style, layout=lay
        )
        self.req = W.Dropdown(
            options=[32, 64, 128, 256, 512],
            value=128,
            description="bytes per warp request",
            style=style,
            layout=lay,
        )
        self.inflight = W.IntSlider(
            value=1, min=1, max=8, description="loads in flight per warp", style=style, layout=lay
        )
        self.n_sm = W.IntSlider(value=spec.n_sm, min=1, max=200, description="SMs", style=style, layout=lay)
        self.max_warps = spec.max_warps_per_sm
        self.out = W.HTML()
        for w in (self.bandwidth, self.latency, self.req, self.inflight, self.n_sm):
            w.observe(self._update, names="value")
        self.box = W.VBox([self.bandwidth, self.latency, self.req, self.inflight, self.n_sm, self.out])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def compute(self) -> dict:
        """The model's numbers for the current slider values."""
        bw, L = self.bandwidth.value * 1e12, self.latency.value * 1e-9
        warps = lat.warps_needed(bw, L, self.n_sm.value, self.req.value, self.inflight.value)
        return {
            "bytes_in_flight": lat.bytes_in_flight(bw, L),
            "bytes_per_sm": lat.bytes_in_flight_per_sm(bw, L, self.n_sm.value),
            "warps_per_sm": warps,
            "fits": warps <= self.max_warps,
        }

    def _update(self, *_):
        r = self.compute()
        self.namespace[self.name] = r["warps_per_sm"]
        verdict = "fits in one SM's" if r["fits"] else "exceeds one SM's"
        self.out.value = (
            f"<b>{r['bytes_in_flight'] / 1e6:.2f} MB</b> in flight on the chip, "
            f"<b>{r['bytes_per_sm'] / 1e3:.1f} KB</b> per SM &rarr; "
            f"<b>{r['warps_per_sm']}</b> warps per SM ({verdict} {self.max_warps}-warp limit). "
            f"<code>{self.name} = {r['warps_per_sm']}</code>"
        )

    def _ipython_display_(self):
        from IPython.display import display

        display(self.box)


def explorer(namespace: dict | None = None, name: str = "answer", **kw) -> LittleExplorer:
    """Build and return the explorer (display it by leaving it last in a cell)."""
    return LittleExplorer(namespace, name, **kw)
