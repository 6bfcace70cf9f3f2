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
           "missing_message"]

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
        env["cpu"] = f"{res['machine']['cpus']} CPU cores ({res['machine'].get('platform', '?')})"
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


def _wrap(text: str, width: int = 95) -> str:
    import textwrap
    return "\n".join(textwrap.wrap(text, width))


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
                            0.8, ">= 80% of the copy", against=f"best copy kernel, same run ({best_k})"))
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
                                f"{iters}-iteration bodies: {pmax} divergent paths per warp take "
                                f"{ratio:.1f}x the time of 1 path (model T_warp = sum of T_p: "
                                f"{pmax}x){u}.", against=f"1 path; model: {pmax}x"))
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
                     f"gpulab's occupancy calculator against cuOccupancyMaxActiveBlocksPerMultiprocessor: "
                     f"{agree} of {n} configurations give the same blocks per SM ({kinds}); "
                     f"{len(r.get('mismatches', []))} mismatches recorded; {len(same)} of {len(listed)} "
                     f"device limits equal gpulab's table.", 1.0, "all configurations agree",
                     against="cuOccupancyMaxActiveBlocksPerMultiprocessor")]


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
    out = []
    nb, th = r.get("numba_tiny", {}), r.get("torch_add_", {})
    if nb.get("host_s_per_launch"):
        tail = ""
        if th.get("host_s_per_launch"):
            tail = (f"; a small torch op {th['host_s_per_launch'] * 1e6:.1f} us "
                    f"({nb['host_s_per_launch'] / th['host_s_per_launch']:.1f}x less)")
        out.append(Headline("numba launch, host side (s)", nb["host_s_per_launch"],
                            f"A numba launch costs the host {nb['host_s_per_launch'] * 1e6:.1f} us"
                            f"{tail}.", score=False))
    lp = (r.get("launch_parts") or {}).get("numba")
    if lp:
        ncu = (lp.get("ncu_gpu_time_duration") or {}).get("gpu_time_duration_s_median")
        out.append(Headline("numba tiny kernel, GPU time (s)", lp["gpu_single_behind_long_s"],
                            f"The tiny kernel's own GPU time: {lp['gpu_single_behind_long_s'] * 1e6:.1f} us "
                            f"between events queued behind a long kernel, "
                            f"{lp['gpu_back_to_back_s'] * 1e6:.2f} us each back to back"
                            + (f", {ncu * 1e6:.2f} us by ncu's gpu__time_duration" if ncu else "")
                            + f"; end to end (launch + sync) {lp['end_to_end_s'] * 1e6:.1f} us.",
                            score=False))
    ch = r.get("chain") or []
    if ch:
        small = min(ch, key=lambda x: x["n"])
        out.append(Headline("fused / unfused chain", small["numba_unfused_s"] / small["numba_fused_s"],
                            f"A chain of {small['k']} element-wise steps on {small['n']:,} floats: "
                            f"{small['k']} launches {small['numba_unfused_s'] * 1e3:.2f} ms, one fused "
                            f"launch {small['numba_fused_s'] * 1e3:.3f} ms "
                            f"({small['numba_unfused_s'] / small['numba_fused_s']:.0f}x).",
                            against=f"one fused launch, n = {small['n']:,}"))
    tl = r.get("timelines") or {}
    if "serial" in tl and "overlapped" in tl:
        s, o = tl["serial"]["summary"], tl["overlapped"]["summary"]
        out.append(Headline("kernel share of the pipeline", s["kernel_share"],
                            f"Pipeline timeline: the kernel lane is busy {_pct(s['kernel_share'])} of "
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
        return [Headline("issue 7 figures", None, "Earlier figures; no newer run to compare with.",
                         score=False)]
    pairs = [(p, r["tflops"][p], new["tflops"][p]) for p in r.get("tflops", {}) if p in new.get("tflops", {})]
    txt = "; ".join(f"{p} {o:.0f} -> {n:.0f} ({n / o - 1:+.0%})" for p, o, n in pairs)
    worst = min(pairs, key=lambda x: x[2] / x[1])
    return [Headline("issue 7 vs this run", worst[2] / worst[1],
                     f"Issue 7's one-off figures against this run's n = 8192 matmuls (TFLOP/s): {txt}. "
                     f"Issue 7 recorded neither sizes nor timing method, so the differences are not "
                     f"explained.", against=f"issue 7 figures; lowest ratio ({worst[0]})")]


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
    big = max(g, key=lambda x: x["working_set_bytes"])
    levels = "; ".join(f"{k} {lv[k]:.0f} ns" for k in ("L1", "L2", "DRAM") if k in lv)
    return [Headline("latency ladder", big.get("ns"),
                     f"Dependent loads: shared memory {r['shared']['ns']:.1f} ns = "
                     f"{r['shared']['cycles_at_max_clock']:.0f} cycles; {levels}; "
                     f"a {big['working_set_bytes'] / 2**20:.0f} MiB working set "
                     f"{big.get('ns', float('nan')):.0f} ns = {big['cycles_at_max_clock']:.0f} cycles.",
                     score=False)]


def _h_allreduce(r):
    fr = r.get("fit", {})
    out = [Headline("all-reduce alpha, B", fr.get("alpha_s"),
                    f"alpha = {fr.get('alpha_s', float('nan')) * 1e6:.1f} us per ring step, "
                    f"B = {fr.get('bandwidth_Bps', float('nan')) / 1e9:.0f} GB/s each way.", score=False)]
    if fr.get("alpha_graph_s"):
        out.append(Headline("all-reduce alpha from CUDA-graph replay", fr["alpha_graph_s"],
                            f"Small all-reduces replayed from a CUDA graph: "
                            f"{fr['small_message_graph_s'] * 1e6:.1f} us each (alpha = "
                            f"{fr['alpha_graph_s'] * 1e6:.1f} us per ring step); back to back from "
                            f"Python {fr.get('small_message_back_to_back_s', float('nan')) * 1e6:.1f} us; "
                            f"one call between events {fr['small_message_time_s'] * 1e6:.1f} us.",
                            score=False))
    p2p = {k: v for k, v in (r.get("p2p_copy") or {}).items() if isinstance(v, dict) and "GBps" in v}
    if p2p:
        out.append(Headline("peer-to-peer copy", max(v["GBps"] for v in p2p.values()),
                            "Peer-to-peer copy: " + ", ".join(f"{k.replace('_', ' ')} {v['GBps']:.0f} GB/s"
                                                              for k, v in p2p.items()) + ".",
                            score=False))
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
    cols = ["stride", "time_s", "useful_GBps", "dram_bytes_read_per_load", "l2_bytes_read_per_load",
            "l1_sectors_per_request", "dram_read_GBps_ncu"]
    return _df([tuple(x.get(c) for c in cols) for x in rows], cols)


def _h_stalls(r):
    from gpulab import results_views
    rows = results_views.stall_reasons(r) or []
    return [Headline(f"stall kernel {x['kernel']}", x["built_for_share"],
                     f"{x['kernel']}: top stall reason {x['top_reason']} (built for {x['built_for']}, "
                     f"{_pct(x['built_for_share'])} of all stall reasons).", score=False) for x in rows]


def _t_stalls(r):
    from gpulab import results_views
    rows = results_views.stall_reasons(r) or []
    cols = ["kernel", "built_for", "top_reason", "long_scoreboard_per_issue", "barrier_per_issue",
            "mio_throttle_per_issue", "short_scoreboard_per_issue", "built_for_share"]
    return _df([tuple(x.get(c) for c in cols) for x in rows], cols)


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
    return _df(list(v.items()), ["quantity (see reduction_in_flight.json: measured vs derived)", "value"])


def _h_occ_header(r):
    from gpulab import results_views
    rows = results_views.occupancy_vs_header(r) or []
    if not rows:
        return []
    agree, cases = sum(x["agree"] for x in rows), sum(x["cases"] for x in rows)
    return [Headline("occupancy calculator = cuda_occupancy.h", agree / cases,
                     f"gpulab's occupancy against NVIDIA's cuda_occupancy.h: {agree:,} of {cases:,} "
                     f"cases agree over {', '.join(x['arch'] for x in rows)} (no GPU run: the header "
                     f"with the Programming Guide's limits).", 1.0, "every case",
                     against="cudaOccMaxActiveBlocksPerMultiprocessor")]


def _t_occ_header(r):
    from gpulab import results_views
    rows = results_views.occupancy_vs_header(r) or []
    cols = ["arch", "cases", "agree", "agreement", "cases_with_a_block", "device_limits_equal"]
    return _df([tuple(x.get(c) for c in cols) for x in rows], cols)


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
    cols = ["arch", "variant", "accepted", "tensor_sass", "tensor_sass_count", "sass_instructions"]
    return _df([tuple(x.get(c) for c in cols) for x in rows], cols)


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
        ax.legend(fontsize=8)
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
    return _df(rows, ["launch", "ld sectors/req ncu", "sim", "shared ld wavefronts/inst ncu", "sim",
                      "ratios equal", "exact counters equal"])


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
               ["precision", "issue 7 (TFLOP/s)", f"this run, n=8192 ({new.get('measured_at', '-')[:10]})"])


def _t_allreduce(r):
    return _df(list((r.get("fit") or {}).items()), ["quantity", "value"])


def _f_reduction(r, ax):
    from gpulab.plots import reduction_bench
    reduction_bench.plot(r, ax=ax)
    best = (r.get("device_sum") or {}).get("best") or {}
    if best.get("GBps"):
        ax.axhline(best["GBps"], color="C2", lw=1.5, label="ours, full-device sum")
        ax.legend(fontsize=8, loc="center right")
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
        _, ax2 = plt.subplots(figsize=(7, 0.35 * len(bars) + 1))
        ax2.barh(list(bars), list(bars.values()))
        ax2.invert_yaxis()
        ax2.set_xlabel("GB/s (bytes read + written / time)")
        ax2.set_title(_wrap(label("bandwidth", r)), fontsize=8)
    return ax


def _f_divergence(r, ax):
    from gpulab.plots import masks
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
    ax.legend(fontsize=8)
    return ax


def _f_launch(r, ax):
    from gpulab.plots import amdahl as aplots
    if r.get("chain"):
        aplots.launch_chain(r["chain"], ax=ax)
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
        _, ax2 = plt.subplots(figsize=(6.4, 3.6))
        for p, pts in rec.sweep.items():
            n = sorted(pts)
            ax2.plot(n, [pts[i] for i in n], "o-", label=p)
        ax2.set_xscale("log", base=2)
        ax2.set_yscale("log")
        ax2.set_xlabel("n (square n x n x n matmul)")
        ax2.set_ylabel("TFLOP/s")
        ax2.legend(fontsize=8)
        ax2.set_title(_wrap(label("tensor_cores_throughput", r)), fontsize=8)
    return ax


def _f_sim_speed(r, ax):
    ks = r.get("kernels", {})
    names = list(ks)
    x = np.arange(len(names))
    ax.bar(x - 0.2, [ks[k]["numba_sim_s"] for k in names], 0.4, label="Numba's simulator")
    ax.bar(x + 0.2, [ks[k]["gpulab_s"] for k in names], 0.4, label="gpulab's simulator")
    ax.set_xticks(x, names, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("seconds per launch (median)")
    ax.legend(fontsize=8)
    return ax


def _f_latency(r, ax):
    from gpulab.plots import memory
    return memory.plot_latency(r, ax=ax)


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
            "benchmarks/fidelity/ncu_vs_sim.py", "see benchmarks/fidelity/README.md (needs ncu)",
            _h_fidelity, None, _t_fidelity, needs="an NVIDIA GPU and Nsight Compute (ncu)"),
    Section("divergence_paths", "Divergence: time against the number of paths",
            "benchmarks/divergence_paths.py", "python benchmarks/divergence_paths.py",
            _h_divergence, _f_divergence),
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
            "benchmarks/latency.py", "python benchmarks/latency.py", _h_latency, _f_latency),
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
    Section("tensor_cores_throughput_issue7", "Issue 7's earlier throughput figures",
            "none (figures copied from issue 7)", "-", _h_issue7, None, _t_issue7),
    Section("launch_overhead", "Launch overhead as serial time",
            "benchmarks/launch_overhead.py", "python benchmarks/launch_overhead.py",
            _h_launch, _f_launch, needs="an NVIDIA GPU (torch for the peer)"),
    Section("amdahl_gpu", "Amdahl's law on a GPU",
            "benchmarks/amdahl_gpu.py", "python benchmarks/amdahl_gpu.py", _h_amdahl, _f_amdahl),
    Section("allreduce_alpha_beta", "All-reduce: alpha and B",
            "benchmarks/allreduce_alpha_beta.py", "python benchmarks/allreduce_alpha_beta.py",
            _h_allreduce, None, _t_allreduce, needs="2 or more NVIDIA GPUs"),
    Section("strided_copy", "Strided copy past stride 8, with HBM bytes per load",
            "benchmarks/strided_copy.py", "python benchmarks/strided_copy.py; "
            "python benchmarks/ncu_runs.py strided", _h_strided, None, _t_strided,
            needs="an NVIDIA GPU and Nsight Compute (ncu)"),
    Section("stall_reasons", "Stall reasons: one kernel for each",
            "benchmarks/stall_reasons.py", "python benchmarks/ncu_runs.py stalls", _h_stalls, None,
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
    return (f"No benchmarks/results/{name}.json in this copy: run `{s.run}` on {s.needs} "
            f"(it writes the file), then re-run this page.")


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
    """Draw the file's figure (titled with its label); the Axes, or None without data/figure."""
    s = SECTIONS.get(name)
    if not res or s is None or s.figure is None:
        return None
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    out = s.figure(res, ax)
    ax.set_title(_wrap(label(name, res)), fontsize=8)
    return out


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
        rows.append((f"{name}.json", label(name, res) if isinstance(res, dict) else "unreadable",
                     SECTIONS[name].script if name in SECTIONS else "?"))
    return _df(rows, ["file", "measured on, with, when", "written by"])


def show(name: str, root=None):
    """Print one file's label, method and headlines, and draw its table or figure.
    Returns the headlines (empty when the file is missing)."""
    res = load(name, root)
    if res is None:
        print(missing_message(name))
        return []
    s = SECTIONS.get(name)
    print(label(name, res))
    if s is None:
        print(f"No section describes {name}.json; its top-level keys: {', '.join(res)}")
        return []
    print(f"written by {s.script}")
    if isinstance(res.get("method"), str):
        print("method:", res["method"])
    hs = headlines(name, res, root)
    for h in hs:
        print("-", h)
    t = table(name, res, root)
    if t is not None:
        try:
            from IPython.display import display
            display(t)
        except ImportError:  # pragma: no cover
            print(t)
    figure(name, res)
    return hs
