"""Launch overhead as the serial part (chapter 10); writes gpulab/data/results/launch_overhead.json.

Measures on a GPU, after a warm-up, median of repeats, and labels each figure for what it is
("launch_parts" in the JSON):
  * host launch cost: host seconds per asynchronous launch of a tiny kernel (1 block of 32
    threads; numba) or small op (torch), thousands enqueued in a loop;
  * GPU time: the tiny kernel queued behind a long kernel, so the two events around it are
    recorded while the stream is still busy and bracket only GPU work (one kernel, and 1000
    kernels back to back divided by 1000); ``python benchmarks/launch_overhead.py ncu`` runs the
    tiny kernel alone for Nsight Compute's gpu__time_duration;
  * end to end: host wall time of one launch plus cuda.synchronize();
  * "events around one launch on an idle stream" (launch_parts, numba and torch alike; numba's
    also as numba_tiny's gpu_s_single_isolated): the first event is recorded before the launch
    call, so the interval holds the host launch path, as in bandwidth.py's copy times;
  * torch (if installed): host-side time per small in-place op (x.add_(1) on 32 floats), same way;
  * many tiny kernels against one fused kernel: a chain of K element-wise updates y = a*y + b on
    n floats, as K launches and as one launch that loops K times, for several n (numba, and
    torch as K separate ops);
  * a pipeline timeline: host numpy work, a host-to-device copy and a kernel per step, recorded
    with gpulab.timeline (perf_counter on the host, CUDA events for the kernels), serial and with
    the host work of step k+1 overlapping the kernel of step k.
The SM clock (benchenv.ClockSampler, "sm_clock" per section and for the whole run): a loop timed
on the host gets one sample just before and one just after it, read in the main thread, so no
other thread of the process runs beside the timed Python (the sampler check below found the
sampling thread's effect on numba's launches within 1%, far below the host's own spread between
runs); the sampling thread runs only while the host waits in synchronize() for GPU work.
  * "sampler_check" (section 0, first): numba's and torch's host launch cost in one process with
    no sampler, with the sampling thread inside the loop (NVML, as the 2026-12-02 run did), with
    a sampling thread that reads no NVML, and with samples at the ends only; interleaved rounds,
    plus the seconds one NVML read takes and the first launches after compiling.
Without a GPU it prints SKIP and exits 0 without touching the results file.

Run from the repository root:  python benchmarks/launch_overhead.py     (about a minute)
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import dataclasses
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)
OUT = os.path.join(RESULTS_DIR, "launch_overhead.json")

N_LAUNCH = 5000
REPEATS = 7
CHAIN_K = 64
CHAIN_N = [1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 24]
PIPE_N = 1 << 22  # floats per pipeline step
PIPE_ITERS = 400  # loop iterations per element in the pipeline's kernel


from numba import cuda  # noqa: E402  (module-global, so Numba's simulator can smoke-test this file)

import benchenv  # noqa: E402
from benchenv import environment, gpu_present  # noqa: E402

CLOCK = None  # a benchenv.ClockSampler, set by main(): samples the SM clock inside the timed loops
ENDS = "one sample in the main thread just before and one just after each host-timed loop"
WAITS = "sampled while the host waited in synchronize() for the queued GPU work"


def _when(rec: dict | None, when: str) -> dict | None:
    """A clock record with how its samples were taken (ENDS or WAITS; the source says the reader)."""
    if rec is not None:
        rec["when"] = when
    return rec


def kernels():
    @cuda.jit
    def tiny(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1.0

    @cuda.jit
    def axpb(y, a, b):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = a * y[i] + b

    @cuda.jit
    def axpb_fused(y, a, b, k):
        i = cuda.grid(1)
        if i < y.size:
            v = y[i]
            for _ in range(k):
                v = a * v + b
            y[i] = v

    @cuda.jit
    def work(y, iters):
        i = cuda.grid(1)
        if i < y.size:
            v = y[i]
            for _ in range(iters):
                v = v * 0.999 + 0.001
            y[i] = v

    return tiny, axpb, axpb_fused, work


def launch_rate(launch_once, sync, event_factory, n=N_LAUNCH):
    """Host seconds per enqueue, wall seconds per launch incl. the final sync, GPU seconds per
    launch between the first and last event (median of REPEATS)."""
    for _ in range(200):
        launch_once()
    sync()
    host, wall, gpu = [], [], []
    for _ in range(REPEATS):
        e0, e1 = event_factory()
        sync()
        benchenv.sample_now(CLOCK)  # at the ends only: no other thread beside the timed loop
        t0 = time.perf_counter()
        e0()
        for _ in range(n):
            launch_once()
        e1()
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        benchenv.sample_now(CLOCK)
        host.append((t1 - t0) / n)
        wall.append((t2 - t0) / n)
        gpu.append(e1.elapsed() / n)
    return {
        "sm_clock": _when(benchenv.take(CLOCK), ENDS),
        "host_s_per_launch": float(np.median(host)),
        "wall_s_per_launch": float(np.median(wall)),
        "gpu_s_per_launch": float(np.median(gpu)),
        "launches": n,
        "repeats": REPEATS,
    }


LONG_ITERS = 1 << 25  # work[1, 32] loop: ~tens of ms, longer than enqueuing BACK_TO_BACK launches
TORCH_SLEEP_CYCLES = 100_000_000
BACK_TO_BACK = 1000
PARTS_REPEATS = 21
LABELS = {
    "host_launch_s": "host launch cost: host seconds per asynchronous launch (enqueue only)",
    "gpu_single_behind_long_s": "GPU time of one tiny kernel: events recorded behind a long "
    "kernel, so they bracket GPU work only",
    "gpu_back_to_back_s": "GPU time per tiny kernel when BACK_TO_BACK are queued behind a long "
    "kernel (events around all of them, divided by their number)",
    "end_to_end_s": "end to end: host wall time of one launch + synchronize",
    "events_idle_stream_s": "events around one launch on an idle stream: holds the host launch "
    "path (not GPU time)",
}


def launch_parts(launch_once, launch_long, sync, event_factory):
    """GPU time of one launch (behind a long kernel, and per launch of BACK_TO_BACK queued ones)
    and end-to-end time of launch + sync; medians, seconds."""
    for _ in range(50):
        launch_once()
    launch_long()
    sync()
    single, b2b, e2e = [], [], []
    for _ in range(PARTS_REPEATS):
        e0, e1 = event_factory()
        sync()
        launch_long()
        e0()
        launch_once()
        e1()
        with benchenv.timed(CLOCK):  # the GPU runs the queued work while the host waits here
            sync()
        single.append(e1.elapsed())
    for _ in range(5):
        e0, e1 = event_factory()
        sync()
        launch_long()
        e0()
        t0 = time.perf_counter()
        for _ in range(BACK_TO_BACK):
            launch_once()
        t_enqueue = time.perf_counter() - t0
        e1()
        with benchenv.timed(CLOCK):
            sync()
        b2b.append(e1.elapsed() / BACK_TO_BACK)
    benchenv.sample_now(CLOCK)
    for _ in range(200):
        t0 = time.perf_counter()
        launch_once()
        sync()
        e2e.append(time.perf_counter() - t0)
    idle = []  # events around one launch on an idle stream, as bandwidth.py times its copies
    for _ in range(50):
        e0, e1 = event_factory()
        sync()
        e0()
        launch_once()
        e1()
        sync()
        idle.append(e1.elapsed())
    benchenv.sample_now(CLOCK)
    e0, e1 = event_factory()
    sync()
    e0()
    launch_long()
    e1()
    with benchenv.timed(CLOCK):
        sync()
    return {
        "sm_clock": _when(
            benchenv.take(CLOCK), WAITS + "; and " + ENDS + " (end to end, events on an idle stream)"
        ),
        "gpu_single_behind_long_s": float(np.median(single)),
        "gpu_back_to_back_s": float(np.median(b2b)),
        "end_to_end_s": float(np.median(e2e)),
        "events_idle_stream_s": float(np.median(idle)),
        "long_kernel_s": e1.elapsed(),
        "enqueue_of_back_to_back_s": t_enqueue,
        "labels": LABELS,
    }


def numba_events():
    a, b = cuda.event(), cuda.event()

    class E:
        def __init__(self, e, other=None):
            self.e, self.other = e, other

        def __call__(self):
            self.e.record()

        def elapsed(self):
            return a.elapsed_time(b) / 1e3

    return E(a), E(b)


def torch_events():
    import torch

    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    class E:
        def __init__(self, e):
            self.e = e

        def __call__(self):
            self.e.record()

        def elapsed(self):
            return a.elapsed_time(b) / 1e3

    return E(a), E(b)


def median_time(fn, sync, reps=REPEATS):
    fn()
    sync()
    ts = []
    benchenv.sample_now(CLOCK)  # host-timed: samples at the ends, none inside the loop
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    benchenv.sample_now(CLOCK)
    return float(np.median(ts))


def smi_one_block(work) -> dict | None:
    """Run one block of 32 threads for about two seconds and sample nvidia-smi's GPU utilization
    (NVML: 'percent of time ... during which one or more kernels was executing') meanwhile."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return None
    y = cuda.to_device(np.ones(32, np.float32))
    s, e = cuda.event(), cuda.event()
    work[1, 32](y, 1000)
    cuda.synchronize()
    s.record()
    work[1, 32](y, 1 << 16)
    e.record()
    e.synchronize()
    per_iter = s.elapsed_time(e) / 1e3 / (1 << 16)
    iters = int(2.5 / max(per_iter, 1e-9))
    s.record()
    work[1, 32](y, iters)  # asynchronous: the host samples while it runs
    e.record()
    samples = []
    time.sleep(0.7)
    for _ in range(3):
        out = subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=utilization.gpu",
                "--format=csv,noheader,nounits",
                "-i",
                os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0],
            ],
            capture_output=True,
            text=True,
        )
        samples.append(out.stdout.strip())
        time.sleep(0.4)
    e.synchronize()
    n_sm = int(getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 0))
    return {
        "kernel_s": s.elapsed_time(e) / 1e3,
        "blocks": 1,
        "threads": 32,
        "n_sm": n_sm,
        "utilization_gpu_percent": samples,
    }


