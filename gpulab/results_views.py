"""Small, labelled views of recorded H200 results for chapters: each function reads one
``gpulab/data/results/<name>.json`` (through :mod:`gpulab.results`) and returns a dict or a list of
row dicts whose keys say what each number is. None when the file is absent (a pip install).

Every number comes from the file; the only arithmetic here is ratios and unit changes, and each
derived key says so in its name (``..._ratio``, ``..._per_load``...).
"""

from __future__ import annotations

import re
import statistics

from . import results

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# working-set ranges of the latency ladder taken as one level (by the measured plateaus)
LATENCY_LEVELS = {"L1": (0, 128 * KiB), "L2": (512 * KiB, 16 * MiB), "DRAM": (1 * GiB, 1 << 62)}


def _load(name, res):
    return res if res is not None else results.load(name)


def latency_ladder(res: dict | None = None) -> list[dict] | None:
    """One row per working set: bytes, ns per dependent load (median), cycles at the max clock,
    and the spread of the repeats (min/max ns)."""
    r = _load("latency", res)
    if not r:
        return None
    rows = []
    for g in r["global"]:
        each = g.get("ns_each_repeat") or [g["ns"]]
        rows.append(
            {
                "working_set_bytes": g["working_set_bytes"],
                "ns": g["ns"],
                "cycles_at_max_clock": g["cycles_at_max_clock"],
                "ns_min_repeat": min(each),
                "ns_max_repeat": max(each),
            }
        )
    return rows


def latency_levels(res: dict | None = None) -> dict | None:
    """{"L1", "L2", "DRAM", "shared"}: ns per dependent load, the median over the working sets
    of LATENCY_LEVELS (shared: the shared-memory chase); "cycles_*" the same at the max clock."""
    r = _load("latency", res)
    if not r:
        return None
    out = {}
    for level, (lo, hi) in LATENCY_LEVELS.items():
        sel = [g for g in r["global"] if lo <= g["working_set_bytes"] <= hi]
        if sel:
            out[level] = statistics.median(g["ns"] for g in sel)
            out[f"cycles_{level}"] = statistics.median(g["cycles_at_max_clock"] for g in sel)
            out[f"sizes_{level}"] = [g["working_set_bytes"] for g in sel]
    out["shared"] = r["shared"]["ns"]
    out["cycles_shared"] = r["shared"]["cycles_at_max_clock"]
    out["max_sm_clock_GHz"] = r.get("max_sm_clock_GHz")
    return out


def launch_parts(res: dict | None = None) -> dict | None:
    """Per framework ("numba", "torch"): seconds of host launch cost, GPU time of one tiny kernel
    (behind a long kernel), GPU time per kernel back to back, end to end (launch + sync), and for
    numba ncu's gpu__time_duration and the old events-on-an-idle-stream figure; "labels" says
    what each is."""
    r = _load("launch_overhead", res)
    if not r or "launch_parts" not in r:
        return None
    out = {}
    labels = {}
    for fw, p in r["launch_parts"].items():
        labels.update(p.get("labels", {}))
        row = {
            k: p[k]
            for k in (
                "host_launch_s",
                "gpu_single_behind_long_s",
                "gpu_back_to_back_s",
                "end_to_end_s",
                "events_idle_stream_s",
            )
            if k in p
        }
        ncu = p.get("ncu_gpu_time_duration")
        if ncu:
            row["ncu_gpu_time_duration_s"] = ncu["gpu_time_duration_s_median"]
        out[fw] = row
    labels["ncu_gpu_time_duration_s"] = (
        "Nsight Compute gpu__time_duration of the tiny kernel (median of 20 launches)"
    )
    out["labels"] = labels
    return out


