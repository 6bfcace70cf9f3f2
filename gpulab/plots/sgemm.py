"""Chapter 11's ladder in one figure (issue 27): every GEMM step as a share of its library's rate
on the same GPU in the same run, from the recorded results (``sgemm.json``), with TFLOP/s written
on each bar. The fp32 (SIMT) steps are measured against torch's fp32 matmul (TF32 off); the
tensor-core kernel, when a run recorded it, against torch's fp16 matmul: each step against the
library doing the same arithmetic. A kernel the run did not record is shown as not measured.

    from gpulab.plots import sgemm as ladder
    rows = ladder.ladder_rows(results.load("sgemm"))
    fig = ladder.ladder_figure(results.load("sgemm"))
"""

from __future__ import annotations

from . import palette

# (result key, label): chapter 11's steps, then the generated ones (benchmarks/sgemm.py's names)
CHAPTER_STEPS = (
    ("naive", "1 naive"),
    ("shared", "2 shared tiles"),
    ("reg1d", "3 1-D register blocking"),
    ("reg2d", "4 2-D register blocking"),
    ("vec", "5 16-byte shared loads"),
    ("prefetch", "6 register prefetch"),
)
GENERATED_STEPS = (
    ("unroll", "7 K step written out"),
    ("unroll_u32", "8 + uint32 indices"),
    ("warptile", "9 + 4 x 8 warp tile"),
)
TC_LABEL = "10 tensor cores (fp16 in)"
NOT_MEASURED = "not measured yet (GPU only; it would be % of torch fp16)"


def _best_tc(rec: dict) -> dict | None:
    """The fastest correct tensor-core result in ``rec``: the record itself when it holds a
    rate, else the best of its variants (a dict of records under "variants" or "kernels")."""
    if not isinstance(rec, dict):
        return None
    subs = rec.get("variants") or rec.get("kernels")
    if isinstance(subs, dict) and subs:
        ok = [
            dict(v, name=k)
            for k, v in subs.items()
            if isinstance(v, dict) and _gflops(v) and v.get("ok", True)
        ]
        if ok:
            best = max(ok, key=_gflops)
            for key in ("torch_fp16", "torch_float16", "library"):  # the run's library figure
                if key in rec and key not in best:
                    best[key] = rec[key]
            return best
    return rec if _gflops(rec) else None


def _gflops(rec: dict) -> float | None:
    if rec.get("gflops"):
        return float(rec["gflops"])
    if rec.get("tflops"):
        return 1e3 * float(rec["tflops"])
    return None


def _library_gflops(rec: dict) -> float | None:
    for key in ("torch_fp16", "torch_float16", "library"):
        v = rec.get(key)
        if isinstance(v, dict) and _gflops(v):
            return _gflops(v)
    f = rec.get("fraction_of_torch_fp16") or rec.get("fraction_of_library")
    g = _gflops(rec)
    return g / f if f and g else None


def _from_sizes(rec: dict) -> dict | None:
    """benchmarks/sgemm_tc.py's record: per size (``rec["sizes"][str(n)]``) torch fp16 and each
    variant timed, ``best`` the fastest correct one; the largest size with a best is shown."""
    sizes = rec.get("sizes")
    if not isinstance(sizes, dict):
        return None
    done = [(int(n), s) for n, s in sizes.items() if isinstance(s, dict) and s.get("best")]
    if not done:
        return None
    n, s = max(done, key=lambda x: x[0])
    b = s["best"]
    lib = (s.get("torch_fp16") or {}).get("tflops")
    ok = ((s.get("variants") or {}).get(b["variant"]) or {}).get("check", {}).get("ok")
    return {
        "key": b["variant"],
        "label": TC_LABEL,
        "tflops": float(b["tflops"]),
        "pct": 100 * float(b["fraction_of_torch_fp16"]),
        "library": "torch fp16",
        "library_tflops": lib,
        "size": n,
        "ok": ok,
    }


