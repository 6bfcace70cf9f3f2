"""Measure all-reduce time against message size on 2+ GPUs and fit the alpha-beta model (chapter 10).

torch.distributed with the NCCL backend, one process per GPU, float32 sum all-reduce of 8 B to
1 GiB, after a warm-up, the slowest rank per size, three ways:
  * "per_call": a barrier, then CUDA events around ONE all_reduce, median of repeats. The
    interval starts when the first rank's event is recorded, so it also holds the wait for the
    other rank to arrive (the ranks leave the barrier at different times) and each call's host
    path: it is an upper bound, not alpha;
  * "back_to_back": K all-reduces enqueued back to back between two events, one sync, time / K:
    the launch and host path overlap with the previous call, so this is the per-call cost of a
    stream of all-reduces (what a training step's many small all-reduces see);
  * "graph": K all-reduces captured in one CUDA graph and replayed, time / K (sizes <= 1 MiB).
Fits T(n) = a + b n on the large sizes (bandwidth) and reads a from the small ones (latency), and
converts with the ring model T = 2(p-1) alpha + 2 (p-1)/p n / B into alpha and B, the numbers
gpulab.models.comms takes. Also reports nccl-tests' bus bandwidth, and a peer-to-peer copy
(torch copy_ cuda:0 -> cuda:1 and back, events). NVLink multicast (NVLS) is left off
(NCCL_NVLS_ENABLE=0). Each rank samples its GPU's SM clock during its timed calls
(benchenv.ClockSampler on NVML index = rank, which assumes CUDA_VISIBLE_DEVICES is unset): per
row "sm_clock" is rank 0's, and the whole run's per rank is "sm_clock_per_rank". Writes
gpulab/data/results/allreduce_alpha_beta.json; prints SKIP and exits 0 without torch or with
fewer than two GPUs.

Run from the repository root on a machine with 2+ GPUs:  python benchmarks/allreduce_alpha_beta.py
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(RESULTS_DIR, "allreduce_alpha_beta.json")
SIZES = [2**k for k in range(3, 31, 1)]  # bytes: 8 B .. 1 GiB
REPEATS = 20
WARMUP = 5


def _worker(rank, world, port, rows_path):
    import numpy as np
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    sys.path.insert(0, HERE)
    from benchenv import ClockSampler

    clk = ClockSampler(device_index=rank).__enter__()
    rows = []
    for nbytes in SIZES:
        x = torch.ones(max(nbytes // 4, 1), dtype=torch.float32, device="cuda")
        for _ in range(WARMUP):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        ts = []
        for _ in range(REPEATS if nbytes < (1 << 28) else 5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            with clk.timed():
                s.record()
                dist.all_reduce(x)
                e.record()
                e.synchronize()
            ts.append(s.elapsed_time(e) / 1e3)
        k = max(5, min(BACK_TO_BACK, (1 << 30) // max(nbytes, 1)))
        b2b, host = [], []
        for _ in range(5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            torch.cuda.synchronize()
            with clk.timed():
                t0 = time.perf_counter()
                s.record()
                for _ in range(k):
                    dist.all_reduce(x)
                e.record()
                t1 = time.perf_counter()
                e.synchronize()
            b2b.append(s.elapsed_time(e) / 1e3 / k)
            host.append((t1 - t0) / k)
        t = torch.tensor([float(np.median(ts)), float(np.median(b2b))], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank sets the time
        rows.append(
            {
                "bytes": x.numel() * 4,
                "time_s": float(t[0].item()),
                "back_to_back_s": float(t[1].item()),
                "back_to_back_k": k,
                "host_enqueue_s": float(np.median(host)),
                "sm_clock": clk.take(),
            }
        )
        del x
        torch.cuda.empty_cache()
    if rank == 0:
        with open(rows_path, "w") as fh:
            json.dump(rows, fh)
    # CUDA graphs last: if capture fails or hangs, the rows above are already saved
    for row in rows:
        if row["bytes"] > GRAPH_MAX_BYTES:
            continue
        x = torch.ones(max(row["bytes"] // 4, 1), dtype=torch.float32, device="cuda")
        g = graph_time(x, dist, torch)
        if isinstance(g, str):
            row["graph_error"] = g
            break
        t = torch.tensor([g], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        row["graph_s"] = float(t[0].item())
    clk.__exit__(None, None, None)
    with open(f"{rows_path}.clock{rank}", "w") as fh:
        json.dump(clk.whole_run(), fh)
    if rank == 0:
        with open(rows_path, "w") as fh:
            json.dump(rows, fh)
    dist.destroy_process_group()


BACK_TO_BACK = 500
GRAPH_MAX_BYTES = 1 << 20
GRAPH_K = 100


def graph_time(x, dist, torch):
    """Seconds per all-reduce when GRAPH_K of them are replayed from one CUDA graph (or the error)."""
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                dist.all_reduce(x)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(GRAPH_K):
                dist.all_reduce(x)
        graph.replay()
        torch.cuda.synchronize()
        ts = []
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            torch.cuda.synchronize()
            a.record()
            graph.replay()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) / 1e3 / GRAPH_K)
        import numpy as np

        return float(np.median(ts))
    except Exception as e:  # noqa: BLE001 - keep the other measurements
        return f"{type(e).__name__}: {e}"[:300]


def p2p_copy(torch, nbytes=1 << 30, reps=10):
    """Peer-to-peer copy bandwidth between GPU 0 and GPU 1 (torch copy_, CUDA events on the
    source device's stream), both directions, and whether peer access is possible."""
    import numpy as np

    out = {
        "bytes": nbytes,
        "can_access_peer_0_1": torch.cuda.can_device_access_peer(0, 1),
        "can_access_peer_1_0": torch.cuda.can_device_access_peer(1, 0),
    }
    for src, dst in ((0, 1), (1, 0)):
        a = torch.empty(nbytes // 4, dtype=torch.float32, device=f"cuda:{src}").normal_()
        b = torch.empty_like(a, device=f"cuda:{dst}")
        for _ in range(3):
            b.copy_(a)
        torch.cuda.synchronize(src)
        torch.cuda.synchronize(dst)
        ts = []
        with torch.cuda.device(src):
            for _ in range(reps):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                b.copy_(a)
                e1.record()
                e1.synchronize()
                torch.cuda.synchronize(dst)
                ts.append(e0.elapsed_time(e1) / 1e3)
        ok = bool(torch.equal(b[:1024].cpu(), a[:1024].cpu()))
        t = float(np.median(ts))
        out[f"gpu{src}_to_gpu{dst}"] = {"time_s": t, "GBps": nbytes / t / 1e9, "correct": ok}
        del a, b
        torch.cuda.empty_cache()
    return out


def topology():
    import subprocess

    try:
        return subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=30).stdout
    except Exception as e:  # noqa: BLE001
        return repr(e)


def fit(rows, p):
    """alpha and B of the ring model from measured rows."""
    import numpy as np

    n = np.array([r["bytes"] for r in rows], float)
    t = np.array([r["time_s"] for r in rows], float)
    big = n >= (1 << 26)
    b = np.polyfit(n[big], t[big], 1)[0] if big.sum() >= 2 else float("nan")
    a = float(np.median(t[n <= 1024]))
    alpha = a / (2 * (p - 1))
    extra = {}
    for key in ("back_to_back_s", "graph_s"):
        v = [r[key] for r in rows if r["bytes"] <= 1024 and r.get(key) is not None and r[key] == r[key]]
        if v:
            extra[f"small_message_{key}"] = float(np.median(v))
            extra[f"alpha_{key.replace('_s', '')}_s"] = float(np.median(v)) / (2 * (p - 1))
    bandwidth = 2 * (p - 1) / p / b
    busbw = [r["bytes"] / r["time_s"] * 2 * (p - 1) / p for r in rows]
    return {
        "small_message_time_s": a,
        "alpha_s": alpha,
        "slope_s_per_byte": float(b),
        "bandwidth_Bps": float(bandwidth),
        "max_bus_bandwidth_Bps": float(max(busbw)),
        **extra,
    }


def main() -> int:
    try:
        import torch

        world = torch.cuda.device_count()
    except Exception:  # noqa: BLE001
        print("SKIP: torch not installed; results file left untouched")
        return 0
    if world < 2:
        print(f"SKIP: {world} GPU(s) visible, need 2 or more; results file left untouched")
        return 0
    import socket
    import torch.multiprocessing as mp

    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    import tempfile

    rows_path = os.path.join(tempfile.mkdtemp(), "rows.json")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
    p2p = p2p_copy(torch)
    print("p2p:", p2p)
    ctx = mp.start_processes(
        _worker, args=(world, port, rows_path), nprocs=world, join=False, start_method="spawn"
    )
    deadline = time.time() + float(os.environ.get("ALLREDUCE_TIMEOUT_S", 240))
    while not ctx.join(timeout=5):
        if time.time() > deadline:
            print("timed out: workers stopped; keeping the rows saved before the graph phase")
            for proc in ctx.processes:
                if proc.is_alive():
                    proc.terminate()
            break
    with open(rows_path) as fh:
        rows = json.load(fh)
    clocks = {}
    for rank in range(world):
        if os.path.exists(f"{rows_path}.clock{rank}"):
            with open(f"{rows_path}.clock{rank}") as fh:
                clocks[f"rank{rank}"] = json.load(fh)
    sys.path.insert(0, HERE)
    from benchenv import environment

    # the shared record, plus what only this run knows: GPUs used, NCCL version and NVLS setting
    res = {
        "environment": environment(numba=False),
        "env": {
            "gpus": world,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE"),
        },
        "what": __doc__.strip().splitlines()[0],
        "rows": rows,
        "sm_clock_per_rank": clocks,
        "sm_clock": clocks.get("rank0"),
        "fit": fit(rows, world),
        "p2p_copy": p2p,
        "topology": topology(),
        "labels": {
            "time_s": "per call: barrier, events around one all_reduce (upper bound)",
            "back_to_back_s": "K all_reduces between two events, / K",
            "graph_s": "K all_reduces replayed from one CUDA graph, / K",
            "host_enqueue_s": "host seconds per all_reduce call when enqueued back to back",
        },
    }
    for r in rows:
        print(
            f"{r['bytes']:>12,d} B  per call {r['time_s'] * 1e6:10.1f} us  back to back "
            f"{r['back_to_back_s'] * 1e6:10.1f} us  graph {(r.get('graph_s') or float('nan')) * 1e6:8.1f} us"
        )
    print("fit:", res["fit"])
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        json.dump(res, fh, indent=1)
    print("wrote", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
