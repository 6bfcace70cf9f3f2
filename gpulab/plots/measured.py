"""The appendix "Measured on an H200": every JSON a ``benchmarks/`` script wrote, one section each.

For each results file this module knows which script wrote it, how to label it (GPU, driver,
versions, date: read from the file, never typed in), which headline figures to compute from it
(a ratio against a peer library or a datasheet, with the target the issues set, met or missed),
and which figure or table shows it. Figures reuse the chapters' own plotting functions.

    from gpulab.plots import measured
    measured.available()                # names of the JSON files in benchmarks/results/
    measured.scorecard()                # every target, measured value and verdict, as a table
    measured.show("reduction")          # label, method, headlines, figure/table of one file

A file that is missing (``bandwidth.json`` before its benchmark has run, every file after a plain
``pip install``) gives a sentence saying how to produce it, never an error.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

__all__ = ["SECTIONS", "Section", "Headline", "results_dir", "available", "load", "uncovered",
           "run_info", "label", "headlines", "scorecard", "table", "figure", "show", "provenance",
           "missing_message", "figures", "display_table", "text_width", "WIDTH",
           "size_range"]

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- finding and loading

def _roots():
    """Where results are looked up: :func:`gpulab.results.roots`."""
    from gpulab import results
    return results.roots()


def results_dir(root=None) -> Path | None:
    """``root`` if given (None when it is not a folder), else the first results folder that
    exists among $GPULAB_RESULTS, the source tree's benchmarks/results, ./ and ../."""
    if root is not None:
        return Path(root) if Path(root).is_dir() else None
    for r in _roots():
        if r and Path(r).is_dir():
            return Path(r)
    return None


def available(root=None) -> list[str]:
    """Names (without .json) of the results files present, sorted."""
    if root is not None:
        d = results_dir(root)
        return sorted(p.stem for p in d.glob("*.json")) if d else []
    names = set()
    for r in _roots():
        if r and Path(r).is_dir():
            names |= {p.stem for p in Path(r).glob("*.json")}
    return sorted(names)


def load(name: str, root=None) -> dict | None:
    """The parsed ``<name>.json``, or None when this copy has none. Without ``root`` this is
    :func:`gpulab.timeline.load_result` (same search order)."""
    if root is None:
        from gpulab import results
        return results.load(name)
    p = Path(root) / f"{name}.json"
    return json.loads(p.read_text()) if p.is_file() else None


# --------------------------------------------------------------------------- labels

def _blocks(res: dict) -> list[dict]:
    """The dicts where scripts keep their environment: the top level and env/environment/versions/machine."""
    out = [res]
    for k in ("environment", "env", "versions", "machine"):
        if isinstance(res.get(k), dict):
            out.append(res[k])
    m = res.get("measured")                     # perf_model.json: measured.environment
    if isinstance(m, dict) and isinstance(m.get("environment"), dict):
        out.append(m["environment"])
    return out


def _first(res: dict, *keys):
    for b in _blocks(res):
        for k in keys:
            if b.get(k) not in (None, ""):
                return b[k]
    return None


_VERSION_KEYS = (("numba", ("numba",)), ("numba-cuda", ("numba_cuda", "numba-cuda")),
                 ("numpy", ("numpy",)), ("torch", ("torch",)), ("python", ("python",)))


def environment(res: dict, name: str | None = None) -> dict:
    """GPU, driver, date and versions recorded in one results file, under uniform keys
    (missing ones are left out). ``name`` enables the per-file fallbacks: fidelity.json has no
    environment block, so its "Recorded run" line in benchmarks/fidelity/README.md is used."""
    env = {}
    gpu = _first(res, "gpu", "device")
    if not gpu and isinstance(res.get("describe"), str):       # run_notebooks.py: gpulab.describe()
        m = re.search(r"GPU: (.+?) \(", res["describe"])
        gpu = m.group(1) if m else None
        if not m and "CPU" in res["describe"]:
            env["cpu"] = res["describe"].split(": ", 1)[-1]
    if gpu:
        env["gpu"] = str(gpu)
    smi = _first(res, "nvidia_smi")
    if isinstance(smi, str) and re.match(r"\d+\.\d+", smi):
        env["driver"] = smi.split(",")[0].strip()
    # "driver" in bandwidth.json and "driver_version" in occupancy_vs_driver.json are the CUDA
    # driver API version (cuDriverGetVersion), not the display driver's
    api = _first(res, "cuda_driver_api", "driver_version", "driver")
    if api and str(api) == env.get("driver"):   # the display driver, no API version recorded
        api = None
    if api:
        env["cuda_driver_api"] = ".".join(map(str, api)) if isinstance(api, list) else str(api)
    date = _first(res, "when_utc", "date_utc", "measured_at", "date")
    if date:
        env["date"] = str(date)
    for label_, keys in _VERSION_KEYS:
        v = _first(res, *keys)
        if v:
            env[label_] = str(v)
    for b in _blocks(res):
        for k, v in b.items():
            if k.startswith("cupy") and isinstance(v, str):
                env["cupy"] = v
    if "torch" not in env and isinstance(res.get("method"), str):
        m = re.search(r"torch (\d[\w.+]*)", res["method"])
        if m:
            env["torch"] = m.group(1)
    if isinstance(res.get("nvcc"), str):
        m = re.search(r"cuda_(\d+\.\d+)", res["nvcc"])
        env["nvcc"] = m.group(1) if m else res["nvcc"]
    if isinstance(res.get("machine"), dict) and "cpus" in res["machine"]:
        env["cpu"] = (f"{res['machine']['cpus']} CPU cores "
                      f"({str(res['machine'].get('platform', '?')).split('-')[0]})")
    if name == "fidelity" and "gpu" not in env:
        env.update(_fidelity_readme())
    return env


def _fidelity_readme() -> dict:
    """GPU, driver, versions and date from benchmarks/fidelity/README.md's "Recorded run" line."""
    p = REPO / "benchmarks" / "fidelity" / "README.md"
    if not p.is_file():
        return {}
    m = re.search(r"Recorded run:(.*?)(?:\n\s*\n)", p.read_text(), re.S)
    if not m:
        return {}
    text = " ".join(m.group(1).split())
    out = {"source_of_label": "benchmarks/fidelity/README.md (fidelity.json records no environment)"}
    g = re.match(r"\s*(.*?)\s*\(driver ([\d.]+)\)", text)
    if g:
        out["gpu"], out["driver"] = g.group(1), g.group(2)
    for key, pat in (("numba", r"numba ([\d.]+)"), ("numba-cuda", r"numba-cuda ([\d.]+)"),
                     ("numpy", r"numpy ([\d.]+)"), ("date", r"on (\d{4}-\d{2}-\d{2})")):
        g = re.search(pat, text)
        if g:
            out[key] = g.group(1)
    return out


def run_info(root=None) -> dict:
    """What the whole set of files says about where it was measured: each key (gpu, driver,
    numba, ...) mapped to the sorted distinct values found, and the distinct dates (days)."""
    info: dict[str, set] = {}
    for name in available(root):
        res = load(name, root)
        if not isinstance(res, dict):
            continue
        for k, v in environment(res, name).items():
            if k in ("source_of_label", "cpu"):
                continue
            if k == "date":
                m = re.match(r"\d{4}-\d{2}-\d{2}", v)
                v = m.group(0) if m else v
            info.setdefault(k, set()).add(v)
    return {k: sorted(v) for k, v in info.items()}


def _day_time(d: str) -> str:
    """'2026-11-29T12:09:20Z' -> '2026-11-29 12:09 UTC'; anything else unchanged."""
    m = re.match(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::[\d.]+)?(Z|\+00:00)$", d)
    return f"{m.group(1)} {m.group(2)} UTC" if m else d


WIDTH = 76  # characters per output line that the book's text column holds
COLUMN_IN = 6.6  # inches a figure may take, labels included (676 px column at 100 px/inch)


def _wrap(text: str, width: int = WIDTH, first: str = "", rest: str = "") -> str:
    import textwrap
    return "\n".join(textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                                    break_on_hyphens=False))


