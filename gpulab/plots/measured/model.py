"""Appendix sections for the performance model's later checks: the third blind test of
``gpulab.predict`` (``blind_r3.json``) and the SASS check of the simulator's instruction and
register counts (``perf_sass_check.json``)."""

from __future__ import annotations

from .core import Headline, Section, _df


def _h_blind_r3(r):
    s, rev = r.get("summary", {}), r.get("after_revision", {})
    out = list(s.get("outside_2x", []))
    text = (
        f"{s.get('cases', '?')} kernels nobody on the project had written, predicted by gpulab.predict "
        f"(committed before they ran), then timed on the H200 under Nsight Compute: median error "
        f"{100 * s.get('median_abs_error', float('nan')):.0f}%, {len(out)} outside a factor of 2 "
        f"(worst: {s.get('worst', '?')})."
    )
    hs = [Headline("blind test 3, median error", s.get("median_abs_error"), text, score=False)]
    if rev:
        hs.append(
            Headline(
                "after revision (not blind)",
                rev.get("median_abs_error"),
                f"Predicted again after the result was seen, with a revised model: median error "
                f"{100 * rev.get('median_abs_error', float('nan')):.0f}%, "
                f"{len(rev.get('outside_2x', []))} outside a factor of 2. Not a blind test.",
                score=False,
            )
        )
    return hs


def _t_blind_r3(r):
    meas = r.get("measured", {}).get("cases", {})
    pred = r.get("predicted", {}).get("cases", {})
    rev = r.get("after_revision", {}).get("cases", {})
    rows = []
    for k, m in meas.items():
        p = pred.get(k, {})
        rows.append(
            [
                k,
                m.get("measured_s", float("nan")) * 1e6,
                p.get("predicted_s", float("nan")) * 1e6,
                m.get("ratio"),
                str(p.get("limiter", "")).split(" with")[0].split(" (")[0],
                rev.get(k, {}).get("ratio"),
            ]
        )
    return _df(rows, ["kernel", "meas. µs", "pred. µs", "ratio", "limiter", "revised"])


def _h_perf_sass(r):
    reg, lad = r.get("registers", {}), r.get("ladder", {})
    cases = reg.get("cases", {})
    return [
        Headline(
            "registers: ptxas against the H200",
            reg.get("match"),
            f"ptxas for sm_90 gave the register count the H200 reported for {reg.get('match', '?')} "
            f"of {len(cases)} kernels.",
            score=False,
        ),
        Headline(
            "divergence ladder: threads per instruction",
            lad.get("max_abs_tpi_error"),
            f"The simulator's warp instructions and threads per instruction against the H200's on "
            f"the divergence ladder: at most {100 * lad.get('max_abs_tpi_error', float('nan')):.1f}% "
            "apart in threads per instruction.",
            score=False,
        ),
    ]


def _t_perf_sass(r):
    rows = [
        [
            k,
            v.get("inst_per_warp"),
            v.get("inst_per_warp_h200"),
            v.get("threads_per_inst"),
            v.get("threads_per_inst_h200"),
        ]
        for k, v in r.get("ladder", {}).get("cases", {}).items()
    ]
    return _df(
        rows, ["case", "inst/warp (sim)", "inst/warp (H200)", "threads/inst (sim)", "threads/inst (H200)"]
    )


SECTIONS = [
    Section(
        "blind_r3",
        "Blind test 3 of the performance model",
        "benchmarks/blind_r3/run.py",
        "python benchmarks/blind_r3/run.py predict, then gpu under ncu (the script's docstring)",
        _h_blind_r3,
        None,
        _t_blind_r3,
        needs="an NVIDIA GPU and Nsight Compute",
    ),
    Section(
        "perf_sass_check",
        "The simulator's instruction and register counts against the H200's",
        "benchmarks/perf_sass_check.py",
        "python benchmarks/perf_sass_check.py registers (and ladder)",
        _h_perf_sass,
        None,
        _t_perf_sass,
        needs="the CUDA compiler wheels (gpulab[sass]); the H200 counters it compares with are recorded",
    ),
]
