"""GPU bandwidth and matmul benchmarks for chapters 05-06; writes gpulab/data/results/bandwidth.json.

Measures, with CUDA events after a warm-up (median of several runs):
  * copy: the chapter's copy kernels (one float32 per thread, grid-stride, 8- and 16-byte
    elements) against torch's device-to-device copy of the same buffer;
  * effective bandwidth of the strided and offset reads of chapter 05;
  * transpose naive / shared / padded (chapter 06) against the best copy;
  * tiled fp32 matmul (chapter 06) against torch fp32 with TF32 off.
The SM clock is sampled inside every timed region (benchenv.ClockSampler) and recorded per copy
kernel and per section ("sm_clock": min/median/max MHz).
Without a GPU it prints SKIP and exits 0 without touching the results file.

Run:  python benchmarks/bandwidth.py            (about a minute on an H200)
"""

from gpulab.results import RESULTS_DIR
import contextlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from numba import cuda  # noqa: E402

from benchenv import ClockSampler, environment, gpu_present  # noqa: E402


REPS = int(os.environ.get("GPULAB_BENCH_REPS", 10))
CLOCK: ClockSampler | None = None  # set by main(): samples the SM clock inside timed regions


def timed_region():
    """The clock sampler's timed region (a no-op without one)."""
    return CLOCK.timed() if CLOCK else contextlib.nullcontext()


def clock_record():
    """The SM clock over the timed regions since the last call (None without a sampler)."""
    return CLOCK.take() if CLOCK else None


def time_kernel(fn, reps=REPS, warmup=2):
    """Median milliseconds of fn() bracketed by CUDA events (the SM clock sampled meanwhile)."""
    for _ in range(warmup):
        fn()
    cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = cuda.event(), cuda.event()
        with timed_region():
            start.record()
            fn()
            stop.record()
            stop.synchronize()
        times.append(start.elapsed_time(stop))
    return float(np.median(times))