def label(name: str, res: dict) -> str:
    """One line: where, with what and when this file was measured, from the file itself."""
    env = environment(res, name)
    parts = [env.get("gpu") or env.get("cpu") or "machine not recorded"]
    if env.get("gpu") and env.get("cpu"):
        parts.append(env["cpu"])
    if "driver" in env:
        parts.append(f"driver {env['driver']}")
    if "cuda_driver_api" in env:
        parts.append(f"CUDA driver API {env['cuda_driver_api']}")
    for k in ("numba", "numba-cuda", "numpy", "cupy", "torch", "nvcc"):
        if k in env:
            parts.append(f"{k} {env[k]}")
    parts.append(_day_time(env.get("date", "date not recorded")))
    s = ", ".join(parts)
    if "source_of_label" in env:
        s += f" [from {env['source_of_label']}]"
    return s


# --------------------------------------------------------------------------- headlines

@dataclass
class Headline:
    """One headline figure: ``value`` (a ratio when ``target`` is set) and what it means."""

    what: str
    value: float | None
    text: str
    target: float | None = None          # the value must be >= target to meet it
    target_text: str = ""
    score: bool = True                   # listed in the scorecard
    against: str = ""                    # the peer, model or datasheet the value is relative to

    @property
    def met(self) -> bool | None:
        if self.target is None or self.value is None:
            return None
        return bool(self.value >= self.target)

    @property
    def verdict(self) -> str:
        return {True: "met", False: "MISSED", None: ""}[self.met]

    def __str__(self):
        tail = f" Target {self.target_text}: {self.verdict}." if self.target is not None else ""
        return self.text + tail


def _span(xs, fmt="{:.2f}x"):
    lo, hi = fmt.format(min(xs)), fmt.format(max(xs))
    return lo if lo == hi else f"{lo} to {hi}"


def _pct(x):
    return f"{x:.1%}"


def _h_reduction(r):
    out = []
    d = r.get("device_sum") or {}
    best = d.get("best") or {}
    libs = d.get("libraries", {})
    for lib in ("cupy", "torch"):
        L = libs.get(lib, {})
        if best.get("GBps") and L.get("GBps"):
            ratio = best["GBps"] / L["GBps"]
            out.append(Headline(
                f"full-device sum vs {lib}.sum", ratio,
                f"Full-device sum of {d['n']:,} float32: ours {best['GBps']:.0f} GB/s, {lib}.sum "
                f"{L['GBps']:.0f} GB/s: ours = {_pct(ratio)} of {lib}'s.",
                0.9, f">= 90% of {lib}.sum", against=f"{lib}.sum, same buffer, same run"))
    rows = [b for b in r.get("block_sums", [])
            if not (b["tree"].get("launch_bound") or b["shuffle"].get("launch_bound"))]
    if rows:
        ratios = [b["shuffle"]["GBps"] / b["tree"]["GBps"] for b in rows]
        big = max(rows, key=lambda b: b["n"])
        out.append(Headline(
            "per-block shuffle / tree", big["shuffle"]["GBps"] / big["tree"]["GBps"],
            f"Per-block sums (256 threads), sizes not launch-bound ({rows[0]['n']:,} to "
            f"{big['n']:,} elements): shuffle / tree = {_span(ratios)} "
            f"({big['shuffle']['GBps']:.0f} vs {big['tree']['GBps']:.0f} GB/s at {big['n']:,}); "
            f"both read memory at a fraction of the full-device sum's rate.",
            against=f"tree kernel, n = {big['n']:,}"))
    return out


def _h_bandwidth(r):
    out = []
    cp = r.get("copy") or {}
    t = cp.get("torch") or {}
    if cp.get("best_GBps") and t.get("GBps"):
        ratio = cp["best_GBps"] / t["GBps"]
        out.append(Headline("device copy vs torch copy", ratio,
                            f"Best copy kernel ({cp.get('best')}) {cp['best_GBps']:.0f} GB/s, torch "
                            f"device-to-device copy {t['GBps']:.0f} GB/s: {_pct(ratio)} of torch's.",
                            0.9, ">= 90% of torch's copy", against="torch device-to-device copy"))
    tr = (r.get("transpose") or {}).get("kernels", {})
    padded = {k: v["GBps"] for k, v in tr.items() if k.startswith("transpose_padded") and v.get("GBps")}
    if padded and cp.get("best_GBps"):
        best_k = max(padded, key=padded.get)
        ratio = padded[best_k] / cp["best_GBps"]
        each = "; ".join(f"{k} {g:.0f} GB/s = {_pct(g / cp['best_GBps'])}" for k, g in padded.items())
        out.append(Headline("padded transpose vs copy", ratio,
                            f"Padded shared-memory transpose, {(r.get('transpose') or {}).get('side')}^2 "
                            f"float32, against the best copy of the same run: {each}.",
                            0.8, ">= 80% of the copy", against="best copy kernel, same run"))
    mm = r.get("matmul") or {}
    ours = (mm.get("kernels") or {}).get("matmul_tiled", {}).get("TFLOPs")
    ref = (mm.get("torch_fp32_tf32_off") or {}).get("TFLOPs")
    if ours and ref:
        out.append(Headline("tiled fp32 matmul / torch fp32", ours / ref,
                            f"Tiled fp32 matmul ({mm.get('n')}^3) {ours:.1f} TFLOP/s, torch fp32 "
                            f"(TF32 off) {ref:.1f} TFLOP/s: ratio {ours / ref:.2f} "
                            f"(no target: a teaching kernel against cuBLAS).", against="torch fp32, TF32 off"))
    return out


def _h_divergence(r):
    out = []
    rows = r.get("rows", [])
    for iters in sorted({x["iters"] for x in rows}):
        div = {x["paths"]: x for x in rows if x["iters"] == iters and x["mode"] == "divergent"}
        uni = {x["paths"]: x for x in rows if x["iters"] == iters and x["mode"] == "uniform"}
        pmax = max(div) if div else None
        if pmax and 1 in div:
            ratio = div[pmax]["ms_median"] / div[1]["ms_median"]
            u = (f"; warp-uniform choice of the same paths: {uni[pmax]['ms_median'] / uni[1]['ms_median']:.2f}x"
                 if pmax in uni and 1 in uni else "")
            out.append(Headline(f"divergent time at {pmax} paths, {iters}-iteration body", ratio,
                                f"Kernel GPU time (CUDA events), paths of equal length, "
                                f"{iters}-iteration bodies: {pmax} divergent paths per warp take "
                                f"{ratio:.1f}x the time of 1 path (model T_warp = sum of T_p: "
                                f"{pmax}x){u}.", against=f"1 path; model: {pmax}x"))
    from gpulab import results_views
    split = results_views.divergence_instruction_split(r)
    vr = [x for x in (results_views.divergence_paths(r) or []) if x.get("ncu_inst_executed")]
    if split and vr:
        top = max(vr, key=lambda x: x["paths"])
        ncu_it = "/".join(str(i) for i in sorted({x.get("iters") for x in r["ncu"]["rows"]}))
        out.append(Headline("warp instructions at the most paths (ncu)", top["ncu_inst_executed_ratio"],
                            f"Nsight Compute ({ncu_it}-iteration body), {top['paths']} paths "
                            f"against 1: "
                            f"{top['ncu_time_ratio']:.1f}x the kernel time (gpu__time_duration), "
                            f"{top['ncu_inst_executed_ratio']:.1f}x the warp instructions, "
                            f"{top['ncu_threads_per_inst']:.2f} active threads per instruction "
                            f"({top['ncu_pred_on_threads_per_inst']:.2f} predicated on). A line "
                            f"common + P x per-path fits every P within "
                            f"{split['max_rel_residual']:.1%} and predicts "
                            f"{split['predicted_ratio_at_32']:.1f}x at 32 paths: the code all paths "
                            f"share is why the ratio stays below P.", score=False))
    return out


def _h_occupancy(r):
    cfg = r.get("configs", [])
    n = len(cfg)
    agree = sum(1 for c in cfg if c.get("driver") == c.get("gpulab"))
    lim = r.get("device_limits_vs_gpulab", {})
    same = [k for k, v in lim.items() if isinstance(v, list) and v[0] is not None and v[0] == v[1]]
    listed = [k for k, v in lim.items() if isinstance(v, list) and v[0] is not None]
    kinds = ", ".join(f"{k} {s['match']}/{s['configurations']}" for k, s in r.get("summary", {}).items())
    return [Headline("occupancy calculator = driver", agree / n if n else None,
                     f"On the {r.get('device', 'GPU')} ({r.get('arch', '?')} only: the driver "
                     f"answers for the GPU it runs on), gpulab's occupancy calculator against "
                     f"cuOccupancyMaxActiveBlocksPerMultiprocessor: "
                     f"{agree} of {n} configurations give the same blocks per SM ({kinds}); "
                     f"{len(r.get('mismatches', []))} mismatches recorded; {len(same)} of {len(listed)} "
                     f"device limits equal gpulab's table.", 1.0, "all configurations agree",
                     against="the CUDA driver's occupancy API")]


