"""Divergence paths (time and Nsight Compute counts) and the simulator against Nsight Compute."""

from __future__ import annotations

from .core import Headline, Section, _df


def _h_divergence(r):
    out = []
    rows = r.get("rows", [])
    for iters in sorted({x["iters"] for x in rows}):
        div = {x["paths"]: x for x in rows if x["iters"] == iters and x["mode"] == "divergent"}
        uni = {x["paths"]: x for x in rows if x["iters"] == iters and x["mode"] == "uniform"}
        pmax = max(div) if div else None
        if pmax and 1 in div:
            ratio = div[pmax]["ms_median"] / div[1]["ms_median"]
            u = (
                f"; warp-uniform choice of the same paths: {uni[pmax]['ms_median'] / uni[1]['ms_median']:.2f}x"
                if pmax in uni and 1 in uni
                else ""
            )
            out.append(
                Headline(
                    f"divergent time at {pmax} paths, {iters}-iteration body",
                    ratio,
                    f"CUDA events around each launch, paths of equal length, "
                    f"{iters}-iteration bodies: {pmax} divergent paths per warp take "
                    f"{ratio:.1f}x the time of 1 path (model T_warp = sum of T_p: "
                    f"{pmax}x){u}.",
                    against=f"1 path; model: {pmax}x",
                )
            )
    from gpulab import results_views

    split = results_views.divergence_instruction_split(r)
    vr = [x for x in (results_views.divergence_paths(r) or []) if x.get("ncu_inst_executed")]
    if split and vr:
        top = max(vr, key=lambda x: x["paths"])
        ncu_it = "/".join(str(i) for i in sorted({x.get("iters") for x in r["ncu"]["rows"]}))
        out.append(
            Headline(
                "warp instructions at the most paths (ncu)",
                top["ncu_inst_executed_ratio"],
                f"Nsight Compute ({ncu_it}-iteration body), {top['paths']} paths "
                f"against 1: "
                f"{top['ncu_time_ratio']:.1f}x the kernel time (gpu__time_duration), "
                f"{top['ncu_inst_executed_ratio']:.1f}x the warp instructions, "
                f"{top['ncu_threads_per_inst']:.2f} active threads per instruction "
                f"({top['ncu_pred_on_threads_per_inst']:.2f} predicated on). A line "
                f"common + P x per-path fits every P within "
                f"{split['max_rel_residual']:.1%} and predicts "
                f"{split['predicted_ratio_at_32']:.1f}x at 32 paths: the code all paths "
                f"share is why the ratio stays below P.",
                score=False,
            )
        )
    return out


def _t_divergence(r):
    from gpulab import results_views

    rows = results_views.divergence_paths(r) or []
    if not rows:
        return None
    iters = sorted({int(k.rsplit("iters", 1)[1]) for x in rows for k in x if k.startswith("divergent_ratio")})
    cols = [
        "paths P",
        *[f"time ratio, {i} it." for i in iters],
        "ncu time ratio",
        "ncu inst. ratio",
        "threads per inst.",
        "pred-on per inst.",
    ]
    return _df(
        [
            (
                x["paths"],
                *[x.get(f"divergent_ratio_iters{i}") for i in iters],
                x.get("ncu_time_ratio"),
                x.get("ncu_inst_executed_ratio"),
                x.get("ncu_threads_per_inst"),
                x.get("ncu_pred_on_threads_per_inst"),
            )
            for x in rows
        ],
        cols,
    )


def _f_divergence(r, ax):
    from gpulab.plots import masks

    ax.figure.set_size_inches(6.6, 5.4)
    masks.paths_timing(r, ax=ax)
    return ax


def fidelity_counts(r: dict) -> dict:
    """Launches whose per-request ratios / raw exact counters agree between ncu and the simulator."""
    launches = [k for k, v in r.items() if isinstance(v, dict) and "counters" in v]
    ratios = [k for k in launches if r[k].get("ratios_equal")]
    exact = [k for k in launches if r[k].get("exact_counters_equal")]
    return {"launches": launches, "ratios_equal": ratios, "exact_equal": exact}


def _h_fidelity(r):
    c = fidelity_counts(r)
    n, k, e = len(c["launches"]), len(c["ratios_equal"]), len(c["exact_equal"])
    off = [x for x in c["launches"] if x not in c["ratios_equal"]]
    off_exact = [x for x in c["launches"] if x not in c["exact_equal"]]
    return [
        Headline(
            "simulator ratios = Nsight Compute",
            k / n if n else None,
            f"Sectors per request and wavefronts per shared instruction equal Nsight "
            f"Compute's for {k} of {n} launches (differ: {', '.join(off) or 'none'}); every "
            f"exact counter equal for {e} of {n} (differ: {', '.join(off_exact) or 'none'}). "
            f"The differences are compiler transformations (a hoisted load, a 128-bit shared "
            f"load), explained in benchmarks/fidelity/README.md.",
            against="Nsight Compute; fraction of launches equal",
        )
    ]


def _t_fidelity(r):
    rows = []
    for k, v in r.items():
        if not isinstance(v, dict) or "ratios" not in v:
            continue
        ra = v["ratios"]
        g = lambda key, who: ra.get(key, {}).get(who)  # noqa: E731
        rows.append(
            (
                k,
                g("sectors_per_request_ld", "ncu"),
                g("sectors_per_request_ld", "sim"),
                g("wavefronts_per_shared_inst_ld", "ncu"),
                g("wavefronts_per_shared_inst_ld", "sim"),
                v.get("ratios_equal"),
                v.get("exact_counters_equal"),
            )
        )
    return _df(
        rows,
        [
            "launch",
            "ld sectors per req. ncu",
            "sim",
            "shared wave- fronts per inst. ncu",
            "sim",
            "ratios equal",
            "counts equal",
        ],
    )


SECTIONS = [
    Section(
        "fidelity",
        "The simulator against Nsight Compute",
        "benchmarks/fidelity/ncu_vs_sim.py",
        "the steps in benchmarks/fidelity/README.md",
        _h_fidelity,
        None,
        _t_fidelity,
        needs="an NVIDIA GPU and Nsight Compute (ncu)",
    ),
    Section(
        "divergence_paths",
        "Divergence: time against the number of paths",
        "benchmarks/divergence_paths.py",
        "python benchmarks/divergence_paths.py; python benchmarks/ncu_runs.py divergence",
        _h_divergence,
        _f_divergence,
        _t_divergence,
        needs="an NVIDIA GPU (Nsight Compute, ncu, for the instruction counts)",
    ),
]