def divergence_paths(res: dict | None = None) -> list[dict] | None:
    """One row per path count P (divergent lanes): time ratio to 1 path for each loop length,
    the sum-of-T_p prediction (P), and ncu's instruction counts at P (when recorded)."""
    r = _load("divergence_paths", res)
    if not r:
        return None
    ncu = {x["paths"]: x for x in (r.get("ncu") or {}).get("rows", [])}
    rows = []
    for P in sorted({x["paths"] for x in r["rows"]}):
        row = {"paths": P, "sum_Tp_prediction": P}
        for x in r["rows"]:
            if x["paths"] == P:
                row[f"{x['mode']}_ratio_iters{x['iters']}"] = x["ratio_to_1_path"]
        n = ncu.get(P)
        if n:
            row["ncu_inst_executed"] = n.get("smsp__inst_executed.sum")
            row["ncu_inst_executed_ratio"] = n.get("inst_executed_ratio_to_1_path")
            row["ncu_threads_per_inst"] = n.get("smsp__thread_inst_executed_per_inst_executed.ratio")
            row["ncu_pred_on_threads_per_inst"] = n.get(
                "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"
            )
            row["ncu_time_ratio"] = n.get("gpu__time_duration.sum") / ncu[min(ncu)]["gpu__time_duration.sum"]
        rows.append(row)
    return rows


def divergence_instruction_split(res: dict | None = None) -> dict | None:
    """Least-squares split of ncu's warp instructions into common + P x per-path (both in warp
    instructions), from the recorded counts: how far the shared code pulls the ratio below P."""
    rows = [x for x in (divergence_paths(res) or []) if x.get("ncu_inst_executed")]
    if len(rows) < 2:
        return None
    import numpy as np

    P = np.array([x["paths"] for x in rows], float)
    inst = np.array([x["ncu_inst_executed"] for x in rows], float)
    per_path, common = np.polyfit(P, inst, 1)
    pred = common + per_path * P
    return {
        "common_inst": float(common),
        "per_path_inst": float(per_path),
        "max_rel_residual": float(np.max(np.abs(pred - inst) / inst)),
        "predicted_ratio_at_32": float((common + 32 * per_path) / (common + per_path)),
    }


def strided_copy(res: dict | None = None) -> list[dict] | None:
    """One row per stride: time (events around one launch: includes part of the host's launch
    path), useful GB/s from it, and from ncu: the kernel's own time (gpu__time_duration) and the
    useful GB/s from that time, DRAM bytes read per load, L2 bytes read per load, L1 sectors per
    request, and DRAM GB/s during ncu's timing.

    "useful" counts the 4 bytes read and the 4 written per element (``useful_GBps*``);
    ``useful_read_GBps_ncu_time`` counts the 4 read only, the same bytes ``dram_read_GBps_ncu``
    counts from HBM (which is reads only), so those two compare."""
    r = _load("strided_copy", res)
    if not r:
        return None
    ncu = {x["stride"]: x for x in (r.get("ncu") or {}).get("rows", [])}
    rows = []
    for x in r["rows"]:
        row = {"stride": x["stride"], "time_s": x["time_s"], "useful_GBps": x["useful_GBps"]}
        row["sm_clock_GHz"] = (measured_clock(x) or {}).get("GHz")  # None in runs before the clock
        n = ncu.get(x["stride"])
        if n:
            row["dram_bytes_read_per_load"] = n.get("dram_bytes_read_per_load")
            row["l2_bytes_read_per_load"] = n.get("l2_bytes_read_per_load")
            row["l1_sectors_per_request"] = n.get("l1_sectors_per_request")
            t = n.get("gpu__time_duration.sum")
            if t and n.get("dram__bytes_read.sum") is not None:
                row["dram_read_GBps_ncu"] = n["dram__bytes_read.sum"] / (t * 1e-9) / 1e9
            if t:  # same useful bytes as the events figure, over the kernel's own time
                row["ncu_time_s"] = t * 1e-9
                row["useful_GBps_ncu_time"] = x["useful_GBps"] * x["time_s"] / (t * 1e-9)
                # one float32 read per load, as dram_read_GBps_ncu counts reads only
                loads = (r.get("ncu") or {}).get("n_loads", r["n_loads"])
                row["useful_read_GBps_ncu_time"] = 4 * loads / (t * 1e-9) / 1e9
        rows.append(row)
    return rows


