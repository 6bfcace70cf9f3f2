"""Tensor cores and matmul: mma against the emulation, INT4 PTX, throughput per precision, the
sgemm steps."""

from __future__ import annotations

from .core import Headline, Section, _df, _pct, load


def _h_mma(r):
    f = r.get("mma_m16n8k16_fragments", {})
    w = r.get("wmma_tiled_matmul", {})
    h = r.get("sass_hmma_count", {})
    ok = bool(f.get("layout_ok")) and bool(w.get("within_accumulation_rounding"))
    return [
        Headline(
            "tensor-core MMA = gpulab's emulation",
            1.0 if ok else 0.0,
            f"mma.sync.m16n8k16 with gpulab's lane layout: layout_ok = {f.get('layout_ok')}, "
            f"max |diff| vs the emulation {f.get('max_abs_diff_vs_emulation', float('nan')):.1e}; "
            f"wmma {'x'.join(map(str, w.get('shape', [])))} matmul within fp32 accumulation "
            f"rounding of the emulation: {w.get('within_accumulation_rounding')}; HMMA "
            f"instructions in the SASS: {h}.",
            1.0,
            "layout and result agree",
            against="gpulab.models.mma emulation",
        )
    ]


def _t_mma(r):
    rows = []
    for part in ("mma_m16n8k16_fragments", "wmma_tiled_matmul"):
        for k, v in r.get(part, {}).items():
            rows.append((part, k, v))
    for k, v in r.get("sass_hmma_count", {}).items():
        rows.append(("sass_hmma_count", k, v))
    return _df(rows, ["check", "quantity", "value"])


def _peaks_for(res):
    from gpulab.models import mma

    dev = str(res.get("device", ""))
    return mma.H200_DATASHEET if "H200" in dev else None


def _h_throughput(r):
    sheet = _peaks_for(r)
    if sheet is None:
        return [
            Headline(
                "datasheet",
                None,
                f"Measured on {r.get('device')}: the H200 datasheet peaks "
                f"do not apply; compare with your GPU's datasheet.",
                score=False,
            )
        ]
    out = []
    peaks = sheet["peak_tflops"]
    for prec, tf in r.get("tflops", {}).items():
        base = "fp8" if prec.startswith("fp8") else prec
        if base in peaks:
            out.append(
                Headline(
                    f"{prec} matmul / dense datasheet peak",
                    tf / peaks[base],
                    f"{prec}: {tf:.0f} TFLOP/s = {_pct(tf / peaks[base])} of the dense "
                    f"datasheet peak ({peaks[base]:.0f}).",
                    against=f"H200 dense datasheet {base} peak",
                )
            )
    if r.get("copy_bandwidth_tbs"):
        b = r["copy_bandwidth_tbs"]
        out.append(
            Headline(
                "copy bandwidth / datasheet",
                b / sheet["bandwidth_tbs"],
                f"device copy {b:.2f} TB/s = {_pct(b / sheet['bandwidth_tbs'])} of the "
                f"datasheet's {sheet['bandwidth_tbs']} TB/s.",
                against="H200 datasheet HBM bandwidth",
            )
        )
    return out


def _throughput_record(r):
    from gpulab.models import mma

    sweep = {
        p: {int(n): float(t) for n, t in v.items()} for p, v in r.get("sweep_tflops", {}).items()
    } or None
    return mma.ThroughputRecord(
        r.get("source", "?"),
        r.get("device", "?"),
        r.get("measured_at", "?"),
        r.get("method", "?"),
        r.get("tflops", {}),
        None,
        sweep,
    )


def _f_throughput(r, ax):
    import matplotlib.pyplot as plt

    from gpulab.plots import mma as mplots

    rec = _throughput_record(r)
    sheet = _peaks_for(r)
    if sheet is not None:
        mplots.throughput_bars(rec, sheet["peak_tflops"], ax=ax)
    else:
        ax.bar(list(rec.tflops), list(rec.tflops.values()))
        ax.set_ylabel("TFLOP/s")
    if rec.sweep:
        _, ax2 = plt.subplots(figsize=(6.6, 3.6))
        for p, pts in rec.sweep.items():
            n = sorted(pts)
            ax2.plot(n, [pts[i] for i in n], "o-", label=p)
        ax2.set_xscale("log", base=2)
        ax2.set_yscale("log")
        ax2.set_xlabel("n (square n x n x n matmul)")
        ax2.set_ylabel("TFLOP/s")
        ax2.legend()
    return ax


def _h_issue7(r, root=None):
    new = load("tensor_cores_throughput", root)
    if not new:
        return [
            Headline(
                "undated figures",
                None,
                "Superseded, undated figures; no dated run to compare with.",
                score=False,
            )
        ]
    pairs = [(p, r["tflops"][p], new["tflops"][p]) for p in r.get("tflops", {}) if p in new.get("tflops", {})]
    txt = "; ".join(f"{p} {o:.0f} -> {n:.0f} ({n / o - 1:+.0%})" for p, o, n in pairs)
    worst = min(pairs, key=lambda x: x[2] / x[1])
    return [
        Headline(
            "undated figures vs the dated run",
            worst[2] / worst[1],
            f"Superseded: undated H200 throughputs, recorded without matrix sizes or a "
            f"timing method, against the dated n = 8192 run (TFLOP/s): {txt}. Without "
            f"sizes or method the differences cannot be explained; use the dated run.",
            score=False,
            against=f"dated run; lowest ratio ({worst[0]})",
        )
    ]


