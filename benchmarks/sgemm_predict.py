"""gpulab.predict's H200 time for each chapter-11 fp32 GEMM step, computed on a CPU (issue 27).

A model run, not a measurement: ``gpulab.predict`` simulates a sample of each kernel's blocks on
the CPU and scales the counts to the launch. At M = N = K = 4096 one block of the fast steps
alone runs past the simulator's step budget (512 K steps of 256 threads), so the prediction is
made at M = N = 4096, K = 512: the same grid, waves and occupancy as the measured 4096^3 run,
an eighth of its K loop (64 K steps of the tiled kernels, so the loop still dominates: the
prologue and the 64 MiB store of C are a few percent). Predicting all steps takes about 15
minutes of one CPU core, so the chapter reads this file instead of predicting while it executes.

    python benchmarks/sgemm_predict.py --out gpulab/data/results        # writes sgemm_predicted.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

# chapter 11's steps and the generated ones that made the ladder (benchmarks/sgemm.py's names)
STEPS = ("naive", "shared", "reg1d", "reg2d", "vec", "prefetch")
GENERATED = {
    "unroll": {},
    "unroll_u32": {"unsigned": True},
    "warptile": {"unsigned": True, "warp": (4, 8)},
}


def kernel_and_launch(name: str, m: int, k: int, n: int):
    """(kernel, grid, block) of a step named as benchmarks/sgemm.py names it."""
    from gpulab.kernels import sgemm as S

    if name in S.STEPS:
        grid, block = S.launch_config(name, m, k, n)
        return S.STEPS[name][0], grid, block
    if name not in GENERATED:
        raise ValueError(f"unknown step {name!r}; one of {', '.join([*STEPS, *GENERATED])}")
    grid, _ = S.launch_config("prefetch", m, k, n)
    return S.make_sgemm_unrolled(**GENERATED[name]), grid, (256,)


def predict_one(name: str, m: int, k: int, n: int, budget_s: float) -> dict:
    """One step's prediction as a JSON-ready dict."""
    import numpy as np

    import gpulab

    kern, grid, block = kernel_and_launch(name, m, k, n)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    t0 = time.perf_counter()
    p = gpulab.predict(kern, grid, block, c, a, b, budget_s=budget_s)
    wall = time.perf_counter() - t0
    return {
        "grid": list(grid),
        "block": list(block),
        "time_us": p.time_us,
        "tflops": 2.0 * m * n * k / p.time_s / 1e12,
        "limiter": p.limiter,
        "limiter_key": p.limiter_key,
        "bounds_us": {r["key"]: r["seconds"] * 1e6 for r in p.breakdown},
        "occupancy": {k_: v for k_, v in p.occupancy.items() if isinstance(v, (int, float, str))},
        "sampling": {k_: v for k_, v in p.sampling.items() if isinstance(v, (int, float, str, type(None)))},
        "from_sass": any(x.startswith("instructions and registers from the compiled code") for x in p.notes),
        "notes": list(p.notes),
        "wall_s": wall,
    }


def _commit() -> str | None:
    r = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE)
    return r.stdout.strip() or None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="gpulab/data/results")
    ap.add_argument("--mn", type=int, default=4096, help="M = N")
    ap.add_argument("--k", type=int, default=512, help="K (the measured run has K = 4096)")
    ap.add_argument("--budget", type=float, default=30.0, help="gpulab.predict's budget_s per step")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    out = Path(args.out) / "sgemm_predicted.json"
    doc = json.loads(out.read_text()) if out.exists() and args.only else {}
    doc.update(
        {
            "what": "gpulab.predict's predicted time on an H200 for chapter 11's fp32 GEMM steps: a "
            "model run on a CPU (a sample of blocks simulated, counts scaled to the launch), not a "
            "measurement. Predicted at M = N = mn, K = k: the measured run's grid, waves and "
            "occupancy (M = N = 4096) with an eighth of its K loop, since one block at K = 4096 "
            "runs past the simulator's step budget.",
            "shape": {"M": args.mn, "N": args.mn, "K": args.k},
            "command": "python benchmarks/sgemm_predict.py --out gpulab/data/results",
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "environment": {
                "host": platform.node(),
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
                "model_commit": _commit(),
            },
        }
    )
    kernels = doc.setdefault("kernels", {})
    for name in [*STEPS, *GENERATED]:
        if args.only and name not in args.only:
            continue
        rec = predict_one(name, args.mn, args.k, args.mn, args.budget)
        kernels[name] = rec
        print(
            f"{name:11s} {rec['time_us']:9.1f} us {rec['tflops']:6.2f} TFLOP/s  {rec['limiter_key']:8s} "
            f"({rec['wall_s']:.0f} s on the CPU)",
            flush=True,
        )
        out.write_text(json.dumps(doc, indent=1))  # after each step: a long run keeps what it has
    print("wrote", out)


if __name__ == "__main__":
    main()
