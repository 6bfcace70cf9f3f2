"""What a launch returns: counters under Nsight Compute's names, per line, and traces."""

from dataclasses import dataclass, field
from html import escape

from . import metrics


@dataclass
class LineStats:
    """Counters of one source line of the kernel."""

    line: int
    source: str
    counters: dict

    @property
    def inst(self):
        return self.counters.get(metrics.INST_EXECUTED, 0)

    @property
    def efficiency(self):
        """Average active lanes per warp-level instruction on this line, / 32."""
        inst = self.inst
        return self.counters.get(metrics.THREAD_INST_EXECUTED, 0) / (metrics.WARP * inst) if inst else None

    def get(self, name, default=0):
        return self.counters.get(name, default)


@dataclass
class Report:
    """The result of ``gpulab.launch``.

    ``metrics`` uses the exact Nsight Compute metric names (``gpulab.metrics``), so the same
    names work with ``ncu --metrics`` on a real GPU. On the GPU backend only timings are filled.
    """

    kernel: str
    backend: str
    grid: tuple
    block: tuple
    metrics: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)
    mask_history: list = field(default_factory=list)
    accesses: list = field(default_factory=list)
    shuffles: list = field(default_factory=list)
    barriers: int = 0
    atomics: dict = field(default_factory=dict)  # thread-level atomic operations per memory space
    # warp-level executions (>= 1 active lane) of each cuda.* call, keyed by the name after
    # "cuda." ("shfl_down_sync", "atomic.add", "syncthreads", ...); simulator only
    intrinsics: dict = field(default_factory=dict)
    # line -> thread-level accesses that conflict on paper but write the value already there
    # (racecheck reports no hazard for them); simulator only
    benign_races: dict = field(default_factory=dict)
    steps: int = 0
    wall_s: float = 0.0
    kernel_s: float = None
    compile_s: float = None  # GPU backend: numba's compile before the timed launch (0 if cached)
    traced_warp: tuple = (0, 0)
    # kind of trace ("mask_history", "accesses", "shuffles") -> True when it hit its cap
    # (gpulab.sim.trace.LIMITS) and later records of the traced warp were not kept
    truncated: dict = field(default_factory=dict)

    # -- derived figures -------------------------------------------------------------------
    def _m(self, name):
        return self.metrics.get(name, 0)

    @property
    def warp_efficiency(self):
        """Average active lanes per warp-level instruction / 32 (None without counters)."""
        if metrics.THREADS_PER_INST not in self.metrics:
            return None
        return self.metrics[metrics.THREADS_PER_INST] / metrics.WARP

    def sectors_per_request(self, op="ld"):
        """Global-memory sectors per request for loads ("ld") or stores ("st")."""
        req = self._m(metrics.GLOBAL_REQUESTS[op])
        return self._m(metrics.GLOBAL_SECTORS[op]) / req if req else None

    def wavefronts_per_instruction(self, op="ld"):
        """Shared-memory wavefronts per warp-level shared load/store (1.0 = conflict-free)."""
        inst = self._m(metrics.SHARED_INSTRUCTIONS[op])
        return self._m(metrics.SHARED_WAVEFRONTS[op]) / inst if inst else None

    def bank_conflicts(self, op=None):
        """Shared-memory bank conflicts (extra wavefronts), for ld, st or both."""
        ops = ("ld", "st") if op is None else (op,)
        return sum(self._m(metrics.SHARED_BANK_CONFLICTS[o]) for o in ops)

    def accesses_of(self, array=None, space=None, op=None):
        """The traced warp's memory instructions, in order, filtered by array name, space
        ("global"/"shared") and op ("ld"/"st"); None matches anything."""
        if space not in (None, "global", "shared"):
            raise ValueError(f"space={space!r}: use 'global', 'shared' or None")
        if op not in (None, "ld", "st"):
            raise ValueError(f"op={op!r}: use 'ld', 'st' or None")
        return [
            a
            for a in self.accesses
            if (array is None or a["array"] == array)
            and (space is None or a["space"] == space)
            and (op is None or a["op"] == op)
        ]

    def line_of(self, text):
        """The LineStats of the first kernel line containing ``text``."""
        for ls in self.lines.values():
            if text in ls.source:
                return ls
        raise KeyError(f"no line of `{self.kernel}` contains {text!r}")

    def predict(self, gpu="H200", registers=32):
        """This simulated launch's predicted time on ``gpu`` (a ``gpulab.perf.Prediction``);
        from the report's own counts, so DRAM bytes are taken as all sectors requested."""
        from .perf import from_report

        return from_report(self, gpu=gpu, registers=registers)

    # -- presentation ----------------------------------------------------------------------
    def _rows(self):
        rows = [("backend", self.backend), ("grid x block", f"{self.grid} x {self.block}")]
        if self.kernel_s is not None:
            rows.append(("kernel time", f"{self.kernel_s * 1e6:.1f} us"))
        if self.compile_s:
            rows.append(("compile time (not in kernel time)", f"{self.compile_s * 1e3:.1f} ms"))
        rows.append(("wall time", f"{self.wall_s * 1e3:.2f} ms"))
        if self.metrics:
            rows.append(("warp execution efficiency", f"{self.warp_efficiency:.1%}"))
            for op, label in (("ld", "loads"), ("st", "stores")):
                req = self._m(metrics.GLOBAL_REQUESTS[op])
                if req:
                    rows.append(
                        (
                            f"global {label}",
                            f"{req} requests, "
                            f"{self._m(metrics.GLOBAL_SECTORS[op])} sectors "
                            f"({self.sectors_per_request(op):.2f} per request)",
                        )
                    )
                inst = self._m(metrics.SHARED_INSTRUCTIONS[op])
                if inst:
                    rows.append(
                        (
                            f"shared {label}",
                            f"{inst} instructions, "
                            f"{self._m(metrics.SHARED_WAVEFRONTS[op])} wavefronts, "
                            f"{self._m(metrics.SHARED_BANK_CONFLICTS[op])} bank conflicts",
                        )
                    )
            rows.append(("barriers executed", str(self.barriers)))
        return rows

    def line_table(self):
        """Per-line rows: line, instructions, efficiency, global sectors/request, shared wavefronts."""
        out = []
        for ln in sorted(self.lines):
            ls = self.lines[ln]
            req = ls.get(metrics.GLOBAL_REQUESTS["ld"]) + ls.get(metrics.GLOBAL_REQUESTS["st"])
            sec = ls.get(metrics.GLOBAL_SECTORS["ld"]) + ls.get(metrics.GLOBAL_SECTORS["st"])
            sh = ls.get(metrics.SHARED_INSTRUCTIONS["ld"]) + ls.get(metrics.SHARED_INSTRUCTIONS["st"])
            wf = ls.get(metrics.SHARED_WAVEFRONTS["ld"]) + ls.get(metrics.SHARED_WAVEFRONTS["st"])
            out.append(
                {
                    "line": ln,
                    "source": ls.source.strip(),
                    "inst": ls.inst,
                    "efficiency": ls.efficiency,
                    "sectors_per_request": sec / req if req else None,
                    "wavefronts_per_inst": wf / sh if sh else None,
                }
            )
        return out

    def __str__(self):
        width = max(len(k) for k, _ in self._rows())
        head = f"gpulab report: kernel `{self.kernel}`"
        body = "\n".join(f"  {k:<{width}}  {v}" for k, v in self._rows())
        return head + "\n" + body

    def _repr_html_(self):
        rows = "".join(
            f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(v)}</td></tr>"
            for k, v in self._rows()
        )
        html = f"<b>gpulab report: kernel <code>{escape(self.kernel)}</code></b><table>{rows}</table>"
        if self.lines:

            def fmt(v, f):
                return "" if v is None else format(v, f)

            lrows = "".join(
                f"<tr><td>{r['line']}</td><td style='text-align:left'><code>{escape(r['source'])}</code>"
                f"</td><td>{r['inst']}</td><td>{fmt(r['efficiency'], '.0%')}</td>"
                f"<td>{fmt(r['sectors_per_request'], '.2f')}</td>"
                f"<td>{fmt(r['wavefronts_per_inst'], '.2f')}</td></tr>"
                for r in self.line_table()
            )
            html += (
                "<details><summary>per source line</summary><table><tr><th>line</th>"
                "<th>source</th><th>warp inst</th><th>efficiency</th>"
                "<th>sectors/request</th><th>wavefronts/inst</th></tr>"
                f"{lrows}</table></details>"
            )
        return html