def fidelity_counts(r: dict) -> dict:
    """Launches whose per-request ratios / raw exact counters agree between ncu and the simulator."""
    launches = [k for k, v in r.items() if isinstance(v, dict) and "counters" in v]
    ratios = [k for k in launches if r[k].get("ratios_equal")]
    exact = [k for k in launches if r[k].get("exact_counters_equal")]
    return {"launches": launches, "ratios_equal": ratios, "exact_equal": exact}


def _h_fidelity(r):
    c = fidelity_counts(r)
    n, k, e = len(c["launches"]), len(c["ratios_equal"]), len(c["exact_equal"])
    off = [x for x in c["launches"] if x not in c["ratios_equal"]]
    off_exact = [x for x in c["launches"] if x not in c["exact_equal"]]
    return [Headline("simulator ratios = Nsight Compute", k / n if n else None,
                     f"Sectors per request and wavefronts per shared instruction equal Nsight "
                     f"Compute's for {k} of {n} launches (differ: {', '.join(off) or 'none'}); every "
                     f"exact counter equal for {e} of {n} (differ: {', '.join(off_exact) or 'none'}). "
                     f"The differences are compiler transformations (a hoisted load, a 128-bit shared "
                     f"load), explained in benchmarks/fidelity/README.md.",
                     against="Nsight Compute; fraction of launches equal")]


def _h_launch(r):
    from gpulab import results_views
    out = []
    nb, th = r.get("numba_tiny", {}), r.get("torch_add_", {})
    if nb.get("host_s_per_launch"):
        tail = ""
        if th.get("host_s_per_launch"):
            tail = (f"; a small torch operation {th['host_s_per_launch'] * 1e6:.1f} us "
                    f"({nb['host_s_per_launch'] / th['host_s_per_launch']:.1f}x less)")
        out.append(Headline("numba launch, host side (s)", nb["host_s_per_launch"],
                            f"Host launch cost (enqueue only, no synchronisation): a numba launch "
                            f"costs the host {nb['host_s_per_launch'] * 1e6:.1f} us{tail}.",
                            score=False))
    lp = results_views.launch_parts(r)
    if lp and "numba" in lp:
        n = lp["numba"]
        ncu = n.get("ncu_gpu_time_duration_s")
        out.append(Headline("numba tiny kernel, GPU time (s)", n["gpu_single_behind_long_s"],
                            f"GPU time of the tiny kernel itself: {n['gpu_single_behind_long_s'] * 1e6:.1f}"
                            f" us between events queued behind a long kernel, "
                            f"{n['gpu_back_to_back_s'] * 1e6:.2f} us each back to back"
                            + (f", {ncu * 1e6:.2f} us by Nsight Compute's gpu__time_duration" if ncu else "")
                            + f". End to end (launch + synchronize, host clock): "
                            f"{n['end_to_end_s'] * 1e6:.1f} us.", score=False))
        if n.get("events_idle_stream_s"):
            out.append(Headline("events on an idle stream (not GPU time)", n["events_idle_stream_s"],
                                f"Not a GPU time: CUDA events around one launch on an idle stream "
                                f"give {n['events_idle_stream_s'] * 1e6:.1f} us, because the start "
                                f"event completes before the host has finished launching, so the "
                                f"interval holds the host launch path.", score=False))
    ch = r.get("chain") or []
    if ch:
        small = min(ch, key=lambda x: x["n"])
        out.append(Headline("fused / unfused chain", small["numba_unfused_s"] / small["numba_fused_s"],
                            f"End to end, a chain of {small['k']} element-wise steps on {small['n']:,} "
                            f"floats: {small['k']} launches {small['numba_unfused_s'] * 1e3:.2f} ms, one "
                            f"fused launch {small['numba_fused_s'] * 1e3:.3f} ms "
                            f"({small['numba_unfused_s'] / small['numba_fused_s']:.0f}x).",
                            against=f"one fused launch, n = {small['n']:,}"))
    tl = r.get("timelines") or {}
    if "serial" in tl and "overlapped" in tl:
        s_, o = tl["serial"]["summary"], tl["overlapped"]["summary"]
        out.append(Headline("kernel share of the pipeline", s_["kernel_share"],
                            f"Pipeline timeline: the kernel lane is busy {_pct(s_['kernel_share'])} of "
                            f"the time serial, {_pct(o['kernel_share'])} overlapped: the host is the "
                            f"serial part.", score=False))
    return out


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


def _h_amdahl(r):
    from gpulab.models import amdahl
    fit, ps, t, used, worst = amdahl_fit(r)
    n_sm = (r.get("env") or {}).get("n_sm") or ps.max()
    held = [(p, fit.check(p, tt)) for p, tt in zip(ps, t) if p <= n_sm and p not in ps[used]]
    errs = ", ".join(f"p={p} {e:+.1%}" for p, e in held)
    host = [x["host_s"] for x in r["rows"] if "host_s" in x]
    host_txt = (f" The fitted serial time is {fit.serial_s * 1e3:.2f} ms; the host part measured "
                f"on its own took {min(host) * 1e3:.2f} to {max(host) * 1e3:.2f} ms." if host else "")
    s = t[ps == ps.min()][0] / t.min()
    return [Headline("Amdahl fit on two p, worst held-out error", worst,
                     f"T(p) = serial + parallel/p fitted on p = {', '.join(map(str, ps[used]))}: "
                     f"f = {fit.f:.4f} (limit {amdahl.limit(fit.f):.0f}x). Held-out errors up to "
                     f"{n_sm} SMs: {errs}.{host_txt} Measured speed-up of the step, best p against "
                     f"p = {ps.min()}: {s:.0f}x.", score=False)]


def _h_mma(r):
    f = r.get("mma_m16n8k16_fragments", {})
    w = r.get("wmma_tiled_matmul", {})
    h = r.get("sass_hmma_count", {})
    ok = bool(f.get("layout_ok")) and bool(w.get("within_accumulation_rounding"))
    return [Headline("tensor-core MMA = gpulab's emulation", 1.0 if ok else 0.0,
                     f"mma.sync.m16n8k16 with gpulab's lane layout: layout_ok = {f.get('layout_ok')}, "
                     f"max |diff| vs the emulation {f.get('max_abs_diff_vs_emulation', float('nan')):.1e}; "
                     f"wmma {'x'.join(map(str, w.get('shape', [])))} matmul within fp32 accumulation "
                     f"rounding of the emulation: {w.get('within_accumulation_rounding')}; HMMA "
                     f"instructions in the SASS: {h}.", 1.0, "layout and result agree",
                     against="gpulab.models.mma emulation")]


def _peaks_for(res):
    from gpulab.models import mma
    dev = str(res.get("device", ""))
    return mma.H200_DATASHEET if "H200" in dev else None


def _h_throughput(r):
    sheet = _peaks_for(r)
    if sheet is None:
        return [Headline("datasheet", None, f"Measured on {r.get('device')}: the H200 datasheet peaks "
                                            f"do not apply; compare with your GPU's datasheet.",
                         score=False)]
    out = []
    peaks = sheet["peak_tflops"]
    for prec, tf in r.get("tflops", {}).items():
        base = "fp8" if prec.startswith("fp8") else prec
        if base in peaks:
            out.append(Headline(f"{prec} matmul / dense datasheet peak", tf / peaks[base],
                                f"{prec}: {tf:.0f} TFLOP/s = {_pct(tf / peaks[base])} of the dense "
                                f"datasheet peak ({peaks[base]:.0f}).", against=f"H200 dense datasheet {base} peak"))
    if r.get("copy_bandwidth_tbs"):
        b = r["copy_bandwidth_tbs"]
        out.append(Headline("copy bandwidth / datasheet", b / sheet["bandwidth_tbs"],
                            f"device copy {b:.2f} TB/s = {_pct(b / sheet['bandwidth_tbs'])} of the "
                            f"datasheet's {sheet['bandwidth_tbs']} TB/s.", against="H200 datasheet HBM bandwidth"))
    return out