def bench_copies(res, nbytes):
    from gpulab.kernels import memory

    n = nbytes // 4
    a = cuda.to_device(np.arange(n, dtype=np.float32))
    out = cuda.device_array(n, np.float32)
    dev = cuda.get_current_device()
    tb = 256
    copies = {}

    def run(name, kern, o, i, grid, block):
        try:
            ms = time_kernel(lambda: kern[grid, block](o, i))
        except Exception as e:  # noqa: BLE001 - record it, keep measuring the others
            copies[name] = {"error": repr(e)[:300]}
            return
        copies[name] = {"ms": ms, "GBps": 2 * nbytes / ms / 1e6, "sm_clock": clock_record()}

    run("float32, one per thread", memory.copy, out, a, (n + tb - 1) // tb, tb)
    run(
        "float32, grid-stride",
        memory.copy_grid_stride,
        out,
        a,
        (getattr(dev, "MULTIPROCESSOR_COUNT", 0) or 132) * 16,
        tb,
    )
    run("float32, streaming hints (ld.cs/st.cs)", memory.copy_streaming, out, a, (n + tb - 1) // tb, tb)
    for dt, label in ((np.float64, "8-byte elements"), (np.complex128, "16-byte elements")):
        ov, av = out.view(dt), a.view(dt)
        m = av.shape[0]
        run(f"{label}, one per thread", memory.copy, ov, av, (m + tb - 1) // tb, tb)
    ok = bool(np.array_equal(out.copy_to_host()[:1000], np.arange(1000, dtype=np.float32)))
    best = max((k for k in copies if "GBps" in copies[k]), key=lambda k: copies[k]["GBps"])
    res["copy"] = {
        "bytes": nbytes,
        "kernels": copies,
        "best": best,
        "best_GBps": copies[best]["GBps"],
        "correct": ok,
    }
    try:
        import torch

        src = torch.arange(n, dtype=torch.float32, device="cuda")
        dst = torch.empty_like(src)
        for _ in range(3):
            dst.copy_(src)
        torch.cuda.synchronize()
        ts = []
        for _ in range(10):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with timed_region():
                s.record()
                dst.copy_(src)
                e.record()
                e.synchronize()
            ts.append(s.elapsed_time(e))
        ms = float(np.median(ts))
        res["copy"]["torch"] = {
            "version": torch.__version__,
            "ms": ms,
            "GBps": 2 * nbytes / ms / 1e6,
            "sm_clock": clock_record(),
        }
        res["copy"]["best_over_torch"] = res["copy"]["best_GBps"] / res["copy"]["torch"]["GBps"]
        src = dst = None  # free the device memory before the next size
        torch.cuda.empty_cache()
    except Exception as e:  # noqa: BLE001
        res["copy"]["torch"] = {"error": repr(e)}
    a = out = None  # free the device memory before the next size


def bench_strided(res, nbytes):
    from gpulab.kernels import memory

    n = nbytes // 4
    a = cuda.to_device(np.ones(n, dtype=np.float32))
    tb = 256
    rows = []
    for stride in (1, 2, 4, 8, 16, 32, 64):
        m = n // stride
        out = cuda.device_array(m, np.float32)
        ms = time_kernel(lambda: memory.copy_strided[(m + tb - 1) // tb, tb](out, a, stride))
        useful = 2 * m * 4
        rows.append({"stride": stride, "ms": ms, "useful_GBps": useful / ms / 1e6})
        out = None  # free the device memory before the next size
    res["strided"] = rows
    res["strided_sm_clock"] = clock_record()
    rows = []
    m = n - 64
    out = cuda.device_array(m, np.float32)
    for offset in (0, 1, 2, 4, 8, 16, 32):
        ms = time_kernel(lambda: memory.copy_offset[(m + tb - 1) // tb, tb](out, a, offset))
        rows.append({"offset": offset, "ms": ms, "useful_GBps": 2 * m * 4 / ms / 1e6})
    res["offset"] = rows
    res["offset_sm_clock"] = clock_record()
    a = out = None  # free the device memory before the next size


def bench_transpose(res, side):
    from gpulab.kernels import transpose as T

    host = np.random.default_rng(0).random((side, side), dtype=np.float32)
    a = cuda.to_device(host)
    out = cuda.device_array((side, side), np.float32)
    nbytes = side * side * 4
    rows = {}
    for name in ("transpose_naive", "transpose_shared", "transpose_padded"):
        k = getattr(T, name)
        ms = time_kernel(lambda: k[T.grid_for(host.shape), (T.TILE, T.BLOCK_ROWS)](out, a))
        ok = bool(np.array_equal(out.copy_to_host(), host.T))
        rows[name] = {"ms": ms, "GBps": 2 * nbytes / ms / 1e6, "correct": ok}
    k = T.transpose_padded_wide
    ms = time_kernel(lambda: k[T.grid_for_wide(host.shape), (T.TILE_WIDE, T.ROWS_WIDE)](out, a))
    ok = bool(np.array_equal(out.copy_to_host(), host.T))
    rows["transpose_padded_wide"] = {"ms": ms, "GBps": 2 * nbytes / ms / 1e6, "correct": ok}
    res["transpose"] = {"side": side, "kernels": rows, "sm_clock": clock_record()}
    best = res.get("copy", {}).get("best_GBps")
    if best:
        res["transpose"]["padded_over_best_copy"] = rows["transpose_padded"]["GBps"] / best
        res["transpose"]["padded_wide_over_best_copy"] = rows["transpose_padded_wide"]["GBps"] / best
    torch_copy = res.get("copy", {}).get("torch", {}).get("GBps")
    if torch_copy:
        res["transpose"]["padded_wide_over_torch_copy"] = rows["transpose_padded_wide"]["GBps"] / torch_copy
    a = out = None  # free the device memory before the next size


def bench_matmul(res, n):
    from gpulab.kernels import matmul as M

    rng = np.random.default_rng(1)
    ha = rng.standard_normal((n, n), dtype=np.float32)
    hb = rng.standard_normal((n, n), dtype=np.float32)
    a, b = cuda.to_device(ha), cuda.to_device(hb)
    c = cuda.device_array((n, n), np.float32)
    flop = 2.0 * n**3
    rows = {}
    for name in ("matmul_naive", "matmul_tiled"):
        k = getattr(M, name)
        ms = time_kernel(lambda: k[M.grid_for(n, n), (M.TILE, M.TILE)](c, a, b), reps=min(REPS, 5))
        rows[name] = {"ms": ms, "TFLOPs": flop / ms / 1e9}
    res["matmul"] = {"n": n, "kernels": rows, "sm_clock": clock_record()}
    ref = ha.astype(np.float64) @ hb.astype(np.float64)
    res["matmul"]["tiled_max_rel_err_vs_numpy_fp64"] = float(
        np.abs(c.copy_to_host() - ref).max() / np.abs(ref).max()
    )
    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        ta, tb_ = torch.from_numpy(ha).cuda(), torch.from_numpy(hb).cuda()
        for _ in range(3):
            tc = ta @ tb_
        torch.cuda.synchronize()
        ts = []
        for _ in range(5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with timed_region():
                s.record()
                tc = ta @ tb_
                e.record()
                e.synchronize()
            ts.append(s.elapsed_time(e))
        ms = float(np.median(ts))
        ref = tc.cpu().numpy().astype(np.float64)
        ours = c.copy_to_host().astype(np.float64)
        rel = float(np.abs(ours - ref).max() / np.abs(ref).max())
        res["matmul"]["torch_fp32_tf32_off"] = {
            "version": torch.__version__,
            "ms": ms,
            "TFLOPs": flop / ms / 1e9,
        }
        res["matmul"]["tiled_over_torch"] = rows["matmul_tiled"]["TFLOPs"] / (flop / ms / 1e9)
        res["matmul"]["max_rel_err_vs_torch"] = rel
    except Exception as e:  # noqa: BLE001
        res["matmul"]["torch_fp32_tf32_off"] = {"error": repr(e)}


def main():
    if not gpu_present():
        print("SKIP: no CUDA GPU visible; nothing measured, results file untouched.")
        return 0
    global CLOCK
    res = {"environment": environment()}
    big = int(os.environ.get("GPULAB_BENCH_BYTES", 1 << 30))
    with ClockSampler() as CLOCK:
        bench_copies(res, big)
        bench_strided(res, big)
        bench_transpose(res, int(os.environ.get("GPULAB_BENCH_SIDE", 16384)))
        bench_matmul(res, int(os.environ.get("GPULAB_BENCH_N", 4096)))
        res["matmul"]["torch_fp32_tf32_off"]["sm_clock"] = clock_record()
    res["sm_clock_source"] = CLOCK.source
    path = os.environ.get("GPULAB_BENCH_OUT") or os.path.join(RESULTS_DIR, "bandwidth.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(res, f, indent=2)
    print(json.dumps(res, indent=2))
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