def allreduce(res: dict | None = None) -> dict | None:
    """Two-GPU all-reduce: small-message time per call three ways (per call with events, back to
    back, CUDA graph), alpha from each (ring model, p = 2), bandwidth B, nccl-tests bus
    bandwidth, and the peer-to-peer copy GB/s both ways."""
    r = _load("allreduce_alpha_beta", res)
    if not r:
        return None
    f = r.get("fit", {})
    p2p = r.get("p2p_copy") or {}
    return {
        "gpus": r.get("env", {}).get("gpus"),
        "nccl": r.get("env", {}).get("nccl"),
        "small_message_per_call_s": f.get("small_message_time_s"),
        "small_message_back_to_back_s": f.get("small_message_back_to_back_s"),
        "small_message_graph_s": f.get("small_message_graph_s"),
        "alpha_per_call_s": f.get("alpha_s"),
        "alpha_back_to_back_s": f.get("alpha_back_to_back_s"),
        "alpha_graph_s": f.get("alpha_graph_s"),
        "bandwidth_Bps": f.get("bandwidth_Bps"),
        "max_bus_bandwidth_Bps": f.get("max_bus_bandwidth_Bps"),
        "p2p_GBps": {k: v["GBps"] for k, v in p2p.items() if isinstance(v, dict) and "GBps" in v},
        "labels": r.get("labels", {}),
        "sm_clock": measured_clock(r),  # None: the recorded run predates the clock record
        "sm_clock_text": result_clock("allreduce_alpha_beta", r)["text"],
    }


def occupancy_vs_header(res: dict | None = None) -> list[dict] | None:
    """Per architecture: cases compared with cuda_occupancy.h, how many agree, and whether the
    device limits fed to the header equal gpulab's Arch table."""
    r = _load("occupancy_vs_cuda_occupancy_h", res)
    if not r:
        return None
    lim = r.get("device_limits", {})
    return [
        {
            "arch": a,
            "cases": v["cases"] - v["header_errors"],
            "agree": v["agree"],
            "agreement": v["agreement"],
            "cases_with_a_block": v["nonzero_cases"],
            "device_limits_equal": lim.get(a, {}).get("equal"),
        }
        for a, v in r["per_arch"].items()
    ]


def stall_reasons(res: dict | None = None) -> list[dict] | None:
    """Per stall kernel: the reason it was built for, the top measured reason, and warps stalled
    per issued instruction for Long Scoreboard, Barrier, MIO Throttle and Short Scoreboard, plus
    the built-for reason's share of all stall reasons."""
    r = _load("stall_reasons", res)
    if not r:
        return None
    rows = []
    for name, k in r["kernels"].items():
        s = k["stalls_per_issue"]
        rows.append(
            {
                "kernel": name,
                "built_for": k["built_for"],
                "top_reason": k["top_reason"],
                **{
                    f"{x}_per_issue": s.get(x)
                    for x in ("long_scoreboard", "barrier", "mio_throttle", "short_scoreboard")
                },
                "built_for_share": k["share_of_stalls"].get(k["built_for"]),
            }
        )
    return rows


def reduction_in_flight(res: dict | None = None) -> dict | None:
    """Bytes in flight per SM (derived) for the per-block reductions and the grid-stride sum,
    against what Little's law needs for the best measured bandwidth."""
    r = _load("reduction_in_flight", res)
    if not r:
        return None
    d, m = r["derived"], r["measured"]
    pb, gs = d["per_block"][1], d["grid_stride"]
    return {
        "dram_latency_ns": m["dram_latency_ns"],
        "per_block_GBps": pb["measured_GBps"],
        "grid_stride_GBps": gs["measured_GBps"],
        "per_block_max_bytes_in_flight_per_sm": pb["max_bytes_in_flight_per_sm"],
        "grid_stride_max_bytes_in_flight_per_sm": gs["max_bytes_in_flight_per_sm"],
        "per_block_avg_bytes_in_flight_per_sm": pb["littles_law_bytes_in_flight_per_sm_for_measured_GBps"],
        "grid_stride_avg_bytes_in_flight_per_sm": gs["littles_law_bytes_in_flight_per_sm_for_measured_GBps"],
        "needed_per_sm_for_grid_stride_GBps": d["bytes_in_flight_per_sm_needed_for_best_GBps"],
        "bandwidth_ratio": d["bandwidth_ratio_grid_stride_over_per_block_shuffle"],
        "max_in_flight_ratio": d["in_flight_ratio_grid_stride_over_per_block"],
    }


