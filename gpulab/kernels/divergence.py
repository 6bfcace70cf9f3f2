"""Kernels for chapter 03 (warp divergence), and helpers to run them on gpulab's simulator.

``branch_kernel(condition)`` builds an if/else kernel around any condition written in terms of
``lane`` (0..31), ``warp`` (global warp number), ``i`` (global thread index), ``x[i]`` and ``n``;
its source is registered with ``linecache`` so the simulator can read it like a cell's.
"""

from __future__ import annotations

import linecache
import re

import numpy as np
from numba import cuda

_TEMPLATE = """def branch(out, x):
    i = cuda.grid(1)
    n = x.shape[0]
    lane = cuda.threadIdx.x % 32
    warp = i // 32
    if i < n:
        if {cond}:
            out[i] = x[i] * 2.0 + 1.0
        else:
            out[i] = x[i] * 0.5 - 1.0
"""
THEN_LINE, ELSE_LINE = 8, 10  # lines of the two branch bodies in _TEMPLATE
_ALLOWED = re.compile(r"^[\w\s\.\[\]\(\)%<>=!+\-*/&|,]*$")
_CACHE: dict = {}

CONDITIONS = {
    "no divergence (True)": ("True", "random"),
    "17 / 15 split (lane < 17)": ("lane < 17", "random"),
    "odd / even (lane % 2 == 0)": ("lane % 2 == 0", "random"),
    "one lane (lane == 0)": ("lane == 0", "random"),
    "whole warps (warp % 2 == 0)": ("warp % 2 == 0", "random"),
    "data, random signs (x[i] > 0)": ("x[i] > 0", "random"),
    "data, sorted (x[i] > 0)": ("x[i] > 0", "sorted"),
    "edge guard at n - 28 (i < n - 28)": ("i < n - 28", "random"),
}


def branch_kernel(condition: str):
    """A jitted if/else kernel with ``condition``; cached per condition text."""
    cond = condition.strip()
    if not cond or not _ALLOWED.match(cond) or "__" in cond or "import" in cond:
        raise ValueError(
            f"not a simple condition: {condition!r} (use lane, warp, i, x[i], n, "
            f"numbers, comparisons, %, and/or/not)"
        )
    if cond in _CACHE:
        return _CACHE[cond]
    src = _TEMPLATE.format(cond=cond)
    fname = f"<gpulab-branch-{len(_CACHE)}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"cuda": cuda}
    exec(compile(src, fname, "exec"), ns)
    kern = cuda.jit(ns["branch"])
    _CACHE[cond] = kern
    return kern


def data(kind: str = "random", n: int = 128, seed: int = 0) -> np.ndarray:
    """Input values: random signs ("random") or the same values sorted ("sorted")."""
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    return np.sort(x) if kind == "sorted" else x


def run_branch(
    condition: str, kind: str = "random", n: int = 128, block: int = 128, trace=(0, 0), backend: str = "sim"
) -> dict:
    """Run the branch kernel on the simulator; return the report and per-path facts:
    efficiency of the two branch bodies, how many threads took each, and the overall E."""
    import gpulab

    kern = branch_kernel(condition)
    x = data(kind, n)
    out = np.full(n, np.nan, np.float32)
    rep = gpulab.launch(kern, -(-n // block), block, out, x, backend=backend, trace=trace)
    then = rep.lines.get(THEN_LINE)
    other = rep.lines.get(ELSE_LINE)
    took_then = int(np.isclose(out, x * 2.0 + 1.0).sum())
    return {
        "condition": condition,
        "data": kind,
        "report": rep,
        "x": x,
        "out": out,
        "efficiency": rep.warp_efficiency,
        "then_efficiency": then.efficiency if then else None,
        "else_efficiency": other.efficiency if other else None,
        "then_instructions": then.inst if then else 0,
        "else_instructions": other.inst if other else 0,
        "threads_then": took_then,
        "threads_else": int(n - took_then),
    }


@cuda.jit
def paths(out, x, n_paths):
    """Lane l takes path l % n_paths; each path is a short body inside a loop over paths."""
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    v = x[i]
    for p in range(n_paths):
        if lane % n_paths == p:
            v = v * 2.0 + p
    out[i] = v


@cuda.jit
def varying_loop(out, trips, order):
    """Thread t works on item order[t], whose loop runs trips[order[t]] times."""
    t = cuda.grid(1)
    if t < order.shape[0]:
        j = order[t]
        acc = 0.0
        for k in range(trips[j]):
            acc += 1.0
        out[j] = acc


@cuda.jit
def shade(out, x):
    """Even elements take one 8-step recurrence, odd elements another: divergent in every warp."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        if i % 2 == 0:
            for k in range(8):
                v = v * 0.5 + 1.0
        else:
            for k in range(8):
                v = v * 2.0 - 1.0
        out[i] = v


def shade_reference(x: np.ndarray) -> np.ndarray:
    """numpy version of :func:`shade` (float32 arithmetic, same order)."""
    v = x.astype(np.float32).copy()
    even = np.arange(v.size) % 2 == 0
    for _ in range(8):
        v = np.where(
            even, v * np.float32(0.5) + np.float32(1.0), v * np.float32(2.0) - np.float32(1.0)
        ).astype(np.float32)
    return v