def _t_issue7(r, root=None):
    new = load("tensor_cores_throughput", root) or {}
    nt = new.get("tflops", {})
    return _df(
        [(p, v, nt.get(p)) for p, v in r.get("tflops", {}).items()],
        ["precision", "undated (TFLOP/s)", f"dated run, n = 8192 ({new.get('measured_at', '-')[:10]})"],
    )


def _h_int4(r):
    from gpulab import results_views

    rows = results_views.int4_mma(r) or []
    emu = [x for x in rows if x["arch"] == "sm_90" and "S4" not in x["tensor_sass"] and ".s4" in x["ptx"]]
    if not rows:
        return []
    return [
        Headline(
            "INT4 mma on sm_90",
            float(len(emu)),
            f"ptxas accepts {sum(x['accepted'] for x in rows)} of {len(rows)} PTX mma variants; "
            f"on sm_90 the {len(emu)} INT4 ones become INT8 IMMA instructions "
            f"({', '.join(sorted({x['tensor_sass'] for x in emu}))}), not INT4 tensor-core "
            f"instructions as on sm_80.",
            score=False,
        )
    ]


def _t_int4(r):
    from gpulab import results_views

    rows = results_views.int4_mma(r) or []
    return _df(
        [
            (x["arch"], x["variant"], x["tensor_sass"], x["tensor_sass_count"], x["sass_instructions"])
            for x in rows
        ],
        ["arch", "PTX mma", "tensor-core SASS", "count", "SASS total"],
    )


def _sgemm_steps(r) -> dict:
    """Every kernel the sgemm run timed: chapter 11's steps, then the generated ones
    (``steps_unrolled``: the loop written out), so that "best" means best of the run."""
    return {**(r.get("steps") or {}), **(r.get("steps_unrolled") or {})}


def _h_sgemm(r):
    steps = {k: v for k, v in _sgemm_steps(r).items() if v.get("gflops")}
    t = (r.get("torch_before") or {}).get("gflops")
    if not steps or not t:
        return []
    best = max(steps, key=lambda k: steps[k]["gflops"])
    return [
        Headline(
            "best sgemm step / torch fp32",
            steps[best]["gflops"] / t,
            f"fp32 matmul, M = N = K = {r.get('size')}, kernel GPU time (CUDA events, "
            f"back-to-back launches): the best step, {best}, "
            f"{steps[best]['gflops'] / 1e3:.1f} TFLOP/s = {_pct(steps[best]['gflops'] / t)} "
            f"of torch fp32 with TF32 off ({t / 1e3:.1f} TFLOP/s). Every result checked "
            f"against a float64 matmul: "
            f"{'all correct' if all(v.get('ok') for v in steps.values()) else 'SOME WRONG'}.",
            against="torch fp32, TF32 off",
        )
    ]


def _t_sgemm(r):
    steps = _sgemm_steps(r)
    rows = [
        (k, v.get("gflops", 0) / 1e3, v.get("fraction_of_torch"), v.get("registers"), v.get("ok"))
        for k, v in steps.items()
    ]
    t = r.get("torch_before") or {}
    if t.get("gflops"):
        rows.append(("torch fp32 (TF32 off)", t["gflops"] / 1e3, 1.0, None, t.get("ok")))
    return _df(rows, ["kernel", "TFLOP/s", "of torch", "registers", "correct"])


def _f_sgemm(r, ax):
    steps = {k: v for k, v in _sgemm_steps(r).items() if v.get("gflops")}
    if not steps:
        return None
    ax.barh(list(steps), [v["gflops"] / 1e3 for v in steps.values()])
    t = (r.get("torch_before") or {}).get("gflops")
    if t:
        ax.axvline(t / 1e3, color="k", ls="--", lw=1, label="torch fp32, TF32 off")
        ax.legend(loc="lower right")
    ax.invert_yaxis()
    ax.set_xlabel("TFLOP/s (kernel GPU time)")
    ax.figure.set_size_inches(6.6, 0.3 * len(steps) + 1.2)
    return ax


SECTIONS = [
    Section(
        "tensor_cores_mma",
        "Tensor cores from numba against gpulab's emulation",
        "benchmarks/tensor_cores/run_mma.py",
        "python benchmarks/tensor_cores/run_mma.py",
        _h_mma,
        None,
        _t_mma,
        needs="an NVIDIA GPU of sm_80 or newer, nvcc and cffi",
    ),
    Section(
        "tensor_cores_throughput",
        "Matmul throughput per precision against the datasheet",
        "benchmarks/tensor_cores/matmul_throughput.py",
        "python benchmarks/tensor_cores/matmul_throughput.py",
        _h_throughput,
        _f_throughput,
        needs="an NVIDIA GPU and torch",
    ),
    Section(
        "tensor_cores_throughput_issue7",
        "Superseded: undated throughput figures",
        "none (figures recorded without sizes or a timing method)",
        "-",
        _h_issue7,
        None,
        _t_issue7,
        compares_files=True,
    ),
    Section(
        "int4_mma_ptx",
        "INT4 and binary tensor-core PTX on sm_80 and sm_90",
        "benchmarks/int4_mma_ptx.py",
        "python benchmarks/int4_mma_ptx.py",
        _h_int4,
        None,
        _t_int4,
        needs="the CUDA toolkit (ptxas, cuobjdump)",
    ),
    Section(
        "sgemm",
        "Single-precision matmul, step by step",
        "benchmarks/sgemm.py",
        "python benchmarks/sgemm.py",
        _h_sgemm,
        _f_sgemm,
        _t_sgemm,
        needs="an NVIDIA GPU and torch",
        targets=["best sgemm step / torch fp32"],
    ),
]
