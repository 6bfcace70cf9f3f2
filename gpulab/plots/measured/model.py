"""Appendix sections for the performance model's later checks: the third to sixth blind tests
of ``gpulab.predict`` (``blind_r3.json`` to ``blind_r7.json``, one format) and the SASS check of the
simulator's instruction and register counts (``perf_sass_check.json``)."""

from __future__ import annotations

from .core import Headline, Section, _df


def _quoted_round() -> str | None:
    """The blind round the chapters quote (results_views.blind_accuracy: the newest measured)."""
    from gpulab import results_views as views

    try:
        return views.blind_accuracy()["round"]
    except (FileNotFoundError, KeyError, TypeError):
        return None


def _h_blind(name: str):
    """Headlines of one blind round of gpulab.predict (blind_r3.json, blind_r4.json: one format),
    generated from the file; the round the chapters quote says so."""

    def headlines(r):
        s, rev, pred = r.get("summary") or {}, r.get("after_revision") or {}, r.get("predicted") or {}
        commit = str(pred.get("model_files_commit") or pred.get("model_commit") or "?")[:7]
        n_pred = len(pred.get("cases", {}))
        if s.get("median_abs_error") is None:  # predictions committed, not yet timed
            return [
                Headline(
                    f"{name}, predictions",
                    None,
                    f"{n_pred} kernels nobody on the project had run on a GPU, predicted by "
                    "gpulab.predict "
                    f"(model at {commit}) and committed on {str(pred.get('date_utc', '?'))[:10]} before "
                    "any of them ran on a GPU. Their times are not recorded in this copy yet.",
                    score=False,
                )
            ]
        out = list(s.get("outside_2x", []))
        timing = s.get("timing") or "Nsight Compute's gpu__time_duration"
        quoted = " This is the figure the chapters quote." if _quoted_round() == name else ""
        text = (
            f"{s.get('cases', '?')} kernels nobody on the project had run on a GPU, predicted by "
            "gpulab.predict "
            f"(model at {commit}; predictions committed before timing), then timed on the H200 "
            f"(timing: {timing}): median error {100 * s['median_abs_error']:.0f}%, "
            f"{len(out)} outside a factor of 2 (worst: {s.get('worst', '?')})."
        )
        failed = pred.get("failed_to_predict") or []
        if failed:
            text += f" Not predicted (the model failed on them): {', '.join(failed)}."
        hs = [Headline(f"{name}, median error", s["median_abs_error"], text + quoted, score=False)]
        if rev.get("median_abs_error") is not None:
            hs.append(
                Headline(
                    f"{name}, after revision (not blind)",
                    rev.get("median_abs_error"),
                    f"Predicted again after the result was seen, with a revised model: median error "
                    f"{100 * rev['median_abs_error']:.0f}%, "
                    f"{len(rev.get('outside_2x', []))} outside a factor of 2. Not a blind test.",
                    score=False,
                )
            )
        return hs

    return headlines


def _t_blind(r):
    """Per kernel: time measured (when recorded) and predicted, their ratio, the model's limiter,
    and the ratio after the revision (when there was one)."""
    meas = (r.get("measured") or {}).get("cases", {})
    pred = (r.get("predicted") or {}).get("cases", {})
    rev = (r.get("after_revision") or {}).get("cases", {})
    rows = []
    for k in list(meas) + [k for k in pred if k not in meas]:
        m, p = meas.get(k, {}), pred.get(k, {})
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
    df = _df(rows, ["kernel", "meas. µs", "pred. µs", "ratio", "limiter", "revised"])
    return df.dropna(axis=1, how="all") if hasattr(df, "dropna") else df


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


def _h_perf_train(r):
    b, a = r.get("before") or {}, r.get("after") or {}
    sets = [k for k in a if k in b]
    each = "; ".join(
        f"{k} {100 * b[k]['median_abs_error']:.0f}% -> {100 * a[k]['median_abs_error']:.0f}%" for k in sets
    )
    return [
        Headline(
            "perf_train, in-sample median error after the fit",
            (a.get("train") or {}).get("median_abs_error"),
            f"The model's free constants fitted on {len(r.get('train', []))} measured kernels. "
            f"Median error before -> after, per set: {each}. In-sample "
            "(these kernels trained the model): not a blind figure.",
            score=False,
        )
    ]


