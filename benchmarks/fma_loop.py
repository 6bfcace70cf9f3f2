"""Chapter 04's multiply-add loops and chapter 01's dependent-load steps, counted in SM cycles on
the GPU; writes gpulab/data/results/fma_loop.json.

    python benchmarks/fma_loop.py            # on a GPU with ncu: everything below
    python benchmarks/fma_loop.py kernels    # (what ncu runs) launch every case three times

The FMA cases are benchmarks/perf_model.py's (the same kernels, grids and arguments): one
dependent chain of 4,096 float32 multiply-adds per thread on one warp, on one warp per scheduler
(128 threads on each SM), four chains of 1,024 on the same warps, and 64 warps per SM for 8
waves. Nsight Compute (``--clock-control none``: clocks left as found) gives each launch's own
time, its SM cycles and the SM clock (``sm__cycles_elapsed.avg.per_second``), the warp
instructions issued, and the share of issue slots used. A ClockSampler run records the clock
NVML saw while the same launches ran outside the profiler, and the SASS of each kernel's loop
is kept, so "cycles per iteration" can be read against the instructions of one iteration.

The pointer chases of benchmarks/latency.py (one thread) run here too, at two lengths L and 2L,
so their SM cycle counts give cycles per dependent-load step directly: an L1-resident chase
(16 KiB), the shared-memory chase, and a DRAM one (1 GiB).
Without a GPU it prints SKIP and exits 0.

    python benchmarks/fma_loop.py sass LISTING   # re-read the loop bodies from a saved listing
"""

from __future__ import annotations

import json
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from gpulab.results import RESULTS_DIR  # noqa: E402

METRICS = [
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.max",
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.avg.per_second",
    "smsp__cycles_active.avg",
    "smsp__inst_executed.sum",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed.avg.per_cycle_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "launch__registers_per_thread",
]
LAUNCHES = 3
KiB, GiB = 1 << 10, 1 << 30
CHASES = {  # name: (kernel, working set bytes or None for shared, L)
    "chase_l1_16KiB": ("global", 16 * KiB, 20_000),
    "chase_shared": ("shared", None, 20_000),
    "chase_dram_1GiB": ("global", 1 * GiB, 5_000),
}


def cases():
    """[(name, kernel, grid, block, args)] as benchmarks/perf_model.py runs them."""
    from numba import cuda

    from perf_model import fma_chain, fma_ilp4

    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    z = lambda n: cuda.to_device(np.zeros(n, np.float32))  # noqa: E731
    return [
        ("fma_chain_1_warp", fma_chain, 1, 32, (z(32), 4096)),
        ("fma_chain_4_warps_per_sm", fma_chain, sms, 128, (z(sms * 128), 4096)),
        ("fma_ilp4_4_warps_per_sm", fma_ilp4, sms, 128, (z(sms * 128), 1024)),
        ("fma_chain_full", fma_chain, sms * 64, 256, (z(sms * 64 * 256), 4096)),
    ]


