"""The serial part and communication: launch overhead, Amdahl's law on a GPU, stall reasons, the
all-reduce."""

from __future__ import annotations

import numpy as np

from .core import Headline, Section, _df, _pct, _size


def _h_launch(r):
    from gpulab import results_views

    out = []
    nb, th = r.get("numba_tiny", {}), r.get("torch_add_", {})
    if nb.get("host_s_per_launch"):
        tail = ""
        if th.get("host_s_per_launch"):
            tail = (
                f"; a small torch operation {th['host_s_per_launch'] * 1e6:.1f} us "
                f"({nb['host_s_per_launch'] / th['host_s_per_launch']:.1f}x less)"
            )
        out.append(
            Headline(
                "numba launch, host side (s)",
                nb["host_s_per_launch"],
                f"Host launch cost (enqueue only, no synchronisation): a numba launch "
                f"costs the host {nb['host_s_per_launch'] * 1e6:.1f} us{tail}.",
                score=False,
            )
        )
    lp = results_views.launch_parts(r)
    if lp and "numba" in lp:
        n = lp["numba"]
        ncu = n.get("ncu_gpu_time_duration_s")
        out.append(
            Headline(
                "numba tiny kernel, GPU time (s)",
                n["gpu_single_behind_long_s"],
                f"GPU time of the tiny kernel itself: {n['gpu_single_behind_long_s'] * 1e6:.1f}"
                f" us between events queued behind a long kernel, "
                f"{n['gpu_back_to_back_s'] * 1e6:.2f} us each back to back"
                + (f", {ncu * 1e6:.2f} us by Nsight Compute's gpu__time_duration" if ncu else "")
                + f". End to end (launch + synchronize, host clock): "
                f"{n['end_to_end_s'] * 1e6:.1f} us.",
                score=False,
            )
        )
        if n.get("events_idle_stream_s"):
            out.append(
                Headline(
                    "events on an idle stream (not GPU time)",
                    n["events_idle_stream_s"],
                    f"Not a GPU time: CUDA events around one launch on an idle stream "
                    f"give {n['events_idle_stream_s'] * 1e6:.1f} us, because the start "
                    f"event completes before the host has finished launching, so the "
                    f"interval holds the host launch path.",
                    score=False,
                )
            )
    ch = r.get("chain") or []
    if ch:
        small = min(ch, key=lambda x: x["n"])
        out.append(
            Headline(
                "unfused / fused chain time",
                small["numba_unfused_s"] / small["numba_fused_s"],
                f"End to end, a chain of {small['k']} element-wise steps on {small['n']:,} "
                f"floats: {small['k']} launches {small['numba_unfused_s'] * 1e3:.2f} ms, one "
                f"fused launch {small['numba_fused_s'] * 1e3:.3f} ms "
                f"({small['numba_unfused_s'] / small['numba_fused_s']:.0f}x).",
                against=f"one fused launch, n = {small['n']:,}",
            )
        )
    tl = r.get("timelines") or {}
    if "serial" in tl and "overlapped" in tl:
        s_, o = tl["serial"]["summary"], tl["overlapped"]["summary"]
        out.append(
            Headline(
                "kernel share of the pipeline",
                s_["kernel_share"],
                f"Pipeline timeline: the kernel lane is busy {_pct(s_['kernel_share'])} of "
                f"the time serial, {_pct(o['kernel_share'])} overlapped: the host is the "
                f"serial part.",
                score=False,
            )
        )
    return out


def _t_launch(r):
    from gpulab import results_views

    lp = results_views.launch_parts(r)
    if not lp:
        return None
    names = [
        ("host_launch_s", "host launch cost (enqueue only)"),
        ("gpu_single_behind_long_s", "GPU time, one kernel queued behind a long one"),
        ("gpu_back_to_back_s", "GPU time per kernel, many back to back"),
        ("ncu_gpu_time_duration_s", "GPU time, Nsight Compute gpu__time_duration"),
        ("end_to_end_s", "end to end: launch + synchronize (host clock)"),
        ("events_idle_stream_s", "events on an idle stream (holds the host launch path: not a GPU time)"),
    ]
    fws = [k for k in lp if k != "labels"]
    rows = [
        (text, *[lp[f][k] * 1e6 if lp[f].get(k) is not None else None for f in fws])
        for k, text in names
        if any(lp[f].get(k) is not None for f in fws)
    ]
    return _df(rows, ["what the figure is", *[f"{f} (us)" for f in fws]])