def cpu_model() -> str | None:
    """The host CPU's model name (/proc/cpuinfo), None where it cannot be read."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


SAMPLER_MODES = ("none", "nvml_thread", "idle_thread", "ends_only")
CHECK_ROUNDS = 3


def _host_rate(launch_once, sync, n=N_LAUNCH, reps=5):
    """Median host seconds per asynchronous launch over ``reps`` loops of ``n`` (after 200)."""
    for _ in range(200):
        launch_once()
    sync()
    ts = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            launch_once()
        ts.append((time.perf_counter() - t0) / n)
    sync()
    return float(np.median(ts))


def _with_sampler(mode, measure):
    """``measure()`` under one way of sampling the clock (SAMPLER_MODES): no sampler; the
    sampling thread active inside the loop, reading NVML every 5 ms (as the 2026-12-02 run did);
    the same thread reading nothing (a constant), which separates the thread and its GIL
    hand-offs from NVML's own cost; or one NVML sample before and after, in this thread."""
    if mode == "none":
        return measure(), None
    clk = benchenv.ClockSampler().__enter__()
    try:
        if mode == "idle_thread":
            clk._read = lambda: (0.0, None)  # the thread wakes and hands the GIL over, no NVML
        if mode == "ends_only":
            clk.sample_now()
            out = measure()
            clk.sample_now()
        else:
            with clk.timed():
                out = measure()
        rec = clk.take()
        return out, (rec["samples"] if rec else 0)
    finally:
        clk.__exit__(None, None, None)


