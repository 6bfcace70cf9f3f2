"""The appendix figure: predicted vs measured kernel time on the H200, calibrate and held-out
kernels marked apart, from ``gpulab/data/results/perf_model.json``."""

from __future__ import annotations

from .. import results
from ..plots import style


def validation_rows(res: dict | None = None) -> list[dict] | None:
    """The rows of perf_model.json (name, role, measured_us, predicted_us, ratio, limiter...);
    None when the file is absent (a pip install)."""
    res = res if res is not None else results.load("perf_model")
    return None if not res or "rows" not in res else res["rows"]


def validation_summary(res: dict | None = None) -> dict | None:
    """{"calibrate", "holdout", "all"}: median |pred/meas - 1|, worst case, within 2x."""
    res = res if res is not None else results.load("perf_model")
    return None if not res or "summary" not in res else res["summary"]


def predicted_vs_measured(res: dict | None = None, ax=None, annotate: bool = True):
    """Log-log scatter of predicted against measured time (ncu gpu__time_duration), the
    y = x line and the 2x band; held-out kernels as open markers. No text below the book's
    minimum size (``gpulab.plots.style.MIN_FONT_PT``)."""
    import matplotlib.pyplot as plt
    import numpy as np

    rows = validation_rows(res)
    style.apply()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 5.6))
    if not rows:
        ax.text(
            0.5, 0.5, "gpulab/data/results/perf_model.json not found", ha="center", transform=ax.transAxes
        )
        return ax.figure
    meas = np.array([r["measured_us"] for r in rows])
    lo, hi = meas.min() / 2, meas.max() * 2
    xs = np.array([lo, hi])
    ax.fill_between(xs, xs / 2, xs * 2, color="0.9", label="within 2x")
    ax.plot(xs, xs, color="0.4", lw=1, label="predicted = measured")
    summ = validation_summary(res) or {}
    for role, look in (
        ("calibrate", dict(marker="o", facecolors="C0", edgecolors="C0")),
        ("holdout", dict(marker="s", facecolors="none", edgecolors="C3")),
    ):
        sel = [r for r in rows if r["role"] == role]
        if not sel:
            continue
        med = summ.get(role, {}).get("median_abs_error")
        label = f"{role} ({len(sel)} kernels" + (f", median error {med:.0%})" if med is not None else ")")
        ax.scatter(
            [r["measured_us"] for r in sel],
            [r["predicted_us"] for r in sel],
            s=28,
            label=label,
            zorder=3,
            **look,
        )
        if annotate:
            for r in sel:
                if abs(np.log(r["ratio"])) > np.log(1.35):
                    ax.annotate(
                        r["name"],
                        (r["measured_us"], r["predicted_us"]),
                        fontsize=style.MIN_FONT_PT,
                        xytext=(4, -3),
                        textcoords="offset points",
                    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured on the H200, Nsight Compute gpu__time_duration (µs)")
    ax.set_ylabel("predicted by gpulab.predict on a CPU (µs)")
    ax.set_title("A virtual H200: predicted vs measured kernel time")
    ax.legend(loc="upper left", fontsize=style.MIN_FONT_PT)
    ax.grid(True, which="major", alpha=0.3)
    return ax.figure
