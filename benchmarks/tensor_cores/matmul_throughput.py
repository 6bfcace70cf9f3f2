"""Matmul throughput per precision on the GPU at hand, with torch (chapter 09).

FP32 on the SIMT cores (TF32 disabled), TF32, BF16 and FP16 tensor cores (torch.matmul), and
FP8 E4M3 (torch._scaled_mm, per-tensor scales, bf16 output; with and without use_fast_accum). Square sizes 256..8192; each
timed with CUDA events after warm-up, median of ``REPS``; plus a device-to-device copy for
the memory bandwidth of the roofline. The SM clock (benchenv.ClockSampler, NVML) is sampled while
the host waits for each timed region's end event: "sweep_sm_clock" per precision and size,
"sm_clock" for the whole run (the host-bound small sizes are not slowed by a sampling thread).
Writes ``gpulab/data/results/tensor_cores_throughput.json`` (the chapter reads it); without a
GPU or torch it says so and exits 0.
Run: ``python benchmarks/tensor_cores/matmul_throughput.py``
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import datetime as _dt
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/: the shared environment record
import benchenv  # noqa: E402

OUT = os.path.join(RESULTS_DIR, "tensor_cores_throughput.json")
SIZES = [256, 512, 1024, 2048, 4096, 8192]
REPS = 20
CLOCK = None  # a benchenv.ClockSampler while main() runs
BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "fp8_fast_accum": 1}


def timed(fn, reps=REPS, warmup=5, inner=1):
    """Median milliseconds per call of fn(), timed with CUDA events after a warm-up; each timed
    region runs fn() ``inner`` times so that small sizes are not all launch overhead."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(inner):
            fn()
        e.record()
        with benchenv.timed(CLOCK):  # the GPU finishes the region while the host waits here
            e.synchronize()
        times.append(s.elapsed_time(e) / inner)
    times.sort()
    return times[len(times) // 2]


def inner_calls(n):
    """Calls per timed region: about 1 ms of work at 500 TFLOP/s, at least 1, at most 1000."""
    return int(min(1000, max(1, 5e8 / (2 * n**3))))


def sm_clock_under_load(op, seconds=2.0):
    """nvidia-smi's SM clock and power, sampled while ``op`` runs in a loop (None if unavailable)."""
    import subprocess
    import threading
    import time

    import torch

    out = {}

    def sample():
        time.sleep(seconds / 2)
        try:
            r = subprocess.run(
                ["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,power.draw", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=10,
            )
            out["nvidia_smi"] = r.stdout.strip()
        except Exception as e:  # nvidia-smi missing
            out["nvidia_smi"] = f"unavailable: {e}"

    t = threading.Thread(target=sample)
    t.start()
    end = time.time() + seconds
    while time.time() < end:
        op()
        torch.cuda.synchronize()
    t.join()
    return out.get("nvidia_smi")


def make_op(prec, n):
    """A zero-argument callable doing one n x n x n matmul in precision ``prec``."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(0)
    a32 = torch.randn(n, n, device="cuda", generator=g)
    b32 = torch.randn(n, n, device="cuda", generator=g)
    if prec in ("fp32", "tf32"):
        return lambda: torch.matmul(a32, b32)
    if prec in ("bf16", "fp16"):
        dt = torch.bfloat16 if prec == "bf16" else torch.float16
        a, b = a32.to(dt), b32.to(dt)
        return lambda: torch.matmul(a, b)
    if prec in ("fp8", "fp8_fast_accum"):
        f8 = torch.float8_e4m3fn
        sa = (448.0 / a32.abs().max()).float()
        sb = (448.0 / b32.abs().max()).float()
        a = (a32 * sa).to(f8)
        b = (b32 * sb).to(f8).t().contiguous().t()  # column-major, as _scaled_mm wants
        inv_a, inv_b = (1 / sa).reshape(()), (1 / sb).reshape(())
        fast = prec == "fp8_fast_accum"
        return lambda: torch._scaled_mm(
            a, b, scale_a=inv_a, scale_b=inv_b, out_dtype=torch.bfloat16, use_fast_accum=fast
        )
    raise ValueError(prec)


def bandwidth_tbs(nbytes=4 << 30):
    """Device-to-device copy bandwidth (read + write bytes / time), TB/s."""
    import torch

    src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src), reps=10, warmup=3)
    return 2 * nbytes / (ms * 1e-3) / 1e12


def main() -> int:
    try:
        import torch
    except ImportError:
        print("torch is not installed: skipping the throughput benchmark")
        return 0
    if not torch.cuda.is_available():
        print("no CUDA GPU here: skipping the throughput benchmark (the chapter shows recorded numbers)")
        return 0
    global CLOCK
    CLOCK = benchenv.ClockSampler().__enter__()
    sweep, clocks = {}, {}
    errors = {}
    for prec in ["fp32", "tf32", "bf16", "fp16", "fp8", "fp8_fast_accum"]:
        torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
        sweep[prec], clocks[prec] = {}, {}
        for n in SIZES:
            try:
                op = make_op(prec, n)
                benchenv.take(CLOCK)  # drop any samples of an earlier failed size
                ms = timed(op, inner=inner_calls(n))
                sweep[prec][n] = 2 * n**3 / (ms * 1e-3) / 1e12
                clocks[prec][str(n)] = benchenv.take(CLOCK)
            except Exception as e:  # e.g. FP8 unsupported on this GPU / torch
                errors[f"{prec}@{n}"] = f"{type(e).__name__}: {e}"
            finally:
                torch.cuda.empty_cache()
        print(prec, {n: round(v, 1) for n, v in sweep[prec].items()})
    torch.backends.cuda.matmul.allow_tf32 = False
    clock = sm_clock_under_load(make_op("fp16", 8192))
    bw = bandwidth_tbs()
    copy_clock = benchenv.take(CLOCK)
    CLOCK.__exit__(None, None, None)
    big = max(SIZES)
    res = dict(
        source="measured with benchmarks/tensor_cores/matmul_throughput.py",
        device=torch.cuda.get_device_name(),
        measured_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        method=(
            f"torch {torch.__version__} matmul (fp8: torch._scaled_mm e4m3, bf16 out), square "
            f"n x n x n, CUDA events, median of {REPS} after warm-up (small n: several calls per "
            f"timed region); 'tflops' is n = {big}"
        ),
        tflops={p: round(v[big], 1) for p, v in sweep.items() if big in v},
        sweep_tflops={p: {str(n): round(t, 2) for n, t in v.items()} for p, v in sweep.items()},
        bytes_per_element=BYTES,
        copy_bandwidth_tbs=round(bw, 3),
        sm_clock_mhz_max_mhz_power_during_fp16_8192=clock,
        sweep_sm_clock=clocks,
        copy={"bytes_each_way": 4 << 30, "sm_clock": copy_clock},
        sm_clock=CLOCK.whole_run(),  # every timed region: the matmuls and the copy
        errors=errors,
        environment=benchenv.environment(numba=False),
    )
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        json.dump(res, fh, indent=2)
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