def _f_launch_parts(r, ax):
    t = _t_launch(r)
    if t is None:
        return None
    import matplotlib.pyplot as plt

    short = [
        "host launch",
        "GPU, behind long",
        "GPU, back to back",
        "GPU, ncu",
        "end to end",
        "events, idle stream",
    ]
    full = [
        x
        for x in (
            "host launch cost",
            "GPU time, one",
            "GPU time per",
            "GPU time, Nsight",
            "end to end",
            "events on an",
        )
    ]
    labels = [short[next(i for i, f in enumerate(full) if w.startswith(f))] for w in t.iloc[:, 0]]
    y = np.arange(len(t))
    cols = list(t.columns[1:])
    h = 0.8 / len(cols)
    for j, c in enumerate(cols):
        ax.barh(y + (j - (len(cols) - 1) / 2) * h, t[c].fillna(0), h, label=c.replace(" (us)", ""))
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("microseconds per launch")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.figure.set_size_inches(6.6, 3.4)
    if r.get("chain"):
        from gpulab.plots import amdahl as aplots

        _, ax2 = plt.subplots(figsize=(6.6, 3.8))
        aplots.launch_chain(r["chain"], ax=ax2)
    return ax


def amdahl_fit(r: dict, fit_ps=(2, 8)):
    """Fit T(p) = serial + parallel/p on ``fit_ps`` (as chapter 10 does); the fit, the p's, times
    and the largest |error| of the held-out p's up to the SM count."""
    from gpulab.models import amdahl

    rows = r["rows"]
    ps = np.array([x["p"] for x in rows])
    t = np.array([x["step_s"] for x in rows])
    used = np.isin(ps, fit_ps)
    fit = amdahl.fit_times(ps[used], t[used])
    n_sm = (r.get("env") or {}).get("n_sm") or ps.max()
    held = (~used) & (ps <= n_sm)
    worst = max((abs(fit.check(p, tt)) for p, tt in zip(ps[held], t[held])), default=None)
    return fit, ps, t, used, worst


def amdahl_reading(r: dict) -> dict:
    """What the two-point fit says about one amdahl_gpu.json run, as the appendix reads it:
    held-out errors up to the SM count ("within": [(p, error)], the worst and its p) and past it
    ("past", the largest and its p), the kernel's event time (its launch path included) at the
    SM count and at the largest p, and the host part's range (measured on its own; the model
    takes it as constant)."""
    fit, ps, t, used, _ = amdahl_fit(r)
    n_sm = int((r.get("env") or {}).get("n_sm") or ps.max())
    errs = [(int(p), fit.check(p, tt)) for p, tt, u in zip(ps, t, used) if not u]
    within = [(p, e) for p, e in errs if p <= n_sm]
    past = [(p, e) for p, e in errs if p > n_sm]
    kern = {x["p"]: x["kernel_s"] for x in r["rows"] if "kernel_s" in x}
    host = [x["host_s"] for x in r["rows"] if "host_s" in x]
    out = {"fit": fit, "n_sm": n_sm, "within": within, "past": past}
    if within:
        out["worst_within_p"], out["worst_within"] = max(within, key=lambda pe: abs(pe[1]))
    if past:
        out["worst_past_p"], out["worst_past"] = max(past, key=lambda pe: abs(pe[1]))
    if n_sm in kern and kern:
        out["kernel_at_n_sm_s"], out["p_max"] = kern[n_sm], max(kern)
        out["kernel_at_p_max_s"] = kern[max(kern)]
    if host:
        out["host_min_s"], out["host_max_s"] = min(host), max(host)
        out["host_ratio"] = max(host) / min(host)
    return out


