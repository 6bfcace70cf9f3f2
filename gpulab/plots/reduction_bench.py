"""Chapter 08's GPU measurements, read from gpulab/data/results/reduction.json (written by
benchmarks/reduction.py on a GPU): a summary that says where and when, and a figure."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path


def find(path=None) -> Path | None:
    """The results file: ``path``, else reduction.json where gpulab.results looks; None when
    there is none (e.g. a pip install)."""
    if path:
        return Path(path) if Path(path).is_file() else None
    from gpulab import results

    return results.path("reduction")


def load(path=None) -> dict | None:
    """The parsed results, or None when the benchmark has not been run in this copy."""
    p = find(path)
    return json.loads(p.read_text()) if p else None


def summary(res: dict | None) -> str:
    """Lines of text: the GPU and date, per-block tree vs shuffle, and the device-wide sums."""
    if not res:
        return (
            "No GPU measurements in this copy: run `python benchmarks/reduction.py` on a "
            "machine with an NVIDIA GPU; it writes gpulab/data/results/reduction.json."
        )
    from gpulab.results_views import clock_text

    env = res.get("environment", {})  # benchenv's keys, or those of files written before it
    driver = (
        f"driver {env['driver']}" if env.get("driver") else f"CUDA driver API {env.get('cuda_driver_api')}"
    )
    lines = [
        f"measured on {env.get('gpu')}, {env.get('date_utc') or env.get('when_utc')}",
        f"  {driver}; numba-cuda {env.get('numba_cuda') or env.get('numba-cuda')}",
    ]
    lines += textwrap.wrap(clock_text(res), 74, initial_indent="  ", subsequent_indent="    ")
    if env.get("nvidia_smi"):  # one query before the run: the clocks at that moment, not a record
        lines.append("  nvidia-smi before the run (not a clock record):")
        lines += textwrap.wrap(env["nvidia_smi"], 72, initial_indent="    ", subsequent_indent="    ")
    lines.append("per-block sums, 256 threads per block:")
    lines.append(f"  {'elements':>11}  {'tree GB/s':>9}  {'shfl GB/s':>9}  {'shfl/tree':>9}")
    for r in res.get("block_sums", []):
        bound = r["tree"].get("launch_bound") or r["shuffle"].get("launch_bound")
        lines.append(
            f"  {r['n']:>11,}  {r['tree']['GBps']:9.0f}  {r['shuffle']['GBps']:9.0f}  "
            f"{r['shuffle_over_tree']:8.2f}x" + ("  (launch-bound)" if bound else "")
        )
    d = res.get("device_sum")
    if d:
        b = d.get("best")
        lines.append(f"whole-array sum of {d['n']:,} float32 ({d['bytes'] / 1e9:.2f} GB):")
        if b:
            lines.append(f"  ours, best: {b['GBps']:.0f} GB/s, {b['kernel']}")
            lines.append(f"    (grid {b['grid']}, block {b['block']}, relative error {b['rel_err']:.1e})")
        for name, lib in d.get("libraries", {}).items():
            if "GBps" in lib:
                ratio = d.get(f"best_over_{name}")
                tail = f"; ours / {name} = {ratio:.1%}" if ratio else ""
                lines.append(f"  {name} {lib.get('version')}: {lib['GBps']:.0f} GB/s{tail}")
            else:
                lines.append(f"  {name}: not measured ({lib.get('error')})")
    return "\n".join(lines)


def _binary_count(v, _pos=None) -> str:
    """65536 -> '64 Ki', 2**20 -> '1 Mi': element counts as full-size tick text."""
    for unit, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if v >= size:
            return f"{v / size:g} {unit}"
    return f"{v:g}"


def plot(res: dict | None, ax=None):
    """Bandwidth of the per-block tree and shuffle kernels against input size (None if no data)."""
    if not res or not res.get("block_sums"):
        return None
    import matplotlib.pyplot as plt

    from matplotlib.ticker import FuncFormatter

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.8))
    rows = res["block_sums"]
    n = [r["n"] for r in rows]
    for key, style in (("tree", "o-"), ("shuffle", "s-")):
        ax.plot(n, [r[key]["GBps"] for r in rows], style, label=f"per-block {key}")
    d = res.get("device_sum", {})
    # library sums of one large array: labelled lines in the legend (their values are close
    # together, so text next to the lines would overlap)
    for (name, lib), ls in zip(d.get("libraries", {}).items(), (":", "--", "-.")):
        if "GBps" in lib:
            ax.axhline(lib["GBps"], ls=ls, color="0.35", lw=1.2, label=f"{name}.sum, {d['n']:,} elements")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(_binary_count))
    ax.set_xlabel("elements (float32; Ki = 1024, Mi = 1024 Ki)")
    ax.set_ylabel("GB/s read")
    ax.set_title(f"per-block sums on {res['environment'].get('gpu')}")
    ax.legend(loc="center left")
    return ax


# Loads each thread keeps in flight, and their size, for the kernels benchmarks/reduction.py
# times (gpulab.kernels.warp): one element per thread for the per-block sums; four independent
# loads per loop iteration for the grid-stride sums, of 4 B (float32) or 8 B (complex64 pairs).
LOADS_PER_THREAD = {
    "block_sum_tree": (1, 4),
    "block_sum_shfl": (1, 4),
    "device_sum": (4, 4),
    "device_sum_pairs": (4, 8),
}


def kernel_of(label: str) -> str:
    """The gpulab.kernels.warp kernel behind a grid-stride label of reduction.json."""
    if not label.startswith("grid-stride"):
        raise ValueError(f"not a grid-stride run: {label!r}")
    return "device_sum_pairs" if "8-byte" in label else "device_sum"


def in_flight(red: dict, lat: dict, resources: dict | None = None, arch: str = "sm_90") -> dict:
    """Little's law (N = bandwidth x latency) for the recorded reductions, per SM.

    ``red`` is reduction.json, ``lat`` latency.json (its DRAM rung is the latency), ``resources``
    optional {kernel: (registers per thread, static shared bytes)} measured on the GPU (without
    them the occupancy counts warps and shared memory only). For the per-block kernels at the
    largest size and the fastest grid-stride run: resident threads per SM, the most bytes they can
    have in flight, the bandwidth that ceiling allows at the DRAM latency, and the bytes in flight
    on average that the measured bandwidth implies.
    """
    from gpulab.models import latency as lm
    from gpulab.models.occupancy import occupancy

    resources = resources or {}
    sms = red["environment"]["sm_count"]
    lat_ns = lm.ladder_levels(lat)["DRAM"]["ns"]
    big = max(red["block_sums"], key=lambda r: r["n"])
    best = red["device_sum"]["best"]

    def row(kernel, grid, block, gbps):
        loads, size = LOADS_PER_THREAD[kernel]
        regs, shared = resources.get(kernel, (0, 0))
        occ = occupancy(block, regs, shared, arch)
        threads = min(occ.blocks_per_sm, -(-grid // sms)) * block
        most = threads * loads * size
        return {
            "kernel": kernel,
            "grid": grid,
            "block": block,
            "loads": loads,
            "bytes": size,
            "resident_threads": threads,
            "max_in_flight": most,
            "GBps": gbps,
            "ceiling_GBps": most * sms / lat_ns,  # B/ns = GB/s
            "mean_in_flight": lm.bytes_in_flight_per_sm(gbps * 1e9, lat_ns * 1e-9, sms),
        }

    rows = {
        "tree": row("block_sum_tree", big["grid"], big["block"], big["tree"]["GBps"]),
        "shuffle": row("block_sum_shfl", big["grid"], big["block"], big["shuffle"]["GBps"]),
        "grid_stride": row(kernel_of(best["kernel"]), best["grid"], best["block"], best["GBps"]),
    }
    need = rows["grid_stride"]["mean_in_flight"]
    return {
        "latency_ns": lat_ns,
        "sms": sms,
        "n": big["n"],
        **rows,
        "need_for_best": need,
        "gap": best["GBps"] / big["shuffle"]["GBps"],
        "per_block_fill": rows["shuffle"]["mean_in_flight"] / rows["shuffle"]["max_in_flight"],
    }


def describe_in_flight(f: dict) -> str:
    """Lines of text for :func:`in_flight`: per kernel, the ceiling and the measured mean."""
    rs = [f[key] for key in ("tree", "shuffle", "grid_stride")]
    rows = [
        ("grid (blocks)", lambda r: f"{r['grid']:,d}"),
        ("block (threads)", lambda r: f"{r['block']:,d}"),
        ("resident threads per SM", lambda r: f"{r['resident_threads']:,d}"),
        ("loads per thread x bytes", lambda r: f"{r['loads']} x {r['bytes']}"),
        ("most in flight, KiB/SM", lambda r: f"{r['max_in_flight'] / 1024:.1f}"),
        ("that allows, TB/s", lambda r: f"{r['ceiling_GBps'] / 1000:.1f}"),
        ("measured, GB/s", lambda r: f"{r['GBps']:,.0f}"),
        ("mean in flight, KiB/SM", lambda r: f"{r['mean_in_flight'] / 1024:.2f}"),
    ]
    lines = [
        f"DRAM latency {f['latency_ns']:.0f} ns (pointer chase), {f['sms']} SMs",
        "Little's law: bytes in flight per SM = GB/s x ns / SMs",
        f"{'':24s}" + "".join(f"{r['kernel']:>17s}" for r in rs),
    ]
    for label, cell in rows:
        lines.append(f"{label:24s}" + "".join(f"{cell(r):>17s}" for r in rs))
    lines.append(f"grid-stride / per-block shuffle: {f['gap']:.2f}x")
    lines.append(f"the per-block kernels hold {f['per_block_fill']:.0%} of their ceiling on average")
    return "\n".join(lines)