def _h_issue7(r, root=None):
    new = load("tensor_cores_throughput", root)
    if not new:
        return [Headline("undated figures", None, "Superseded, undated figures; no dated run to "
                         "compare with.", score=False)]
    pairs = [(p, r["tflops"][p], new["tflops"][p]) for p in r.get("tflops", {}) if p in new.get("tflops", {})]
    txt = "; ".join(f"{p} {o:.0f} -> {n:.0f} ({n / o - 1:+.0%})" for p, o, n in pairs)
    worst = min(pairs, key=lambda x: x[2] / x[1])
    return [Headline("undated figures vs the dated run", worst[2] / worst[1],
                     f"Superseded: undated H200 throughputs, recorded without matrix sizes or a "
                     f"timing method, against the dated n = 8192 run (TFLOP/s): {txt}. Without "
                     f"sizes or method the differences cannot be explained; use the dated run.",
                     score=False, against=f"dated run; lowest ratio ({worst[0]})")]


def _h_sim_speed(r):
    ks = r.get("kernels", {})
    sp = {k: v["speedup"] if "speedup" in v else v["numba_sim_s"] / v["gpulab_s"] for k, v in ks.items()}
    mem = r.get("launch_2_20_threads", {})
    m = (f" A 2^20-thread launch took {mem['seconds']:.2f} s and peaked at "
         f"{mem['peak_rss_bytes'] / 2**20:.0f} MiB." if mem else "")
    return [Headline("simulator speed-up over Numba's", min(sp.values()) if sp else None,
                     "gpulab's simulator against Numba's CUDA simulator: " +
                     ", ".join(f"{k} {v:.0f}x faster" for k, v in sp.items()) + "." + m,
                     against="Numba's simulator; smallest speed-up")]


def _h_latency(r):
    g = r.get("global", [])
    if not g:
        return []
    from gpulab import results_views
    lv = results_views.latency_levels(r)
    names = {"L1": "L1-resident", "L2": "L2-resident", "DRAM": "HBM (DRAM)"}
    levels = "; ".join(f"{names[k]} {size_range(lv['sizes_' + k])}: {lv[k]:.1f} ns = "
                       f"{lv['cycles_' + k]:.0f} cycles" for k in ("L1", "L2", "DRAM") if k in lv)
    return [Headline("latency ladder", lv.get("DRAM"),
                     f"Unloaded load-to-use latency of one dependent load (median over the working "
                     f"sets of each level): shared memory {r['shared']['ns']:.1f} ns = "
                     f"{r['shared']['cycles_at_max_clock']:.0f} cycles; {levels}. Cycles at the "
                     f"maximum SM clock of {lv['max_sm_clock_GHz']} GHz.", score=False)]


def _size(b: int) -> str:
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return f"{b / k:g} {unit}"
    return f"{b} B"


def size_range(bs) -> str:
    """Working-set sizes as the book writes them: '512 KiB to 16 MiB' (or one size)."""
    return f"{_size(min(bs))}" if len(bs) == 1 else f"{_size(min(bs))} to {_size(max(bs))}"


def _h_allreduce(r):
    from gpulab import results_views
    v = results_views.allreduce(r)
    if not v:
        return []
    p = v["gpus"]
    out = [Headline("all-reduce alpha three ways", v["alpha_graph_s"],
                    f"All-reduce of small messages (<= 1 KiB) on {p} GPUs (NCCL {v['nccl']}), time "
                    f"per all-reduce: one call between events {v['small_message_per_call_s'] * 1e6:.1f}"
                    f" us (an upper bound: it includes the host's call), back to back "
                    f"{v['small_message_back_to_back_s'] * 1e6:.1f} us, replayed from a CUDA graph "
                    f"{v['small_message_graph_s'] * 1e6:.1f} us. Ring model, 2(p - 1) = "
                    f"{2 * (p - 1)} steps: alpha = {v['alpha_per_call_s'] * 1e6:.1f}, "
                    f"{v['alpha_back_to_back_s'] * 1e6:.1f} and {v['alpha_graph_s'] * 1e6:.1f} us "
                    f"per step.", score=False),
           Headline("all-reduce B", v["bandwidth_Bps"],
                    f"Large messages: B = {v['bandwidth_Bps'] / 1e9:.0f} GB/s from the fitted slope; "
                    f"largest bus bandwidth (nccl-tests definition) "
                    f"{v['max_bus_bandwidth_Bps'] / 1e9:.0f} GB/s.", score=False)]
    if v["p2p_GBps"]:
        size = (r.get("p2p_copy") or {}).get("bytes")
        links = {k: x.get("links") for k, x in (r.get("nvlink_status") or {}).items()
                 if isinstance(x, dict) and x.get("links")}
        nv = (f" nvidia-smi reports {'/'.join(str(x) for x in sorted(set(links.values())))} "
              f"NVLink links per GPU." if links else "")
        out.append(Headline("peer-to-peer copy", max(v["p2p_GBps"].values()),
                            f"Peer-to-peer copy{' of ' + _size(size) if size else ''} between the "
                            f"two GPUs: " + ", ".join(f"{k.replace('_', ' ')} {g:.0f} GB/s"
                                                      for k, g in v["p2p_GBps"].items())
                            + "." + nv, score=False))
    return out


def _h_strided(r):
    from gpulab import results_views
    rows = results_views.strided_copy(r) or []
    if not rows:
        return []
    by = {x["stride"]: x for x in rows}
    out = [Headline("strided copy, useful GB/s at the largest stride", by[max(by)]["useful_GBps"],
                    "Strided copy, useful GB/s: " + ", ".join(
                        f"stride {k} {v['useful_GBps']:.0f}" for k, v in sorted(by.items())) + ".",
                    score=False)]
    if all(x.get("dram_bytes_read_per_load") for x in rows):
        out.append(Headline("DRAM bytes per load", max(x["dram_bytes_read_per_load"] for x in rows),
                            "HBM bytes read per 4-byte load (ncu dram__bytes_read.sum / loads): " +
                            ", ".join(f"stride {x['stride']} {x['dram_bytes_read_per_load']:.0f} B"
                                      for x in rows) + "; L1 sectors per request stop at " +
                            f"{max(x['l1_sectors_per_request'] for x in rows):.0f}.", score=False))
    return out


def _t_strided(r):
    from gpulab import results_views
    rows = results_views.strided_copy(r) or []
    return _df([(x["stride"], x["time_s"] * 1e6, x["useful_GBps"], x.get("dram_bytes_read_per_load"),
                 x.get("l2_bytes_read_per_load"), x.get("l1_sectors_per_request"),
                 x.get("dram_read_GBps_ncu")) for x in rows],
               ["stride", "GPU time (us)", "useful GB/s", "HBM bytes per load", "L2 bytes per load",
                "L1 sectors per request", "HBM read GB/s (ncu)"])


def _h_stalls(r):
    from gpulab import results_views
    rows = results_views.stall_reasons(r) or []
    return [Headline(f"stall kernel {x['kernel']}", x["built_for_share"],
                     f"{x['kernel']}: top stall reason {x['top_reason']} (built for {x['built_for']}, "
                     f"{_pct(x['built_for_share'])} of all stall reasons).", score=False) for x in rows]


def _t_stalls(r):
    from gpulab import results_views
    rows = results_views.stall_reasons(r) or []
    sp = lambda x: (x or "").replace("_", " ")  # noqa: E731
    return _df([(x["kernel"], sp(x["built_for"]), x["top_reason"] == x["built_for"], x["built_for_share"],
                 x["long_scoreboard_per_issue"], x["barrier_per_issue"], x["mio_throttle_per_issue"],
                 x["short_scoreboard_per_issue"]) for x in rows],
               ["kernel", "built for", "is top", "its share", "long sb.", "barrier", "MIO thr.",
                "short sb."])


def _h_in_flight(r):
    from gpulab import results_views
    v = results_views.reduction_in_flight(r)
    if not v:
        return []
    return [Headline("bytes in flight, grid-stride / per-block", v["max_in_flight_ratio"],
                     f"Per-block reductions keep at most {v['per_block_max_bytes_in_flight_per_sm'] / 1024:.0f} KiB "
                     f"per SM in flight, the grid-stride sum "
                     f"{v['grid_stride_max_bytes_in_flight_per_sm'] / 1024:.0f} KiB; Little's law with "
                     f"{v['dram_latency_ns']:.0f} ns needs {v['needed_per_sm_for_grid_stride_GBps'] / 1024:.1f} KiB "
                     f"per SM for {v['grid_stride_GBps']:.0f} GB/s (derived).", score=False)]


