"""Reductions: per-block tree and shuffle, the full-device sum, bytes in flight."""

from __future__ import annotations

from .core import Headline, Section, _df, _pct, _span


def _h_reduction(r):
    out = []
    d = r.get("device_sum") or {}
    best = d.get("best") or {}
    libs = d.get("libraries", {})
    for lib in ("cupy", "torch"):
        L = libs.get(lib, {})
        if best.get("GBps") and L.get("GBps"):
            ratio = best["GBps"] / L["GBps"]
            out.append(
                Headline(
                    f"full-device sum vs {lib}.sum",
                    ratio,
                    f"Full-device sum of {d['n']:,} float32: ours {best['GBps']:.0f} GB/s, {lib}.sum "
                    f"{L['GBps']:.0f} GB/s: ours = {_pct(ratio)} of {lib}'s.",
                    0.9,
                    f">= 90% of {lib}.sum",
                    against=f"{lib}.sum, same buffer, same run",
                )
            )
    rows = [
        b
        for b in r.get("block_sums", [])
        if not (b["tree"].get("launch_bound") or b["shuffle"].get("launch_bound"))
    ]
    if rows:
        ratios = [b["shuffle"]["GBps"] / b["tree"]["GBps"] for b in rows]
        big = max(rows, key=lambda b: b["n"])
        out.append(
            Headline(
                "per-block shuffle / tree",
                big["shuffle"]["GBps"] / big["tree"]["GBps"],
                f"Per-block sums (256 threads), sizes not launch-bound ({rows[0]['n']:,} to "
                f"{big['n']:,} elements): shuffle / tree = {_span(ratios)} "
                f"({big['shuffle']['GBps']:.0f} vs {big['tree']['GBps']:.0f} GB/s at {big['n']:,}); "
                f"both read memory at a fraction of the full-device sum's rate.",
                against=f"tree kernel, n = {big['n']:,}",
            )
        )
    return out


def _f_reduction(r, ax):
    from gpulab.plots import reduction_bench

    reduction_bench.plot(r, ax=ax)
    best = (r.get("device_sum") or {}).get("best") or {}
    if best.get("GBps"):
        ax.axhline(best["GBps"], color="C2", lw=1.5, label="ours, full-device sum")
        ax.legend(loc="center right")
    return ax


def _h_in_flight(r):
    from gpulab import results_views

    v = results_views.reduction_in_flight(r)
    if not v:
        return []
    return [
        Headline(
            "bytes in flight, grid-stride / per-block",
            v["max_in_flight_ratio"],
            f"Per-block reductions keep at most {v['per_block_max_bytes_in_flight_per_sm'] / 1024:.0f} KiB "
            f"per SM in flight, the grid-stride sum "
            f"{v['grid_stride_max_bytes_in_flight_per_sm'] / 1024:.0f} KiB; Little's law with "
            f"{v['dram_latency_ns']:.0f} ns needs {v['needed_per_sm_for_grid_stride_GBps'] / 1024:.1f} KiB "
            f"per SM for {v['grid_stride_GBps']:.0f} GB/s (derived).",
            score=False,
        )
    ]


def _t_in_flight(r):
    from gpulab import results_views

    v = results_views.reduction_in_flight(r) or {}
    if not v:
        return None
    rows = [
        ("HBM latency, measured (ns)", v["dram_latency_ns"]),
        ("per-block sum, measured GB/s", v["per_block_GBps"]),
        ("grid-stride sum, measured GB/s", v["grid_stride_GBps"]),
        ("per-block: most bytes in flight per SM", v["per_block_max_bytes_in_flight_per_sm"]),
        ("grid-stride: most bytes in flight per SM", v["grid_stride_max_bytes_in_flight_per_sm"]),
        ("per-block: average in flight per SM (Little)", v["per_block_avg_bytes_in_flight_per_sm"]),
        ("grid-stride: average in flight per SM (Little)", v["grid_stride_avg_bytes_in_flight_per_sm"]),
        ("bandwidth ratio, grid-stride / per-block", v["bandwidth_ratio"]),
        ("most-in-flight ratio, grid-stride / per-block", v["max_in_flight_ratio"]),
    ]
    return _df(rows, ["quantity (derived unless marked measured)", "value"])


SECTIONS = [
    Section(
        "reduction",
        "Reductions: tree against shuffle, and a full-device sum",
        "benchmarks/reduction.py",
        "python benchmarks/reduction.py",
        _h_reduction,
        _f_reduction,
        needs="an NVIDIA GPU (cupy and torch for the peers)",
        targets=["full-device sum vs cupy.sum", "full-device sum vs torch.sum", "per-block shuffle / tree"],
    ),
    Section(
        "reduction_in_flight",
        "Reductions: bytes in flight (derived)",
        "benchmarks/reduction_in_flight.py",
        "python benchmarks/reduction_in_flight.py",
        _h_in_flight,
        None,
        _t_in_flight,
        needs="reduction.json and latency.json",
    ),
]