def int4_mma(res: dict | None = None) -> list[dict] | None:
    """Per (arch, PTX mma variant): did ptxas accept it, which tensor-core SASS opcodes it became,
    how many of them, and the kernel's SASS instruction count (a one-mma kernel: more instructions
    and a different opcode mean ptxas emulated the PTX instruction)."""
    r = _load("int4_mma_ptx", res)
    if not r:
        return None
    return [
        {
            "arch": x["arch"],
            "variant": x["variant"],
            "ptx": x["ptx"],
            "accepted": x["ptxas_rc"] == 0,
            "tensor_sass": ", ".join(x.get("tensor_sass") or []),
            "tensor_sass_count": x.get("tensor_sass_count"),
            "sass_instructions": x.get("sass_instructions"),
        }
        for x in r["rows"]
    ]


def perf_blind(res: dict | None = None) -> dict | None:
    """The blind test of ``gpulab.predict``: per new kernel, the time predicted (and committed)
    before it ran, the time Nsight Compute measured, their ratio, the limiter named; the same
    ratio for the model as revised afterwards (no longer blind) when recorded."""
    r = _load("perf_blind", res)
    if not r or "measured" not in r:
        return None
    after = (r.get("after_revision") or {}).get("cases", {})
    rows = [
        {
            "kernel": name,
            "measured_us": m["measured_s"] * 1e6,
            "predicted_us": r["predicted"]["cases"][name]["predicted_s"] * 1e6,
            "predicted_over_measured": m["ratio"],
            "limiter": m["limiter"],
            "revised_over_measured": after[name]["predicted_s"] / m["measured_s"] if name in after else None,
        }
        for name, m in r["measured"]["cases"].items()
    ]
    return {
        "model_commit": r["predicted"]["model_commit"],
        "kernels": len(rows),
        "median_abs_error": r["summary"]["median_abs_error"],
        "within_2x": r["summary"]["within_2x"],
        "revised_median_abs_error": (r.get("after_revision") or {}).get("median_abs_error"),
        "revised_within_2x": (r.get("after_revision") or {}).get("within_2x"),
        "rows": rows,
    }


def memory_roof(reduction: dict | None = None, bandwidth: dict | None = None) -> dict | None:
    """The book's one measured HBM roof: the fastest rate any recorded kernel read from HBM on
    the H200 (the best full-device sum of ``reduction.json``), with the fastest copy of
    ``bandwidth.json`` beside it (a copy writes every byte it reads, so it peaks lower)."""
    red = _load("reduction", reduction)
    bw = _load("bandwidth", bandwidth)
    if not red or "device_sum" not in red:
        return None
    best = red["device_sum"]["best"]
    copies = dict((bw or {}).get("copy", {}).get("kernels", {}))
    if (bw or {}).get("copy", {}).get("torch"):
        copies["torch copy"] = bw["copy"]["torch"]
    copy_name = max(copies, key=lambda k: copies[k]["GBps"]) if copies else None
    return {
        "GBps": best["GBps"],
        "kernel": best["kernel"],
        "source": "reduction.json device_sum best",
        "libraries_GBps": {k: v["GBps"] for k, v in red["device_sum"].get("libraries", {}).items()},
        "copy_GBps": copies[copy_name]["GBps"] if copy_name else None,
        "copy_kernel": copy_name,
    }


def measured_clock(res: dict | None) -> dict | None:
    """The SM clock a GPU result ran at, as recorded with it (benchmarks/benchenv.py): a dict
    with "GHz" (the median), "min_GHz", "max_GHz", "samples" and "source" (NVML samples during
    the timed region, or Nsight Compute's sm__cycles_elapsed.avg.per_second). ``res`` is a whole
    result, one of its rows, or a clock record itself; None when no clock was recorded (older
    results): convert cycles with it, never with a guessed clock."""
    if not isinstance(res, dict):
        return None
    rec = res if "median_MHz" in res else res.get("sm_clock")
    if not isinstance(rec, dict) or "median_MHz" not in rec:
        return None
    return {
        "GHz": rec["median_MHz"] / 1e3,
        "min_GHz": rec["min_MHz"] / 1e3,
        "max_GHz": rec["max_MHz"] / 1e3,
        "samples": rec["samples"],
        "source": rec["source"],
    }