def _t_in_flight(r):
    from gpulab import results_views
    v = results_views.reduction_in_flight(r) or {}
    if not v:
        return None
    rows = [("HBM latency, measured (ns)", v["dram_latency_ns"]),
            ("per-block sum, measured GB/s", v["per_block_GBps"]),
            ("grid-stride sum, measured GB/s", v["grid_stride_GBps"]),
            ("per-block: most bytes in flight per SM", v["per_block_max_bytes_in_flight_per_sm"]),
            ("grid-stride: most bytes in flight per SM", v["grid_stride_max_bytes_in_flight_per_sm"]),
            ("per-block: average in flight per SM (Little)", v["per_block_avg_bytes_in_flight_per_sm"]),
            ("grid-stride: average in flight per SM (Little)", v["grid_stride_avg_bytes_in_flight_per_sm"]),
            ("bandwidth ratio, grid-stride / per-block", v["bandwidth_ratio"]),
            ("most-in-flight ratio, grid-stride / per-block", v["max_in_flight_ratio"])]
    return _df(rows, ["quantity (derived unless marked measured)", "value"])


def _h_occ_header(r):
    from gpulab import results_views
    rows = results_views.occupancy_vs_header(r) or []
    if not rows:
        return []
    agree, cases = sum(x["agree"] for x in rows), sum(x["cases"] for x in rows)
    return [Headline("occupancy calculator = cuda_occupancy.h", agree / cases,
                     f"gpulab's occupancy against NVIDIA's cuda_occupancy.h: {agree:,} of {cases:,} "
                     f"cases agree over {', '.join(x['arch'] for x in rows)}. No GPU is involved: "
                     f"the header's calculator is given each architecture's limits from the "
                     f"Programming Guide.", 1.0, "every case", against="cuda_occupancy.h")]


def _t_occ_header(r):
    from gpulab import results_views
    rows = results_views.occupancy_vs_header(r) or []
    return _df([(x["arch"], x["cases"], x["agree"], x["cases_with_a_block"], x["device_limits_equal"])
                for x in rows], ["arch", "cases", "agree", "cases with a block", "limits equal"])


def _h_int4(r):
    from gpulab import results_views
    rows = results_views.int4_mma(r) or []
    emu = [x for x in rows if x["arch"] == "sm_90" and "S4" not in x["tensor_sass"]
           and ".s4" in x["ptx"]]
    if not rows:
        return []
    return [Headline("INT4 mma on sm_90", float(len(emu)),
                     f"ptxas accepts {sum(x['accepted'] for x in rows)} of {len(rows)} PTX mma variants; "
                     f"on sm_90 the {len(emu)} INT4 ones become INT8 IMMA instructions "
                     f"({', '.join(sorted({x['tensor_sass'] for x in emu}))}), not INT4 tensor-core "
                     f"instructions as on sm_80.", score=False)]


def _t_int4(r):
    from gpulab import results_views
    rows = results_views.int4_mma(r) or []
    return _df([(x["arch"], x["variant"], x["tensor_sass"], x["tensor_sass_count"],
                 x["sass_instructions"]) for x in rows],
               ["arch", "PTX mma", "tensor-core SASS", "count", "SASS total"])


def _h_transpose_variants(r):
    v = {k: x for k, x in r.get("variants", {}).items() if x.get("GBps")}
    ref = r.get("torch_copy_GBps")
    if not v or not ref:
        return []
    best = max(v, key=lambda k: v[k]["GBps"])
    bad = [k for k, x in v.items() if x.get("correct") is False]
    return [Headline("transpose variant vs copy", v[best]["GBps"] / ref,
                     f"Padded-transpose variants, {r.get('side')}^2 float32: the fastest, {best}, "
                     f"{v[best]['GBps']:.0f} GB/s = {_pct(v[best]['GBps'] / ref)} of torch's copy in the "
                     f"same run ({ref:.0f} GB/s); slowest {min(v, key=lambda k: v[k]['GBps'])}. "
                     + (f"Wrong results: {', '.join(bad)}." if bad else "All transposed correctly."),
                     0.8, ">= 80% of the copy", against=f"torch device copy, same run ({best})")]


def _h_notebooks(r):
    runs = r.get("runs", [])
    ok = [x for x in runs if x.get("ok")]
    bad = [Path(x["notebook"]).stem for x in runs if not x.get("ok")]
    return [Headline(f"chapters run on the {r.get('backend', '?')} backend", len(ok) / len(runs) if runs else None,
                     f"{len(ok)} of {len(runs)} chapter notebooks ran top to bottom with backend "
                     f"'{r.get('backend')}' ({r.get('describe')}), "
                     f"{sum(x.get('seconds', 0) for x in runs):.0f} s in all"
                     + (f"; failed: {', '.join(bad)}." if bad else "."),
                     1.0, "every chapter runs", against="chapters/*.ipynb")]


def _last_line(err):
    if not err:
        return ""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", x).strip() for x in str(err).splitlines()]
    lines = [x for x in lines if x and not set(x) <= set("-^ ")]
    return lines[-1][:160] if lines else ""


def _t_notebooks(r):
    return _df([(x["notebook"], x.get("seconds"), x.get("ok"), _last_line(x.get("error")))
                for x in r.get("runs", [])], ["notebook", "seconds", "ran", "error (last line)"])


def _f_transpose_variants(r, ax):
    v = r.get("variants", {})
    names = list(v)
    ax.bar(names, [v[k]["GBps"] for k in names])
    if r.get("torch_copy_GBps"):
        ax.axhline(r["torch_copy_GBps"], color="k", ls="--", lw=1, label="torch copy, same run")
        ax.axhline(0.8 * r["torch_copy_GBps"], color="C3", ls=":", lw=1, label="80% of it (target)")
        ax.legend()
    ax.set_xlabel("variant (tile x rows)")
    ax.set_ylabel("GB/s (read + written)")
    return ax


# --------------------------------------------------------------------------- tables and figures

def _df(rows, columns):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is in requirements.txt
        return rows
    return pd.DataFrame(rows, columns=columns)


def _t_occupancy(r):
    rows = [(k, s["configurations"], s["match"], s["distinct_register_counts"])
            for k, s in r.get("summary", {}).items()]
    rows += [(f"limit {k}", v[0], v[1], "") for k, v in r.get("device_limits_vs_gpulab", {}).items()
             if isinstance(v, list)]
    return _df(rows, ["what", "configurations / device", "agree / gpulab", "register counts"])


def _t_fidelity(r):
    rows = []
    for k, v in r.items():
        if not isinstance(v, dict) or "ratios" not in v:
            continue
        ra = v["ratios"]
        g = lambda key, who: ra.get(key, {}).get(who)  # noqa: E731
        rows.append((k, g("sectors_per_request_ld", "ncu"), g("sectors_per_request_ld", "sim"),
                     g("wavefronts_per_shared_inst_ld", "ncu"), g("wavefronts_per_shared_inst_ld", "sim"),
                     v.get("ratios_equal"), v.get("exact_counters_equal")))
    return _df(rows, ["launch", "ld sectors per req. ncu", "sim", "shared wave- fronts per inst. ncu",
                      "sim", "ratios equal", "counts equal"])


def _t_mma(r):
    rows = []
    for part in ("mma_m16n8k16_fragments", "wmma_tiled_matmul"):
        for k, v in r.get(part, {}).items():
            rows.append((part, k, v))
    for k, v in r.get("sass_hmma_count", {}).items():
        rows.append(("sass_hmma_count", k, v))
    return _df(rows, ["check", "quantity", "value"])


def _t_issue7(r, root=None):
    new = load("tensor_cores_throughput", root) or {}
    nt = new.get("tflops", {})
    return _df([(p, v, nt.get(p)) for p, v in r.get("tflops", {}).items()],
               ["precision", "undated (TFLOP/s)", f"dated run, n = 8192 ({new.get('measured_at', '-')[:10]})"])


def _t_allreduce(r):
    from gpulab import results_views
    v = results_views.allreduce(r)
    if not v:
        return None
    us = 1e6
    rows = [("small message, one call between events (upper bound)", v["small_message_per_call_s"] * us,
             v["alpha_per_call_s"] * us),
            ("small message, back to back", v["small_message_back_to_back_s"] * us,
             v["alpha_back_to_back_s"] * us),
            ("small message, replayed from a CUDA graph", v["small_message_graph_s"] * us,
             v["alpha_graph_s"] * us)]
    return _df(rows, ["timing", "time per all-reduce (us)", "alpha per ring step (us)"])


