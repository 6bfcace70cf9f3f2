"""The memory benchmarks: the latency ladder, the strided copy, copies and transposes."""

from __future__ import annotations

from .core import Headline, Section, _df, _pct, _size, size_range


def _h_latency(r):
    g = r.get("global", [])
    if not g:
        return []
    from gpulab import results_views

    lv = results_views.latency_levels(r)
    names = {"L1": "L1-resident", "L2": "L2-resident", "DRAM": "HBM (DRAM)"}
    levels = "; ".join(
        f"{names[k]} {size_range(lv['sizes_' + k])}: {lv[k]:.1f} ns = {lv['cycles_' + k]:.0f} cycles"
        for k in ("L1", "L2", "DRAM")
        if k in lv
    )
    return [
        Headline(
            "latency ladder",
            lv.get("DRAM"),
            f"Unloaded load-to-use latency of one dependent load (median over the working "
            f"sets of each level): shared memory {r['shared']['ns']:.1f} ns = "
            f"{r['shared']['cycles_at_max_clock']:.0f} cycles; {levels}. Cycles at the "
            f"maximum SM clock of {lv['max_sm_clock_GHz']} GHz.",
            score=False,
        )
    ]


def _t_latency(r):
    from gpulab import results_views

    lv = results_views.latency_levels(r)
    rows = results_views.latency_ladder(r) or []
    if not lv:
        return None
    level = {}
    for k in ("L1", "L2", "DRAM"):
        for b in lv.get(f"sizes_{k}", []):
            level[b] = {"DRAM": "HBM"}.get(k, k)
    return _df(
        [
            (
                _size(x["working_set_bytes"]),
                level.get(x["working_set_bytes"], "between"),
                x["ns"],
                x["ns_min_repeat"],
                x["ns_max_repeat"],
                x["cycles_at_max_clock"],
            )
            for x in rows
        ]
        + [("shared", "shared", lv["shared"], None, None, lv["cycles_shared"])],
        ["working set", "level", "ns (median)", "min", "max", "cycles"],
    )


def _f_latency_ns(r, ax):
    from gpulab import results_views

    rows = results_views.latency_ladder(r) or []
    lv = results_views.latency_levels(r) or {}
    if not rows:
        return None
    x = [g["working_set_bytes"] for g in rows]
    y = [g["ns"] for g in rows]
    err = [[g["ns"] - g["ns_min_repeat"] for g in rows], [g["ns_max_repeat"] - g["ns"] for g in rows]]
    ax.errorbar(x, y, yerr=err, fmt="o-", capsize=3, label="global loads (median, min to max)")
    for k, c in (("L1", "C1"), ("L2", "C2"), ("DRAM", "C3")):
        if k in lv:
            sz = lv[f"sizes_{k}"]
            ax.hlines(
                lv[k],
                min(sz),
                max(sz),
                colors=c,
                lw=6,
                alpha=0.35,
                label=f"{'HBM' if k == 'DRAM' else k} level: {lv[k]:.0f} ns",
            )
    ax.axhline(lv["shared"], color="C4", ls="--", lw=1, label=f"shared memory: {lv['shared']:.0f} ns")
    ax.set_xscale("log", base=2)
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda b, _: _size(int(b)).replace(" ", "")))
    ax.set_xlabel("working set")
    ax.set_ylabel("ns per dependent load")
    ax.set_ylim(0, None)
    ax.legend(loc="upper left")
    ax.figure.set_size_inches(6.6, 3.8)
    return ax


def _h_strided(r):
    from gpulab import results_views

    rows = results_views.strided_copy(r) or []
    if not rows:
        return []
    by = {x["stride"]: x for x in rows}
    out = [
        Headline(
            "strided copy, useful GB/s at the largest stride",
            by[max(by)]["useful_GBps"],
            "Strided copy, useful GB/s with CUDA events around one launch (the interval "
            "holds part of the host's launch path too): "
            + ", ".join(f"stride {k} {v['useful_GBps']:.0f}" for k, v in sorted(by.items()))
            + ".",
            score=False,
        )
    ]
    if all(x.get("ncu_time_s") for x in rows):
        extra = [(x["time_s"] - x["ncu_time_s"]) * 1e6 for x in rows]
        out.append(
            Headline(
                "strided copy, useful GB/s from the kernel time",
                None,
                "From Nsight Compute's kernel time (gpu__time_duration): "
                + ", ".join(f"stride {x['stride']} {x['useful_GBps_ncu_time']:.0f}" for x in rows)
                + f" GB/s. The events' interval is {min(extra):.0f} to {max(extra):.0f} "
                f"us longer at every stride.",
                score=False,
            )
        )
    if all(x.get("dram_bytes_read_per_load") for x in rows):
        out.append(
            Headline(
                "DRAM bytes per load",
                max(x["dram_bytes_read_per_load"] for x in rows),
                "HBM bytes read per 4-byte load (ncu dram__bytes_read.sum / loads): "
                + ", ".join(f"stride {x['stride']} {x['dram_bytes_read_per_load']:.0f} B" for x in rows)
                + "; L1 sectors per request stop at "
                + f"{max(x['l1_sectors_per_request'] for x in rows):.0f}.",
                score=False,
            )
        )
    return out


