"""Measure all-reduce time against message size on 2+ GPUs and fit the alpha-beta model (chapter 10).

torch.distributed with the NCCL backend, one process per GPU, float32 sum all-reduce of 8 B to
1 GiB, CUDA events after a warm-up, median of repeats, the slowest rank per size. Fits
T(n) = a + b n on the large sizes (bandwidth) and reads a from the small ones (latency), and
converts with the ring model T = 2(p-1) alpha + 2 (p-1)/p n / B into alpha and B, the numbers
gpulab.models.comms takes. Also reports nccl-tests' bus bandwidth. NVLink multicast (NVLS) is
left off (NCCL_NVLS_ENABLE=0). Writes benchmarks/results/allreduce_alpha_beta.json; prints SKIP
and exits 0 without torch or with fewer than two GPUs.

Run from the repository root on a machine with 2+ GPUs:  python benchmarks/allreduce_alpha_beta.py
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results", "allreduce_alpha_beta.json")
SIZES = [2 ** k for k in range(3, 31, 1)]        # bytes: 8 B .. 1 GiB
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
            s.record()
            dist.all_reduce(x)
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e) / 1e3)
        t = torch.tensor([float(np.median(ts))], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)      # the slowest rank sets the time
        rows.append({"bytes": x.numel() * 4, "time_s": float(t.item())})
        del x
        torch.cuda.empty_cache()
    if rank == 0:
        with open(rows_path, "w") as fh:
            json.dump(rows, fh)
    dist.destroy_process_group()


def fit(rows, p):
    """alpha and B of the ring model from measured rows."""
    import numpy as np
    n = np.array([r["bytes"] for r in rows], float)
    t = np.array([r["time_s"] for r in rows], float)
    big = n >= (1 << 26)
    b = np.polyfit(n[big], t[big], 1)[0] if big.sum() >= 2 else float("nan")
    a = float(np.median(t[n <= 1024]))
    alpha = a / (2 * (p - 1))
    bandwidth = 2 * (p - 1) / p / b
    busbw = [r["bytes"] / r["time_s"] * 2 * (p - 1) / p for r in rows]
    return {"small_message_time_s": a, "alpha_s": alpha, "slope_s_per_byte": float(b),
            "bandwidth_Bps": float(bandwidth), "max_bus_bandwidth_Bps": float(max(busbw))}


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
    mp.spawn(_worker, args=(world, port, rows_path), nprocs=world, join=True)
    with open(rows_path) as fh:
        rows = json.load(fh)
    res = {"env": {"device": torch.cuda.get_device_name(0), "gpus": world, "torch": torch.__version__,
                   "nccl": ".".join(map(str, torch.cuda.nccl.version())), "python": platform.python_version(),
                   "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE"),
                   "when_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
           "what": __doc__.strip().splitlines()[0], "rows": rows, "fit": fit(rows, world)}
    for r in rows:
        print(f"{r['bytes']:>12,d} B  {r['time_s'] * 1e6:10.1f} us")
    print("fit:", res["fit"])
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        json.dump(res, fh, indent=1)
    print("wrote", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