def _t_launch(r):
    from gpulab import results_views
    lp = results_views.launch_parts(r)
    if not lp:
        return None
    names = [("host_launch_s", "host launch cost (enqueue only)"),
             ("gpu_single_behind_long_s", "GPU time, one kernel queued behind a long one"),
             ("gpu_back_to_back_s", "GPU time per kernel, many back to back"),
             ("ncu_gpu_time_duration_s", "GPU time, Nsight Compute gpu__time_duration"),
             ("end_to_end_s", "end to end: launch + synchronize (host clock)"),
             ("events_idle_stream_s", "events on an idle stream (holds the host launch path: "
                                      "not a GPU time)")]
    fws = [k for k in lp if k != "labels"]
    rows = [(text, *[lp[f][k] * 1e6 if lp[f].get(k) is not None else None for f in fws])
            for k, text in names if any(lp[f].get(k) is not None for f in fws)]
    return _df(rows, ["what the figure is", *[f"{f} (us)" for f in fws]])


def _t_divergence(r):
    from gpulab import results_views
    rows = results_views.divergence_paths(r) or []
    if not rows:
        return None
    iters = sorted({int(k.rsplit("iters", 1)[1]) for x in rows for k in x if k.startswith("divergent_ratio")})
    cols = ["paths P", *[f"time ratio, {i} it." for i in iters], "ncu time ratio",
            "ncu inst. ratio", "threads per inst.", "pred-on per inst."]
    return _df([(x["paths"], *[x.get(f"divergent_ratio_iters{i}") for i in iters],
                 x.get("ncu_time_ratio"), x.get("ncu_inst_executed_ratio"), x.get("ncu_threads_per_inst"),
                 x.get("ncu_pred_on_threads_per_inst")) for x in rows], cols)


def _t_latency(r):
    from gpulab import results_views
    lv = results_views.latency_levels(r)
    rows = results_views.latency_ladder(r) or []
    if not lv:
        return None
    level = {}
    for k in ("L1", "L2", "DRAM"):
        for b in lv.get(f"sizes_{k}", []):
            level[b] = {"DRAM": "HBM"}.get(k, k)
    return _df([(_size(x["working_set_bytes"]), level.get(x["working_set_bytes"], "between"),
                 x["ns"], x["ns_min_repeat"], x["ns_max_repeat"], x["cycles_at_max_clock"])
                for x in rows] + [("shared", "shared", lv["shared"], None, None, lv["cycles_shared"])],
               ["working set", "level", "ns (median)", "min", "max", "cycles"])


def _t_sgemm(r):
    steps = r.get("steps") or {}
    rows = [(k, v.get("gflops", 0) / 1e3, v.get("fraction_of_torch"), v.get("registers"), v.get("ok"))
            for k, v in steps.items()]
    t = r.get("torch_before") or {}
    if t.get("gflops"):
        rows.append(("torch fp32 (TF32 off)", t["gflops"] / 1e3, 1.0, None, t.get("ok")))
    return _df(rows, ["kernel", "TFLOP/s", "of torch", "registers", "correct"])


def _h_sgemm(r):
    steps = {k: v for k, v in (r.get("steps") or {}).items() if v.get("gflops")}
    t = (r.get("torch_before") or {}).get("gflops")
    if not steps or not t:
        return []
    best = max(steps, key=lambda k: steps[k]["gflops"])
    return [Headline("best sgemm step / torch fp32", steps[best]["gflops"] / t,
                     f"fp32 matmul, M = N = K = {r.get('size')}, kernel GPU time (CUDA events, "
                     f"back-to-back launches): the best step, {best}, "
                     f"{steps[best]['gflops'] / 1e3:.1f} TFLOP/s = {_pct(steps[best]['gflops'] / t)} "
                     f"of torch fp32 with TF32 off ({t / 1e3:.1f} TFLOP/s). Every result checked "
                     f"against a float64 matmul: "
                     f"{'all correct' if all(v.get('ok') for v in steps.values()) else 'SOME WRONG'}.",
                     against="torch fp32, TF32 off")]


def _f_sgemm(r, ax):
    steps = {k: v for k, v in (r.get("steps") or {}).items() if v.get("gflops")}
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


def _h_perf_model(r):
    summ = r.get("summary") or {}
    out = []
    for role in ("calibrate", "holdout"):
        x = summ.get(role)
        if x and x.get("kernels"):
            out.append(Headline(f"perf model, {role} kernels within 2x", x["within_2x"] / x["kernels"],
                                f"{role}: {x['kernels']} kernels, median |predicted / measured - 1| "
                                f"{_pct(x['median_abs_error'])}, {x['within_2x']} within 2x "
                                f"(measured: Nsight Compute gpu__time_duration on the H200).",
                                score=False))
    return out


def _f_perf_model(r, ax):
    try:
        from gpulab.perf import plot as perf_plot
    except ImportError:
        return None
    perf_plot.predicted_vs_measured(r, ax=ax)
    return ax


def _f_latency_ns(r, ax):
    from gpulab import results_views
    rows = results_views.latency_ladder(r) or []
    lv = results_views.latency_levels(r) or {}
    if not rows:
        return None
    x = [g["working_set_bytes"] for g in rows]
    y = [g["ns"] for g in rows]
    err = [[g["ns"] - g["ns_min_repeat"] for g in rows], [g["ns_max_repeat"] - g["ns"] for g in rows]]
    ax.errorbar(x, y, yerr=err, fmt="o-", capsize=3, label="global loads (median, min to max)")
    for k, c in (("L1", "C1"), ("L2", "C2"), ("DRAM", "C3")):
        if k in lv:
            sz = lv[f"sizes_{k}"]
            ax.hlines(lv[k], min(sz), max(sz), colors=c, lw=6, alpha=0.35,
                      label=f"{'HBM' if k == 'DRAM' else k} level: {lv[k]:.0f} ns")
    ax.axhline(lv["shared"], color="C4", ls="--", lw=1, label=f"shared memory: {lv['shared']:.0f} ns")
    ax.set_xscale("log", base=2)
    from matplotlib.ticker import FuncFormatter
    ax.xaxis.set_major_formatter(FuncFormatter(lambda b, _: _size(int(b)).replace(" ", "")))
    ax.set_xlabel("working set")
    ax.set_ylabel("ns per dependent load")
    ax.set_ylim(0, None)
    ax.legend(loc="upper left")
    ax.figure.set_size_inches(6.6, 3.8)
    return ax


def _f_launch_parts(r, ax):
    t = _t_launch(r)
    if t is None:
        return None
    import matplotlib.pyplot as plt
    short = ["host launch", "GPU, behind long", "GPU, back to back", "GPU, ncu", "end to end",
             "events, idle stream"]
    full = [x for x in ("host launch cost", "GPU time, one", "GPU time per", "GPU time, Nsight",
                        "end to end", "events on an")]
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


def _f_strided(r, ax):
    from gpulab import results_views
    rows = results_views.strided_copy(r) or []
    if not rows:
        return None
    st = [x["stride"] for x in rows]
    ax.plot(st, [x["useful_GBps"] for x in rows], "o-", color="C0", label="useful GB/s (events)")
    ax.set_xscale("log", base=2)
    from matplotlib.ticker import FuncFormatter
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("stride (elements of 4 bytes)")
    ax.set_ylabel("useful GB/s", color="C0")
    if all(x.get("dram_bytes_read_per_load") for x in rows):
        a2 = ax.twinx()
        a2.plot(st, [x["dram_bytes_read_per_load"] for x in rows], "s--", color="C3",
                label="HBM bytes per load (ncu)")
        a2.plot(st, [x["l2_bytes_read_per_load"] for x in rows], "^:", color="C2",
                label="L2 bytes per load (ncu)")
        a2.set_ylabel("bytes fetched per 4-byte load")
        a2.spines["right"].set_visible(True)
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = a2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
                  frameon=False)
    ax.figure.set_size_inches(6.6, 4.2)
    return ax


def _f_allreduce(r, ax):
    rows = r.get("rows") or []
    if not rows:
        return None
    labels = r.get("labels") or {}
    for k, st, name in (("time_s", "o-", "one call between events"),
                        ("back_to_back_s", "s-", "back to back"), ("graph_s", "^-", "CUDA graph")):
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


def _f_stalls(r, ax):
    from gpulab.plots import amdahl as aplots
    aplots.stall_shares(r, ax=ax)
    ax.figure.set_size_inches(6.6, 0.9 * len(r.get("kernels", {})) + 2.2)
    return ax


