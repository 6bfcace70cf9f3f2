"""Launch the three stall kernels of gpulab.kernels.stalls once each, checked against numpy, for
Nsight Compute's Warp State statistics (seed 003: Long Scoreboard, Barrier, MIO Throttle).

``python benchmarks/ncu_runs.py stalls`` runs this under ncu and writes
gpulab/data/results/stall_reasons.json (per kernel: every smsp__average_warps_issue_stalled_*
_per_issue_active.ratio, i.e. the average number of warps stalled for that reason per issued
instruction, and each reason's share of the total). ``python benchmarks/stall_reasons.py sim``
prints what gpulab's simulator counts for the same kernels on a small launch (no GPU needed).
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

CHASE_NODES = 64 << 20  # 256 MiB of int32 successors: the chase misses L2
CHASE_STEPS = 64
GRID = 132 * 8
BARRIER_ITERS = 20_000
STORE_ITERS = 4096

# (kernel name, stall reason it is built for), in launch order
EXPECTED = [
    ("dependent_loads", "long_scoreboard"),
    ("one_warp_works", "barrier"),
    ("conflicted_stores", "mio_throttle"),
]


def launches(backend: str, small: bool):
    """(name, kernel, grid, block, args, check) for each stall kernel."""
    from gpulab.kernels import stalls as S

    nodes = 4096 if small else CHASE_NODES
    grid = 2 if small else GRID
    steps, b_iters, s_iters = (4, 50, 40) if small else (CHASE_STEPS, BARRIER_ITERS, STORE_ITERS)
    n = grid * S.BLOCK
    nxt = S.random_successors(nodes)
    o1, o2, o3 = np.zeros(n, np.int32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    return [
        (
            "dependent_loads",
            S.dependent_loads,
            grid,
            S.BLOCK,
            (o1, nxt, steps),
            lambda: np.array_equal(o1, S.dependent_loads_reference(nxt, n, steps)),
        ),
        (
            "one_warp_works",
            S.one_warp_works,
            grid,
            S.BLOCK,
            (o2, b_iters),
            # float32 v*0.999+0.001 stops moving within ~3e-5 of its fixed point 1, at a place that
            # depends on FMA contraction: compare with that tolerance
            lambda: np.allclose(o2, S.one_warp_works_reference(n, S.BLOCK, b_iters), rtol=1e-4),
        ),
        (
            "conflicted_stores",
            S.conflicted_stores,
            grid,
            S.BLOCK,
            (o3, s_iters),
            lambda: np.array_equal(o3, S.conflicted_stores_reference(n, S.BLOCK, s_iters), equal_nan=True),
        ),
    ]


def run(backend: str, small: bool) -> dict:
    """Launch each kernel through gpulab.launch; per kernel: correct?, and the simulator's counts."""
    import gpulab

    out = {}
    for name, kern, grid, block, args, check in launches(backend, small):
        rep = gpulab.launch(kern, grid, block, *args, backend=backend)
        out[name] = {
            "correct": bool(check()),
            "grid": grid,
            "block": block,
            "metrics": {k: v for k, v in (rep.metrics or {}).items() if isinstance(v, (int, float))}
            if backend == "sim"
            else None,
        }
    return out


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "ncu"
    if mode == "sim":
        res = run("sim", small=True)
        for k, v in res.items():
            print(k, "correct" if v["correct"] else "WRONG", v["metrics"])
        return 0 if all(v["correct"] for v in res.values()) else 1
    from benchenv import gpu_present

    if not gpu_present():
        print("SKIP: no CUDA GPU visible")
        return 0
    res = run("gpu", small=False)
    for k, v in res.items():
        print(k, "correct" if v["correct"] else "WRONG")
    return 0 if all(v["correct"] for v in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