def cycles(ns: float, res: dict | None) -> float | None:
    """``ns`` in SM cycles at the clock ``res`` recorded (:func:`measured_clock`); None without one."""
    clk = measured_clock(res)
    return ns * clk["GHz"] if clk else None


def clock_text(res: dict | None) -> str:
    """The SM clock ``res`` recorded, as a "measured on" line says it ("SM clock 1980 MHz, 10
    samples during the timed runs"; a range when it moved), or "SM clock: not recorded" for a
    result without a clock record (:func:`measured_clock`): never a guessed or maximum clock."""
    clk = measured_clock(res)
    if clk is None:
        return "SM clock: not recorded"
    lo, mid, hi = (round(1e3 * clk[k]) for k in ("min_GHz", "GHz", "max_GHz"))
    spread = "" if lo == hi else f" (min {lo}, max {hi})"
    return f"SM clock {mid} MHz{spread}, median of {clk['samples']} samples during the timed runs"


# Results recorded on a GPU that carry no SM clock record, each with why (issue 23: every GPU
# result records the clock it ran at; results made on a CPU need none). "no GPU timing": nothing
# in the file is a GPU time or depends on the clock. "not re-measured": GPU timings recorded before the clock was; the reason says why they
# were not re-run. tests/test_clock_coverage.py fails on a result without a clock that is not
# listed here, and on a listed one that has a clock (the entry is stale).
CLOCK_NOT_RECORDED = {
    "allreduce_alpha_beta": (
        "not re-measured",
        "all-reduce and peer-to-peer copies between 2 GPUs, torch.distributed with NCCL: only "
        "one-GPU machines were lent after the clock record existed; benchmarks/allreduce_alpha_beta.py "
        "now samples each rank's clock",
    ),
    "chapters_from_wheel_gpu": ("no GPU timing", "which chapters executed from a wheel, and wall seconds"),
    "notebooks_gpu": ("no GPU timing", "which notebooks executed on the GPU, and wall seconds"),
    "fidelity": ("no GPU timing", "Nsight Compute event counts compared with the simulator's"),
    "int4_mma_ptx": ("no GPU timing", "what ptxas accepts and emits (compilation only)"),
    "occupancy_vs_driver": ("no GPU timing", "occupancy from the driver's API against gpulab's"),
    "tensor_cores_mma": ("no GPU timing", "tensor-core results against float64 (correctness only)"),
    "tensor_cores_throughput_issue7": (
        "not re-measured",
        "figures copied from issue 7 (an earlier session's run): method and clock not recorded",
    ),
}


def clock_records(res) -> dict:
    """Every clock record in a result (see :func:`measured_clock`), by its place in the JSON
    ("sm_clock", "rows[3].sm_clock", ...): where a result keeps its clocks."""
    out = {}

    def walk(x, where):
        if isinstance(x, dict):
            if "median_MHz" in x:
                out[where] = x
                return
            for k, v in x.items():
                walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, f"{where}[{i}]")

    walk(res, "")
    return out


def pooled_clock(records: list[dict]) -> dict:
    """One clock record for several (one per case of a run): every sample counted, the lowest
    minimum, the highest maximum and the median of the records' medians."""
    meds = sorted(r["median_MHz"] for r in records)
    mid = len(meds) // 2
    return {
        "source": records[0]["source"],
        "samples": sum(r["samples"] for r in records),
        "min_MHz": min(r["min_MHz"] for r in records),
        "median_MHz": meds[mid] if len(meds) % 2 else (meds[mid - 1] + meds[mid]) / 2,
        "max_MHz": max(r["max_MHz"] for r in records),
    }


