"""What a math-library call and a same-address atomic cost on the H200, measured with ncu.

    python benchmarks/instruction_costs.py gpu            # on the H200, under ncu (NCU_COMMAND)
    python benchmarks/instruction_costs.py merge CSV CASES   # -> results/instruction_costs.json

1. ``math.sin(v)`` in a kernel is not one instruction: numba links NVIDIA's libdevice, whose
   ``__nv_sinf`` is a range reduction and a polynomial, tens of SASS instructions. For each
   function and for float32 and float64, a kernel runs ``v = f(v) * c + d`` ITERS times per
   thread; ``smsp__inst_executed.sum`` minus that of the same loop without the call, divided by
   the warp-level calls, is the function's cost in warp instructions. Arguments stay in
   [0.4, 0.8], where every function takes its fast path (large arguments of sin and cos take a
   slower range reduction: these costs are the common case, not the worst one).
2. Same-address atomics: ``if laneid < k: atomic.add(count, 0, 1)`` for k = 1 ... 32 lanes per
   warp, int32 and float32; ``gpu__time_duration`` over the warp-level instructions gives the
   time per instruction and per extra lane, which ``gpulab.perf`` uses for "atomics contention".
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import math
import os
import sys

import numpy as np
from numba import cuda

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
OUT = os.path.join(RESULTS_DIR, "instruction_costs.json")
NCU_COMMAND = (
    "ncu --clock-control none --print-units base --csv --log-file ncu_costs.csv "
    "--metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second "
    "python benchmarks/instruction_costs.py gpu"
)
ITERS = 64
BLOCKS, THREADS = 1024, 256
ONE_ARG = ("sin cos tan asin acos atan sinh cosh tanh exp expm1 log log1p log2 log10 sqrt fabs erf").split()
TWO_ARGS = "pow atan2 hypot fmod copysign".split()
ATOMIC_THREADS = 1 << 22
LANES = (1, 2, 4, 8, 16, 32)


def _math_kernel(fn, nargs):
    """``v = fn(v[, d]) * c + d``, ITERS times per thread (fn=None: the loop alone)."""
    if fn is None:

        @cuda.jit
        def k(out, x, c, d, iters):
            i = cuda.grid(1)
            v = x[i]
            for _ in range(iters):
                v = v * c + d
            out[i] = v

    elif nargs == 1:

        @cuda.jit
        def k(out, x, c, d, iters):
            i = cuda.grid(1)
            v = x[i]
            for _ in range(iters):
                v = fn(v) * c + d
            out[i] = v

    else:

        @cuda.jit
        def k(out, x, c, d, iters):
            i = cuda.grid(1)
            v = x[i]
            for _ in range(iters):
                v = fn(v, d) * c + d
            out[i] = v

    return k


@cuda.jit
def atomic_lanes_int(count, k):
    if cuda.laneid < k:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def atomic_lanes_float(count, k):
    if cuda.laneid < k:
        cuda.atomic.add(count, 0, 1.0)


@cuda.jit
def atomic_int_lane_values(count, k):
    """Uniform address, a different value per lane."""
    if cuda.laneid < k:
        cuda.atomic.add(count, 0, cuda.laneid)


@cuda.jit
def atomic_int_block_address(count, k):
    """Address uniform across the warp, from blockIdx (not a constant)."""
    if cuda.laneid < k:
        cuda.atomic.add(count, cuda.blockIdx.x % 4, 1)


@cuda.jit
def atomic_int_loaded_address(count, k):
    """Address uniform at run time, but loaded from memory: not provably uniform."""
    if cuda.laneid < k:
        cuda.atomic.add(count, count[4] + 1, 1)


def cases():
    """[(name, kernel, grid, block, args)] in launch order."""
    out = []
    for dt in (np.float32, np.float64):
        tag = np.dtype(dt).name
        x = (0.5 + 0.3 * np.random.default_rng(1).random(BLOCKS * THREADS)).astype(dt)
        args = [np.zeros_like(x), x, dt(0.1), dt(0.5), ITERS]
        out.append((f"loop_{tag}", _math_kernel(None, 0), BLOCKS, THREADS, args))
        for name in ONE_ARG + TWO_ARGS:
            fn = getattr(math, name)
            out.append(
                (f"{name}_{tag}", _math_kernel(fn, 2 if name in TWO_ARGS else 1), BLOCKS, THREADS, args)
            )
    for k in LANES:
        out.append(
            (f"atomic_int_{k}", atomic_lanes_int, ATOMIC_THREADS // 256, 256, [np.zeros(1, np.int32), k])
        )
        out.append(
            (
                f"atomic_float_{k}",
                atomic_lanes_float,
                ATOMIC_THREADS // 256,
                256,
                [np.zeros(1, np.float32), k],
            )
        )
    for tag, kern in (
        ("values", atomic_int_lane_values),
        ("block", atomic_int_block_address),
        ("loaded", atomic_int_loaded_address),
    ):
        for k in (1, 32):
            out.append(
                (f"atomic_int_{tag}_{k}", kern, ATOMIC_THREADS // 256, 256, [np.zeros(8, np.int32), k])
            )
    return out


def gpu_main(cases_out):
    """Launch every case twice (the first compiles); record which ran, in launch order."""
    from benchenv import environment, gpu_present

    if not gpu_present():
        print("SKIP: no CUDA GPU visible to numba; nothing launched, no cases file written")
        return
    done = []
    for name, k, grid, block, args in cases():
        try:
            dargs = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
            for _ in range(2):
                k[grid, block](*dargs)
            cuda.synchronize()
            done.append({"name": name, "ok": True})
        except Exception as exc:  # noqa: BLE001 - record and go on
            done.append({"name": name, "ok": False, "error": f"{type(exc).__name__}: {exc}"})
            print("FAILED", name, exc, flush=True)
    with open(cases_out, "w") as f:
        json.dump({"environment": environment(), "cases": done}, f, indent=1)


def merge(csv_path, cases_path):
    """Per-call instruction costs and per-instruction atomic times from ncu's second launches."""
    from benchenv import ncu_clock
    from ncu_runs import parse

    CLOCK_METRIC = "sm__cycles_elapsed.avg.per_second"

    launches = parse(csv_path)
    record = json.load(open(cases_path))
    ran = [d["name"] for d in record["cases"] if d["ok"]]
    if len(launches) != 2 * len(ran):
        raise SystemExit(f"{len(launches)} launches profiled for {len(ran)} cases (expected 2 each)")
    m = {name: launches[2 * k + 1][1] for k, name in enumerate(ran)}
    warps = BLOCKS * THREADS // 32
    calls = warps * ITERS
    math_costs = {}
    for dt in ("float32", "float64"):
        base = m[f"loop_{dt}"]["smsp__inst_executed.sum"]
        for name in ONE_ARG + TWO_ARGS:
            key = f"{name}_{dt}"
            if key in m:
                per_call = (m[key]["smsp__inst_executed.sum"] - base) / calls
                math_costs.setdefault(name, {})[dt] = round(per_call, 1)
    atomics = {}
    inst = ATOMIC_THREADS // 32
    for kind in ("int", "float"):
        rows = {
            k: m[f"atomic_{kind}_{k}"]["gpu__time_duration.sum"] * 1e-9
            for k in LANES
            if f"atomic_{kind}_{k}" in m
        }
        ks = np.array(sorted(rows), float)
        ts = np.array([rows[int(k)] for k in ks]) / inst
        slope, icpt = np.polyfit(ks - 1, ts, 1)  # time per instruction = icpt + slope * extra lanes
        atomics[kind] = {
            "lanes": {int(k): rows[int(k)] for k in ks},
            "s_per_instruction_one_lane": float(icpt),
            "s_per_extra_lane": float(slope),
        }
    for tag in ("values", "block", "loaded"):
        t = {k: m[f"atomic_int_{tag}_{k}"]["gpu__time_duration.sum"] * 1e-9 / inst for k in (1, 32)}
        atomics[f"int_{tag}"] = {"s_per_instruction": t, "lanes_32_over_1": t[32] / t[1]}
    res = {
        "command": NCU_COMMAND,
        "merge": f"python benchmarks/instruction_costs.py merge {csv_path} {cases_path}",
        "environment": record["environment"],
        "failed": [d for d in record["cases"] if not d["ok"]],
        "math_warp_instructions_per_call": math_costs,
        "same_address_atomics": atomics,
        "raw": m,
    }
    clocks = [v[CLOCK_METRIC] for v in m.values() if CLOCK_METRIC in v]
    if clocks:  # the SM clock over the merged launches, as every GPU result records it
        res["sm_clock"] = ncu_clock(clocks)
    with open(OUT, "w") as f:
        json.dump(res, f, indent=1)
    print(
        json.dumps(
            {
                "math": math_costs,
                "atomics": {k: {kk: vv for kk, vv in v.items() if kk != "lanes"} for k, v in atomics.items()},
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "gpu":
        gpu_main(os.environ.get("COST_CASES_OUT", "instruction_costs_cases.json"))
    elif mode == "merge":
        merge(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