def _f_reduction(r, ax):
    from gpulab.plots import reduction_bench
    reduction_bench.plot(r, ax=ax)
    best = (r.get("device_sum") or {}).get("best") or {}
    if best.get("GBps"):
        ax.axhline(best["GBps"], color="C2", lw=1.5, label="ours, full-device sum")
        ax.legend(loc="center right")
    return ax


def _f_bandwidth(r, ax):
    import matplotlib.pyplot as plt

    from gpulab.plots import memory
    s = r.get("strided") or []
    if s:
        memory.plot_bandwidth_vs_stride([x["stride"] for x in s], [x["useful_GBps"] for x in s],
                                        copy_gbps=(r.get("copy") or {}).get("best_GBps"), ax=ax)
    bars = {}
    for k, v in ((r.get("copy") or {}).get("kernels") or {}).items():
        bars[f"copy, {k}"] = v["GBps"]
    t = (r.get("copy") or {}).get("torch") or {}
    if "GBps" in t:
        bars["torch copy"] = t["GBps"]
    for k, v in ((r.get("transpose") or {}).get("kernels") or {}).items():
        bars[k] = v["GBps"]
    if bars:
        _, ax2 = plt.subplots(figsize=(6.6, 0.35 * len(bars) + 1))
        ax2.barh(list(bars), list(bars.values()))
        ax2.invert_yaxis()
        ax2.set_xlabel("GB/s (bytes read + written / time)")
    return ax


def _f_divergence(r, ax):
    from gpulab.plots import masks
    ax.figure.set_size_inches(6.6, 5.4)
    masks.paths_timing(r, ax=ax)
    return ax


def _f_occupancy(r, ax):
    from collections import Counter
    cnt = Counter((c["driver"], c["gpulab"]) for c in r.get("configs", [])
                  if c.get("driver") is not None and c.get("gpulab") is not None)
    if not cnt:
        return None
    xs, ys, ns = zip(*[(d, g, n) for (d, g), n in cnt.items()])
    ax.scatter(xs, ys, s=[10 + 3 * np.sqrt(n) * 4 for n in ns], alpha=0.6)
    m = max(max(xs), max(ys))
    ax.plot([0, m], [0, m], "k:", lw=1, label="gpulab = driver")
    ax.set_xlabel("blocks per SM, driver (cuOccupancyMaxActiveBlocksPerMultiprocessor)")
    ax.set_ylabel("blocks per SM, gpulab")
    ax.legend()
    return ax


def _f_amdahl(r, ax):
    from gpulab.plots import amdahl as aplots
    fit, ps, t, used, _ = amdahl_fit(r)
    aplots.fit_plot(fit, ps, t, used, ax=ax)
    return ax


def _throughput_record(r):
    from gpulab.models import mma
    sweep = {p: {int(n): float(t) for n, t in v.items()} for p, v in r.get("sweep_tflops", {}).items()} or None
    return mma.ThroughputRecord(r.get("source", "?"), r.get("device", "?"), r.get("measured_at", "?"),
                                r.get("method", "?"), r.get("tflops", {}), None, sweep)


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


# --------------------------------------------------------------------------- the sections

@dataclass
class Section:
    """How one results file is presented."""

    name: str                      # file name without .json
    title: str
    script: str                    # the benchmark that writes it
    run: str                       # the command (from the repository root)
    headlines: Callable
    figure: Callable | None = None
    table: Callable | None = None
    needs: str = "an NVIDIA GPU"
    targets: list = field(default_factory=list)   # headline "what"s that carry a target


SECTIONS = {s.name: s for s in [
    Section("occupancy_vs_driver", "Occupancy calculator against the CUDA driver",
            "benchmarks/occupancy_vs_driver.py", "python benchmarks/occupancy_vs_driver.py",
            _h_occupancy, _f_occupancy, _t_occupancy, targets=["occupancy calculator = driver"]),
    Section("fidelity", "The simulator against Nsight Compute",
            "benchmarks/fidelity/ncu_vs_sim.py", "the steps in benchmarks/fidelity/README.md",
            _h_fidelity, None, _t_fidelity, needs="an NVIDIA GPU and Nsight Compute (ncu)"),
    Section("divergence_paths", "Divergence: time against the number of paths",
            "benchmarks/divergence_paths.py",
            "python benchmarks/divergence_paths.py; python benchmarks/ncu_runs.py divergence",
            _h_divergence, _f_divergence, _t_divergence,
            needs="an NVIDIA GPU (Nsight Compute, ncu, for the instruction counts)"),
    Section("bandwidth", "Copies, strided reads, transposes and a tiled matmul",
            "benchmarks/bandwidth.py", "python benchmarks/bandwidth.py",
            _h_bandwidth, _f_bandwidth, needs="an NVIDIA GPU (torch for the peers)",
            targets=["device copy vs torch copy", "padded transpose vs copy",
                     "tiled fp32 matmul / torch fp32"]),
    Section("transpose_variants", "Padded-transpose variants",
            "benchmarks/transpose_variants.py", "python benchmarks/transpose_variants.py",
            _h_transpose_variants, _f_transpose_variants, targets=["transpose variant vs copy"]),
    Section("notebooks_gpu", "Every chapter on the GPU",
            "benchmarks/run_notebooks.py", "python benchmarks/run_notebooks.py",
            _h_notebooks, None, _t_notebooks),
    Section("notebooks_cpu", "Every chapter on the CPU simulator",
            "benchmarks/run_notebooks.py", "python benchmarks/run_notebooks.py (without a GPU)",
            _h_notebooks, None, _t_notebooks, needs="a CPU"),
    Section("latency", "The latency ladder (pointer chasing)",
            "benchmarks/latency.py", "python benchmarks/latency.py", _h_latency, _f_latency_ns,
            _t_latency),
    Section("reduction", "Reductions: tree against shuffle, and a full-device sum",
            "benchmarks/reduction.py", "python benchmarks/reduction.py",
            _h_reduction, _f_reduction, needs="an NVIDIA GPU (cupy and torch for the peers)",
            targets=["full-device sum vs cupy.sum", "full-device sum vs torch.sum",
                     "per-block shuffle / tree"]),
    Section("tensor_cores_mma", "Tensor cores from numba against gpulab's emulation",
            "benchmarks/tensor_cores/run_mma.py", "python benchmarks/tensor_cores/run_mma.py",
            _h_mma, None, _t_mma, needs="an NVIDIA GPU of sm_80 or newer, nvcc and cffi"),
    Section("tensor_cores_throughput", "Matmul throughput per precision against the datasheet",
            "benchmarks/tensor_cores/matmul_throughput.py",
            "python benchmarks/tensor_cores/matmul_throughput.py", _h_throughput, _f_throughput,
            needs="an NVIDIA GPU and torch"),
    Section("tensor_cores_throughput_issue7", "Superseded: undated throughput figures",
            "none (figures recorded without sizes or a timing method)", "-", _h_issue7, None,
            _t_issue7),
    Section("launch_overhead", "Launch overhead as serial time",
            "benchmarks/launch_overhead.py",
            "python benchmarks/launch_overhead.py; python benchmarks/ncu_runs.py launch",
            _h_launch, _f_launch_parts, _t_launch,
            needs="an NVIDIA GPU (torch for the peer; ncu for gpu__time_duration)"),
    Section("amdahl_gpu", "Amdahl's law on a GPU",
            "benchmarks/amdahl_gpu.py", "python benchmarks/amdahl_gpu.py", _h_amdahl, _f_amdahl),
    Section("allreduce_alpha_beta", "All-reduce: alpha and B",
            "benchmarks/allreduce_alpha_beta.py", "python benchmarks/allreduce_alpha_beta.py",
            _h_allreduce, _f_allreduce, _t_allreduce, needs="2 or more NVIDIA GPUs (torch with NCCL)"),
    Section("strided_copy", "Strided copy past stride 8, with HBM bytes per load",
            "benchmarks/strided_copy.py", "python benchmarks/strided_copy.py; "
            "python benchmarks/ncu_runs.py strided", _h_strided, _f_strided, _t_strided,
            needs="an NVIDIA GPU and Nsight Compute (ncu)"),
    Section("stall_reasons", "Stall reasons: one kernel for each",
            "benchmarks/stall_reasons.py", "python benchmarks/ncu_runs.py stalls", _h_stalls, _f_stalls,
            _t_stalls, needs="an NVIDIA GPU and Nsight Compute (ncu)"),
    Section("reduction_in_flight", "Reductions: bytes in flight (derived)",
            "benchmarks/reduction_in_flight.py", "python benchmarks/reduction_in_flight.py",
            _h_in_flight, None, _t_in_flight, needs="reduction.json and latency.json"),
    Section("occupancy_vs_cuda_occupancy_h", "Occupancy calculator against cuda_occupancy.h",
            "benchmarks/occupancy_vs_cuda_occupancy_h.py",
            "python benchmarks/occupancy_vs_cuda_occupancy_h.py", _h_occ_header, None, _t_occ_header,
            needs="g++ and cuda_occupancy.h (CUDA toolkit or the nvidia-cuda-runtime wheel)",
            targets=["occupancy calculator = cuda_occupancy.h"]),
    Section("int4_mma_ptx", "INT4 and binary tensor-core PTX on sm_80 and sm_90",
            "benchmarks/int4_mma_ptx.py", "python benchmarks/int4_mma_ptx.py", _h_int4, None, _t_int4,
            needs="the CUDA toolkit (ptxas, cuobjdump)"),
    Section("sgemm", "Single-precision matmul, step by step",
            "benchmarks/sgemm.py", "python benchmarks/sgemm.py", _h_sgemm, _f_sgemm, _t_sgemm,
            needs="an NVIDIA GPU and torch", targets=["best sgemm step / torch fp32"]),
    Section("perf_model", "Predicted against measured kernel time",
            "benchmarks/perf_model.py",
            "the steps in benchmarks/perf_model.py's docstring (gpu under ncu, merge, predict)",
            _h_perf_model,
            _f_perf_model, needs="an NVIDIA GPU and Nsight Compute (ncu)"),
    Section("sim_speed", "gpulab's simulator against Numba's (CPU)",
            "benchmarks/sim_speed.py", "python benchmarks/sim_speed.py", _h_sim_speed, _f_sim_speed,
            needs="a CPU (no GPU)"),
]}


