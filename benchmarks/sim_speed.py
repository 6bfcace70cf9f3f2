"""gpulab's simulator against Numba's CUDA simulator, side by side, on 2 cores.

Runs each kernel of the issue (8192-element vector add, 4096-element shared-memory tree
reduction, 64x64 tiled matmul) on both, checks both give the right answer, and writes medians
to gpulab/data/results/sim_speed.json. The reduction and the matmul are the book's own
(``gpulab.kernels.reduce.reduce_sum``, ``gpulab.kernels.matmul.matmul_tiled``); the vector add,
which no chapter imports from the library, is written here. Numba's simulator runs in a subprocess with
NUMBA_ENABLE_CUDASIM=1, as a reader would use it. Also measures the peak memory of a
2^20-thread launch on gpulab's simulator.

    python benchmarks/sim_speed.py [--reps 3]
"""

from gpulab.results import RESULTS_DIR
import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

KERNELS = textwrap.dedent("""
    import numpy as np
    from numba import cuda

    from gpulab.kernels import matmul, reduce

    @cuda.jit
    def vector_add(out, a, b):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = a[i] + b[i]

    def cases():
        rng = np.random.default_rng(0)
        n = 8192
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        r = rng.random(4096, dtype=np.float32)
        A = rng.random((64, 64), dtype=np.float32)
        B = rng.random((64, 64), dtype=np.float32)
        g = reduce.GROUP
        return {
            "vector_add_8192": (vector_add, n // 256, 256, lambda: (np.zeros(n, np.float32), a, b),
                                lambda args: np.allclose(args[0], a + b)),
            "tree_reduce_4096": (reduce.reduce_sum, 4096 // g, g,
                                 lambda: (np.zeros(4096 // g, np.float32), r),
                                 lambda args: np.allclose(args[0], r.reshape(-1, g).sum(1), rtol=1e-4)),
            "matmul_64_tiled16": (matmul.matmul_tiled, matmul.grid_for(64, 64), (matmul.TILE, matmul.TILE),
                                  lambda: (np.zeros((64, 64), np.float32), A, B),
                                  lambda args: np.allclose(args[0], A @ B, rtol=1e-4)),
        }
""")

RUNNER = textwrap.dedent("""
    import json, statistics, sys, time
    sys.path.insert(0, {kdir!r})
    import sim_speed_kernels as K
    which, reps = sys.argv[1], int(sys.argv[2])
    if which == "gpulab":
        import gpulab
    out = {{}}
    for name, (kern, grid, block, make, ok) in K.cases().items():
        times = []
        for _ in range(reps):
            args = make()
            t0 = time.perf_counter()
            if which == "gpulab":
                gpulab.launch(kern, grid, block, *args, backend="sim")
            else:
                kern[grid, block](*args)
            times.append(time.perf_counter() - t0)
            assert ok(args), name + " gave a wrong answer on " + which
        out[name] = {{"median_s": statistics.median(times), "times_s": times}}
    print(json.dumps(out))
""")

MEMORY = textwrap.dedent("""
    import resource, sys, time
    sys.path.insert(0, {kdir!r})
    import numpy as np
    import sim_speed_kernels as K
    import gpulab
    n = 1 << 20
    a = np.ones(n, np.float32); b = np.ones(n, np.float32); out = np.zeros(n, np.float32)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    rep = gpulab.launch(K.vector_add, n // 256, 256, out, a, b, backend="sim")
    dt = time.perf_counter() - t0
    assert (out == 2).all()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(peak * 1024, before * 1024, dt)
""")


def run(code, env, *args):
    res = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=3600
    )
    if res.returncode:
        raise SystemExit(res.stderr)
    return res.stdout.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=str(RESULTS_DIR / "sim_speed.json"))
    opts = ap.parse_args()
    kdir = HERE / ".kernels"
    kdir.mkdir(parents=True, exist_ok=True)
    (kdir / "sim_speed_kernels.py").write_text(KERNELS)
    base = dict(os.environ, GPULAB_QUIET="1", PYTHONPATH=str(ROOT))
    base.pop("NUMBA_ENABLE_CUDASIM", None)
    ours = json.loads(run(RUNNER.format(kdir=str(kdir)), base, "gpulab", str(opts.reps)))
    theirs = json.loads(
        run(RUNNER.format(kdir=str(kdir)), dict(base, NUMBA_ENABLE_CUDASIM="1"), "numba", str(opts.reps))
    )
    peak, before, dt = run(MEMORY.format(kdir=str(kdir)), base).split()
    sys.path.insert(0, str(HERE))
    from benchenv import environment

    result = {
        "what": "median wall time per launch, gpulab simulator vs Numba's CUDA simulator",
        "environment": environment(numba=False),
        "reps": opts.reps,
        "kernels": {
            name: {
                "gpulab_s": ours[name]["median_s"],
                "numba_sim_s": theirs[name]["median_s"],
                "speedup": theirs[name]["median_s"] / ours[name]["median_s"],
            }
            for name in ours
        },
        "launch_2_20_threads": {
            "peak_rss_bytes": int(peak),
            "rss_before_bytes": int(before),
            "seconds": float(dt),
        },
    }
    Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.out).write_text(json.dumps(result, indent=2) + "\n")
    for name, r in result["kernels"].items():
        print(
            f"{name:20s} gpulab {r['gpulab_s'] * 1e3:8.1f} ms   numba-sim {r['numba_sim_s']:7.2f} s"
            f"   speedup {r['speedup']:7.0f}x"
        )
    m = result["launch_2_20_threads"]
    print(f"2^20-thread vector add: {m['seconds']:.2f} s, peak RSS {m['peak_rss_bytes'] / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
