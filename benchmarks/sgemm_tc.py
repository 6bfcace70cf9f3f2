"""Chapter 11's tensor-core GEMM (gpulab.kernels.gemm_tc) against torch fp16 (cuBLAS), in one process.

For each size, one set of fp16 inputs: torch.matmul in fp16 is timed, then every variant of the
numba + CUDA C++ kernel (C in fp32) is compiled, run once and checked against a float64 product of
the same inputs on the GPU (every entry of C), and timed with CUDA events after a warm-up (batches of
back-to-back launches, median). A small size runs first so a wrong kernel shows up before the big
ones; a wrong variant is recorded with its error pattern and not timed.

    python benchmarks/sgemm_tc.py --out gpulab/data/results            # writes sgemm_tc.json
    python benchmarks/sgemm_tc.py --profile 128x128x32_w64x32_u64 --sizes 4096   # one launch, for ncu

benchmarks/sgemm.py calls :func:`measure` and records the result under ``tensor_core``.
Without a GPU it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

STALLS = ["barrier", "long_scoreboard", "short_scoreboard", "math_pipe_throttle", "mio_throttle", "lg_throttle",
          "wait", "not_selected", "selected", "dispatch_stall", "no_instruction", "branch_resolving", "tex_throttle",
          "drain", "imc_miss", "membar", "misc", "sleeping"]  # fmt: skip
# what Nsight Compute is asked for the best variant (Run B): tensor pipe, memory, occupancy, stalls
NCU_METRICS = [
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__waves_per_multiprocessor",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_bytes.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed.sum",
] + [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALLS]
SASS_OPS = ("HMMA", "LDSM", "LDG", "STS", "LDS", "BAR", "LDL", "STL", "STG")
CHECK = (256, 256, 512)  # M, N, K of the first correctness check
# what a default run times, in this order (gpulab.kernels.gemm_tc.VARIANTS has a few more)
RECORDED = [
    "128x128x32_w64x32_u64",  # the suggested shape, padded shared rows
    "128x128x32_w64x32_u64_swz",  # + swizzled shared rows instead of padding
    "128x256x32_w64x64_u64_swz",  # + 128 x 256 block tile, 64 x 64 warp tile (two stages fit 48 KB)
    "128x256x32_w64x64_u64_g8_swz",  # + grouped block order
    "256x128x32_w64x64_u64_swz",
    "128x256x32_w64x64_u64_s1_swz",
    "128x128x32_w64x64_u64_swz",
    "128x128x32_w64x32_u64_g8_swz",
    "128x256x32_w64x64_u64_s1",
    "128x128x32_w64x64_u64",
    "128x128x32_w64x32_u64_g8",
    "256x128x32_w64x64_u64_s1",
    "128x128x32_w64x32_u32",  # 2 halves per load instead of 4
    "128x128x32_w64x32_u64_nolto",  # linked without LTO: accumulators in local memory
]


from sgemm import timed  # noqa: E402  (the ladder's event timing: one rule for every step)


def compiled_info(kernel) -> dict:
    """Registers, local memory and SASS opcode counts of the linked kernel (after LTO)."""
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
            rec[key + "_error"] = repr(ex)[:200]
    try:
        sass = kernel.inspect_sass()
        sass = next(iter(sass.values())) if isinstance(sass, dict) else sass
        rec["sass"] = {op: len(re.findall(rf"\b{op}(\.\w+)*\b", sass)) for op in SASS_OPS}
        rec["sass"]["CALL"] = len(re.findall(r"\bCALL\b", sass))
    except Exception as ex:  # noqa: BLE001
        rec["sass_error"] = repr(ex)[:200]
    return rec


class Problem:
    """fp16 inputs on the GPU, their float64 product and sum of |products| (the error scale)."""

    def __init__(self, m, n, k, seed=7):
        import torch

        g = torch.Generator(device="cuda").manual_seed(seed)
        self.m, self.n, self.k = m, n, k
        self.a = torch.randn((m, k), device="cuda", generator=g).half()
        self.b = torch.randn((k, n), device="cuda", generator=g).half()
        self.ref = self.a.double() @ self.b.double()
        self.scale = self.a.double().abs() @ self.b.double().abs()
        self.flop = 2.0 * m * n * k

    def check(self, c) -> dict:
        """|C - C64| against the fp32-accumulation bound K * eps32 * (|A||B|) entry by entry."""
        import numpy as np
        import torch

        eps = float(np.finfo(np.float32).eps)
        err = (c.double() - self.ref).abs()
        rel = err / self.scale.clamp_min(1e-300)
        worst = float(rel.max())
        bound = self.k * eps
        rec = {
            "entries_checked": int(c.numel()),
            "max_abs_err": float(err.max()),
            "max_abs_ref": float(self.ref.abs().max()),
            "max_err_over_sum_abs": worst,
            "bound_k_eps32": bound,
            "nan": bool(torch.isnan(c).any()),
            "ok": bool(worst <= bound and not torch.isnan(c).any()),
        }
        if not rec["ok"]:  # where it goes wrong: worst error by (row % 16, column % 8), by block
            e = rel.nan_to_num(1e30).float()
            rec["err_by_row16_col8"] = [[float(e[i::16, j::8].max()) for j in range(8)] for i in range(16)]
            rec["bad_fraction"] = float((e > bound).float().mean())
        return rec


CLOCK = None  # a benchenv.ClockSampler while measure() runs: the SM clock inside each timed region


def clocked(fn, **kw):
    """timed(fn) with the SM clock sampled inside the timed region: (ms, per, reps, sm_clock)."""
    if CLOCK is None:
        return (*timed(fn, **kw), None)
    with CLOCK.timed():
        out = timed(fn, **kw)
    return (*out, CLOCK.take())


def _time_torch(p, c16):
    import torch

    ms, per, reps, clk = clocked(lambda: torch.matmul(p.a, p.b, out=c16))
    return {
        "ms": ms,
        "per_batch_ms": per,
        "launches_per_batch": reps,
        "tflops": p.flop / ms / 1e9,
        "sm_clock": clk,
    }


def _best(srec):
    ok = {n: r for n, r in srec["variants"].items() if r.get("check", {}).get("ok")}
    if ok:
        best = max(ok, key=lambda n: ok[n]["tflops"])
        srec["best"] = {
            "variant": best,
            "tflops": ok[best]["tflops"],
            "fraction_of_torch_fp16": ok[best]["fraction_of_torch_fp16"],
        }


def measure(sizes=(4096, 8192), variants=None, check=CHECK, log=print, partial=None) -> dict:
    """Time torch fp16 at each size; then, variant by variant: compile, check at ``check`` (M, N, K),
    and if right, time it and check it at each size; torch fp16 again at the end. Returns the record
    benchmarks/sgemm.py stores under ``tensor_core``; ``partial(doc)`` is called after each variant
    (so a run cut short still leaves every variant it finished)."""
    global CLOCK
    import benchenv

    CLOCK = benchenv.ClockSampler().__enter__()
    try:
        return _measure(sizes, variants, check, log, partial)
    finally:
        CLOCK.__exit__(None, None, None)
        CLOCK = None


def _measure(sizes, variants, check, log, partial):
    import numpy as np
    import torch
    from numba import cuda

    from gpulab.kernels import gemm_tc as G

    names = list(variants or RECORDED)
    doc = {
        "what": "C (fp32) = A B, A and B fp16 row-major (M x K, K x N), M = N = K = size; the numba "
        "kernel gpulab.kernels.gemm_tc (tiles staged in shared memory by numba, ldmatrix + "
        "mma.sync.m16n8k16 in a CUDA C++ device function linked with LTO) and torch.matmul in fp16 "
        "(cuBLAS, fp16 out) timed in one process with CUDA events after warm-up; every entry of "
        "each C checked against a float64 product of the same inputs on the GPU",
        "timing": "median over batches of back-to-back launches; ms per launch; fraction_of_torch_fp16 "
        "uses torch's time measured before the variants",
        "check_rule": "max |C - C64| / (|A||B|) <= K * eps32, entry by entry",
        "device": torch.cuda.get_device_name(),
        "compute_capability": list(torch.cuda.get_device_capability()),
        "variants": {},
        "sizes": {},
    }
    small = Problem(*check)
    probs, outs = {}, {}
    for size in sizes:
        p = probs[size] = Problem(size, size, size)
        c16 = p.a @ p.b
        doc["sizes"][str(size)] = srec = {"flop": p.flop, "variants": {}}
        srec["torch_fp16"] = {**_time_torch(p, c16), "check_fp16_out": p.check(c16)}
        outs[size] = torch.empty((size, size), device="cuda", dtype=torch.float32)
        log(
            f"size {size}: torch fp16 {srec['torch_fp16']['ms']:.3f} ms {srec['torch_fp16']['tflops']:.1f} TFLOP/s"
        )
    if partial:
        partial(doc)
    for name in names:
        v = G.VARIANTS[name]
        word = np.uint32 if v.word == 32 else np.uint64
        rec = {
            "tile": [v.bm, v.bn, v.bk],
            "warp_tile": [v.wm, v.wn],
            "word_bits": v.word,
            "stages": v.stages,
            "group": v.group,
            "swizzle": v.swizzle,
            "lto": v.lto,
            "threads": v.threads,
            "device_function": v.device_function,
        }
        try:
            t0 = time.time()
            kern = G.make_gemm_tc(v)
            c = torch.full((small.m, small.n), float("nan"), device="cuda", dtype=torch.float32)
            grid, block = G.launch_config(v, small.m, small.n)
            kern[grid, block](
                cuda.as_cuda_array(c),
                cuda.as_cuda_array(small.a).view(word),
                cuda.as_cuda_array(small.b).view(word),
            )
            cuda.synchronize()
            rec["compile_and_first_s"] = time.time() - t0
            rec["check"] = small.check(c)
            rec.update(compiled_info(kern))
        except Exception as ex:  # noqa: BLE001 - recorded, the other variants still run
            rec["error"] = f"{type(ex).__name__}: {str(ex)[:1500]}"
        doc["variants"][name] = rec
        log(
            f"{name}: {rec.get('check', rec.get('error'))} regs {rec.get('registers')} local {rec.get('local_bytes')} sass {rec.get('sass')}"
        )
        if not rec.get("check", {}).get("ok"):
            if partial:
                partial(doc)
            continue
        for size in sizes:
            p, c, srec = probs[size], outs[size], doc["sizes"][str(size)]
            cc = cuda.as_cuda_array(c)
            ka, kb = cuda.as_cuda_array(p.a).view(word), cuda.as_cuda_array(p.b).view(word)
            grid, block = G.launch_config(v, size, size)
            try:
                c.fill_(float("nan"))
                kern[grid, block](cc, ka, kb)
                cuda.synchronize()
                chk = p.check(c)
                ms, per, reps, clk = clocked(lambda: kern[grid, block](cc, ka, kb))
                vr = {
                    "ms": ms,
                    "per_batch_ms": per,
                    "launches_per_batch": reps,
                    "tflops": p.flop / ms / 1e9,
                    "fraction_of_torch_fp16": srec["torch_fp16"]["ms"] / ms,
                    "sm_clock": clk,
                    "check": chk,
                }
            except Exception as ex:  # noqa: BLE001
                vr = {"error": f"{type(ex).__name__}: {str(ex)[:800]}"}
            srec["variants"][name] = vr
            _best(srec)
            log(
                f"size {size}: {name} {vr.get('ms', 0):.3f} ms {vr.get('tflops', 0):.1f} TFLOP/s "
                f"{100 * vr.get('fraction_of_torch_fp16', 0):.1f}% of torch fp16, ok={vr.get('check', {}).get('ok')}"
            )
        if partial:
            partial(doc)
    for size in sizes:
        p = probs[size]
        srec = doc["sizes"][str(size)]
        srec["torch_fp16_after"] = _time_torch(p, p.a @ p.b)
        t_mean = 0.5 * (srec["torch_fp16"]["ms"] + srec["torch_fp16_after"]["ms"])
        for vr in srec["variants"].values():
            if "ms" in vr:
                vr["fraction_of_torch_fp16_mean"] = t_mean / vr["ms"]  # torch's time before and after
    if partial:
        partial(doc)
    return doc


def profile(name, size):
    """One launch of variant ``name`` at size^3 after one warm-up launch (a target for ncu -c 1
    with --launch-skip 1: the compile-time first launch is not the one profiled)."""
    import numpy as np
    import torch
    from numba import cuda

    from gpulab.kernels import gemm_tc as G

    v = G.VARIANTS[name]
    a = torch.randn((size, size), device="cuda").half()
    b = torch.randn((size, size), device="cuda").half()
    c = torch.empty((size, size), device="cuda", dtype=torch.float32)
    word = np.uint32 if v.word == 32 else np.uint64
    grid, block = G.launch_config(v, size, size)
    kern = G.make_gemm_tc(v)
    for _ in range(2):
        kern[grid, block](
            cuda.as_cuda_array(c), cuda.as_cuda_array(a).view(word), cuda.as_cuda_array(b).view(word)
        )
    cuda.synchronize()
    print("launched", name, "twice at", size)


def merge_ncu(csv_path, json_path, command=None):
    """ncu's --csv output (one profiled launch) into json["ncu"] (json["tensor_core"]["ncu"] for sgemm.json)."""
    import csv
    import io

    text = Path(csv_path).read_text()
    rows = list(csv.DictReader(io.StringIO(text[text.index('"ID"') :])))
    metrics, kernel = {}, None
    for row in rows:
        v = row["Metric Value"].replace(",", "")
        try:
            v = float(v)
        except ValueError:
            pass
        metrics[row["Metric Name"]] = v
        kernel = row.get("Kernel Name", kernel)
    doc = json.loads(Path(json_path).read_text())
    target = doc["tensor_core"] if "tensor_core" in doc else doc
    variant = kernel.split("[")[0].removeprefix("gemm_tc_") if kernel else "?"
    command = command or (
        "ncu --clock-control none -k regex:gemm_tc --launch-skip 1 -c 1 --csv --metrics "
        f"$(python benchmarks/sgemm_tc.py --ncu-metrics) python benchmarks/sgemm_tc.py --profile {variant} --sizes 4096"
    )
    target["ncu"] = {"command": command, "variant": variant, "size": 4096, "metrics": metrics}
    Path(json_path).write_text(json.dumps(doc, indent=1))
    return target["ncu"]