def result_clock(name: str, res: dict | None = None) -> dict | None:
    """The SM clock recorded with ``<name>.json``, for a "measured at N MHz" line: "clock"
    (:func:`measured_clock` of its shallowest record: the whole run's where there is one),
    "text" (:func:`clock_text`, or why no clock was recorded), "where" (the JSON places of all
    its records) and "not_recorded" (the reason from CLOCK_NOT_RECORDED, else None). None when
    the result is absent."""
    r = _load(name, res)
    if r is None:
        return None
    recs = clock_records(r)
    depth = {k: k.count(".") + k.count("[") for k in recs}
    top = min(recs, key=lambda k: (depth[k], list(recs).index(k))) if recs else None
    rec = recs[top] if top else None
    same = [recs[k] for k in recs if depth[k] == depth[top]] if top else []
    if len(same) > 1:  # no whole-run record, one per case: pool them (not one case's few samples)
        rec = pooled_clock(same)
    why = CLOCK_NOT_RECORDED.get(name)
    text = clock_text(rec)
    if top is None and why:
        text += f" ({why[1]})"
    return {
        "clock": measured_clock(rec),
        "text": text,
        "where": sorted(recs),
        "not_recorded": why[1] if why else None,
    }


# SASS opcodes by the unit that executes them on compute capability 9.0 (CUDA C++ Programming
# Guide, arithmetic instruction throughput: 128 FP32 multiply-adds, 64 32-bit integer
# add/compare/logic results per cycle per SM, i.e. 1 and 1/2 warp instruction per scheduler)
_FP32 = ("FFMA", "FADD", "FMUL")
_INT_ALU = ("IADD3", "ISETP", "SEL", "LOP3", "SHF", "LEA", "VIADD", "IABS", "IMNMX")
_INT_MAD = ("IMAD",)


def sass_mix(body: list[str]) -> dict:
    """Counts of one loop body's instructions: FP32 arithmetic, integer ALU (add, compare,
    select, logic, shift), integer multiply-add (IMAD*, a MOV included), branches, loads, other."""
    out = {"fp32": 0, "int_alu": 0, "int_mad": 0, "branch": 0, "load": 0, "other": 0, "total": 0}
    for ins in body:
        op = ins.split()[1] if ins.startswith("@") else ins.split()[0]
        base = op.split(".")[0]
        key = (
            "fp32"
            if base in _FP32
            else "int_alu"
            if base in _INT_ALU
            else "int_mad"
            if base in _INT_MAD
            else "branch"
            if base in ("BRA", "EXIT")
            else "load"
            if base.startswith("LD")
            else "other"
        )
        out[key] += 1
        out["total"] += 1
    return out


def fma_loop(res: dict | None = None) -> dict | None:
    """Chapter 04's multiply-add loops counted in SM cycles (benchmarks/fma_loop.py, under ncu):
    per case its time, SM cycles, clock (GHz), cycles per loop iteration, warp instructions
    issued per scheduler per cycle; the main (unrolled) loop's instruction mix; and the
    pointer-chase steps in cycles (L1, shared, DRAM)."""
    r = _load("fma_loop", res)
    if not r:
        return None
    cases = {}
    for name, c in r["cases"].items():
        cases[name] = {
            "time_us": c["gpu__time_duration.sum"] / 1e3,
            "sm_cycles": c["sm__cycles_elapsed.max"],
            "clock_GHz": measured_clock(c)["GHz"],
            "iterations": c["iters"],
            "cycles_per_iteration": c["cycles_per_iteration"],
            "warp_inst": c["smsp__inst_executed.sum"],
            "issue_per_scheduler_cycle": c["smsp__issue_active.avg.pct_of_peak_sustained_active"] / 100,
            "warps_active_pct": c["sm__warps_active.avg.pct_of_peak_sustained_active"],
        }
    mixes = {}
    for kern, bodies in (r.get("sass_loops") or {}).items():
        if bodies:
            main = max(bodies, key=len)  # the unrolled main loop (the other is its remainder)
            mixes[kern] = {**sass_mix(main), "body": main}
    chases = {
        k: {
            "cycles_per_step": v["cycles_per_step"],
            "ns_per_step": v["ns_per_step"],
            "clock_GHz": measured_clock(v)["GHz"],
            "warp_inst_per_step": v["warp_instructions_per_step"],
        }
        for k, v in r.get("chases", {}).items()
    }
    return {"cases": cases, "loop_mix": mixes, "chases": chases, "ncu_command": r.get("ncu_command")}