def _t_strided(r):
    from gpulab import results_views

    rows = results_views.strided_copy(r) or []
    return _df(
        [
            (
                x["stride"],
                x["time_s"] * 1e6,
                (x.get("ncu_time_s") or float("nan")) * 1e6,
                x.get("useful_GBps_ncu_time"),
                x.get("dram_bytes_read_per_load"),
                x.get("l2_bytes_read_per_load"),
                x.get("l1_sectors_per_request"),
            )
            for x in rows
        ],
        [
            "stride",
            "events (us)",
            "kernel, ncu (us)",
            "useful GB/s (ncu time)",
            "HBM bytes per load",
            "L2 bytes per load",
            "L1 sectors per request",
        ],
    )


def _f_strided(r, ax):
    from gpulab import results_views

    rows = results_views.strided_copy(r) or []
    if not rows:
        return None
    st = [x["stride"] for x in rows]
    ax.plot(
        st, [x["useful_GBps"] for x in rows], "o-", color="C0", label="useful GB/s, events around the launch"
    )
    if all(x.get("useful_GBps_ncu_time") for x in rows):
        ax.plot(
            st,
            [x["useful_GBps_ncu_time"] for x in rows],
            "o:",
            color="C0",
            mfc="none",
            label="useful GB/s, kernel time (ncu)",
        )
    ax.set_xscale("log", base=2)
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("stride (elements of 4 bytes)")
    ax.set_ylabel("useful GB/s", color="C0")
    if all(x.get("dram_bytes_read_per_load") for x in rows):
        a2 = ax.twinx()
        a2.plot(
            st,
            [x["dram_bytes_read_per_load"] for x in rows],
            "s--",
            color="C3",
            label="HBM bytes per load (ncu)",
        )
        a2.plot(
            st, [x["l2_bytes_read_per_load"] for x in rows], "^:", color="C2", label="L2 bytes per load (ncu)"
        )
        a2.set_ylabel("bytes fetched per 4-byte load")
        a2.spines["right"].set_visible(True)
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = a2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    ax.figure.set_size_inches(6.6, 4.2)
    return ax


def _h_bandwidth(r):
    out = []
    cp = r.get("copy") or {}
    t = cp.get("torch") or {}
    if cp.get("best_GBps") and t.get("GBps"):
        ratio = cp["best_GBps"] / t["GBps"]
        out.append(
            Headline(
                "device copy vs torch copy",
                ratio,
                f"Best copy kernel ({cp.get('best')}) {cp['best_GBps']:.0f} GB/s, torch "
                f"device-to-device copy {t['GBps']:.0f} GB/s: {_pct(ratio)} of torch's.",
                0.9,
                ">= 90% of torch's copy",
                against="torch device-to-device copy",
            )
        )
    tr = (r.get("transpose") or {}).get("kernels", {})
    padded = {k: v["GBps"] for k, v in tr.items() if k.startswith("transpose_padded") and v.get("GBps")}
    if padded and cp.get("best_GBps"):
        best_k = max(padded, key=padded.get)
        ratio = padded[best_k] / cp["best_GBps"]
        each = "; ".join(f"{k} {g:.0f} GB/s = {_pct(g / cp['best_GBps'])}" for k, g in padded.items())
        # the row names the variant it reports ("wide padded transpose vs copy" for
        # transpose_padded_wide): the plain padded transpose is a different, slower kernel
        variant = best_k.removeprefix("transpose_padded").strip("_").replace("_", " ")
        out.append(
            Headline(
                f"{variant} padded transpose vs copy".lstrip(),
                ratio,
                f"Padded shared-memory transpose, {(r.get('transpose') or {}).get('side')}^2 "
                f"float32, against the best copy of the same run: {each}.",
                0.8,
                ">= 80% of the copy",
                against="best copy kernel, same run",
            )
        )
    mm = r.get("matmul") or {}
    ours = (mm.get("kernels") or {}).get("matmul_tiled", {}).get("TFLOPs")
    ref = (mm.get("torch_fp32_tf32_off") or {}).get("TFLOPs")
    if ours and ref:
        out.append(
            Headline(
                "tiled fp32 matmul / torch fp32",
                ours / ref,
                f"Tiled fp32 matmul ({mm.get('n')}^3) {ours:.1f} TFLOP/s, torch fp32 "
                f"(TF32 off) {ref:.1f} TFLOP/s: ratio {ours / ref:.2f} "
                f"(no target: a teaching kernel against cuBLAS).",
                against="torch fp32, TF32 off",
            )
        )
    return out


