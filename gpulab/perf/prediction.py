"""The Prediction a ``gpulab.predict`` call returns: time, what limits it, a speed-of-light
breakdown, Nsight Compute-named counters, and per-line costs; as text and as HTML."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from textwrap import fill


def _fmt_s(s):
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} us"
    return f"{s * 1e9:.3g} ns"


@dataclass
class Prediction:
    """Predicted time of one launch on one GPU.

    ``breakdown``: one row per bound: ``seconds`` (the time that resource alone would need) and
    ``pct_of_peak`` (that time / the predicted time: how busy the resource is, as Nsight
    Compute's speed-of-light section reports it). ``metrics`` use Nsight Compute's names.
    ``lines``: per source line, predicted SASS instructions and the line's share of the time.
    """

    kernel: str
    gpu: str
    validated: bool
    time_s: float
    limiter: str
    limiter_key: str
    breakdown: list
    metrics: dict
    lines: list
    occupancy: dict
    sampling: dict
    notes: list = field(default_factory=list)
    dram_bytes_per_s: float = 0.0  # the GPU's achievable DRAM bandwidth the model used

    def bound(self, key):
        """Seconds of one bound ("dram", "l2", "l1", "shared", "issue", "atomics", "latency")."""
        for row in self.breakdown:
            if row["key"] == key:
                return row["seconds"]
        raise KeyError(f"no bound {key!r}; bounds: {[r['key'] for r in self.breakdown]}")

    def efficiency(self, key="dram"):
        """That bound's time / the predicted time (1.0 = the resource is the whole story)."""
        return self.bound(key) / self.time_s

    def dram_roofline_fraction(self, useful_bytes):
        """How close the kernel comes to moving ``useful_bytes`` (the bytes the task must read
        and write) at the GPU's DRAM bandwidth: (useful_bytes / bandwidth) / predicted time.
        Wasted sectors, too little in flight or any other limiter lower it below 1."""
        if useful_bytes <= 0:
            raise ValueError(f"useful_bytes must be positive, got {useful_bytes!r}")
        return useful_bytes / self.dram_bytes_per_s / self.time_s

    @property
    def time_us(self):
        return self.time_s * 1e6

    def _head(self):
        tag = "" if self.validated else " (NOT VALIDATED: datasheet figures only)"
        err = self.sampling.get("relative_error")
        if err is not None:
            tail = f", sampling error about {err:.1%}"
        elif self.sampling["blocks_simulated"] < self.sampling["blocks"]:
            tail = ", one block's counts scaled up (it ran long): no sampling error estimate"
        else:
            tail = ", exact"
        samp = f"simulated {self.sampling['blocks_simulated']} of {self.sampling['blocks']} blocks" + tail
        return [
            f"predicted on an {self.gpu}{tag}: kernel `{self.kernel}` takes {_fmt_s(self.time_s)}",
            f"limited by: {self.limiter}",
            f"occupancy: {self.occupancy['blocks_per_sm']} blocks/SM, "
            f"{self.occupancy['waves']} wave(s); {samp}",
        ]

    def __str__(self):
        out = self._head() + ["", "  bound                                              time    % of peak"]
        for r in self.breakdown:
            out.append(f"  {r['label']:<48} {_fmt_s(r['seconds']):>10} {r['pct_of_peak']:8.1f}%")
        out.append("")
        for k in (
            "smsp__inst_executed.sum",
            "smsp__thread_inst_executed_per_inst_executed.ratio",
            "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
            "dram__bytes_read.sum",
            "dram__bytes_write.sum",
        ):
            v = self.metrics.get(k)
            if v is not None:
                out.append(f"  {k} = {v:,.4g}")
        if self.lines:
            out += ["", "  line  share  pred. inst  source"]
            for r in self.lines:
                out.append(f"  {r['line']:>4} {r['share']:6.1%} {r['inst']:11.3g}  {r['source']}")
        out += [fill(f"note: {n}", 76, initial_indent="  ", subsequent_indent="    ") for n in self.notes]
        return "\n".join(out)

    def summary(self, width=76, top=3):
        """A few lines of at most ``width`` characters: the predicted time, what limits it and
        the ``top`` largest bounds (for a notebook cell or a check's message)."""
        tag = "" if self.validated else " (not validated)"
        rows = [r for r in self.breakdown if r["seconds"] > 0][:top]
        text = (
            f"predicted on an {self.gpu}{tag}: `{self.kernel}` takes {_fmt_s(self.time_s)}, "
            f"limited by {self.limiter}. Largest bounds: "
            + ", ".join(f"{r['key']} {_fmt_s(r['seconds'])}" for r in rows)
            + "."
        )
        return fill(text, width, subsequent_indent="  ", break_on_hyphens=False)

    def print(self):
        print(str(self))

    def _repr_html_(self):
        head = "<br>".join(escape(h) for h in self._head())
        rows = "".join(
            f"<tr><td style='text-align:left'>{escape(r['label'])}</td><td>{_fmt_s(r['seconds'])}</td>"
            f"<td style='text-align:left'><div style='background:#4c72b0;height:0.8em;"
            f"width:{min(r['pct_of_peak'], 100):.0f}px'></div></td><td>{r['pct_of_peak']:.1f}%</td></tr>"
            for r in self.breakdown
        )
        lines = "".join(
            f"<tr><td>{r['line']}</td><td>{r['share']:.1%}</td><td>{r['inst']:.3g}</td>"
            f"<td style='text-align:left'><code>{escape(r['source'])}</code></td></tr>"
            for r in self.lines
        )
        met = "".join(
            f"<tr><td style='text-align:left'><code>{escape(k)}</code></td><td>{v:,.4g}</td></tr>"
            for k, v in self.metrics.items()
        )
        return (
            f"<b>{head}</b><table><tr><th>bound</th><th>time</th><th colspan=2>% of peak"
            f"</th></tr>{rows}</table><details><summary>per source line</summary><table>"
            f"<tr><th>line</th><th>share of time</th><th>pred. SASS inst</th><th>source</th>"
            f"</tr>{lines}</table></details><details><summary>counters (Nsight Compute "
            f"names)</summary><table>{met}</table></details>"
            + "".join(f"<p><i>{escape(n)}</i></p>" for n in self.notes)
        )