def sampler_check(tiny) -> dict:
    """Host launch cost per way of sampling the clock, interleaved, in this one process (the
    question: why the 2026-12-02 run read numba's launch at 28.8 us against 18.0 the day before)."""
    d = cuda.to_device(np.zeros(32, np.float32))
    out = {"launches": N_LAUNCH, "repeats": 5, "rounds": CHECK_ROUNDS, "modes": list(SAMPLER_MODES)}
    # the first launches after compiling (tiny was compiled by its first call here)
    first = []
    for _ in range(20):
        t0 = time.perf_counter()
        tiny[1, 32](d)
        first.append(time.perf_counter() - t0)
    cuda.synchronize()
    out["numba_first_20_launches_s"] = first
    # one NVML read, timed in this thread
    rd = benchenv._nvml_reader(0)
    if rd is not None:
        ts = []
        for _ in range(200):
            t0 = time.perf_counter()
            rd()
            ts.append(time.perf_counter() - t0)
        out["nvml_read_s"] = {"median": float(np.median(ts)), "max": float(max(ts)), "reads": 200}
    ops = {"numba_tiny": (lambda: tiny[1, 32](d), cuda.synchronize)}
    try:
        import torch

        if torch.cuda.is_available():
            x = torch.zeros(32, device="cuda")
            ops["torch_add_"] = (lambda: x.add_(1.0), torch.cuda.synchronize)
    except Exception:  # noqa: BLE001 - no torch: numba only
        pass
    for name, (launch_once, sync) in ops.items():
        rows = {m: [] for m in SAMPLER_MODES}
        samples = {m: [] for m in SAMPLER_MODES}
        for r in range(CHECK_ROUNDS):
            order = SAMPLER_MODES if r % 2 == 0 else tuple(reversed(SAMPLER_MODES))
            for m in order:
                v, k = _with_sampler(m, lambda: _host_rate(launch_once, sync))
                rows[m].append(v)
                samples[m].append(k)
        out[name] = {
            m: {
                "host_s_per_launch": rows[m],
                "median": float(np.median(rows[m])),
                "clock_samples": samples[m],
            }
            for m in SAMPLER_MODES
        }
        print("sampler check", name, {m: round(out[name][m]["median"] * 1e6, 2) for m in SAMPLER_MODES})
    return out