def tensor_core_point(res: dict | None, tc_res: dict | None = None) -> dict | None:
    """The tensor-core kernel's bar: {"label", "tflops", "pct", "library", "size", "ok"} from
    ``res["tensor_core"]`` (benchmarks/sgemm.py) or ``tc_res`` (sgemm_tc.json); None when no run
    recorded one (or it recorded no rate against torch fp16)."""
    for rec in ((res or {}).get("tensor_core"), tc_res):
        sized = _from_sizes(rec) if isinstance(rec, dict) else None
        if sized:
            return sized
        best = _best_tc(rec) if rec else None
        if best is None:
            continue
        g, lib = _gflops(best), _library_gflops(best)
        if not g or not lib:
            continue
        return {
            "key": best.get("name", "tensor_core"),
            "label": TC_LABEL,
            "tflops": g / 1e3,
            "pct": 100 * g / lib,
            "library": "torch fp16",
            "library_tflops": lib / 1e3,
            "size": best.get("size") or (rec or {}).get("size"),
            "ok": best.get("ok"),
        }
    return None


def ladder_rows(res: dict, tc_res: dict | None = None) -> list[dict]:
    """One row per step in ladder order: key, label, TFLOP/s, % of its library, the library, and
    whether it was measured (a step missing from the run is listed, unmeasured)."""
    if not res or "steps" not in res:
        raise ValueError("ladder_rows needs sgemm.json's contents (benchmarks/sgemm.py), with 'steps'")
    every = {**res.get("steps", {}), **res.get("steps_unrolled", {})}
    rows = []
    for group, steps in (("fp32, chapter", CHAPTER_STEPS), ("fp32, generated", GENERATED_STEPS)):
        for key, label in steps:
            r = every.get(key)
            ok = bool(r and r.get("gflops") and r.get("fraction_of_torch"))
            rows.append(
                {
                    "key": key,
                    "label": label,
                    "group": group,
                    "tflops": r["gflops"] / 1e3 if ok else None,
                    "pct": 100 * r["fraction_of_torch"] if ok else None,
                    "library": "torch fp32 (TF32 off)",
                    "measured": ok,
                    "correct": r.get("ok") if r else None,
                }
            )
    tc = tensor_core_point(res, tc_res)
    rows.append(
        {
            "key": tc["key"] if tc else "tensor_core",
            "label": TC_LABEL,
            "group": "tensor cores",
            "tflops": tc["tflops"] if tc else None,
            "pct": tc["pct"] if tc else None,
            "library": "torch fp16",
            "measured": tc is not None,
            "correct": tc.get("ok") if tc else None,
            "size": tc.get("size") if tc else None,
        }
    )
    return rows


