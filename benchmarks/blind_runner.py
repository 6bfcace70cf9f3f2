"""One runner for every blind round of gpulab.predict (rounds 4 and 5: benchmarks/blind_r*/run.py).

A round is a folder benchmarks/<name>/ with kernels.py (``cases()`` and ``make_args(case)``) and a
run.py that builds a ``BlindRound`` and calls ``main``:

    python benchmarks/<name>/run.py predict        # CPU: gpulab.predict(..., gpu="H200") -> <name>.json
    python benchmarks/<name>/run.py gpu OUT_DIR    # GPU: CUDA-event times (median of REPS launches),
                                                   # the SM clock (ClockSampler), the driver's registers
    python benchmarks/<name>/run.py regs           # GPU, under ncu (ncu_command): each case once
    python benchmarks/<name>/run.py merge OUT_DIR  # the device's figures beside the committed predictions

The predictions are committed before any kernel of the round runs on a GPU; ``merge`` never
changes them. The ``gpu`` and ``regs`` modes import neither gpulab nor anything beyond numba.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)  # benchenv


def kernels_of(folder):
    """benchmarks/<folder>/kernels.py, loaded by path under its own name, "<folder>_kernels"
    (every blind round, and benchmarks/fidelity, has a kernels.py: a plain ``import kernels``
    gets whichever one was imported first in the process)."""
    import importlib.util

    key = f"{folder}_kernels"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, os.path.join(HERE, folder, "kernels.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        spec.loader.exec_module(mod)
    return sys.modules[key]


REPS = 7  # timed launches per case (after one that compiles and warms up)
SPIN_NS = 300_000  # a sleeping kernel ahead of each timed launch hides numba's host-side launch cost


RESTORE_NOTE = (
    "every array argument is copied again from the host before each timed launch (outside the events), "
    "so each launch starts from the arguments the model predicted; rounds 4 and 5 reused the device "
    "arrays, so their later launches saw what earlier ones wrote"
)


def _restore(dev_args, host_args):
    """Copy each host array back into its device array and wait: a launch that accumulates into its
    arguments (a counter that indexes the output, bins, in-place updates) must not see the last one's
    results (round 6's compact_positive_atomic wrote past its output on the 8th launch without this)."""
    from numba import cuda

    for d, h in zip(dev_args, host_args):
        if isinstance(h, np.ndarray):
            d.copy_to_device(h)
    cuda.synchronize()


class BlindRound:
    """One round: its name (the results file's), its kernels module and how its register pass
    launches kernels (``regs_args``: "zeros" of the same arrays, as round 4 did, or "real": the
    case's own arguments, for kernels whose loops depend on the data)."""

    # how the gpu mode times a case (CUDA events around repeated launches, no cache flush between
    # them): the state of L2 the predictions assume (gpulab.perf.engine.l2_resident)
    L2 = "warm"

    def __init__(self, name, kernels, regs_args="real"):
        if regs_args not in ("zeros", "real"):
            raise ValueError(f"regs_args must be 'zeros' or 'real', not {regs_args!r}")
        self.name, self.kernels, self.regs_args = name, kernels, regs_args
        self.script = f"benchmarks/{name}/run.py"
        self.ncu_command = (
            "ncu --clock-control none --print-units base --csv --log-file ncu_regs.csv "
            f"--metrics launch__registers_per_thread python {self.script} regs"
        )

    def cases(self):
        return self.kernels.cases()

    def selected(self):
        """The cases a device run times: all, or those named in $BLIND_ONLY (comma-separated), to
        re-time a case whose run failed without timing the others again."""
        only = {n for n in os.environ.get("BLIND_ONLY", "").split(",") if n}
        return [c for c in self.cases() if not only or c["name"] in only]

    def make_args(self, case):
        return self.kernels.make_args(case)

    # ---- the results file -------------------------------------------------------------------
    def out(self):
        from gpulab import results

        p = results.path(self.name)
        return str(p) if p else str(results.roots()[-1] / f"{self.name}.json")

    @staticmethod
    def _load(path):
        return json.load(open(path)) if os.path.exists(path) else {}

    @staticmethod
    def _save(res, path):
        with open(path, "w") as f:
            json.dump(res, f, indent=1)

    # ---- CPU: predictions -------------------------------------------------------------------
    def predict(self, only=None, path=None):
        """gpulab.predict on every case exactly as a reader calls it (registers from ptxas)."""
        import gpulab
        from gpulab.perf import sass

        path = path or self.out()
        ok, why = sass.available()
        rows, failed = {}, []
        for c in self.cases():
            if only and c["name"] not in only:
                continue
            load0 = os.getloadavg()[0]
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                # l2="warm": the gpu mode times repeated launches with CUDA events and no cache
                # flush, so a footprint that fits in L2 is there when a timed launch starts
                p = gpulab.predict(
                    c["kernel"], c["grid"], c["block"], *self.make_args(c), gpu="H200", l2=self.L2
                )
            except Exception as exc:  # noqa: BLE001 - a case the model cannot predict is recorded as such
                rows[c["name"]] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
                failed.append(c["name"])
                print(c["name"], rows[c["name"]], flush=True)
                continue
            rows[c["name"]] = {
                "predicted_s": p.time_s,
                "limiter": p.limiter_key,
                "registers": p.occupancy["registers_per_thread"],
                "inst_executed": p.metrics["smsp__inst_executed.sum"],
                "threads_per_inst": p.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"],
                "sampling_error": p.sampling["relative_error"],
                "wall_s": round(time.perf_counter() - t0, 2),
                # this process's CPU seconds (ptxas and nvdisasm run as children: not included)
                "cpu_s": round(time.process_time() - c0, 2),
                "load_average_at_start": round(load0, 1),
            }
            print(c["name"], rows[c["name"]], flush=True)
        res = self._load(path)
        prev = res.get("predicted", {}).get("cases", {})
        load = os.getloadavg()
        res["predicted"] = {
            "command": f"python {self.script} predict",
            "model_commit": _git("rev-parse", "HEAD"),
            "model_files_commit": _git("log", "-1", "--format=%H", "--", ":/gpulab/perf"),
            "working_tree": _git("status", "--porcelain", "--", ":/gpulab/perf") or "clean",
            "sass": "ptxas/nvdisasm used" if ok else f"no SASS: {why}",
            "cpu": f"{os.cpu_count()} cores (shared); load average {load[0]:.1f} at the end",
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "failed_to_predict": sorted(
                set(failed) | {n for n, r in prev.items() if "error" in r} - set(rows)
            ),
            "cases": {**prev, **rows},
        }
        self._save(res, path)

    # ---- GPU: times and registers -------------------------------------------------------------
    def gpu(self, out_dir):
        """Time every case with CUDA events: one launch to compile and warm up, then REPS launches,
        each behind a sleeping kernel so the event brackets the kernel and not numba's host work."""
        from numba import cuda

        from benchenv import ClockSampler, environment

        @cuda.jit
        def spin(ns):
            for _ in range(ns // 1000):
                cuda.nanosleep(1000)

        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, f"{self.name}_gpu.json")
        done = {}
        rec = {"environment": environment(), "reps": REPS, "spin_ns": SPIN_NS, "cases": done}
        rec["compiler"] = _compiler_facts()
        rec["arguments"] = RESTORE_NOTE
        try:
            spin[1, 1](SPIN_NS)
            cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - without it the events also hold numba's host work
            rec["spin_ns"] = 0
            rec["spin_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            print("no sleeping kernel:", rec["spin_error"], flush=True)
        t_start = time.perf_counter()
        with ClockSampler() as clk:
            for c in self.selected():
                t0 = time.perf_counter()
                try:
                    host = self.make_args(c)
                    args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
                    launch = c["kernel"][c["grid"], c["block"]]
                    launch(*args)  # compiles
                    cuda.synchronize()
                    ms = []
                    with clk.timed():
                        for _ in range(REPS):
                            _restore(args, host)  # every launch starts from the arguments predicted
                            e0, e1 = cuda.event(), cuda.event()
                            if rec["spin_ns"]:
                                spin[1, 1](SPIN_NS)
                            e0.record()
                            launch(*args)
                            e1.record()
                            e1.synchronize()
                            ms.append(e0.elapsed_time(e1))
                    done[c["name"]] = {
                        "kernel": c["kernel"].py_func.__name__,
                        "ok": True,
                        "measured_s": float(np.median(ms)) * 1e-3,
                        "event_ms": ms,
                        "registers_driver": _regs_of(c["kernel"]),
                        "sm_clock": clk.take(),
                        "wall_s": round(time.perf_counter() - t0, 2),
                    }
                    del args
                except Exception as exc:  # noqa: BLE001 - record and go on
                    done[c["name"]] = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
                print(c["name"], {k: v for k, v in done[c["name"]].items() if k != "event_ms"}, flush=True)
                with open(path, "w") as f:  # after every case: a run cut short keeps what it measured
                    json.dump(rec, f, indent=1)
            rec["sm_clock_all"] = {"samples_MHz": list(clk.all_samples)}
        rec["wall_s"] = round(time.perf_counter() - t_start, 1)
        with open(path, "w") as f:
            json.dump(rec, f, indent=1)

    def regs(self):
        """Launch every case once (under ncu: one launch-level metric, no replay of counters)."""
        from numba import cuda

        for c in self.selected():
            try:  # registers depend on the argument types only
                a = self.make_args(c)
                if self.regs_args == "zeros":
                    a = [np.zeros_like(x) if isinstance(x, np.ndarray) else x for x in a]
                args = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in a]
                c["kernel"][c["grid"], c["block"]](*args)
                cuda.synchronize()
                print("launched", c["name"], flush=True)
            except Exception as exc:  # noqa: BLE001
                print("FAILED", c["name"], exc, flush=True)

    # ---- CPU: the device's figures beside the predictions ------------------------------------
    def merge(self, out_dir, path=None):
        """The device's figures beside the committed predictions; the summary the book quotes."""
        path = path or self.out()
        g = json.load(open(os.path.join(out_dir, f"{self.name}_gpu.json")))
        ncu_path = os.path.join(out_dir, "ncu_regs.csv")
        ncu = parse_ncu(ncu_path) if os.path.exists(ncu_path) else []
        names = [c["name"] for c in self.cases()]
        kern = {c["name"]: c["kernel"].py_func.__name__ for c in self.cases()}
        ncu_regs, left = {}, list(ncu)
        for n in names:  # in launch order; no kernel's name holds another's (mangled or demangled)
            k = next((j for j, (kn, _) in enumerate(left) if kern[n] in kn), None)
            if k is not None:
                ncu_regs[n] = left.pop(k)
        res = self._load(path)
        pred = res["predicted"]["cases"]
        rows = {}
        for n, d in g["cases"].items():
            if not d.get("ok"):
                continue
            row = {k: v for k, v in d.items() if k not in ("ok",)}
            if n in ncu_regs:
                row["registers_measured"] = ncu_regs[n][1]
                row["registers_source"] = "ncu launch__registers_per_thread"
            else:
                row["registers_measured"] = d.get("registers_driver")
                row["registers_source"] = "driver (cuFuncGetAttribute NUM_REGS via numba)"
            p = pred.get(n, {})
            if "predicted_s" in p:
                row["ratio"] = p["predicted_s"] / d["measured_s"]
                row["registers_match"] = p["registers"] == row["registers_measured"]
            rows[n] = row
        scored = {n: r for n, r in rows.items() if "ratio" in r}
        errs = [abs(r["ratio"] - 1) for r in scored.values()]
        clocks = [r["sm_clock"]["median_MHz"] for r in rows.values() if r.get("sm_clock")]
        walls = [p["wall_s"] for p in pred.values() if "wall_s" in p]
        res["measured"] = {
            "command": f"python {self.script} gpu OUT (CUDA events, median of "
            f"{g['reps']} launches); registers: {self.ncu_command}",
            "environment": g["environment"],
            "failed": {n: d.get("error") for n, d in g["cases"].items() if not d.get("ok")},
            "not_run": [n for n in names if n not in g["cases"]],
            "cases": rows,
        }
        if "compiler" in g:
            res["measured"]["compiler"] = g["compiler"]
        res["summary"] = {
            "cases": len(scored),
            "median_abs_error": float(np.median(errs)) if errs else None,
            "outside_2x": [n for n, r in scored.items() if not 0.5 <= r["ratio"] <= 2],
            "registers_match": sum(bool(r["registers_match"]) for r in scored.values()),
            "registers_from_ncu": sum(r["registers_source"].startswith("ncu") for r in scored.values()),
            "clock_MHz_median": float(np.median(clocks)) if clocks else None,
            "worst": max(scored, key=lambda n: abs(math.log(scored[n]["ratio"]))) if scored else None,
            "timing": "CUDA events around each launch behind a sleeping kernel, median of "
            f"{g['reps']} launches after a warm-up launch (not ncu's gpu__time_duration)",
        }
        if walls:
            res["summary"]["prediction_wall_s_max"] = max(walls)
            res["summary"]["prediction_wall_s_median"] = float(np.median(walls))
        self._save(res, path)
        print(json.dumps(res["summary"], indent=1))
        for n, r in sorted(scored.items(), key=lambda kv: kv[1]["ratio"]):
            print(
                f"{n:28s} meas {r['measured_s'] * 1e6:9.1f} us  pred/meas {r['ratio']:.2f}  "
                f"regs {pred[n]['registers']}/{r['registers_measured']}  {pred[n]['limiter']}"
            )

    def main(self, argv=None):
        argv = sys.argv[1:] if argv is None else argv
        mode = argv[0] if argv else "predict"
        if mode == "predict":
            self.predict(set(argv[1:]) or None)
        elif mode == "gpu":
            self.gpu(argv[1] if len(argv) > 1 else ".")
        elif mode == "regs":
            self.regs()
        elif mode == "merge":
            if len(argv) < 2:
                raise SystemExit("merge needs the device's output folder: merge OUT_DIR")
            self.merge(argv[1])
        else:
            raise SystemExit(f"unknown mode {mode!r}: predict, gpu, regs or merge")


def _git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=HERE).stdout.strip()


