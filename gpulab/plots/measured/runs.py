"""Whole runs: every chapter on the GPU and CPU, the simulators' speed, the performance model."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .core import Headline, Section, _df, _pct


def _h_notebooks(r):
    runs = r.get("runs", [])
    ok = [x for x in runs if x.get("ok")]
    bad = [Path(x["notebook"]).stem for x in runs if not x.get("ok")]
    return [
        Headline(
            f"chapters run on the {r.get('backend', '?')} backend",
            len(ok) / len(runs) if runs else None,
            f"{len(ok)} of {len(runs)} chapter notebooks ran top to bottom with backend "
            f"'{r.get('backend')}' ({r.get('describe')}), "
            f"{sum(x.get('seconds', 0) for x in runs):.0f} s in all"
            + (f"; failed: {', '.join(bad)}." if bad else "."),
            1.0,
            "every chapter runs",
            against="chapters/*.ipynb",
        )
    ]


def _h_chapters_from_wheel(r):
    runs = r.get("runs", [])
    ok = [x for x in runs if x.get("ok")]
    bad = [Path(x["notebook"]).stem for x in runs if not x.get("ok")]
    return [
        Headline(
            f"chapters run from the installed wheel ({r.get('backend', '?')}), no repository",
            len(ok) / len(runs) if runs else None,
            f"{len(ok)} of {len(runs)} chapters ran from gpulab's installed wheel, no repository on any "
            f"path, each kernel in an empty folder, {r.get('jobs')} at once, "
            f"{r.get('wall_seconds')} s wall ({r.get('describe')})"
            + (f"; failed: {', '.join(bad)}." if bad else "."),
            1.0,
            "every chapter runs",
            against="chapters/*.ipynb",
        )
    ]


def _last_line(err):
    if not err:
        return ""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", x).strip() for x in str(err).splitlines()]
    lines = [x for x in lines if x and not set(x) <= set("-^ ")]
    return lines[-1][:160] if lines else ""


def _t_notebooks(r):
    return _df(
        [
            (x["notebook"], x.get("seconds"), x.get("ok"), _last_line(x.get("error")))
            for x in r.get("runs", [])
        ],
        ["notebook", "seconds", "ran", "error (last line)"],
    )


def _h_sim_speed(r):
    ks = r.get("kernels", {})
    sp = {k: v["speedup"] if "speedup" in v else v["numba_sim_s"] / v["gpulab_s"] for k, v in ks.items()}
    mem = r.get("launch_2_20_threads", {})
    m = (
        f" A 2^20-thread launch took {mem['seconds']:.2f} s and peaked at "
        f"{mem['peak_rss_bytes'] / 2**20:.0f} MiB."
        if mem
        else ""
    )
    return [
        Headline(
            "simulator speed-up over Numba's",
            min(sp.values()) if sp else None,
            "gpulab's simulator against Numba's CUDA simulator: "
            + ", ".join(f"{k} {v:.0f}x faster" for k, v in sp.items())
            + "."
            + m,
            against="Numba's simulator; smallest speed-up",
        )
    ]


def _f_sim_speed(r, ax):
    ks = r.get("kernels", {})
    names = list(ks)
    x = np.arange(len(names))
    ax.bar(x - 0.2, [ks[k]["numba_sim_s"] for k in names], 0.4, label="Numba's simulator")
    ax.bar(x + 0.2, [ks[k]["gpulab_s"] for k in names], 0.4, label="gpulab's simulator")
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("seconds per launch (median)")
    ax.legend()
    return ax


def _h_perf_model(r):
    summ = r.get("summary") or {}
    out = []
    for role in ("calibrate", "holdout"):
        x = summ.get(role)
        if x and x.get("kernels"):
            out.append(
                Headline(
                    f"perf model, {role} kernels within 2x",
                    x["within_2x"] / x["kernels"],
                    f"{role}: {x['kernels']} kernels, median |predicted / measured - 1| "
                    f"{_pct(x['median_abs_error'])}, {x['within_2x']} within 2x "
                    f"(measured: Nsight Compute gpu__time_duration on the H200; predicted by the "
                    "model as it was when perf_model.json was recorded, before the refits that began "
                    "with commit 59bb525: the shipped model's own figures are perf_train.json's).",
                    score=False,
                )
            )
    blind = _blind_accuracy()
    if out and blind:  # beside the in-sample figures, the one for kernels the model never saw
        out.append(
            Headline(
                "perf model, newest blind round, median error",
                blind["median_error"],
                f"blind ({blind['round']}.json, the newest blind round): {blind['kernels']} kernels "
                f"nobody on the project had run on a GPU, predicted before they were timed: median "
                f"{blind['median_error_text']}, {blind['outside_2x']} outside 2x. The calibrate and "
                "holdout kernels shaped the model; the blind figure is the one the chapters quote.",
                score=False,
            )
        )
    return out


def _blind_accuracy() -> dict | None:
    """results_views.blind_accuracy() (the newest measured blind round), None without one."""
    from gpulab import results_views as views

    try:
        return views.blind_accuracy()
    except (FileNotFoundError, KeyError, TypeError):
        return None


def _f_perf_model(r, ax):
    try:
        from gpulab.perf import plot as perf_plot
    except ImportError:
        return None
    ax.figure.set_size_inches(6.6, 5.2)
    perf_plot.predicted_vs_measured(r, ax=ax)
    return ax


def _h_perf_blind(r):
    from gpulab import results_views as views

    v = views.perf_blind(r)
    if not v:
        return []
    out = [
        Headline(
            "perf model, blind kernels within 2x",
            v["within_2x"] / v["kernels"],
            f"{v['kernels']} kernels predicted and committed (model at {v['model_commit'][:7]}) before "
            f"they ran on the H200: median |predicted / measured - 1| {_pct(v['median_abs_error'])}, "
            f"{v['within_2x']} within 2x (measured: Nsight Compute gpu__time_duration).",
            score=False,
        )
    ]
    if v.get("revised_median_abs_error") is not None:
        out.append(
            Headline(
                "perf model, the same kernels after the revision",
                v["revised_within_2x"] / v["kernels"],
                f"after the revision the blind result led to (not blind): median "
                f"{_pct(v['revised_median_abs_error'])}, {v['revised_within_2x']} within 2x.",
                score=False,
            )
        )
    return out


def _t_perf_blind(r):
    from gpulab import results_views as views

    v = views.perf_blind(r)
    if not v:
        return None
    return _df(
        [
            (
                x["kernel"],
                round(x["measured_us"], 1),
                round(x["predicted_us"], 1),
                round(x["predicted_over_measured"], 2),
                x["limiter"].split(" with")[0].split(" (")[0],
                None if x["revised_over_measured"] is None else round(x["revised_over_measured"], 2),
            )
            for x in v["rows"]
        ],
        ["kernel", "measured µs", "predicted µs", "pred/meas", "limiter", "after revision"],
    )


def _h_instruction_costs(r):
    m = r.get("math_warp_instructions_per_call", {})
    a = r.get("same_address_atomics", {})
    out = []
    if "sin" in m:
        out.append(
            Headline(
                "warp instructions per math.sin call (float32)",
                m["sin"]["float32"],
                f"libdevice code: sin {m['sin']['float32']} (float32) and {m['sin']['float64']} "
                f"(float64) warp instructions per call, exp {m['exp']['float32']} and "
                f"{m['exp']['float64']} (ncu smsp__inst_executed, minus the loop without the call).",
                score=False,
            )
        )
    if "int" in a and "float" in a:
        out.append(
            Headline(
                "ns per same-address atomic (int warp instruction)",
                a["int"]["s_per_instruction_one_lane"] * 1e9,
                f"one address: {a['int']['s_per_instruction_one_lane'] * 1e9:.3f} ns per integer "
                f"warp instruction for 1 to 32 lanes (the compiler combines a warp's updates of "
                f"a provably uniform address), {a['float']['s_per_extra_lane'] * 1e9:.2f} ns per "
                f"float lane (gpu__time_duration over the warp instructions).",
                score=False,
            )
        )
    return out


def _t_instruction_costs(r):
    m = r.get("math_warp_instructions_per_call", {})
    return _df(
        [(name, v["float32"], v["float64"]) for name, v in m.items()],
        ["math function", "float32", "float64"],
    )


SECTIONS = [
    Section(
        "chapters_from_wheel_gpu",
        "Every chapter from the installed wheel, outside the repository",
        "benchmarks/chapters_from_wheel.py",
        "pip install <gpulab wheel>; python benchmarks/chapters_from_wheel.py --jobs 6 chapters/*.ipynb",
        _h_chapters_from_wheel,
        None,
        _t_notebooks,
    ),
    Section(
        "notebooks_gpu",
        "Every chapter on the GPU",
        "benchmarks/run_notebooks.py",
        "python benchmarks/run_notebooks.py",
        _h_notebooks,
        None,
        _t_notebooks,
    ),
    Section(
        "notebooks_cpu",
        "Every chapter on the CPU simulator",
        "benchmarks/run_notebooks.py",
        "python benchmarks/run_notebooks.py (without a GPU)",
        _h_notebooks,
        None,
        _t_notebooks,
        needs="a CPU",
    ),
    Section(
        "sim_speed",
        "gpulab's simulator against Numba's (CPU)",
        "benchmarks/sim_speed.py",
        "python benchmarks/sim_speed.py",
        _h_sim_speed,
        _f_sim_speed,
        needs="a CPU (no GPU)",
    ),
    Section(
        "perf_model",
        "Predicted against measured kernel time",
        "benchmarks/perf_model.py",
        "the steps in benchmarks/perf_model.py's docstring (gpu under ncu, merge, predict)",
        _h_perf_model,
        _f_perf_model,
        needs="an NVIDIA GPU and Nsight Compute (ncu)",
    ),
    Section(
        "perf_blind",
        "The performance model on kernels it had never seen",
        "benchmarks/perf_blind.py",
        "python benchmarks/perf_blind.py predict, commit, then gpu under ncu, merge, recheck",
        _h_perf_blind,
        None,
        _t_perf_blind,
        needs="an NVIDIA GPU and Nsight Compute (ncu)",
    ),
    Section(
        "instruction_costs",
        "What a math call and a same-address atomic cost",
        "benchmarks/instruction_costs.py",
        "ncu ... python benchmarks/instruction_costs.py gpu, then merge (see its docstring)",
        _h_instruction_costs,
        None,
        _t_instruction_costs,
        needs="an NVIDIA GPU and Nsight Compute (ncu)",
    ),
]