# The one place the book's chapters read gpulab.predict's blind accuracy from (issues 23, 24): the
# latest blind round, computed from its recorded result (blind_r7.json: 43 kernels nobody on the
# project had run, predictions committed before they were timed on the H200 with CUDA events;
# benchmarks/blind_r7/). A new round replaces BLIND_ROUND; chapters glue what this returns.
BLIND_ROUND = "blind_r7"


def blind_accuracy(round_name: str | None = None) -> dict:
    """gpulab.predict's accuracy on kernels it never saw, from the latest blind round (or the
    round ``round_name``, e.g. "blind_r3"): kernels predicted, median |predicted/measured - 1|
    (and as text, "34%"), how many were outside 2x, how many could not be predicted, the
    model's commit, and whether that model is the one shipped now (blind_round_vs_fit)."""
    name = round_name or BLIND_ROUND
    r = results.load(name)
    if r is None:
        raise FileNotFoundError(f"{name}.json is not among the recorded results ({results.roots()})")
    s = r["summary"]
    median = float(s["median_abs_error"])
    out = s["outside_2x"]  # the names (blind_r4 on) or their count (blind_r3)
    return {
        "round": name,
        "kernels": int(s["cases"]),
        "median_error": median,
        "median_error_text": f"{100 * median:.0f}%",
        "outside_2x": out if isinstance(out, int) else len(out),
        "not_predicted": len(r["predicted"].get("failed_to_predict") or []),
        "model_commit": r["predicted"].get("model_files_commit") or r["predicted"].get("model_commit"),
        **blind_round_vs_fit(name),
    }


def blind_round_vs_fit(round_name: str) -> dict:
    """Whether a blind round scores the model now shipped, read from the last fit's record
    (perf_train.json; its params are gpus.H200_FIT, tests/test_perf_model.py checks that):
    ``refitted_on`` when the round's kernels were training data of that fit, ``current_model``
    when the fit names the round nowhere (so it was measured after the fit and never seen by it)."""
    fit = results.load("perf_train")
    if fit is None:
        raise FileNotFoundError(f"perf_train.json is not among the recorded results ({results.roots()})")
    seen = {c.split(":")[0] for c in [*fit.get("train", []), *fit.get("held_out", [])]}
    refitted = round_name in {c.split(":")[0] for c in fit.get("train", [])}
    return {
        "refitted_on": refitted,
        "current_model": round_name not in seen and round_name not in fit.get("after", {}),
    }


def blind_accuracy_clause(acc: dict | None = None) -> str:
    """The clause chapters quote for the model's blind accuracy, from blind_accuracy(): the
    current model's own score, or, when the model has since been refitted on (or revised after)
    that round, the score of the version that predicted it, saying so."""
    a = acc or blind_accuracy()
    out = a["outside_2x"]
    off = f"with {'none' if out == 0 else out} of them off by more than a factor of two"
    m = re.fullmatch(r".*_r(\d+)", a["round"])
    rnd = f"blind round {m.group(1)}" if m else a["round"]
    if a["current_model"]:
        return (
            f"on {a['kernels']} kernels it had never seen ({rnd}), its median error was "
            f"{a['median_error_text']}, {off}"
        )
    since = "refitted on those kernels" if a["refitted_on"] else "revised after seeing them"
    return (
        f"its last blind score is that of the previous version of the model (before it was "
        f"{since}), a median error of {a['median_error_text']} on {a['kernels']} kernels it had "
        f"never seen ({rnd}), {off}"
    )


def previous_blind_round(round_name: str | None = None) -> str | None:
    """The recorded blind round before ``round_name`` (default: the latest, BLIND_ROUND):
    "blind_r4" -> "blind_r3" when blind_r3.json is recorded, else None."""
    m = re.fullmatch(r"(.*_r)(\d+)", round_name or BLIND_ROUND)
    if not m or int(m.group(2)) <= 1:
        return None
    name = f"{m.group(1)}{int(m.group(2)) - 1}"
    return name if results.path(name) is not None else None