def table(json_path) -> str:
    """The record as a markdown table: one row per variant, TFLOP/s and % of torch fp16 per size."""
    doc = json.loads(Path(json_path).read_text())
    tc = doc.get("tensor_core", doc)
    sizes = list(tc["sizes"])
    head = "| variant | regs | local B | HMMA | " + " | ".join(f"{s}^3 TFLOP/s | % torch" for s in sizes)
    rows = [head + " | max err / sum abs |", "|---" * (4 + 2 * len(sizes) + 1) + "|"]
    for name, r in tc["variants"].items():
        if "error" in r:
            rows.append(f"| `{name}` | error: {r['error'][:80]} |")
            continue
        cells = [
            f"`{name}`",
            str(r.get("registers")),
            str(r.get("local_bytes")),
            str(r.get("sass", {}).get("HMMA")),
        ]
        errs = [r["check"]["max_err_over_sum_abs"]]
        for s in sizes:
            v = tc["sizes"][s]["variants"].get(name, {})
            cells += (
                [f"{v['tflops']:.1f}", f"{100 * v['fraction_of_torch_fp16']:.1f}%"]
                if "tflops" in v
                else ["-", "-"]
            )
            errs += [v["check"]["max_err_over_sum_abs"]] if "check" in v else []
        rows.append("| " + " | ".join(cells) + f" | {max(errs):.2g} |")
    for s in sizes:
        t = tc["sizes"][s]
        rows.append(
            f"\ntorch fp16 at {s}^3: {t['torch_fp16']['tflops']:.1f} TFLOP/s before the variants, "
            f"{t.get('torch_fp16_after', {}).get('tflops', float('nan')):.1f} after; best: {t.get('best')}"
        )
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[4096, 8192])
    ap.add_argument("--variants", nargs="*", default=None)
    ap.add_argument("--out", default="gpulab/data/results")
    ap.add_argument(
        "--profile", metavar="VARIANT", help="launch VARIANT (twice) at --sizes[0], untimed; for ncu"
    )
    ap.add_argument("--ncu-metrics", action="store_true", help="print the metrics to give ncu, and exit")
    ap.add_argument("--table", metavar="JSON", help="print the record in JSON as a markdown table, and exit")
    ap.add_argument(
        "--merge-ncu", nargs=2, metavar=("CSV", "JSON"), help="put ncu's CSV into JSON's ncu key, and exit"
    )
    ap.add_argument(
        "--merge-into",
        metavar="JSON",
        help="store the record under 'tensor_core' in this JSON (sgemm.json), keeping the rest",
    )
    args = ap.parse_args(argv)
    if args.table:
        print(table(args.table))
        return 0
    if args.ncu_metrics:
        print(",".join(NCU_METRICS))
        return 0
    if args.merge_ncu:
        merge_ncu(*args.merge_ncu)
        return 0
    try:
        from numba import cuda

        have = cuda.is_available()
    except Exception:  # noqa: BLE001
        have = False
    if not have:
        print("no CUDA GPU here: the tensor-core GEMM runs on a GPU only; nothing measured")
        return 0
    if args.profile:
        profile(args.profile, args.sizes[0])
        return 0
    import benchenv

    env = benchenv.environment()
    command = "python benchmarks/sgemm_tc.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.merge_into:
        path = Path(args.merge_into)
        command = "python benchmarks/sgemm.py --tensor-core " + " ".join(map(str, args.sizes))
    else:
        path = Path(args.out) / "sgemm_tc.json"
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(doc):
        rec = {**doc, "environment": env, "command": command}
        if args.merge_into:
            whole = json.loads(path.read_text()) if path.exists() else {}
            whole["tensor_core"] = rec
            rec = whole
        path.write_text(json.dumps(rec, indent=1))

    doc = measure(tuple(args.sizes), args.variants, partial=write)
    write(doc)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
