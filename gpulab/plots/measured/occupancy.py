"""gpulab's occupancy calculator against the CUDA driver and against cuda_occupancy.h."""

from __future__ import annotations

import numpy as np

from .core import Headline, Section, _df


def _h_occupancy(r):
    cfg = r.get("configs", [])
    n = len(cfg)
    agree = sum(1 for c in cfg if c.get("driver") == c.get("gpulab"))
    lim = r.get("device_limits_vs_gpulab", {})
    same = [k for k, v in lim.items() if isinstance(v, list) and v[0] is not None and v[0] == v[1]]
    listed = [k for k, v in lim.items() if isinstance(v, list) and v[0] is not None]
    kinds = ", ".join(f"{k} {s['match']}/{s['configurations']}" for k, s in r.get("summary", {}).items())
    gpu = (r.get("environment") or {}).get("gpu") or r.get("device", "GPU")  # benchenv, or older
    return [
        Headline(
            "occupancy calculator = driver",
            agree / n if n else None,
            f"On the {gpu} ({r.get('arch', '?')} only: the driver "
            f"answers for the GPU it runs on), gpulab's occupancy calculator against "
            f"cuOccupancyMaxActiveBlocksPerMultiprocessor: "
            f"{agree} of {n} configurations give the same blocks per SM ({kinds}); "
            f"{len(r.get('mismatches', []))} mismatches recorded; {len(same)} of {len(listed)} "
            f"device limits equal gpulab's table.",
            1.0,
            "all configurations agree",
            against="the CUDA driver's occupancy API",
        )
    ]


def _t_occupancy(r):
    rows = [
        (k, s["configurations"], s["match"], s["distinct_register_counts"])
        for k, s in r.get("summary", {}).items()
    ]
    rows += [
        (f"limit {k}", v[0], v[1], "")
        for k, v in r.get("device_limits_vs_gpulab", {}).items()
        if isinstance(v, list)
    ]
    return _df(rows, ["what", "configurations / device", "agree / gpulab", "register counts"])


def _f_occupancy(r, ax):
    from collections import Counter

    cnt = Counter(
        (c["driver"], c["gpulab"])
        for c in r.get("configs", [])
        if c.get("driver") is not None and c.get("gpulab") is not None
    )
    if not cnt:
        return None
    xs, ys, ns = zip(*[(d, g, n) for (d, g), n in cnt.items()])
    ax.scatter(xs, ys, s=[10 + 3 * np.sqrt(n) * 4 for n in ns], alpha=0.6)
    m = max(max(xs), max(ys))
    ax.plot([0, m], [0, m], "k:", lw=1, label="gpulab = driver")
    ax.set_xlabel("blocks per SM, driver (cuOccupancyMaxActiveBlocksPerMultiprocessor)")
    ax.set_ylabel("blocks per SM, gpulab")
    ax.legend()
    return ax


def _h_occ_header(r):
    from gpulab import results_views

    rows = results_views.occupancy_vs_header(r) or []
    if not rows:
        return []
    agree, cases = sum(x["agree"] for x in rows), sum(x["cases"] for x in rows)
    return [
        Headline(
            "occupancy calculator = cuda_occupancy.h",
            agree / cases,
            f"gpulab's occupancy against NVIDIA's cuda_occupancy.h: {agree:,} of {cases:,} "
            f"cases agree over {', '.join(x['arch'] for x in rows)}. No GPU is involved: "
            f"the header's calculator is given each architecture's limits from the "
            f"Programming Guide.",
            1.0,
            "every case",
            against="cuda_occupancy.h",
        )
    ]


def _t_occ_header(r):
    from gpulab import results_views

    rows = results_views.occupancy_vs_header(r) or []
    return _df(
        [
            (x["arch"], x["cases"], x["agree"], x["cases_with_a_block"], x["device_limits_equal"])
            for x in rows
        ],
        ["arch", "cases", "agree", "cases with a block", "limits equal"],
    )


SECTIONS = [
    Section(
        "occupancy_vs_driver",
        "Occupancy calculator against the CUDA driver",
        "benchmarks/occupancy_vs_driver.py",
        "python benchmarks/occupancy_vs_driver.py",
        _h_occupancy,
        _f_occupancy,
        _t_occupancy,
        targets=["occupancy calculator = driver"],
    ),
    Section(
        "occupancy_vs_cuda_occupancy_h",
        "Occupancy calculator against cuda_occupancy.h",
        "benchmarks/occupancy_vs_cuda_occupancy_h.py",
        "python benchmarks/occupancy_vs_cuda_occupancy_h.py",
        _h_occ_header,
        None,
        _t_occ_header,
        needs="g++ and cuda_occupancy.h (CUDA toolkit or the nvidia-cuda-runtime wheel)",
        targets=["occupancy calculator = cuda_occupancy.h"],
    ),
]


def _h_fma_loop(r):
    from ... import results_views as rv

    v = rv.fma_loop(r)
    full, one = v["cases"]["fma_chain_full"], v["cases"]["fma_chain_1_warp"]
    mix = v["loop_mix"].get("fma_chain", {})
    l1 = v["chases"].get("chase_l1_16KiB", {})
    return [
        Headline(
            "FMA loop issue rate at full occupancy",
            full["issue_per_scheduler_cycle"],
            f"64 warps per SM running a dependent multiply-add loop issued "
            f"{full['issue_per_scheduler_cycle']:.2f} warp instructions per scheduler per cycle at "
            f"{full['clock_GHz']:.2f} GHz (Nsight Compute's SM clock); "
            f"{mix.get('int_alu', '?')} of the {mix.get('total', '?')} instructions of the unrolled "
            f"loop are integer add/compare/select, which run at half the FP32 rate.",
            score=False,
        ),
        Headline(
            "cycles per iteration, one warp",
            one["cycles_per_iteration"],
            f"One warp alone: {one['cycles_per_iteration']:.1f} SM cycles per iteration of the "
            f"loop (its 64-bit loop counter is a chain of dependent integer instructions).",
            score=False,
        ),
        Headline(
            "cycles per L1 chase step",
            l1.get("cycles_per_step"),
            f"A pointer-chase step over 16 KiB (L1): {l1.get('cycles_per_step', float('nan')):.1f} "
            f"SM cycles, counted by Nsight Compute (difference of two chase lengths).",
            score=False,
        ),
    ]


def _t_fma_loop(r):
    from ... import results_views as rv

    v = rv.fma_loop(r)
    rows = [
        (
            k,
            f"{c['time_us']:.1f}",
            f"{c['clock_GHz']:.3f}",
            f"{c['cycles_per_iteration']:.1f}",
            f"{c['issue_per_scheduler_cycle']:.2f}",
        )
        for k, c in v["cases"].items()
    ]
    rows += [
        (k, f"{c['ns_per_step'] * 1e-3:.4f}", f"{c['clock_GHz']:.3f}", f"{c['cycles_per_step']:.1f}", "")
        for k, c in v["chases"].items()
    ]
    return _df(rows, ["case", "time (us; chases: us/step)", "clock (GHz)", "cycles/iter", "issue/cycle"])


SECTIONS.append(
    Section(
        "fma_loop",
        "Multiply-add loops and chase steps in SM cycles",
        "benchmarks/fma_loop.py",
        "python benchmarks/fma_loop.py",
        _h_fma_loop,
        None,
        _t_fma_loop,
        needs="an NVIDIA GPU and Nsight Compute (ncu)",
    )
)
