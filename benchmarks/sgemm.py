"""Chapter 11's fp32 matmul steps against torch's fp32 matmul (TF32 off), C = A B at 4096^3.

One process times every step of gpulab.kernels.sgemm and torch.matmul with CUDA events after a
warm-up (each timing queues several launches back to back, so the host launch path is hidden),
checks every result against a float64 matmul of the same inputs on the GPU, and records what the
compiler made of each kernel (registers, local memory, PTX and, where nvdisasm exists, SASS
instruction counts). Writes sgemm.json (+ the SASS of the steps named by --asm) into --out.

    python benchmarks/sgemm.py --out gpulab/data/results
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchenv  # noqa: E402

from gpulab import metrics as M  # noqa: E402

SIG = "(array(float32, 2d, C), array(float32, 2d, C), array(float32, 2d, C))"
PTX_PATTERNS = {
    "ld.shared.f32": r"ld\.shared\.f32",
    "ld.shared.v2.f32": r"ld\.shared\.v2\.f32",
    "ld.shared.v4.f32": r"ld\.shared\.v4\.f32",
    "st.shared": r"st\.shared",
    "ld.global": r"ld\.global",
    "fma.rn": r"fma\.rn",
    "bar.sync": r"bar\.sync",
    "local": r"\.local",
}
SASS_PATTERNS = {
    "FFMA": r"\bFFMA\b",
    "LDS": r"\bLDS(\.\w+)*\b",
    "LDS.128": r"\bLDS\.128\b",
    "LDS.64": r"\bLDS\.64\b",
    "STS": r"\bSTS\b",
    "LDG": r"\bLDG\b",
    "BAR": r"\bBAR\b",
    "LDL": r"\bLDL\b",
    "STL": r"\bSTL\b",
}


STALLS = [
    "barrier",
    "branch_resolving",
    "dispatch_stall",
    "drain",
    "imc_miss",
    "lg_throttle",
    "long_scoreboard",
    "math_pipe_throttle",
    "membar",
    "mio_throttle",
    "misc",
    "no_instruction",
    "not_selected",
    "selected",
    "short_scoreboard",
    "sleeping",
    "tex_throttle",
    "wait",
]
# the counters gpulab also counts, under their names in gpulab.metrics, then GPU-only ones
NCU_METRICS = [
    *M.SHARED_BANK_CONFLICTS.values(),
    *M.SHARED_WAVEFRONTS.values(),
    *M.SHARED_INSTRUCTIONS.values(),
    M.INST_EXECUTED,
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__cycles_elapsed.avg.per_second",
    "gpu__time_duration.sum",
] + [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALLS]


# steps 7-10 (issue 27): make_sgemm_unrolled's keyword arguments, one change per step, then a
# small tile search over the factory ("tune_*")
UNROLLED = {
    "unroll": {},  # step 6 written out in full: no inner loop, scalar accumulators
    "unroll_u32": {"unsigned": True},  # + uint32 index arithmetic, no negative-index fix-ups
    "warptile": {"unsigned": True, "warp": (4, 8)},  # + a warp covers 4 x 8 threads, not 2 x 16
    "tune_bk16": {"unsigned": True, "warp": (4, 8), "bk": 16},
    "tune_bk16_r128": {"unsigned": True, "warp": (4, 8), "bk": 16, "max_registers": 128},
    "tune_64x128": {"unsigned": True, "warp": (4, 8), "bm": 64},
    "tune_128x64": {"unsigned": True, "warp": (8, 4), "bn": 64},
}


def config(step, n):
    """(grid, block) at M = N = K = n for a kernels() entry's launch description."""
    from gpulab.kernels import sgemm as S

    if isinstance(step, dict):  # make_sgemm_unrolled's arguments: 1-D block of bm/tm * bn/tn
        bm, bn = step.get("bm", 128), step.get("bn", 128)
        nt = (bm // step.get("tm", 8)) * (bn // step.get("tn", 8))
        return S.launch_config("prefetch", n, n, n, tile=(bm, bn), bk=step.get("bk", 8), block=(nt,))
    return S.launch_config(step, n, n, n)


def kernels():
    """name -> (kernel, launch description: a STEPS name or make_sgemm_unrolled's arguments), in
    chapter order, plus the layout variants and the generated steps."""
    from gpulab.kernels import sgemm as S

    out = {name: (v[0], name) for name, v in S.STEPS.items()}
    out["vec_nopad"] = (S.make_sgemm_vec(pad=0, swizzle=False), "vec")
    out["vec_pad1"] = (S.make_sgemm_vec(pad=1, swizzle=False), "vec")
    out["vec_swizzle"] = (S.make_sgemm_vec(pad=0, swizzle=True), "vec")
    out["prefetch_bk16"] = (S.make_sgemm_prefetch(bk=16), "prefetch")
    out["prefetch_bk16_r128"] = (S.make_sgemm_prefetch(bk=16, max_registers=128), "prefetch")
    out["prefetch_r128"] = (S.make_sgemm_prefetch(bk=8, max_registers=128), "prefetch")
    for name, kw in UNROLLED.items():
        out[name] = (S.make_sgemm_unrolled(**kw), kw)
    return out


CLOCK = None  # a benchenv.ClockSampler, set by main()


def timed(fn, target_ms=60.0, repeats=5):
    """Median ms per call: warm-up, then ``repeats`` event-timed batches of back-to-back calls."""
    import torch

    fn()
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    n = max(1, min(200, int(target_ms / max(s.elapsed_time(e), 1e-3))))
    per = []
    for _ in range(repeats):
        s.record()
        for _ in range(n):
            fn()
        e.record()
        e.synchronize()
        per.append(s.elapsed_time(e) / n)
    return statistics.median(per), per, n


def compiled(kernel, out_dir: Path | None, name: str) -> dict:
    """Registers, local memory, shared memory and instruction counts of the compiled kernel."""
    rec = {}
    for key, call in (
        ("registers", "get_regs_per_thread"),
        ("local_bytes", "get_local_mem_per_thread"),
        ("shared_bytes", "get_shared_mem_per_block"),
    ):
        try:
            v = getattr(kernel, call)()
            rec[key] = int(next(iter(v.values()))) if isinstance(v, dict) else int(v)
        except Exception as ex:  # noqa: BLE001
            rec[key] = None
            rec[key + "_error"] = repr(ex)[:160]
    try:
        ptx = kernel.inspect_asm()
        ptx = next(iter(ptx.values())) if isinstance(ptx, dict) else ptx
        rec["ptx"] = {k: len(re.findall(p, ptx)) for k, p in PTX_PATTERNS.items()}
    except Exception as ex:  # noqa: BLE001
        rec["ptx_error"] = repr(ex)[:160]
    try:
        sass = kernel.inspect_sass()
        sass = next(iter(sass.values())) if isinstance(sass, dict) else sass
        rec["sass"] = {k: len(re.findall(p, sass)) for k, p in SASS_PATTERNS.items()}
        if out_dir is not None:
            with gzip.open(out_dir / f"sgemm_{name}.sass.gz", "wt") as f:
                f.write(sass)
    except Exception as ex:  # noqa: BLE001
        rec["sass_error"] = repr(ex)[:160]
    return rec


NCU_PROFILED = [
    "reg2d",
    "vec_nopad",
    "vec_pad1",
    "vec",
    "vec_swizzle",
    "prefetch",
    "prefetch_bk16",
    "prefetch_bk16_r128",
    "prefetch_r128",
    *UNROLLED,
]


def merge_ncu(csv_path: str, json_path: str, order=NCU_PROFILED) -> dict:
    """Read ncu's --csv output (launches of ``--profile`` in ``order``) into json["ncu"]."""
    import csv
    import io

    opener = gzip.open if csv_path.endswith(".gz") else open
    with opener(csv_path, "rt") as f:
        text = f.read()
    rows = list(csv.DictReader(io.StringIO(text[text.index('"ID"') :])))
    launches: dict = {}
    for row in rows:
        v = row["Metric Value"].replace(",", "")
        try:
            v = float(v)
        except ValueError:
            pass
        launches.setdefault(row["ID"], {})[row["Metric Name"]] = v
    if len(launches) != len(order):
        raise SystemExit(f"{len(launches)} profiled launches in {csv_path}, expected {len(order)}")
    doc = json.loads(Path(json_path).read_text())
    doc["ncu"] = {
        "command": "ncu --clock-control none --print-units base --csv -k regex:sgemm "
        "--metrics $(python benchmarks/sgemm.py --ncu-metrics) python "
        "benchmarks/sgemm.py --size 4096 --profile " + " ".join(order),
        "raw": "benchmarks/raw/sgemm_ncu.csv.gz",
        "kernels": dict(zip(order, launches.values())),
    }
    Path(json_path).write_text(json.dumps(doc, indent=1))
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--out", default="gpulab/data/results")
    ap.add_argument(
        "--asm",
        nargs="*",
        default=["reg2d", "vec_swizzle", "prefetch", "prefetch_bk16_r128"],
        help="steps whose SASS text is written next to the JSON",
    )
    ap.add_argument("--only", nargs="*", default=None, help="time only these steps")
    ap.add_argument(
        "--profile",
        nargs="*",
        default=None,
        help="launch these steps once each, in this order, untimed (a target for ncu)",
    )
    ap.add_argument("--ncu-metrics", action="store_true", help="print the metrics to give ncu, and exit")
    ap.add_argument("--merge-ncu", metavar="CSV", help="merge ncu's CSV into --out/sgemm.json, and exit")
    ap.add_argument(
        "--tensor-core",
        type=int,
        nargs="*",
        metavar="SIZE",
        help="only the fp16 tensor-core GEMM (benchmarks/sgemm_tc.py) and torch fp16 at these sizes "
        "(default 4096 8192), merged into --out/sgemm.json under 'tensor_core'; the fp32 steps are kept",
    )
    args = ap.parse_args(argv)
    if args.tensor_core is not None:
        import sgemm_tc

        if sgemm_tc.main(
            [
                "--merge-into",
                str(Path(args.out) / "sgemm.json"),
                "--sizes",
                *map(str, args.tensor_core or [4096, 8192]),
            ]
        ):
            raise SystemExit(1)
        return
    if args.merge_ncu:
        merge_ncu(args.merge_ncu, str(Path(args.out) / "sgemm.json"))
        return
    if args.ncu_metrics:
        print(",".join(NCU_METRICS))
        return
    import torch
    from numba import cuda

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = benchenv.environment()
    global CLOCK
    CLOCK = benchenv.ClockSampler().__enter__()  # the SM clock inside each timed region
    n = args.size
    flop = 2.0 * n**3
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn((n, n), device="cuda", generator=g, dtype=torch.float32)
    b = torch.randn((n, n), device="cuda", generator=g, dtype=torch.float32)
    ref = a.double() @ b.double()
    scale = float(ref.abs().max())
    c = torch.empty((n, n), device="cuda", dtype=torch.float32)
    ca, aa, ba = cuda.as_cuda_array(c), cuda.as_cuda_array(a), cuda.as_cuda_array(b)
    if args.profile is not None:
        ks = kernels()
        for name in args.profile:
            kern, step = ks[name]
            grid, block = config(step, n)
            kern[grid, block](ca, aa, ba)
            cuda.synchronize()
            print("launched", name, flush=True)
        return

    def check(name):
        err = float((c.double() - ref).abs().max())
        ok = err <= 1e-5 * scale
        print(
            f"   {name}: max |C - C64| = {err:.3g} ({err / scale:.2e} of max |C64|) {'ok' if ok else 'WRONG'}",
            flush=True,
        )
        return {"max_abs_err": err, "max_abs_ref": scale, "ok": ok}

    def torch_run():
        torch.matmul(a, b, out=c)

    # chapter 11's steps in "steps" (the chapter reads that set), issue 27's generated ones apart
    results = {"torch_before": None, "steps": {}, "steps_unrolled": {}, "torch_after": None}
    with CLOCK.timed():
        ms, per, reps = timed(torch_run)
    results["torch_before"] = {
        "ms": ms,
        "per_batch_ms": per,
        "launches_per_batch": reps,
        "gflops": flop / ms / 1e6,
        "sm_clock": CLOCK.take(),
        **check("torch"),
    }
    print(f"torch fp32 {ms:.3f} ms  {flop / ms / 1e9:.2f} TFLOP/s", flush=True)
    for name, (kern, step) in kernels().items():
        if args.only and name not in args.only:
            continue
        grid, block = config(step, n)
        c.fill_(float("nan"))
        t0 = time.time()
        kern[grid, block](ca, aa, ba)
        cuda.synchronize()
        compile_s = time.time() - t0
        rec = {"grid": list(grid), "block": list(block), "compile_and_first_s": compile_s, **check(name)}
        with CLOCK.timed():
            ms, per, reps = timed(
                lambda: kern[grid, block](ca, aa, ba),
                target_ms=30.0 if name == "naive" else 60.0,
                repeats=3 if name == "naive" else 5,
            )
        rec["sm_clock"] = CLOCK.take()
        if isinstance(step, dict):
            rec["factory"] = {k: list(v) if isinstance(v, tuple) else v for k, v in step.items()}
        rec.update({"ms": ms, "per_batch_ms": per, "launches_per_batch": reps, "gflops": flop / ms / 1e6})
        rec["nvidia_smi_after"] = benchenv._smi("clocks.sm,power.draw")
        rec.update(compiled(kern, out_dir if name in args.asm else None, name))
        results["steps_unrolled" if name in UNROLLED else "steps"][name] = rec
        print(
            f"{name:12s} {ms:8.3f} ms {flop / ms / 1e9:7.2f} TFLOP/s regs {rec.get('registers')} "
            f"local {rec.get('local_bytes')} ptx {rec.get('ptx')} sass {rec.get('sass')}",
            flush=True,
        )
    with CLOCK.timed():
        ms, per, reps = timed(torch_run)
    results["torch_after"] = {
        "ms": ms,
        "per_batch_ms": per,
        "launches_per_batch": reps,
        "gflops": flop / ms / 1e6,
        "sm_clock": CLOCK.take(),
    }
    results["torch_after"]["nvidia_smi_after"] = benchenv._smi("clocks.sm,clocks.max.sm,power.draw")
    print(f"torch fp32 again {ms:.3f} ms  {flop / ms / 1e9:.2f} TFLOP/s", flush=True)
    results["torch_low_precision"] = {}
    for dt in ("float16", "bfloat16"):  # the tensor-core coda's comparison
        ah, bh = a.to(getattr(torch, dt)), b.to(getattr(torch, dt))
        ms, per, reps = timed(lambda: torch.matmul(ah, bh))
        results["torch_low_precision"][dt] = {"ms": ms, "gflops": flop / ms / 1e6}
        print(f"torch {dt} {ms:.3f} ms  {flop / ms / 1e9:.2f} TFLOP/s", flush=True)
    torch_gflops = 0.5 * (results["torch_before"]["gflops"] + results["torch_after"]["gflops"])
    for rec in [*results["steps"].values(), *results["steps_unrolled"].values()]:
        rec["fraction_of_torch"] = rec["gflops"] / torch_gflops
    doc = {
        "what": "fp32 C = A B, row-major, M = N = K = size; chapter 11's kernels and torch.matmul "
        "(allow_tf32 False) timed in one process with CUDA events after warm-up; each "
        "result checked against a float64 matmul of the same inputs on the GPU",
        "size": n,
        "flop": flop,
        "torch_gflops_mean": torch_gflops,
        "timing": "median over batches of back-to-back launches; ms per launch",
        "environment": env,
        **results,
    }
    CLOCK.__exit__(None, None, None)
    (out_dir / "sgemm.json").write_text(json.dumps(doc, indent=1))
    print("wrote", out_dir / "sgemm.json")


if __name__ == "__main__":
    main()
