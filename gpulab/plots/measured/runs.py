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
                    f"(measured: Nsight Compute gpu__time_duration on the H200).",
                    score=False,
                )
            )
    return out


def _f_perf_model(r, ax):
    try:
        from gpulab.perf import plot as perf_plot
    except ImportError:
        return None
    ax.figure.set_size_inches(6.6, 5.2)
    perf_plot.predicted_vs_measured(r, ax=ax)
    return ax


SECTIONS = [
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
]