def _t_perf_train(r):
    b, a = r.get("before") or {}, r.get("after") or {}
    return _df(
        [
            [
                k,
                a[k].get("cases"),
                b[k].get("median_abs_error"),
                a[k].get("median_abs_error"),
                len(b[k].get("outside_2x", [])),
                len(a[k].get("outside_2x", [])),
            ]
            for k in a
            if k in b
        ],
        ["kernel set", "kernels", "median before", "median after", "out of 2x before", "out of 2x after"],
    )


def _h_hw05(r):
    cases = (r.get("predict") or {}).get("cases", {})
    each = "; ".join(
        f"{k} {1e6 * c['predicted_s']:.0f} us ({c['limiter']}, {100 * c['dram_fraction']:.0f}% of the "
        "DRAM roofline)"
        for k, c in cases.items()
    )
    meas = (r.get("measured") or r.get("gpu") or {}).get("cases", {})
    tail = (
        " Timed on the GPU (CUDA events, median of launches): "
        + "; ".join(f"{k} {1e6 * m['measured_s']:.0f} us" for k, m in meas.items())
        + "."
        if meas and all("measured_s" in m for m in meas.values())
        else " Their times are not recorded in this copy yet."
    )
    return [
        Headline(
            "homework 5 copies, predicted",
            None,
            f"gpulab.predict for homework 5's three copies (recorded before they were timed): {each}.{tail}",
            score=False,
        )
    ]


def _t_hw05(r):
    cases = (r.get("predict") or {}).get("cases", {})
    meas = (r.get("measured") or r.get("gpu") or {}).get("cases", {})
    df = _df(
        [
            [
                k,
                1e6 * c["predicted_s"],
                c["limiter"],
                c["dram_fraction"],
                1e6 * meas.get(k, {}).get("measured_s", float("nan")),
            ]
            for k, c in cases.items()
        ],
        ["copy", "pred. µs", "limiter", "DRAM roofline fraction", "meas. µs"],
    )
    return df.dropna(axis=1, how="all") if hasattr(df, "dropna") else df


SECTIONS = [
    Section(
        "blind_r3",
        "Blind test 3 of the performance model",
        "benchmarks/blind_r3/run.py",
        "python benchmarks/blind_r3/run.py predict, then gpu under ncu (the script's docstring)",
        _h_blind("blind_r3"),
        None,
        _t_blind,
        needs="an NVIDIA GPU and Nsight Compute",
    ),
    Section(
        "blind_r4",
        "Blind test 4 of the performance model",
        "benchmarks/blind_r4/run.py",
        "python benchmarks/blind_r4/run.py predict, then gpu, then merge (the script's docstring)",
        _h_blind("blind_r4"),
        None,
        _t_blind,
        needs="an NVIDIA GPU (Nsight Compute for the registers)",
    ),
    Section(
        "blind_r5",
        "Blind test 5 of the performance model",
        "benchmarks/blind_r5/run.py",
        "python benchmarks/blind_r5/run.py predict, then gpu, then merge (benchmarks/blind_runner.py)",
        _h_blind("blind_r5"),
        None,
        _t_blind,
        needs="an NVIDIA GPU (Nsight Compute for the registers)",
    ),
    Section(
        "blind_r6",
        "Blind test 6 of the performance model",
        "benchmarks/blind_r6/run.py",
        "python benchmarks/blind_r6/run.py predict, then gpu, then merge (benchmarks/blind_runner.py)",
        _h_blind("blind_r6"),
        None,
        _t_blind,
        needs="an NVIDIA GPU (Nsight Compute for the registers)",
    ),
    Section(
        "blind_r7",
        "Blind test 7 of the performance model",
        "benchmarks/blind_r7/run.py",
        "python benchmarks/blind_r7/run.py predict, then gpu, then merge (benchmarks/blind_runner.py)",
        _h_blind("blind_r7"),
        None,
        _t_blind,
        needs="an NVIDIA GPU (Nsight Compute for the registers)",
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
    Section(
        "perf_train",
        "The model's constants fitted on measured kernels (not blind)",
        "benchmarks/perf_train.py",
        "python benchmarks/perf_train.py fit",
        _h_perf_train,
        None,
        _t_perf_train,
        needs="a CPU (the measured kernels' counters are recorded)",
    ),
    Section(
        "hw05_copies",
        "Homework 5's three copies: predicted, then timed",
        "benchmarks/blind_r4/hw05_copies.py",
        "python benchmarks/blind_r4/hw05_copies.py predict, then gpu (its docstring)",
        _h_hw05,
        None,
        _t_hw05,
        needs="a CPU for the predictions, an NVIDIA GPU for the times",
    ),
]
