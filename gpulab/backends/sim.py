"""gpulab's own SIMT simulator (``gpulab.sim``) as a backend: always available, counts everything."""

from .. import metrics
from ..report import LineStats, Report

NAME = "sim"


def available():
    """The simulator needs only numpy and numba's type inference: always True."""
    return True


def launch(kernel, grid, block, args, shared_bytes, *, trace, max_steps, timeout_s):
    """Run the launch on the simulator; the Report carries counters, per-line stats and traces."""
    from ..sim.layout import Layout
    from ..sim.runner import run

    ctx = run(
        kernel,
        Layout(grid, block),
        args,
        shared_bytes=shared_bytes,
        trace=trace,
        max_steps=max_steps,
        timeout_s=timeout_s,
    )
    lines = {ln: LineStats(ln, ctx.lines.get(ln, ""), dict(c)) for ln, c in ctx.per_line.items()}
    return Report(
        kernel=ctx.kernel_name,
        backend=NAME,
        grid=grid,
        block=block,
        metrics=metrics.finish(ctx.counters),
        lines=lines,
        mask_history=ctx.mask_history,
        accesses=ctx.accesses,
        shuffles=ctx.shuffles,
        barriers=ctx.barriers,
        atomics=dict(ctx.atomics),
        intrinsics=dict(ctx.intrinsics),
        benign_races=dict(ctx.benign_races),
        steps=ctx.steps,
        traced_warp=tuple(trace),
        truncated=dict(ctx.trace.truncated),
    )
