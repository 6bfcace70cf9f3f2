"""A blind test of gpulab's virtual H200: predict new kernels first, commit, then measure.

    python benchmarks/perf_blind.py predict   # on a CPU: gpulab.predict(..., gpu="H200") for every
                                              # case, exactly as a reader calls it -> perf_blind.json
    python benchmarks/perf_blind.py gpu       # on the H200, under ncu (NCU_COMMAND)
    python benchmarks/perf_blind.py merge CSV CASES  # attach ncu's times, compare -> perf_blind.json
    python benchmarks/perf_blind.py recheck   # the model as it is now (after any revision) -> perf_blind.json
    python benchmarks/perf_blind.py merge-clock CSV CASES  # a re-run under NCU_CLOCK_COMMAND (the
                                              # SM clock with every launch) -> perf_blind.json "clock_rerun"

``perf_model.py`` calibrates the model on some kernels and reports others as held out, but
those were chosen while the model was built. The kernels here were written after the model's
constants were frozen, and their predictions are committed to git before any of them ran on a
GPU (the "predicted" section records the commit it came from): nothing was tuned on them. They
reach corners the calibration set does not: float64 arithmetic, libdevice ``sin``, 2-D
stencils, matrix-vector products in both layouts, warp votes, a grid-stride loop with few
blocks, scattered float atomics and a single-block latency-bound loop.
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import math
import os
import subprocess
import sys

import numpy as np
from numba import cuda, float32, float64, int32

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
OUT = os.path.join(RESULTS_DIR, "perf_blind.json")
NCU_COMMAND = (
    "ncu --clock-control none --print-units base --csv --log-file ncu_blind.csv "
    "--metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,"
    "dram__bytes_write.sum,launch__registers_per_thread python benchmarks/perf_blind.py gpu"
)
# the same, with the SM clock of every launch (issue 23: every GPU result records its clock)
NCU_CLOCK_COMMAND = NCU_COMMAND.replace(
    "launch__registers_per_thread", "launch__registers_per_thread,sm__cycles_elapsed.avg.per_second"
).replace("ncu_blind.csv", "ncu_blind_clock.csv")
N = 1 << 24
SMS = 132
FULL = 0xFFFFFFFF
BLUR_TILE = 256 + 6  # a block of 256 and a halo of 3 each side


# -- the kernels (new: none of them is in perf_model.py's calibration or held-out sets) -------
@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit
def add_f64(out, x, y):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] + y[i]


@cuda.jit
def gather_stride3(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = x[3 * i]


@cuda.jit
def stencil5(out, img):
    x, y = cuda.grid(2)
    h, w = img.shape
    if 0 < y < h - 1 and 0 < x < w - 1:
        out[y, x] = 0.5 * img[y, x] + 0.125 * (img[y - 1, x] + img[y + 1, x] + img[y, x - 1] + img[y, x + 1])


@cuda.jit
def matvec_row_per_thread(out, a, v):
    r = cuda.grid(1)
    if r < a.shape[0]:
        s = float32(0.0)
        for k in range(a.shape[1]):
            s += a[r, k] * v[k]
        out[r] = s


@cuda.jit
def matvec_warp_per_row(out, a, v):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    if r < a.shape[0]:
        s = float32(0.0)
        for k in range(lane, a.shape[1], 32):
            s += a[r, k] * v[k]
        d = 16
        while d > 0:
            s += cuda.shfl_down_sync(FULL, s, d)
            d //= 2
        if lane == 0:
            out[r] = s


@cuda.jit
def sin_loop(out, x, iters):
    i = cuda.grid(1)
    if i < out.shape[0]:
        v = x[i]
        for _ in range(iters):
            v = math.sin(v) + float32(0.5)
        out[i] = v


@cuda.jit
def fma_chain_f64(out, iters):
    i = cuda.grid(1)
    v = float64(i) * 1e-9
    for _ in range(iters):
        v = v * 0.999999 + 1e-7
    out[i] = v


@cuda.jit
def blur1d_shared(out, x):
    tile = cuda.shared.array(BLUR_TILE, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    n = x.shape[0]
    tile[t + 3] = x[i] if i < n else float32(0.0)
    if t < 3:
        j = i - 3
        tile[t] = x[j] if 0 <= j < n else float32(0.0)
        k = i + 256
        tile[t + 256 + 3] = x[k] if k < n else float32(0.0)
    cuda.syncthreads()
    if i < n:
        s = float32(0.0)
        for d in range(7):
            s += tile[t + d]
        out[i] = s / 7


@cuda.jit
def count_positive_ballot(count, x):
    i = cuda.grid(1)
    pos = i < x.shape[0] and x[i] > 0
    votes = cuda.ballot_sync(FULL, pos)
    if cuda.laneid == 0:
        cuda.atomic.add(count, 0, cuda.popc(votes))


@cuda.jit
def saxpy_grid_stride(out, a, x, y):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.shape[0], step):
        out[i] = a * x[i] + y[i]


@cuda.jit
def scatter_add_f32(out, idx, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.add(out, idx[i], x[i])


@cuda.jit
def one_block_loop(out, iters):
    t = cuda.threadIdx.x
    v = int32(t)
    for _ in range(iters):
        v = (v * 1103515245 + 12345) & 0x7FFFFFFF
    out[t] = v


@cuda.jit
def transpose_f64_naive(out, a):
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        out[x, y] = a[y, x]


def cases():
    """[dict(name, kernel, grid, block, args (rng -> list), shared_bytes)], in launch order."""
    g = lambda n, b=256: ((n + b - 1) // b,)  # noqa: E731
    f32 = lambda r, n: r.random(n, dtype=np.float32)  # noqa: E731
    m_rows, m_cols = 16384, 1024
    img = 4096
    C = [
        ("saxpy", saxpy, g(N), 256, lambda r: [np.zeros(N, np.float32), np.float32(2), f32(r, N), f32(r, N)]),
        ("add_f64", add_f64, g(N), 256, lambda r: [np.zeros(N), r.random(N), r.random(N)]),
        ("gather_stride3", gather_stride3, g(N), 256, lambda r: [np.zeros(N, np.float32), f32(r, 3 * N)]),
        (
            "stencil5",
            stencil5,
            (img // 32, img // 8),
            (32, 8),
            lambda r: [np.zeros((img, img), np.float32), r.random((img, img), dtype=np.float32)],
        ),
        (
            "matvec_row_per_thread",
            matvec_row_per_thread,
            g(m_rows, 128),
            128,
            lambda r: [
                np.zeros(m_rows, np.float32),
                r.random((m_rows, m_cols), dtype=np.float32),
                f32(r, m_cols),
            ],
        ),
        (
            "matvec_warp_per_row",
            matvec_warp_per_row,
            g(m_rows * 32, 256),
            256,
            lambda r: [
                np.zeros(m_rows, np.float32),
                r.random((m_rows, m_cols), dtype=np.float32),
                f32(r, m_cols),
            ],
        ),
        (
            "sin_loop",
            sin_loop,
            g(1 << 20),
            256,
            lambda r: [np.zeros(1 << 20, np.float32), f32(r, 1 << 20), 64],
        ),
        ("fma_chain_f64", fma_chain_f64, (SMS * 8,), 256, lambda r: [np.zeros(SMS * 8 * 256), 4096]),
        ("blur1d_shared", blur1d_shared, g(N), 256, lambda r: [np.zeros(N, np.float32), f32(r, N)]),
        (
            "count_positive_ballot",
            count_positive_ballot,
            g(N),
            256,
            lambda r: [np.zeros(1, np.int32), (r.random(N, dtype=np.float32) - 0.5)],
        ),
        (
            "saxpy_grid_stride",
            saxpy_grid_stride,
            (SMS * 2,),
            256,
            lambda r: [np.zeros(N, np.float32), np.float32(2), f32(r, N), f32(r, N)],
        ),
        (
            "scatter_add_f32",
            scatter_add_f32,
            g(1 << 22),
            256,
            lambda r: [
                np.zeros(1 << 20, np.float32),
                r.integers(0, 1 << 20, 1 << 22).astype(np.int32),
                f32(r, 1 << 22),
            ],
        ),
        ("one_block_loop", one_block_loop, (1,), 128, lambda r: [np.zeros(128, np.int32), 20000]),
        (
            "transpose_f64_naive",
            transpose_f64_naive,
            (2048 // 32, 2048 // 8),
            (32, 8),
            lambda r: [np.zeros((2048, 2048)), r.random((2048, 2048))],
        ),
    ]
    return [dict(name=n, kernel=k, grid=gr, block=b, args=a, shared_bytes=0) for n, k, gr, b, a in C]


def make_args(case):
    """The case's arguments, the same on every machine (seeded by the case's name)."""
    seed = sum(ord(ch) * (k + 1) for k, ch in enumerate(case["name"]))
    return case["args"](np.random.default_rng(seed))


def _load():
    return json.load(open(OUT)) if os.path.exists(OUT) else {}


def _save(res):
    with open(OUT, "w") as f:
        json.dump(res, f, indent=1)


def predict_main():
    """Predict every case with gpulab.predict as shipped (no registers given: its own guess)."""
    import time

    import gpulab
    from benchenv import environment

    rows = {}
    for c in cases():
        t0 = time.perf_counter()
        p = gpulab.predict(c["kernel"], c["grid"], c["block"], *make_args(c), gpu="H200")
        rows[c["name"]] = {
            "predicted_s": p.time_s,
            "limiter": p.limiter,
            "sampling_error": p.sampling["relative_error"],
            "wall_s": round(time.perf_counter() - t0, 2),
        }
        print(c["name"], rows[c["name"]], flush=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()
    res = _load()
    res["predicted"] = {
        "command": "python benchmarks/perf_blind.py predict",
        "model_commit": commit,
        "environment": environment(numba=False),
        "cases": rows,
    }
    _save(res)


def gpu_main(cases_out):
    """Launch every case twice (the first compiles); record which ran, in launch order."""
    from benchenv import environment, gpu_present

    if not gpu_present():
        print("SKIP: no CUDA GPU visible to numba; nothing launched, no cases file written")
        return
    done = []
    for c in cases():
        try:
            args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in make_args(c)]
            for _ in range(2):
                c["kernel"][c["grid"], c["block"]](*args)
            cuda.synchronize()
            done.append({"name": c["name"], "kernel": c["kernel"].py_func.__name__, "ok": True})
        except Exception as exc:  # noqa: BLE001 - record and go on
            done.append({"name": c["name"], "ok": False, "error": f"{type(exc).__name__}: {exc}"})
            print("FAILED", c["name"], exc, flush=True)
    with open(cases_out, "w") as f:
        json.dump({"environment": environment(), "cases": done}, f, indent=1)


def merge(csv_path, cases_path):
    """ncu's time of each case's second launch beside its committed prediction."""
    from ncu_runs import parse

    launches = parse(csv_path)
    record = json.load(open(cases_path))
    ran = [d for d in record["cases"] if d["ok"]]
    if len(launches) != 2 * len(ran):
        raise SystemExit(f"{len(launches)} launches profiled for {len(ran)} cases (expected 2 each)")
    res = _load()
    pred = res["predicted"]["cases"]
    rows = {}
    for k, d in enumerate(ran):
        name, vals, _ = launches[2 * k + 1]
        if d["kernel"] not in name:
            raise SystemExit(f"launch {2 * k + 1} is {name!r}, expected kernel {d['kernel']}")
        t = vals["gpu__time_duration.sum"] * 1e-9
        p = pred[d["name"]]["predicted_s"]
        rows[d["name"]] = {**vals, "measured_s": t, "ratio": p / t, "limiter": pred[d["name"]]["limiter"]}
    errs = [abs(r["ratio"] - 1) for r in rows.values()]
    res["measured"] = {
        "command": NCU_COMMAND,
        "environment": record["environment"],
        "failed": [d for d in record["cases"] if not d["ok"]],
        "cases": rows,
    }
    res["summary"] = {
        "cases": len(rows),
        "median_abs_error": float(np.median(errs)),
        "within_2x": sum(0.5 <= r["ratio"] <= 2 for r in rows.values()),
        "worst": max(rows, key=lambda n: abs(math.log(rows[n]["ratio"]))),
    }
    _save(res)
    print(json.dumps(res["summary"], indent=1))
    for n, r in rows.items():
        print(
            f"{n:24s} measured {r['measured_s'] * 1e6:9.1f} us  predicted/measured {r['ratio']:.2f}  {r['limiter']}"
        )


def merge_clock(csv_path, cases_path):
    """A re-run of the blind cases with the SM clock (NCU_CLOCK_COMMAND): each case's time and
    clock beside its recorded blind time, under "clock_rerun"; the blind record is left as it is."""
    from benchenv import ncu_clock
    from ncu_runs import parse

    launches = parse(csv_path)
    record = json.load(open(cases_path))
    ran = [d for d in record["cases"] if d["ok"]]
    if len(launches) != 2 * len(ran):
        raise SystemExit(f"{len(launches)} launches profiled for {len(ran)} cases (expected 2 each)")
    res = _load()
    old = res["measured"]["cases"]
    key = "sm__cycles_elapsed.avg.per_second"
    rows = {}
    for k, d in enumerate(ran):
        name, vals, _ = launches[2 * k + 1]
        if d["kernel"] not in name:
            raise SystemExit(f"launch {2 * k + 1} is {name!r}, expected kernel {d['kernel']}")
        t = vals["gpu__time_duration.sum"] * 1e-9
        rows[d["name"]] = {
            **vals,
            "measured_s": t,
            "recorded_s": old[d["name"]]["measured_s"] if d["name"] in old else None,
            "sm_clock": ncu_clock([vals[key]]),
        }
    res["clock_rerun"] = {
        "command": NCU_CLOCK_COMMAND,
        "merge": f"python benchmarks/perf_blind.py merge-clock {csv_path} {cases_path}",
        "environment": record["environment"],
        "failed": [d for d in record["cases"] if not d["ok"]],
        "note": "the blind cases re-timed with the SM clock; 'measured' keeps the blind round's times",
        "cases": rows,
        "sm_clock": ncu_clock([r[key] for r in rows.values()]),
    }
    _save(res)
    for n, r in rows.items():
        was = r["recorded_s"]
        print(
            f"{n:24s} {r['measured_s'] * 1e6:9.1f} us (recorded {was * 1e6 if was else float('nan'):9.1f})"
            f"  {r['sm_clock']['median_MHz']:.0f} MHz"
        )


def recheck_main():
    """Predict the same cases with the model as it is now and compare with the recorded times.
    Not blind: the model may have been revised after seeing the blind result."""
    import gpulab

    res = _load()
    meas = res["measured"]["cases"]
    rows = {}
    for c in cases():
        if c["name"] in meas:
            p = gpulab.predict(c["kernel"], c["grid"], c["block"], *make_args(c), gpu="H200")
            rows[c["name"]] = {
                "predicted_s": p.time_s,
                "limiter": p.limiter,
                "ratio": p.time_s / meas[c["name"]]["measured_s"],
            }
            print(c["name"], rows[c["name"]], flush=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()
    errs = [abs(r["ratio"] - 1) for r in rows.values()]
    res["after_revision"] = {
        "command": "python benchmarks/perf_blind.py recheck",
        "model_commit": commit,
        "note": "not blind: predicted after the blind result was seen and the model revised",
        "median_abs_error": float(np.median(errs)),
        "within_2x": sum(0.5 <= r["ratio"] <= 2 for r in rows.values()),
        "cases": rows,
    }
    _save(res)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "predict"
    if mode == "predict":
        predict_main()
    elif mode == "gpu":
        gpu_main(os.environ.get("PERF_CASES_OUT", "perf_blind_cases.json"))
    elif mode == "merge":
        merge(sys.argv[2], sys.argv[3])
    elif mode == "merge-clock":
        merge_clock(sys.argv[2], sys.argv[3])
    elif mode == "recheck":
        recheck_main()
    else:
        raise SystemExit(__doc__)
