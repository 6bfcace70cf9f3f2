"""Chapter 11's ladder (issue 27): gpulab.predict's lines for the fp32 steps (a model run on a CPU)
and step 5 taken apart one change at a time (an H200 run)."""

from __future__ import annotations

from .core import Headline, Section, _df


def _h_predicted(r):
    ks = r.get("kernels") or {}
    if not ks:
        return []
    s = r.get("shape", {})
    return [
        Headline(
            "sgemm steps predicted",
            float(len(ks)),
            f"gpulab.predict on a CPU (a model run, not a measurement) for {len(ks)} fp32 GEMM "
            f"steps at M = N = {s.get('M')}, K = {s.get('K')}: "
            + ", ".join(f"{k} {v['tflops']:.1f}" for k, v in ks.items())
            + " TFLOP/s. Chapter 11 sets them beside the H200's rates.",
            score=False,
        )
    ]


def _t_predicted(r):
    rows = [
        (k, v["time_us"], v["tflops"], v["limiter_key"], v.get("occupancy", {}).get("registers_per_thread"))
        for k, v in (r.get("kernels") or {}).items()
    ]
    return _df(rows, ["step", "predicted us", "TFLOP/s", "limiter", "registers"])


def _h_attribution(r):
    ks = {k: v for k, v in (r.get("kernels") or {}).items() if v.get("gflops")}
    if not ks:
        return []
    parts = [
        f"{k} {v['gflops'] / 1e3:.1f} TFLOP/s ({v.get('blocks_per_sm', '?')} blocks/SM)"
        for k, v in ks.items()
    ]
    return [
        Headline(
            "step 5, one change at a time",
            float(len(ks)),
            f"fp32 matmul at n = {r.get('size')}, CUDA events, each C checked against float64 "
            f"({'all correct' if all(v.get('ok') for v in ks.values()) else 'SOME WRONG'}): "
            + "; ".join(parts)
            + ".",
            score=False,
        )
    ]


def _t_attribution(r):
    rows = [
        (
            k,
            v.get("what"),
            v.get("registers"),
            v.get("blocks_per_sm"),
            v.get("gflops", 0) / 1e3 if v.get("gflops") else None,
            v.get("ok"),
        )
        for k, v in (r.get("kernels") or {}).items()
    ]
    return _df(rows, ["kernel", "what", "registers", "blocks/SM", "TFLOP/s", "correct"])


SECTIONS = [
    Section(
        "sgemm_predicted",
        "Single-precision matmul steps, as gpulab.predict predicts them",
        "benchmarks/sgemm_predict.py",
        "python benchmarks/sgemm_predict.py",
        _h_predicted,
        None,
        _t_predicted,
        needs="a CPU (minutes per step: the simulator runs a sample of blocks)",
    ),
    Section(
        "sgemm_attribution",
        "Single-precision matmul, step 5 one change at a time",
        "benchmarks/sgemm_attribution.py",
        "python benchmarks/sgemm_attribution.py --out gpulab/data/results",
        _h_attribution,
        None,
        _t_attribution,
        needs="an NVIDIA GPU and torch",
    ),
]