def uncovered(root=None) -> list[str]:
    """Results files present that no section describes."""
    return [n for n in available(root) if n not in SECTIONS]


def missing_message(name: str) -> str:
    s = SECTIONS.get(name)
    if s is None:
        return f"No {name}.json in this copy."
    return (f"No benchmarks/results/{name}.json in this copy. To write it, run\n    {s.run}\n"
            + _wrap(f"on {s.needs}, then re-run this page."))


def headlines(name: str, res: dict | None, root=None) -> list[Headline]:
    """The headline figures of one results file (empty when the file is missing)."""
    if not res:
        return []
    s = SECTIONS.get(name)
    if s is None:
        return []
    if name == "tensor_cores_throughput_issue7":
        return _h_issue7(res, root)
    return s.headlines(res)


def table(name: str, res: dict | None, root=None):
    """A pandas DataFrame for files shown as a table, else None."""
    s = SECTIONS.get(name)
    if not res or s is None or s.table is None:
        return None
    if name == "tensor_cores_throughput_issue7":
        return _t_issue7(res, root)
    return s.table(res)


def figure(name: str, res: dict | None, ax=None):
    """Draw the file's (first) figure; the Axes, or None without data or figure. The label
    (where, with what, when) is printed by :func:`show`, not drawn: a caption carries it."""
    s = SECTIONS.get(name)
    if not res or s is None or s.figure is None:
        return None
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 3.8))
    out = s.figure(res, ax)
    if out is None and not ax.has_data():
        plt.close(ax.figure)
    return out


def figures(name: str, res: dict | None) -> list:
    """Every matplotlib Figure the file's section draws (some draw two), in order."""
    import matplotlib.pyplot as plt
    before = set(plt.get_fignums())
    if figure(name, res) is None:
        for n in set(plt.get_fignums()) - before:
            plt.close(n)
        return []
    figs = [plt.figure(n) for n in sorted(set(plt.get_fignums()) - before)]
    for f in figs:
        _legible(f)
    return figs


def _legible(fig) -> None:
    """No text below the book's minimum size, and no figure wider than the column."""
    from matplotlib.text import Text

    from gpulab.plots.style import MIN_FONT_PT
    from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter
    for ax in fig.axes:                       # log axes: plain numbers (no small superscripts)
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_major_formatter(), LogFormatter):
                axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                axis.set_minor_formatter(NullFormatter())
    for t in fig.findobj(Text):
        if t.get_text() and t.get_fontsize() < MIN_FONT_PT:
            t.set_fontsize(MIN_FONT_PT)
    w, h = fig.get_size_inches()
    if w > COLUMN_IN:
        fig.set_size_inches(COLUMN_IN, h)
    for _ in range(3):                        # the drawn extent, labels included, fits too
        extent = fig.get_tightbbox(fig.canvas.get_renderer()).width
        w, h = fig.get_size_inches()
        if extent <= COLUMN_IN:
            break
        fig.set_size_inches(w - (extent - COLUMN_IN) - 0.05, h)


def _cell(x) -> str:
    """A table value as the book shows it: 3 significant figures, thousands separated."""
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return ""
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if x == int(x) and abs(x) < 1e6:
            return f"{int(x):,}"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.3g}"
    return str(x)


def display_table(df):
    """The table as the book shows it: no pandas index, values through :func:`_cell`
    (a Styler, which renders as HTML in a notebook)."""
    if df is None or not hasattr(df, "style"):
        return df
    return df.style.hide(axis="index").format(_cell)


def text_width(df) -> int:
    """The narrowest width, in characters, a table can take in the book: per column its longest
    unbreakable word (header included, values as shown), plus 3 characters of padding."""
    cols = [[str(c)] + [_cell(v) for v in df[c]] for c in df.columns]
    return sum(max(len(w) for v in col for w in (v.split() or [""])) + 3 for col in cols)


def scorecard(root=None):
    """Every target the issues set, with the measured value and met/MISSED, or 'not measured'
    when the file is absent; plus the other headline ratios. A pandas DataFrame."""
    rows = []
    for name, s in SECTIONS.items():
        res = load(name, root)
        if res is None:
            for what in s.targets:
                rows.append((what, None, "", "", "not measured", f"{name}.json absent"))
            continue
        hs = headlines(name, res, root)
        seen = {h.what for h in hs}
        for h in hs:
            if h.score:
                rows.append((h.what, None if h.value is None else round(h.value, 4), h.against,
                             h.target_text, h.verdict or "-", f"{name}.json"))
        for what in s.targets:
            if what not in seen:
                rows.append((what, None, "", "", "not measured", f"not in {name}.json"))
    return _df(rows, ["check", "measured (ratio)", "relative to", "target", "verdict", "from"])


def provenance(root=None):
    """One row per results file: where, with what and when it was measured (from the file)."""
    rows = []
    for name in available(root):
        res = load(name, root)
        rows.append((f"{name}.json", label(name, res) if isinstance(res, dict) else "unreadable"))
    return _df(rows, ["file", "measured on, with, when"])


def show(name: str, root=None, fig: str | None = None):
    """Print one file's label, how to rerun it, its method and headlines (lines of at most
    :data:`WIDTH` characters), display its table and draw its figures. With ``fig``, the figures
    are glued as ``fig``, ``fig-b``... for numbered, captioned ``{glue:figure}`` blocks (and
    closed). Returns the headlines (empty when the file is missing)."""
    res = load(name, root)
    if res is None:
        print(missing_message(name))
        return []
    s = SECTIONS.get(name)
    print(_wrap("measured on: " + label(name, res), rest="  "))
    if s is None:
        print(_wrap(f"No section describes {name}.json; its top-level keys: {', '.join(res)}"))
        return []
    if s.run == "-":
        print("rerun: not possible (how it was measured was not recorded)")
    else:
        print(_wrap(f"rerun: {s.run} (needs {s.needs})", rest="  "))
    if isinstance(res.get("method"), str):
        print(_wrap("method: " + res["method"], rest="  "))
    hs = headlines(name, res, root)
    for h in hs:
        print(_wrap(str(h), first="- ", rest="  "))
    t = table(name, res, root)
    if t is not None:
        try:
            from IPython.display import display
            display(display_table(t))
        except ImportError:  # pragma: no cover
            print(t)
    figs = figures(name, res)
    if fig:
        from gpulab.show import glue_figure
        for i, f in enumerate(figs):
            glue_figure(fig if i == 0 else f"{fig}-{'bcdefgh'[i - 1]}", f)
    return hs
