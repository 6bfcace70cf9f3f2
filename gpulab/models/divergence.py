"""Warp divergence as arithmetic: a warp's time is the sum over the paths its lanes take,
T_warp = sum_p T_p, and warp execution efficiency E is the average share of active lanes.

These are the closed forms chapter 03 compares with what gpulab's simulator measures.
"""

from __future__ import annotations

import numpy as np

from gpulab import metrics
from gpulab.models.occupancy import WARP


def warp_time(lane_paths, path_time) -> float:
    """Sum of T_p over the distinct paths taken by the lanes of one warp.

    ``lane_paths``: path id per lane (any hashable; None = lane inactive). ``path_time``: a
    mapping path -> T_p, a callable, or one number used for every path."""
    taken = {p for p in lane_paths if p is not None}
    if callable(path_time):
        return float(sum(path_time(p) for p in taken))
    if isinstance(path_time, dict):
        return float(sum(path_time[p] for p in taken))
    return float(path_time) * len(taken)


def efficiency(lane_paths, path_cost=1.0, common: float = 0.0) -> float:
    """Warp execution efficiency of one pass through a branch: active lane-instructions over
    32 x instructions issued. Each path p costs ``path_cost`` instructions (number, mapping or
    callable) run by its n_p lanes; ``common`` instructions before/after run on all 32 lanes."""
    paths = [p for p in lane_paths if p is not None]
    taken = sorted(set(paths), key=str)

    def cost(p):
        if callable(path_cost):
            return float(path_cost(p))
        if isinstance(path_cost, dict):
            return float(path_cost[p])
        return float(path_cost)

    useful = sum(paths.count(p) * cost(p) for p in taken) + WARP * common
    issued = WARP * (sum(cost(p) for p in taken) + common)
    return useful / issued if issued else 1.0


def lanes(condition) -> list:
    """Path per lane (True/False) for a condition on the lane number, e.g. ``lambda l: l < 17``."""
    return [bool(condition(lane)) for lane in range(WARP)]


def by_warp(values, warp: int = WARP) -> list:
    """Split a per-thread sequence into consecutive warps of 32 (the last may be shorter)."""
    v = list(values)
    return [v[k : k + warp] for k in range(0, len(v), warp)]


def loop_efficiency(trips) -> float:
    """E of a loop body whose trip count varies per thread: every warp runs as many iterations
    as its longest thread, so E = sum(trips) / sum over warps of 32 x max(trips in warp)."""
    t = np.asarray(trips, dtype=np.int64)
    if t.size == 0:
        return 1.0
    pad = (-t.size) % WARP
    w = np.concatenate([t, np.zeros(pad, np.int64)]).reshape(-1, WARP)
    issued = (w.max(axis=1) * WARP).sum()
    return float(t.sum() / issued) if issued else 1.0


def loop_iterations_issued(trips) -> int:
    """Warp-level iterations executed: sum over warps of the longest trip count."""
    t = np.asarray(trips, dtype=np.int64)
    pad = (-t.size) % WARP
    return int(np.concatenate([t, np.zeros(pad, np.int64)]).reshape(-1, WARP).max(axis=1).sum())


def load_path_timings(name: str = "divergence_paths.json") -> dict | None:
    """The JSON written by ``benchmarks/divergence_paths.py`` on a GPU, or None if not run."""
    import json

    from gpulab.models.occupancy import _find_result

    p = _find_result(name)
    if p is None:
        return None
    with open(p) as f:
        return json.load(f)


def describe_path_timings(data: dict | None) -> str:
    """Ratios time(P paths) / time(1 path) per body length and mode, as text."""
    if not data:
        return (
            "no GPU timing recorded yet: run `python benchmarks/divergence_paths.py` on a "
            "machine with an NVIDIA GPU (it writes gpulab/data/results/divergence_paths.json)"
        )
    lines = [f"{data['device']}, {data['n_threads']:,} threads, blocks of {data['block']}"]
    for iters in sorted({r["iters"] for r in data["rows"]}):
        for mode in ("divergent", "uniform"):
            rs = sorted(
                (r for r in data["rows"] if r["iters"] == iters and r["mode"] == mode),
                key=lambda r: r["paths"],
            )
            lines.append(
                f"  {iters:4d}-iteration body, {mode:9s}: "
                + "  ".join(f"P={r['paths']}: x{r['ratio_to_1_path']:.1f}" for r in rs)
                + f"   (1 path: {rs[0]['ms_median']:.3f} ms)"
            )
    return "\n".join(lines)


def equal_length_paths(data: dict) -> bool:
    """True when a divergence_paths.json declares paths of equal length (the balanced-tree
    benchmark records ``tests_per_path`` and a per-row ``sum_Tp_prediction``)."""
    rows = data.get("rows", [])
    return "tests_per_path" in data and bool(rows) and all("sum_Tp_prediction" in r for r in rows)


def path_comparison(data: dict) -> dict:
    """Measured time ratio at the largest P against T_warp = sum of T_p, per body length.

    Returns {iters: {"paths", "divergent", "uniform", "predicted"}}: the ratios time(P) / time(1)
    of the divergent and warp-uniform modes at the largest P, and the model's ratio, which is P
    only when every path has the same length (``predicted`` is None otherwise: with unequal
    paths sum_p T_p is not P times one path)."""
    if not data or not data.get("rows"):
        raise ValueError(
            "no divergence timings: expected the JSON written by benchmarks/divergence_paths.py on a GPU"
        )
    equal = equal_length_paths(data)
    out = {}
    for iters in sorted({r["iters"] for r in data["rows"]}):
        by = {(r["mode"], r["paths"]): r for r in data["rows"] if r["iters"] == iters}
        pmax = max(p for m, p in by if m == "divergent")

        def ratio(mode):
            if (mode, pmax) not in by or (mode, 1) not in by:
                return None
            return by[(mode, pmax)]["ms_median"] / by[(mode, 1)]["ms_median"]

        pred = by[("divergent", pmax)].get("sum_Tp_prediction") if equal else None
        out[iters] = {
            "paths": pmax,
            "divergent": ratio("divergent"),
            "uniform": ratio("uniform"),
            "predicted": pred,
            "ncu": _ncu_ratios(data, iters, pmax),
        }
    return out


def _ncu_ratios(data: dict, iters: int, paths: int) -> dict | None:
    """Nsight Compute's view of the divergent kernel at 1 and ``paths`` paths, when recorded:
    kernel duration and warp instructions relative to 1 path, and active / predicated-on
    threads per warp instruction at both ends."""
    rows = (data.get("ncu") or {}).get("rows") or []
    by = {r["paths"]: r for r in rows if r.get("iters") == iters and r.get("mode") == "divergent"}
    if 1 not in by or paths not in by:
        return None
    one, many = by[1], by[paths]
    act, on = metrics.THREADS_PER_INST, "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"
    inst = metrics.INST_EXECUTED
    return {
        "time": many["gpu__time_duration.sum"] / one["gpu__time_duration.sum"],
        "inst": many[inst] / one[inst],
        "active_1": one.get(act),
        "pred_on_1": one.get(on),
        "active_P": many.get(act),
        "pred_on_P": many.get(on),
    }