def _regs_of(kernel):
    """Registers per thread of the kernel's (only) compiled overload, from the driver (None
    where numba cannot say, as under its CUDA simulator)."""
    try:
        r = kernel.get_regs_per_thread()
        if isinstance(r, dict):
            r = next(iter(r.values())) if len(r) == 1 else max(r.values())
        return int(r)
    except Exception:  # noqa: BLE001 - a missing count is recorded as missing
        return None


def _compiler_facts():
    """What compiles the kernels on the device (NVVM's version, the linker numba uses): the
    register counts the model predicts come from ptxas on the CPU, so a difference is traceable."""
    out = {}
    try:
        from numba.cuda.cudadrv import nvvm

        out["nvvm_version"] = list(nvvm.NVVM().get_version())
    except Exception as exc:  # noqa: BLE001 - recorded, not needed
        out["nvvm_version"] = f"unknown: {type(exc).__name__}: {str(exc)[:120]}"
    try:
        from numba.cuda.cuda_paths import get_cuda_paths

        v = get_cuda_paths().get("nvvm")
        out["nvvm_library"] = f"{v.info} (found by {v.by})" if hasattr(v, "info") else str(v)
    except Exception as exc:  # noqa: BLE001
        out["nvvm_library"] = f"unknown: {type(exc).__name__}: {str(exc)[:120]}"
    try:
        from numba.cuda import config

        out["numba_cuda_enable_pynvjitlink"] = bool(getattr(config, "CUDA_ENABLE_PYNVJITLINK", False))
    except Exception:  # noqa: BLE001
        pass
    return out


def parse_ncu(path):
    """Launch-ordered [(kernel name, registers per thread)] from ncu's --csv log."""
    lines = [ln for ln in open(path).read().splitlines() if ln.startswith('"')]
    if not lines:
        return []
    rows = list(csv.reader(lines))
    head, body = rows[0], rows[1:]
    c = {h: k for k, h in enumerate(head)}
    out = {}
    for r in body:
        if r[c["Metric Name"]] == "launch__registers_per_thread":
            out[int(r[c["ID"]])] = (r[c["Kernel Name"]], int(float(r[c["Metric Value"]].replace(",", ""))))
    return [out[k] for k in sorted(out)]