def chase_launches():
    """[(name, steps, launch())] for the dependent-load chases at L and 2L steps."""
    from numba import cuda

    from latency import SHARED_NODES, SPACING, chase_global, chase_shared, single_cycle

    rng = np.random.default_rng(7)
    out = cuda.device_array(1, np.int32)
    runs = []
    for name, (kind, size, L) in CHASES.items():
        if kind == "shared":
            a = cuda.to_device(single_cycle(SHARED_NODES, 1, rng))
            k = chase_shared
        else:
            a = cuda.to_device(single_cycle(size // (SPACING * 4), SPACING, rng))
            k = chase_global
        for steps in (L, 2 * L):
            runs.append((name, steps, lambda k=k, a=a, s=steps: k[1, 1](a, 0, s, out)))
    return runs


def kernels_main():
    """What ncu profiles: each FMA case, then each chase length, LAUNCHES times, in this order."""
    from numba import cuda

    for name, k, g, b, args in cases():
        for _ in range(LAUNCHES):
            k[g, b](*args)
    for name, steps, launch in chase_launches():
        for _ in range(LAUNCHES):
            launch()
    cuda.synchronize()
    return 0


def clock_outside_profiler():
    """Each FMA case launched 20 times back to back outside ncu: NVML's clock while they ran."""
    from numba import cuda

    from benchenv import ClockSampler

    out = {}
    with ClockSampler() as clk:
        for name, k, g, b, args in cases():
            k[g, b](*args)
            cuda.synchronize()
            e0, e1 = cuda.event(), cuda.event()
            with clk.timed():
                e0.record()
                for _ in range(20):
                    k[g, b](*args)
                e1.record()
                e1.synchronize()
            out[name] = {"events_us_per_launch": e0.elapsed_time(e1) * 1e3 / 20, "sm_clock": clk.take()}
    return out


def sass():
    """SASS text of the FMA kernels and the chases (numba's inspect_sass; needs nvdisasm). Each
    kernel is launched once first, so this process has compiled it."""
    from latency import chase_global, chase_shared
    from perf_model import fma_chain, fma_ilp4

    for name, k, g, b, args in cases():
        k[g, b](*args)
    for name, steps, launch in chase_launches():
        launch()
    text = {}
    for k in (fma_chain, fma_ilp4, chase_global, chase_shared):
        try:
            text[k.__name__] = "\n".join(k.inspect_sass().values())
        except Exception as e:  # noqa: BLE001 - recorded, not fatal
            text[k.__name__] = f"inspect_sass failed: {e!r}"
    return text


def loops(sass_text: str) -> list[list[str]]:
    """The instructions of every backward-branching loop in a SASS listing, in address order
    (each from the branch's target to the branch; targets as addresses or nvdisasm's .L_x_N
    labels). numba's range loops come out unrolled by 4, with a remainder loop before them."""
    import re

    ins, labels, pending = [], {}, []
    for ln in sass_text.splitlines():
        ln = ln.strip()
        lab = re.match(r"^(\.L_x_\d+):", ln)
        if lab:
            pending.append(lab.group(1))
            continue
        m = re.match(r"/\*([0-9a-f]{4,})\*/\s+([@A-Z].*?)\s*;", ln)
        if m:
            a = int(m.group(1), 16)
            for name in pending:
                labels[name] = a
            pending = []
            ins.append((a, m.group(2).strip()))
    found = []
    for a, text in ins:
        if "BRA" not in text:
            continue
        m = re.search(r"\(?(\.L_x_\d+)\)?|BRA\s+(0x[0-9a-f]+)", text)
        if not m:
            continue
        tgt = labels.get(m.group(1)) if m.group(1) else int(m.group(2), 16)
        if tgt is not None and tgt < a:
            found.append((tgt, [t for x, t in ins if tgt <= x <= a]))
    return [body for _, body in sorted(found)]


def split_listing(text: str) -> dict:
    """{kernel: SASS} from a listing written by main() (GPULAB_SASS_OUT: '===== name' headers)."""
    out, name = {}, None
    for ln in text.splitlines():
        if ln.startswith("===== "):
            name = ln[6:].strip()
            out[name] = []
        elif name:
            out[name].append(ln)
    return {k: "\n".join(v) for k, v in out.items()}


def reread_sass(listing_path: str) -> int:
    """Recompute fma_loop.json's sass_loop_body from a saved listing (plain or .gz)."""
    import gzip

    op = gzip.open if listing_path.endswith(".gz") else open
    with op(listing_path, "rt") as f:
        listing = split_listing(f.read())
    path = os.environ.get("GPULAB_BENCH_OUT") or os.path.join(RESULTS_DIR, "fma_loop.json")
    res = json.load(open(path))
    res.pop("sass_loop_body", None)
    res["sass_loops"] = {k: loops(v) for k, v in listing.items() if v.strip()}
    res["sass_listing"] = os.path.relpath(listing_path, os.path.dirname(HERE))
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res["sass_loops"], indent=1))
    return 0