def _f_bandwidth(r, ax):
    import matplotlib.pyplot as plt

    from gpulab.plots import memory

    s = r.get("strided") or []
    if s:
        memory.plot_bandwidth_vs_stride(
            [x["stride"] for x in s],
            [x["useful_GBps"] for x in s],
            copy_gbps=(r.get("copy") or {}).get("best_GBps"),
            ax=ax,
        )
    bars = {}
    for k, v in ((r.get("copy") or {}).get("kernels") or {}).items():
        bars[f"copy, {k}"] = v["GBps"]
    t = (r.get("copy") or {}).get("torch") or {}
    if "GBps" in t:
        bars["torch copy"] = t["GBps"]
    for k, v in ((r.get("transpose") or {}).get("kernels") or {}).items():
        bars[k] = v["GBps"]
    if bars:
        _, ax2 = plt.subplots(figsize=(6.6, 0.35 * len(bars) + 1))
        ax2.barh(list(bars), list(bars.values()))
        ax2.invert_yaxis()
        ax2.set_xlabel("GB/s (bytes read + written / time)")
    return ax


def _h_transpose_variants(r):
    v = {k: x for k, x in r.get("variants", {}).items() if x.get("GBps")}
    ref = r.get("torch_copy_GBps")
    if not v or not ref:
        return []
    best = max(v, key=lambda k: v[k]["GBps"])
    bad = [k for k, x in v.items() if x.get("correct") is False]
    return [
        Headline(
            "transpose variant vs copy",
            v[best]["GBps"] / ref,
            f"Padded-transpose variants, {r.get('side')}^2 float32: the fastest, {best}, "
            f"{v[best]['GBps']:.0f} GB/s = {_pct(v[best]['GBps'] / ref)} of torch's copy in the "
            f"same run ({ref:.0f} GB/s); slowest {min(v, key=lambda k: v[k]['GBps'])}. "
            + (f"Wrong results: {', '.join(bad)}." if bad else "All transposed correctly."),
            0.8,
            ">= 80% of the copy",
            against=f"torch device copy, same run ({best})",
        )
    ]


def _f_transpose_variants(r, ax):
    v = r.get("variants", {})
    names = list(v)
    ax.bar(names, [v[k]["GBps"] for k in names])
    if r.get("torch_copy_GBps"):
        ax.axhline(r["torch_copy_GBps"], color="k", ls="--", lw=1, label="torch copy, same run")
        ax.axhline(0.8 * r["torch_copy_GBps"], color="C3", ls=":", lw=1, label="80% of it (target)")
        ax.legend()
    ax.set_xlabel("variant (tile x rows)")
    ax.set_ylabel("GB/s (read + written)")
    return ax


SECTIONS = [
    Section(
        "bandwidth",
        "Copies, strided reads, transposes and a tiled matmul",
        "benchmarks/bandwidth.py",
        "python benchmarks/bandwidth.py",
        _h_bandwidth,
        _f_bandwidth,
        needs="an NVIDIA GPU (torch for the peers)",
        targets=["device copy vs torch copy", "padded transpose vs copy", "tiled fp32 matmul / torch fp32"],
    ),
    Section(
        "transpose_variants",
        "Padded-transpose variants",
        "benchmarks/transpose_variants.py",
        "python benchmarks/transpose_variants.py",
        _h_transpose_variants,
        _f_transpose_variants,
        targets=["transpose variant vs copy"],
    ),
    Section(
        "latency",
        "The latency ladder (pointer chasing)",
        "benchmarks/latency.py",
        "python benchmarks/latency.py",
        _h_latency,
        _f_latency_ns,
        _t_latency,
    ),
    Section(
        "strided_copy",
        "Strided copy past stride 8, with HBM bytes per load",
        "benchmarks/strided_copy.py",
        "python benchmarks/strided_copy.py; python benchmarks/ncu_runs.py strided",
        _h_strided,
        _f_strided,
        _t_strided,
        needs="an NVIDIA GPU and Nsight Compute (ncu)",
    ),
]