def ncu_only() -> int:
    """20 launches of the tiny kernel and nothing else, for
    ``ncu --metrics gpu__time_duration.sum python benchmarks/launch_overhead.py ncu``."""
    tiny = kernels()[0]
    d = cuda.to_device(np.zeros(32, np.float32))
    for _ in range(20):
        tiny[1, 32](d)
    cuda.synchronize()
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "ncu":
        return ncu_only()
    if not gpu_present():
        print("SKIP: no CUDA GPU visible to numba; results file left untouched")
        return 0
    from numba import cuda
    from gpulab.timeline import Timeline

    tiny, axpb, axpb_fused, work = kernels()
    res = {"env": environment(), "what": __doc__.strip().splitlines()[0]}
    res["env"]["cpu_model"] = cpu_model()
    res["sampler_check"] = sampler_check(tiny)
    global CLOCK
    CLOCK = benchenv.ClockSampler().__enter__()

    # ---- 1. numba launch overhead --------------------------------------------------------
    d = cuda.to_device(np.zeros(32, np.float32))
    res["numba_tiny"] = launch_rate(lambda: tiny[1, 32](d), cuda.synchronize, numba_events)
    s, e = cuda.event(), cuda.event()
    single = []
    CLOCK.sample_now()  # this interval holds the host launch path: samples at the ends only
    for _ in range(50):
        cuda.synchronize()
        s.record()
        tiny[1, 32](d)
        e.record()
        e.synchronize()
        single.append(s.elapsed_time(e) / 1e3)
    CLOCK.sample_now()
    res["numba_tiny"]["gpu_s_single_isolated"] = float(np.median(single))
    res["numba_tiny"]["gpu_s_single_isolated_sm_clock"] = _when(CLOCK.take(), ENDS)
    print("numba tiny launch:", {k: v for k, v in res["numba_tiny"].items()})
    y_long = cuda.to_device(np.ones(32, np.float32))
    res["launch_parts"] = {
        "numba": launch_parts(
            lambda: tiny[1, 32](d), lambda: work[1, 32](y_long, LONG_ITERS), cuda.synchronize, numba_events
        )
    }
    res["launch_parts"]["numba"]["host_launch_s"] = res["numba_tiny"]["host_s_per_launch"]
    print("numba launch parts:", res["launch_parts"]["numba"])

    # ---- 2. torch small-op overhead ------------------------------------------------------
    try:
        import torch

        have_torch = torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        have_torch = False
    if have_torch:
        x = torch.zeros(32, device="cuda")
        res["torch_add_"] = launch_rate(lambda: x.add_(1.0), torch.cuda.synchronize, torch_events)
        print("torch x.add_(1):", res["torch_add_"])
        res["launch_parts"]["torch"] = launch_parts(
            lambda: x.add_(1.0),
            lambda: torch.cuda._sleep(TORCH_SLEEP_CYCLES),
            torch.cuda.synchronize,
            torch_events,
        )
        res["launch_parts"]["torch"]["host_launch_s"] = res["torch_add_"]["host_s_per_launch"]
        print("torch launch parts:", res["launch_parts"]["torch"])
    else:
        res["torch_add_"] = None
        print("torch not available: torch rows skipped")

    # ---- 3. K tiny kernels against one fused kernel --------------------------------------
    chain = []
    for n in CHAIN_N:
        y = cuda.to_device(np.ones(n, np.float32))
        blocks = (n + 255) // 256
        a, b = np.float32(0.999), np.float32(0.001)

        def unfused():
            for _ in range(CHAIN_K):
                axpb[blocks, 256](y, a, b)

        def fused():
            axpb_fused[blocks, 256](y, a, b, CHAIN_K)

        row = {
            "n": n,
            "k": CHAIN_K,
            "numba_unfused_s": median_time(unfused, cuda.synchronize),
            "numba_fused_s": median_time(fused, cuda.synchronize),
        }
        if have_torch:
            ty = torch.ones(n, device="cuda")

            def t_unfused():
                for _ in range(CHAIN_K):
                    ty.mul_(0.999).add_(0.001)

            row["torch_unfused_s"] = median_time(t_unfused, torch.cuda.synchronize)
            row["torch_ops"] = 2 * CHAIN_K
        row["sm_clock"] = _when(CLOCK.take(), ENDS)
        chain.append(row)
        print("chain", row)
    res["chain"] = chain
    CLOCK.__exit__(None, None, None)
    res["sm_clock"] = _when(CLOCK.whole_run(), "every sample of sections 1-3: " + WAITS + "; " + ENDS)

    # ---- 4. a pipeline timeline: host work + copy + kernel per step ----------------------
    rng = np.random.default_rng(0)
    n = PIPE_N
    dy = cuda.device_array(n, np.float32)
    blocks = (n + 255) // 256
    work[blocks, 256](dy, 8)
    cuda.synchronize()

    def host_work(step):
        v = rng.standard_normal(n // 4).astype(np.float32)
        v.sort()
        return np.repeat(v, 4)

    timelines = {}
    for mode in ("serial", "overlapped"):
        tl = Timeline(backend="gpu")
        with tl.host("prepare 0"):
            batch = host_work(0)
        for step in range(6):
            with tl.host(f"copy {step}"):
                dy.copy_to_device(batch)  # synchronous copy from pageable memory
            tl.launch(work, blocks, 256, dy, PIPE_ITERS, name=f"kernel {step}")
            if mode == "serial":
                with tl.host(f"wait {step}"):
                    cuda.synchronize()  # e.g. a .item() or a print of a result
            with tl.host(f"prepare {step + 1}"):
                batch = host_work(step + 1)
        tl.finish()
        timelines[mode] = {
            "intervals": [dataclasses.asdict(i) for i in tl.intervals],
            "summary": tl.summary(),
        }
        print("timeline", mode, tl.summary())
    res["timelines"] = timelines

    # ---- 5. nvidia-smi "utilization" of a kernel that uses one SM -------------------------
    res["smi_one_block"] = smi_one_block(work)
    print("nvidia-smi during a 1-block kernel:", res["smi_one_block"])

    path = benchenv.out_path(OUT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(res, fh, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