def ladder_figure(res: dict, tc_res: dict | None = None, ax=None, width: float = 6.6):
    """Horizontal bars: each step's % of its library, TFLOP/s written at the bar's end. Returns
    the figure. ``width`` in inches (the book's column is 6.6)."""
    import matplotlib.pyplot as plt

    from . import style

    style.apply()
    rows = ladder_rows(res, tc_res)
    if ax is None:
        fig, ax = plt.subplots(figsize=(width, 0.34 * len(rows) + 1.9))
    else:
        fig = ax.figure
    looks = {
        "fp32, chapter": {"color": palette.BLUE, "hatch": None},
        "fp32, generated": {"color": palette.SKY_BLUE, "hatch": None},
        "tensor cores": {"color": palette.VERMILLION, "hatch": "///"},
    }
    names = {
        "fp32, chapter": "fp32, chapter 11's steps: % of torch fp32",
        "fp32, generated": "fp32, generated by a kernel factory: % of torch fp32",
        "tensor cores": "fp16 x fp16 -> fp32 on tensor cores: % of torch fp16",
    }
    y = list(range(len(rows)))
    seen = set()
    top = max([r["pct"] for r in rows if r["measured"]] + [100.0])
    for yi, r in zip(y, rows):
        look = looks[r["group"]]
        if r["measured"]:
            ax.barh(
                yi,
                r["pct"],
                color=look["color"],
                hatch=look["hatch"],
                edgecolor=palette.BLACK if look["hatch"] else look["color"],
                linewidth=0.6,
                label=names[r["group"]] if r["group"] not in seen else None,
            )
            seen.add(r["group"])
            ax.text(
                r["pct"] + 0.01 * top,
                yi,
                f"{r['pct']:.0f}%  {r['tflops']:.1f} TFLOP/s"
                + (f" (n = {r['size']})" if r.get("size") else ""),
                va="center",
                fontsize=9,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
                zorder=3,
            )
        else:
            ax.text(1.0, yi, NOT_MEASURED, va="center", fontsize=9, style="italic")
    ax.axvline(100, color=palette.BLACK, ls="--", lw=1, zorder=1)
    ax.text(101, -0.9, "library = 100%", ha="left", va="center", fontsize=9)
    ax.set_yticks(y, [r["label"] for r in rows], fontsize=9)
    ax.invert_yaxis()
    ax.set_ylim(len(rows) - 0.5, -1.2)
    ax.set_xlim(0, 1.45 * top)
    ax.set_xlabel("% of the library's rate on the same GPU, same run")
    ax.legend(loc="lower left", bbox_to_anchor=(-0.02, 1.0), fontsize=9, frameon=False)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------- the ladder as tables
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
# when a counter names the limiter (the rule, in the order it is applied): one 256-thread block
# per SM (8 of 64 warps: 12.5% active) is too few warps; else the busier of the shared-memory pipe
# (one wavefront per clock per SM) and the issue slots, when it is 70% busy or more (for issue,
# the FFMA share says how much of it is overhead); else the top stall reason
FEW_WARPS_PCT = 15.0
BUSY_PCT = 70.0
OVERHEAD_FFMA_SHARE = 0.70


