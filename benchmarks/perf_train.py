"""The model's error on every measured kernel set (training data for the time model; NOT blind).

    python benchmarks/perf_train.py counts [SET ...]   # simulate + compile each measured case once,
                                                       # pickle its Counts (PERF_TRAIN_CACHE dir)
    python benchmarks/perf_train.py score [SET ...]    # the current model on the cached Counts:
                                                       # per case pred/meas, median |pred/meas - 1|

Sets: perf_model (the book's kernels and probes), perf_blind (round 1), blind_r3 to blind_r6
(rounds 3-6: training data since they were measured). The blind round under test is never among them.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from blind_runner import kernels_of  # noqa: E402

CACHE = os.environ.get("PERF_TRAIN_CACHE", "/tmp/perf_train_cache")
SETS = ("perf_model", "perf_blind", "blind_r3", "blind_r4", "blind_r5", "blind_r6")
ROUNDS = (
    "blind_r3",
    "blind_r4",
    "blind_r5",
    "blind_r6",
)  # measured blind rounds: benchmarks/<round>/kernels.py
# how each set was timed: under Nsight Compute, which flushes the caches before each launch
# ("cold"), or with CUDA events around repeated launches and no flush (blind_runner: "warm")
L2_STATE = {
    "perf_model": "cold",
    "perf_blind": "cold",
    "blind_r3": "cold",
    "blind_r4": "warm",
    "blind_r5": "warm",
    "blind_r6": "warm",
}


def _set(name):
    """(cases, make_args, {case: measured seconds}) of one measured set."""
    from gpulab import results

    r = results.load(name)
    m = r["measured"]["cases"]
    meas = {
        n: (v["measured_s"] if "measured_s" in v else v["gpu__time_duration.sum"] * 1e-9)
        for n, v in m.items()
        if "measured_s" in v or "gpu__time_duration.sum" in v
    }
    if name == "perf_model":
        import perf_model as mod
    elif name == "perf_blind":
        import perf_blind as mod
    elif name in ROUNDS:
        mod = kernels_of(name)
    else:
        raise SystemExit(f"unknown set {name!r}: {', '.join(SETS)}")
    return mod.cases(), mod.make_args, meas


def counts_main(sets):
    """Counts (with the compiled SASS attached) of every measured case, one pickle each."""
    from gpulab.perf import engine as E
    from gpulab.sim.runner import python_function

    os.makedirs(CACHE, exist_ok=True)
    for s in sets:
        cases, make_args, meas = _set(s)
        for c in cases:
            out = os.path.join(CACHE, f"{s}__{c['name']}.pkl")
            skip = os.environ.get("PERF_TRAIN_SKIP", "").split(",")
            if c["name"] not in meas or os.path.exists(out) or c["name"] in skip:
                continue
            t0 = time.perf_counter()
            args = make_args(c)
            try:
                ks, why = E.compiled(c["kernel"], args, "sm_90")
                regs = ks.launch_registers if ks is not None else None
                cnt, halves = E.sample_counts(
                    c["kernel"],
                    c["grid"],
                    c["block"],
                    args,
                    shared_bytes=c.get("shared_bytes", 0),
                    registers=regs,
                )
            except Exception as exc:  # noqa: BLE001 - recorded, the set goes on
                print(f"{s}:{c['name']} FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            fn = python_function(c["kernel"])
            f = fn.__code__.co_filename  # '<...>' for a kernel built from a string: no file to keep
            src = open(f).read() if os.path.exists(f) else None
            for h in [cnt] + list(halves or ()):
                h.extra = dict(h.extra)
                h.extra["filename"] = fn.__code__.co_filename
                h.extra["source_text"] = src  # the lines the counts are keyed by
                if ks is not None:
                    E.attach_sass(h, ks, fn)
                    h.extra["sass_arch"] = ks.arch
            with open(out, "wb") as f:
                pickle.dump((cnt, halves, meas[c["name"]], time.perf_counter() - t0), f)
            print(f"{s}:{c['name']} {time.perf_counter() - t0:.1f} s", flush=True)


def _roles():
    """{case: "calibrate" | "holdout"} of perf_model (the other sets have no roles)."""
    import perf_model

    return {c["name"]: c["role"] for c in perf_model.cases()}


def _source_file(cnt):
    """The kernel's file as it was when the counts were taken: the counts are keyed by line, so a
    file edited since (lines inserted above a kernel) is read from the text kept in the cache."""
    import hashlib
    import tempfile

    f = cnt.extra["filename"]
    text = cnt.extra.get("source_text")
    if text is None or (os.path.exists(f) and open(f).read() == text):
        return f
    d = os.path.join(tempfile.gettempdir(), "perf_train_src", hashlib.sha1(text.encode()).hexdigest()[:12])
    os.makedirs(d, exist_ok=True)
    old = os.path.join(d, os.path.basename(f))
    if not os.path.exists(old):
        with open(old, "w") as fh:
            fh.write(text)
    cnt.extra["filename"] = old  # weights.dependency_factors reads the file by this name
    return old


def load(sets):
    """{(set, case): (Counts, measured seconds)} from the cache, with each line's static facts
    re-read from the source (the model's current weights.analyse)."""
    from gpulab.perf import weights as W
    from gpulab.sim.runner import python_function

    out, infos = {}, {}
    for s in sets:
        cases, _, _ = _set(s)
        kern = {c["name"]: c["kernel"] for c in cases}
        for fn in sorted(os.listdir(CACHE)):
            if not fn.startswith(s + "__"):
                continue
            name = fn[len(s) + 2 : -4]
            cnt, halves, t_meas, _ = pickle.load(open(os.path.join(CACHE, fn), "rb"))
            f = _source_file(cnt)
            if f not in infos:
                py = python_function(kern[name])
                infos[f] = W.analyse(f, py.__globals__)
            # a copy per case: from_counts sets each line's dependency factor from this case's
            # latencies and resets every other line of the file to 1 (weights.dependency_factors),
            # so a shared copy left the fit scoring all but each file's last case without them
            cnt.infos = copy.deepcopy(infos[f])
            out[(s, name)] = (cnt, t_meas)
    return out


def score(sets, gpu="H200", verbose=True):
    """{set: {case: (pred/meas, limiter key)}} of the model as it is now on the cached Counts."""
    from gpulab.perf import engine as E

    data = load(sets)
    out = {}
    for s in sets:
        rows = {}
        for (s2, name), (cnt, t_meas) in data.items():
            if s2 != s:
                continue
            p = E.from_counts(cnt, gpu, l2=L2_STATE[s])
            rows[name] = (p.time_s / t_meas, p.limiter_key, t_meas)
        out[s] = rows
        e = [abs(r - 1) for r, _, _ in rows.values()]
        if verbose:
            for n, (r, k, t) in sorted(rows.items(), key=lambda kv: kv[1][0]):
                print(f"  {s:10s} {n:30s} meas {t * 1e6:9.1f} us  x{r:5.2f}  {k}")
            print(
                f"{s}: {len(e)} cases, median |pred/meas-1| {np.median(e):.1%}, "
                f"outside 2x {sum(not 0.5 <= r <= 2 for r, _, _ in rows.values())}"
            )
    return out


# set, not fitted: L1 looks up one 128-byte line (wavefront) per SM cycle; the 0.43 perf_model
# fitted stood in for the cycles stored sectors hold it (store_sector_cycles now)
FIXED = {"l1_wavefronts_per_sm_cycle": 1.0}
FIT_PARAMS = (
    "alu_latency_cycles",
    "barrier_cycles",
    "barrier_cycles_per_warp",
    "overlap_p",
    "store_sector_cycles",
    "l1_fill_sector_cycles",
    "atomic_request_s",
    "dram_latency_under_load",
    "block_launch_per_cycle",
)


WEIGHTING = os.environ.get(
    "PERF_TRAIN_WEIGHTING", "case"
)  # "case": a mean over cases; "set": each set the same


def fit_main():
    """Refit the time constants (FIT_PARAMS) on the training cases: perf_model's calibrate
    kernels, perf_blind and blind rounds 3-6 (all measured); perf_model's held-out kernels are
    reported apart. Loss: |log(pred/meas)| plus twice the excess beyond 1.7x (as perf_model),
    averaged within each set and then over the sets (WEIGHTING)."""
    from gpulab import results
    from gpulab.perf import engine as E
    from gpulab.perf import gpus, model
    from perf_model import nelder_mead

    roles = _roles()
    data = load(SETS)
    base = gpus.H200.with_(**FIXED)
    for (s, n), (c, _) in data.items():
        E.from_counts(c, base, l2=L2_STATE[s])  # DRAM bytes and dependency factors, once
    train = [k for k in data if not (k[0] == "perf_model" and roles.get(k[1]) == "holdout")]
    held = [k for k in data if k not in train]

    def gpu_of(x):
        v = {k: float(np.exp(a)) for k, a in zip(FIT_PARAMS, x)}
        v["overlap_p"] = min(max(v["overlap_p"], 1.0), 16.0)
        v["dram_latency_under_load"] = min(max(v["dram_latency_under_load"], 1.0), 4.0)
        return base.with_(**v)

    def logs(gpu, keys):
        return np.array(
            [np.log(model.combine(model.bounds(data[k][0], gpu)["t"], gpu) / data[k][1]) for k in keys]
        )

    # WEIGHTING "case" (the default) averages over the training cases; "set" weighs each measured
    # set the same (the rounds hold 144 of the 187). Tried after round 6: "set" moved
    # alu_latency_cycles from 3.0 to 1.5 (not the dependent-issue latency the tables measure) and
    # raised every set's median; "case" lowered the book's and kept the latencies physical
    sets_of = np.array([k[0] for k in train])
    weight = np.ones(len(train))
    if WEIGHTING == "set":
        for s in set(sets_of):
            weight[sets_of == s] = 1.0 / np.sum(sets_of == s)
    weight /= weight.sum()

    def loss(x):
        e = np.abs(logs(gpu_of(x), train))
        return float(np.sum(weight * (e + 2 * np.maximum(e - np.log(1.7), 0))))

    def summary(gpu):
        out = {}
        for tag, keys in (("train", train), ("perf_model_holdout", held)) + tuple(
            (s, [k for k in data if k[0] == s]) for s in SETS
        ):
            r = np.exp(logs(gpu, keys))
            out[tag] = {
                "cases": len(keys),
                "median_abs_error": float(np.median(np.abs(r - 1))),
                "outside_2x": [k[1] for k, x in zip(keys, r) if not 0.5 <= x <= 2],
            }
        return out

    x0 = np.log([max(getattr(base, k), 1e-12) for k in FIT_PARAMS])
    before = summary(base)
    best, val = x0, loss(x0)
    print(f"  start: loss {val:.4f}", flush=True)
    for rnd in range(3):
        best, val = nelder_mead(loss, best, step=0.5 / (rnd + 1), iters=600)
        print(f"  fit round {rnd}: loss {val:.4f}", flush=True)
    params = {k: float(f"{getattr(gpu_of(best), k):.4g}") for k in FIT_PARAMS}
    fitted = base.with_(**params)
    rec = {
        "command": "python benchmarks/perf_train.py fit",
        "params": params,
        "fixed": FIXED,
        "loss": val,
        "weighting": WEIGHTING,
        "train": [f"{s}:{n}" for s, n in train],
        "held_out": [f"{s}:{n}" for s, n in held],
        "before": before,
        "after": summary(fitted),
        "method": "Nelder-Mead on |log(pred/meas)| + 2 x excess beyond 1.7x, "
        + (
            "averaged within each set, then over the sets"
            if WEIGHTING == "set"
            else "averaged over the cases"
        )
        + ", on the training cases (perf_model calibrate, perf_blind, blind_r3 to blind_r6); bandwidths, "
        "latencies and pipe rates stay at their measured or documented values",
    }
    out = os.environ.get("PERF_TRAIN_OUT") or str(
        results.roots()[-1] / "perf_train.json"
    )  # (a trial fit elsewhere)
    with open(out, "w") as f:
        json.dump(rec, f, indent=1)
    print(json.dumps({k: rec[k] for k in ("params", "before", "after")}, indent=1))


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "score"
    sets = sys.argv[2:] or list(SETS)
    if mode == "counts":
        counts_main(sets)
    elif mode == "score":
        score(sets)
    elif mode == "fit":
        fit_main()
    else:
        raise SystemExit(f"unknown mode {mode!r}: counts or score")