def main():
    from benchenv import environment, gpu_present, ncu_clock

    if len(sys.argv) > 1 and sys.argv[1] == "kernels":
        return kernels_main()
    if len(sys.argv) > 2 and sys.argv[1] == "sass":
        return reread_sass(sys.argv[2])
    if not gpu_present():
        print("SKIP: no CUDA GPU visible; nothing measured, results file untouched.")
        return 0
    import ncu_runs

    launches, cmd, missing = ncu_runs.profile("fma_loop", METRICS, [os.path.abspath(__file__), "kernels"])
    order = [c[0] for c in cases() for _ in range(LAUNCHES)]
    order += [f"{n}@{s}" for n, s, _ in chase_launches() for _ in range(LAUNCHES)]
    if len(launches) != len(order):
        raise SystemExit(f"ncu recorded {len(launches)} launches, expected {len(order)}")
    per = {}
    for tag, (_, vals, _) in zip(order, launches):
        per.setdefault(tag, []).append(vals)

    def med(tag, metric):
        xs = [v[metric] for v in per[tag] if isinstance(v.get(metric), (int, float))]
        return float(statistics.median(xs)) if xs else None

    res = {"environment": environment(), "ncu_command": cmd, "metrics_unavailable": missing, "cases": {}}
    for name, k, g, b, args in cases():
        row = {m: med(name, m) for m in METRICS}
        row["sm_clock"] = ncu_clock([v["sm__cycles_elapsed.avg.per_second"] for v in per[name]])
        row["grid"], row["block"], row["iters"] = g, b, args[1]
        cyc = row["sm__cycles_elapsed.max"]
        chains = 4 if "ilp4" in name else 1
        row["cycles_per_iteration"] = cyc / args[1] if cyc else None
        row["fma_per_chain"] = args[1] * chains
        res["cases"][name] = row
    full = res["cases"]["fma_chain_full"]
    sms = res["environment"].get("sm_count") or 132
    if full["smsp__inst_executed.sum"] and full["sm__cycles_elapsed.avg"]:
        # warp instructions per scheduler per elapsed SM cycle: 1.0 is the issue peak
        full["issue_fraction_of_peak"] = (
            full["smsp__inst_executed.sum"] / (4 * sms) / full["sm__cycles_elapsed.avg"]
        )
    res["chases"] = {}
    for name, (_, size, L) in CHASES.items():
        c1, c2 = (
            med(f"{name}@{L}", "sm__cycles_elapsed.max"),
            med(f"{name}@{2 * L}", "sm__cycles_elapsed.max"),
        )
        t1, t2 = (
            med(f"{name}@{L}", "gpu__time_duration.sum"),
            med(f"{name}@{2 * L}", "gpu__time_duration.sum"),
        )
        i1, i2 = (
            med(f"{name}@{L}", "smsp__inst_executed.sum"),
            med(f"{name}@{2 * L}", "smsp__inst_executed.sum"),
        )
        res["chases"][name] = {
            "working_set_bytes": size,
            "steps": [L, 2 * L],
            "cycles_per_step": (c2 - c1) / L,
            "ns_per_step": (t2 - t1) / L,
            "warp_instructions_per_step": (i2 - i1) / L,
            "sm_clock": ncu_clock(
                [
                    v["sm__cycles_elapsed.avg.per_second"]
                    for t in (f"{name}@{L}", f"{name}@{2 * L}")
                    for v in per[t]
                ]
            ),
        }
    res["outside_profiler"] = clock_outside_profiler()
    listing = sass()
    res["sass_loops"] = {k: loops(v) for k, v in listing.items()}
    sass_path = os.environ.get("GPULAB_SASS_OUT")
    if sass_path:
        with open(sass_path, "w") as f:
            for k, v in listing.items():
                f.write(f"===== {k}\n{v}\n")
    path = os.environ.get("GPULAB_BENCH_OUT") or os.path.join(RESULTS_DIR, "fma_loop.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: v for k, v in res.items() if k != "environment"}, indent=1)[:6000])
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