def _h_amdahl(r):
    from gpulab.models import amdahl

    fit, ps, t, used, worst = amdahl_fit(r)
    a = amdahl_reading(r)
    errs = ", ".join(f"p={p} {e:+.1%}" for p, e in a["within"])
    past = ", ".join(f"p={p} {e:+.0%}" for p, e in a["past"])
    past_txt = ""
    if past:
        past_txt = f" Past the SM count the fit fails: {past}"
        if "kernel_at_p_max_s" in a:
            past_txt += (
                f" (a block runs on one SM: the kernel's time, launch included, falls only from "
                f"{a['kernel_at_n_sm_s'] * 1e3:.2f} ms at p = {a['n_sm']} to "
                f"{a['kernel_at_p_max_s'] * 1e3:.2f} ms at p = {a['p_max']})"
            )
        past_txt += "."
    host_txt = (
        f" The fitted serial time is {fit.serial_s * 1e3:.2f} ms; the host part measured "
        f"on its own, which the model takes as constant, took {a['host_min_s'] * 1e3:.2f} to "
        f"{a['host_max_s'] * 1e3:.2f} ms ({a['host_ratio']:.1f}-fold)."
        if "host_ratio" in a
        else ""
    )
    s = t[ps == ps.min()][0] / t.min()
    return [
        Headline(
            "Amdahl fit on two p, worst held-out error",
            worst,
            f"T(p) = serial + parallel/p fitted on p = {', '.join(map(str, ps[used]))}: "
            f"f = {fit.f:.4f} (limit {amdahl.limit(fit.f):.0f}x). Held-out errors up to "
            f"{a['n_sm']} SMs: {errs}.{past_txt}{host_txt} Measured speed-up of the step, best p "
            f"against p = {ps.min()}: {s:.0f}x.",
            score=False,
        )
    ]


def _f_amdahl(r, ax):
    from gpulab.plots import amdahl as aplots

    fit, ps, t, used, _ = amdahl_fit(r)
    aplots.fit_plot(fit, ps, t, used, ax=ax)
    return ax


def _h_stalls(r):
    from gpulab import results_views

    rows = results_views.stall_reasons(r) or []
    return [
        Headline(
            f"stall kernel {x['kernel']}",
            x["built_for_share"],
            f"{x['kernel']}: top stall reason {x['top_reason']} (built for {x['built_for']}, "
            f"{_pct(x['built_for_share'])} of all stall reasons).",
            score=False,
        )
        for x in rows
    ]


def _t_stalls(r):
    from gpulab import results_views

    rows = results_views.stall_reasons(r) or []
    sp = lambda x: (x or "").replace("_", " ")  # noqa: E731
    return _df(
        [
            (
                x["kernel"],
                sp(x["built_for"]),
                x["top_reason"] == x["built_for"],
                x["built_for_share"],
                x["long_scoreboard_per_issue"],
                x["barrier_per_issue"],
                x["mio_throttle_per_issue"],
                x["short_scoreboard_per_issue"],
            )
            for x in rows
        ],
        ["kernel", "built for", "is top", "its share", "long sb.", "barrier", "MIO thr.", "short sb."],
    )


def _f_stalls(r, ax):
    from gpulab.plots import amdahl as aplots

    aplots.stall_shares(r, ax=ax)
    ax.figure.set_size_inches(6.6, 0.9 * len(r.get("kernels", {})) + 2.2)
    return ax