def ncu_reading(p: dict, sms: int | None = None) -> dict:
    """The figures one step's Nsight Compute counters give (``sgemm.json["ncu"]["kernels"][k]``):
    issue slots busy %, FFMA share of warp instructions, warps active %, FMA pipe busy %,
    shared wavefronts per FFMA warp instruction and (given the GPU's ``sms``) the shared pipe's
    busy % at one wavefront per clock per SM, bank conflicts per wavefront, the top stall."""
    ffma = p[FFMA] / 32
    wf = sum(p.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{x}.sum", 0) for x in ("ld", "st"))
    cf = sum(p.get(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{x}.sum", 0) for x in ("ld", "st"))
    stalls = {
        k.split("stalled_")[1].split("_per_issue")[0]: v
        for k, v in p.items()
        if "issue_stalled_" in k and not k.endswith("stalled_selected_per_issue_active.ratio")
    }
    top = max(stalls, key=stalls.get) if stalls else None
    cycles = p.get("gpu__time_duration.sum", 0) * 1e-9 * p.get("sm__cycles_elapsed.avg.per_second", 0)
    return {
        "shared_pipe_pct": 100 * wf / (cycles * sms) if sms and cycles else None,
        "issue_pct": p["smsp__issue_active.avg.pct_of_peak_sustained_active"],
        "ffma_share": ffma / p["smsp__inst_executed.sum"],
        "warps_pct": p["sm__warps_active.avg.pct_of_peak_sustained_active"],
        "fma_pipe_pct": p.get("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
        "shared_wf_per_ffma": wf / ffma if ffma else float("nan"),
        "conflicts_per_wf": cf / wf if wf else 0.0,
        "top_stall": top,
        "top_stall_ratio": stalls.get(top) if top else None,
    }


def loop_mix(sass_text: str) -> dict:
    """Opcode counts (``collections.Counter``) of an nvdisasm listing's innermost loop that holds
    FFMAs ("inner") and of the loop around it less the inner one ("outer_only", absent without one),
    parsed by gpulab.perf.sass: what a step's instruction stream spends besides its FFMAs."""
    from collections import Counter

    from gpulab.perf import sass

    insns = sass.parse(sass_text, "")
    edges = sass._loops(insns)  # the back edges, by gpulab.perf.sass's one rule

    def body(lo, hi):
        return [i for i in insns if lo <= i.addr <= hi]

    loops = [e for e in edges if any(i.op == "FFMA" for i in body(*e))]
    if not loops:
        raise ValueError("no loop holding FFMAs in this listing")
    inner = min(loops, key=lambda e: e[1] - e[0])
    out = {"inner": Counter(i.op for i in body(*inner))}
    around = [e for e in loops if e != inner and e[0] <= inner[0] and e[1] >= inner[1]]
    if around:
        lo, hi = min(around, key=lambda e: e[1] - e[0])
        out["outer_only"] = Counter(i.op for i in body(lo, hi) if not inner[0] <= i.addr <= inner[1])
    return out


def limiter(p: dict, sms: int) -> str:
    """What limits a step, named from its counters by the rule above, with the figure that says so
    (``sms``: the GPU's SM count, for the shared pipe's capacity)."""
    x = ncu_reading(p, sms)
    if x["warps_pct"] < FEW_WARPS_PCT:
        return f"occupancy: {x['warps_pct']:.1f}% of warps active (one block per SM)"
    shared = x["shared_pipe_pct"] or 0.0
    if max(shared, x["issue_pct"]) >= BUSY_PCT:
        if shared > x["issue_pct"]:
            return f"shared loads: the shared pipe {shared:.0f}% busy ({x['shared_wf_per_ffma']:.2f} wavefronts per FFMA)"
        if x["ffma_share"] < OVERHEAD_FFMA_SHARE:
            return f"issue: {x['issue_pct']:.0f}% of slots busy, only {100 * x['ffma_share']:.0f}% FFMA"
        return f"issue and FMA pipe: {x['issue_pct']:.0f}% of slots busy, {100 * x['ffma_share']:.0f}% FFMA"
    return f"stalls: {x['top_stall']} ({x['top_stall_ratio']:.2f} warps per issue)"


def ladder_table(res: dict, tc_res: dict | None = None):
    """One row per step: TFLOP/s, % of its library, issue busy %, FFMA %, warps active % and the
    limiter from Nsight Compute (``"no profile recorded"`` where the run has none)."""
    import pandas as pd

    nc = (res.get("ncu") or {}).get("kernels", {})
    sms = (res.get("environment") or {}).get("sm_count")
    out = []
    for r in ladder_rows(res, tc_res):
        p = nc.get(r["key"])
        x = ncu_reading(p, sms) if p else None
        out.append(
            {
                "step": r["label"],
                "TFLOP/s": r["tflops"],
                "% of library": r["pct"],
                "issue busy %": x["issue_pct"] if x else None,
                "FFMA %": 100 * x["ffma_share"] if x else None,
                "warps active %": x["warps_pct"] if x else None,
                "limiter (Nsight Compute)": limiter(p, sms)
                if p
                else ("not measured" if not r["measured"] else "no profile recorded"),
            }
        )
    return pd.DataFrame(out)


def predicted_table(res: dict, pred: dict | None):
    """Measured TFLOP/s beside gpulab.predict's (``sgemm_predicted.json``: a model run on a CPU
    at its own shape, which the column header states) and the model's limiter, per fp32 step."""
    import pandas as pd

    if not pred:
        return None
    s = pred["shape"]
    col = f"predicted TFLOP/s (K = {s['K']})"
    out = []
    for r in ladder_rows(res):
        k = pred["kernels"].get(r["key"])
        if r["group"] == "tensor cores" or k is None:
            continue
        out.append(
            {
                "step": r["label"],
                f"measured TFLOP/s (n = {res.get('size')})": r["tflops"],
                col: k["tflops"],
                "measured / predicted": r["tflops"] / k["tflops"] if r["tflops"] else None,
                "model's limiter": k["limiter_key"],
            }
        )
    return pd.DataFrame(out)
