"""Occupancy explorer: architecture, threads per block, registers, shared memory -> occupancy.

Writes the current configuration and its result into a variable (default ``answer``) of the
namespace it is given, as a dict, so a check cell or an autograder reads values, not sliders.
"""

from __future__ import annotations

import ipywidgets as W

from gpulab.models import occupancy as occ
from gpulab.checks.answers import mark_starting


class OccupancyExplorer:
    """Sliders for one kernel's resources; shows blocks, warps, occupancy and every limit."""

    def __init__(
        self,
        namespace: dict | None = None,
        name: str = "answer",
        arch: str = "sm_90",
        threads: int = 256,
        registers: int = 32,
        shared: int = 0,
    ):
        self.namespace = namespace if namespace is not None else {}
        self.name = name
        style = {"description_width": "170px"}
        lay = W.Layout(width="520px")
        self.arch = W.Dropdown(
            options=list(occ.ARCHS), value=arch, description="architecture", style=style, layout=lay
        )
        a = occ.Arch  # the limits every architecture shares
        self.threads = W.IntSlider(
            value=threads,
            min=a.warp_size,
            max=a.max_threads_per_block,
            step=a.warp_size,
            description="threads per block",
            style=style,
            layout=lay,
        )
        self.registers = W.IntSlider(
            value=registers,
            min=1,
            max=a.max_registers_per_thread,
            description="registers per thread",
            style=style,
            layout=lay,
        )
        most = max(x.shared_per_block_optin for x in occ.ARCHS.values())  # 227 KB (sm_90)
        self.shared = W.IntSlider(
            value=shared,
            min=0,
            max=most,
            step=256,
            description="shared bytes per block",
            style=style,
            layout=lay,
        )
        self.out = W.HTML()
        for w in (self.arch, self.threads, self.registers, self.shared):
            w.observe(self._update, names="value")
        self.box = W.VBox([self.arch, self.threads, self.registers, self.shared, self.out])
        self._update()
        mark_starting(self.namespace, self.name)  # a check reads it as not answered yet

    def compute(self) -> occ.Occupancy:
        """The calculator's result for the current settings (opt-in shared memory allowed)."""
        a = occ.ARCHS[self.arch.value]
        return occ.occupancy(
            self.threads.value,
            self.registers.value,
            self.shared.value,
            a,
            max_dynamic_shared_bytes=a.shared_per_block_optin,
        )

    def _update(self, *_):
        o = self.compute()
        self.namespace[self.name] = {
            "arch": o.arch,
            "threads": o.threads_per_block,
            "registers": o.registers_per_thread,
            "shared": o.shared_bytes,
            "blocks_per_sm": o.blocks_per_sm,
            "active_warps": o.active_warps,
            "occupancy": o.occupancy,
            "limiter": o.limiter,
        }
        rows = "".join(
            f"<tr><td>{k}</td><td style='text-align:right'>{'∞' if v >= 2**31 - 1 else v}</td>"
            f"<td>{'&larr; binds' if k in o.limiting else ''}</td></tr>"
            for k, v in o.limits.items()
        )
        bar = "".join("&#9608;" if i < o.active_warps else "&#9617;" for i in range(o.max_warps_per_sm))
        self.out.value = (
            f"<b>{o.blocks_per_sm}</b> blocks x {o.warps_per_block} warps = "
            f"<b>{o.active_warps}</b> of {o.max_warps_per_sm} warps &rarr; occupancy "
            f"<b>{o.occupancy:.1%}</b>, limited by <b>{' = '.join(o.limiting)}</b><br>"
            f"<span style='font-family:monospace'>{bar}</span><br>"
            f"<table><tr><th>limit</th><th>blocks/SM it allows</th><th></th></tr>{rows}</table>"
            f"registers allocated per block: {o.registers_per_block:,}; shared allocated per "
            f"block: {o.shared_per_block:,} B"
            + (f"<br><b>does not fit:</b> {o.reason}" if o.reason else "")
            + f"<br><code>{self.name}['occupancy'] = {o.occupancy:.4f}</code>"
        )

    def _ipython_display_(self):
        from IPython.display import display

        display(self.box)


def explorer(namespace: dict | None = None, name: str = "answer", **kw) -> OccupancyExplorer:
    """Build and return the explorer (display it by leaving it last in a cell)."""
    return OccupancyExplorer(namespace, name, **kw)