def _h_allreduce(r):
    from gpulab import results_views

    v = results_views.allreduce(r)
    if not v:
        return []
    p = v["gpus"]
    out = [
        Headline(
            "all-reduce alpha three ways",
            v["alpha_graph_s"],
            f"All-reduce of small messages (<= 1 KiB) on {p} GPUs (NCCL {v['nccl']}), time "
            f"per all-reduce: one call between events {v['small_message_per_call_s'] * 1e6:.1f}"
            f" us (an upper bound: it includes the host's call), back to back "
            f"{v['small_message_back_to_back_s'] * 1e6:.1f} us, replayed from a CUDA graph "
            f"{v['small_message_graph_s'] * 1e6:.1f} us. Ring model, 2(p - 1) = "
            f"{2 * (p - 1)} steps: alpha = {v['alpha_per_call_s'] * 1e6:.1f}, "
            f"{v['alpha_back_to_back_s'] * 1e6:.1f} and {v['alpha_graph_s'] * 1e6:.1f} us "
            f"per step.",
            score=False,
        ),
        Headline(
            "all-reduce B",
            v["bandwidth_Bps"],
            f"Large messages: B = {v['bandwidth_Bps'] / 1e9:.0f} GB/s from the fitted slope; "
            f"largest bus bandwidth (nccl-tests definition) "
            f"{v['max_bus_bandwidth_Bps'] / 1e9:.0f} GB/s.",
            score=False,
        ),
    ]
    if v["p2p_GBps"]:
        size = (r.get("p2p_copy") or {}).get("bytes")
        links = {
            k: x.get("links")
            for k, x in (r.get("nvlink_status") or {}).items()
            if isinstance(x, dict) and x.get("links")
        }
        nv = (
            f" nvidia-smi reports {'/'.join(str(x) for x in sorted(set(links.values())))} "
            f"NVLink links per GPU."
            if links
            else ""
        )
        out.append(
            Headline(
                "peer-to-peer copy",
                max(v["p2p_GBps"].values()),
                f"Peer-to-peer copy{' of ' + _size(size) if size else ''} between the "
                f"two GPUs: "
                + ", ".join(f"{k.replace('_', ' ')} {g:.0f} GB/s" for k, g in v["p2p_GBps"].items())
                + "."
                + nv,
                score=False,
            )
        )
    return out


def _t_allreduce(r):
    from gpulab import results_views

    v = results_views.allreduce(r)
    if not v:
        return None
    us = 1e6
    rows = [
        (
            "small message, one call between events (upper bound)",
            v["small_message_per_call_s"] * us,
            v["alpha_per_call_s"] * us,
        ),
        (
            "small message, back to back",
            v["small_message_back_to_back_s"] * us,
            v["alpha_back_to_back_s"] * us,
        ),
        (
            "small message, replayed from a CUDA graph",
            v["small_message_graph_s"] * us,
            v["alpha_graph_s"] * us,
        ),
    ]
    return _df(rows, ["timing", "time per all-reduce (us)", "alpha per ring step (us)"])


def _f_allreduce(r, ax):
    rows = r.get("rows") or []
    if not rows:
        return None
    labels = r.get("labels") or {}
    for k, st, name in (
        ("time_s", "o-", "one call between events"),
        ("back_to_back_s", "s-", "back to back"),
        ("graph_s", "^-", "CUDA graph"),
    ):
        pts = [(x["bytes"], x[k]) for x in rows if x.get(k)]
        if pts and k in labels:
            ax.plot([p[0] for p in pts], [p[1] * 1e6 for p in pts], st, ms=4, label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda b, _: _size(int(b)).replace(" ", "")))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("message size")
    ax.set_ylabel("time per all-reduce (us)")
    ax.legend(loc="upper left")
    ax.figure.set_size_inches(6.6, 3.8)
    return ax


SECTIONS = [
    Section(
        "launch_overhead",
        "Launch overhead as serial time",
        "benchmarks/launch_overhead.py",
        "python benchmarks/launch_overhead.py; python benchmarks/ncu_runs.py launch",
        _h_launch,
        _f_launch_parts,
        _t_launch,
        needs="an NVIDIA GPU (torch for the peer; ncu for gpu__time_duration)",
    ),
    Section(
        "amdahl_gpu",
        "Amdahl's law on a GPU",
        "benchmarks/amdahl_gpu.py",
        "python benchmarks/amdahl_gpu.py",
        _h_amdahl,
        _f_amdahl,
    ),
    Section(
        "stall_reasons",
        "Stall reasons: one kernel for each",
        "benchmarks/stall_reasons.py",
        "python benchmarks/ncu_runs.py stalls",
        _h_stalls,
        _f_stalls,
        _t_stalls,
        needs="an NVIDIA GPU and Nsight Compute (ncu)",
    ),
    Section(
        "allreduce_alpha_beta",
        "All-reduce: alpha and B",
        "benchmarks/allreduce_alpha_beta.py",
        "python benchmarks/allreduce_alpha_beta.py",
        _h_allreduce,
        _f_allreduce,
        _t_allreduce,
        needs="2 or more NVIDIA GPUs (torch with NCCL)",
    ),
]
