"""A small recorder of host and kernel intervals, to see where a pipeline waits.

Host work is timed with ``time.perf_counter``. Kernels are timed two ways: on a GPU with CUDA
events recorded around an asynchronous launch (placed on the host clock through a reference
event; on an idle stream the first event is reached before the kernel is submitted, so a kernel
interval then also holds the host's launch path), on the CPU simulator with host timers around
``gpulab.launch`` (the simulator runs the kernel on the host thread, so there host and kernel intervals coincide by construction).
Gaps on the kernel lane are time the GPU had nothing to run: the host was the bottleneck.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

__all__ = ["Interval", "Timeline", "median_time", "load_result", "from_records"]


@dataclass(frozen=True)
class Interval:
    """One busy interval on a lane, in seconds since the timeline started."""

    lane: str
    name: str
    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


def _merge(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of possibly overlapping (start, end) pairs, sorted."""
    out: list[list[float]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


@dataclass
class Timeline:
    """Records named intervals on lanes ("host", "kernel", ...); see the module docstring.

    ``backend``: "gpu" launches with numba.cuda and CUDA events; "sim" goes through
    ``gpulab.launch(..., backend="sim")``; "auto" picks "gpu" when numba.cuda sees a GPU.
    ``launcher`` replaces the simulator launch (tests use it to stay independent of the simulator).
    """

    backend: str = "auto"
    launcher: Callable | None = None
    clock: Callable[[], float] = time.perf_counter
    intervals: list[Interval] = field(default_factory=list)

    def __post_init__(self):
        if self.backend == "auto":
            self.backend = "gpu" if _gpu_available() else "sim"
        if self.backend not in ("gpu", "sim"):
            raise ValueError("backend must be 'gpu', 'sim' or 'auto'")
        self._pending: list[tuple[str, object, object]] = []
        self._t0 = self.clock()
        self._ref = None
        if self.backend == "gpu":
            from numba import cuda

            cuda.synchronize()
            self._ref = cuda.event()
            self._ref.record()
            self._ref.synchronize()
            self._t_ref = self.clock() - self._t0

    # -- recording ------------------------------------------------------------------------
    def now(self) -> float:
        """Seconds since the timeline started."""
        return self.clock() - self._t0

    def add(self, lane: str, name: str, start: float, end: float) -> Interval:
        """Record an interval given in seconds since the start."""
        if end < start:
            raise ValueError(f"interval ends before it starts: {start} > {end}")
        iv = Interval(lane, name, start, end)
        self.intervals.append(iv)
        return iv

    @contextmanager
    def span(self, lane: str, name: str) -> Iterator[None]:
        """Time the body of a with-block as one interval on ``lane``."""
        start = self.now()
        try:
            yield
        finally:
            self.add(lane, name, start, self.now())

    def host(self, name: str):
        """Time the body of a with-block as host work."""
        return self.span("host", name)

    def launch(self, kernel, grid, block, *args, name: str | None = None, **kwargs):
        """Launch a kernel and record its host-side launch interval and its kernel interval.

        GPU: asynchronous ``kernel[grid, block](*args)`` between two CUDA events (pass device
        arrays, or numba copies and synchronises); call ``finish()`` before reading intervals.
        Simulator: ``gpulab.launch`` under host timers; returns its report.
        """
        name = (
            name
            or getattr(kernel, "__name__", None)
            or getattr(getattr(kernel, "py_func", None), "__name__", "kernel")
        )
        if self.backend == "gpu":
            from numba import cuda

            start_evt, end_evt = cuda.event(), cuda.event()
            t = self.now()
            start_evt.record()
            kernel[grid, block](*args)
            end_evt.record()
            self.add("host", f"launch {name}", t, self.now())
            self._pending.append((name, start_evt, end_evt))
            return None
        launch = self.launcher
        if launch is None:
            import gpulab

            launch = lambda *a, **k: gpulab.launch(*a, backend="sim", **k)  # noqa: E731
        t = self.now()
        rep = launch(kernel, grid, block, *args, **kwargs)
        t1 = self.now()
        self.add("host", f"simulate {name}", t, t1)
        self.add("kernel", name, t, t1)
        return rep

    def finish(self) -> "Timeline":
        """Wait for the GPU and turn the CUDA events into kernel intervals (no-op on the sim)."""
        if self.backend == "gpu" and self._pending:
            from numba import cuda

            cuda.synchronize()
            for name, s, e in self._pending:
                start = self._t_ref + self._ref.elapsed_time(s) / 1e3
                end = self._t_ref + self._ref.elapsed_time(e) / 1e3
                self.add("kernel", name, start, end)
            self._pending.clear()
        return self

    # -- analysis -------------------------------------------------------------------------
    def lane(self, lane: str) -> list[Interval]:
        """Intervals of one lane, in start order."""
        return sorted((i for i in self.intervals if i.lane == lane), key=lambda i: i.start)

    def lanes(self) -> list[str]:
        """Lane names in first-seen order."""
        return list(dict.fromkeys(i.lane for i in self.intervals))

    def span_s(self) -> tuple[float, float]:
        """Start of the first interval and end of the last, over all lanes."""
        if not self.intervals:
            return (0.0, 0.0)
        return (min(i.start for i in self.intervals), max(i.end for i in self.intervals))

    def busy(self, lane: str) -> float:
        """Seconds during which the lane had at least one interval open."""
        return sum(e - s for s, e in _merge([(i.start, i.end) for i in self.lane(lane)]))

    def gaps(self, lane: str = "kernel") -> list[tuple[float, float]]:
        """Idle stretches of a lane between the timeline's first start and last end."""
        t0, t1 = self.span_s()
        merged = _merge([(i.start, i.end) for i in self.lane(lane)])
        out, cur = [], t0
        for s, e in merged:
            if s > cur:
                out.append((cur, s))
            cur = max(cur, e)
        if t1 > cur:
            out.append((cur, t1))
        return out

    def summary(self) -> dict:
        """Total time, busy time per lane, and the kernel lane's busy share of the total."""
        t0, t1 = self.span_s()
        total = t1 - t0
        out = {"total_s": total}
        for ln in self.lanes():
            out[f"{ln}_busy_s"] = self.busy(ln)
        out["kernel_share"] = out.get("kernel_busy_s", 0.0) / total if total > 0 else 0.0
        return out


def _gpu_available() -> bool:
    """The GPU backend's own answer (a real GPU, not Numba's simulator): one home for it."""
    from gpulab.backends.gpu import available

    return available()


def median_time(fn, repeat: int = 5, warmup: int = 1) -> float:
    """Median host wall seconds of ``fn()`` over ``repeat`` calls, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2]


def load_result(name: str):
    """The JSON a benchmarks/ script wrote (``name`` without .json) or None (see gpulab.results)."""
    from gpulab import results

    return results.load(name)


def from_records(records, backend: str = "sim") -> "Timeline":
    """Rebuild a Timeline from saved intervals (dicts with lane, name, start, end), e.g. the
    GPU timelines benchmarks/launch_overhead.py writes."""
    tl = Timeline(backend=backend, launcher=lambda *a, **k: None)
    for r in records:
        tl.add(r["lane"], r["name"], float(r["start"]), float(r["end"]))
    return tl
