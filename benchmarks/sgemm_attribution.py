"""Chapter 11, step 5, one change at a time (issue 23): does the gain come from the 16-byte loads or
from the occupancy that fewer registers allowed?

Step 4 (``reg2d``, 166 registers: one 256-thread block per SM) -> step 5 (``vec``, 96 registers:
two blocks) changed the layout, the width of the shared loads and the occupancy at once. Here
``vec`` and ``vec_pad1`` (4-byte loads of A, same 96 registers) are also launched with enough
dynamic shared memory that only one block fits on an SM (the kernels do not use it): the same
code at step 4's occupancy. All timed in one process against torch fp32 (TF32 off), CUDA events,
median of 5 batches, every C checked against a float64 product; the SM clock sampled meanwhile.

    python benchmarks/sgemm_attribution.py --out $OUT     # writes sgemm_attribution.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import benchenv  # noqa: E402
import sgemm as bench  # noqa: E402  (benchmarks/sgemm.py: timed)

ONE_BLOCK_DYN = 120 * 1024  # dynamic shared bytes per block: 2 x (120 KiB + static) > 228 KiB


def cases():
    """name -> (kernel, dynamic shared bytes, what changed)."""
    from gpulab.kernels import sgemm as S

    pad1 = S.make_sgemm_vec(pad=1, swizzle=False)
    return {
        "reg2d": (S.sgemm_2d, 0, "step 4 as recorded"),
        "vec_1block": (S.sgemm_vec, ONE_BLOCK_DYN, "step 5's code at step 4's occupancy"),
        "vec": (S.sgemm_vec, 0, "step 5 as recorded"),
        "vec_pad1_1block": (pad1, ONE_BLOCK_DYN, "4-byte loads of A, one block per SM"),
        "vec_pad1": (pad1, 0, "4-byte loads of A, as recorded"),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".")
    ap.add_argument("--size", type=int, default=4096)
    args = ap.parse_args(argv)
    import torch
    from numba import cuda
    from numba.cuda.cudadrv.driver import binding, driver

    from gpulab.kernels import sgemm as S

    n = args.size
    flop = 2.0 * n**3
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn((n, n), device="cuda", generator=g, dtype=torch.float32)
    b = torch.randn((n, n), device="cuda", generator=g, dtype=torch.float32)
    ref = a.double() @ b.double()
    scale = float(ref.abs().max())
    c = torch.empty((n, n), device="cuda", dtype=torch.float32)
    ca, aa, ba = cuda.as_cuda_array(c), cuda.as_cuda_array(a), cuda.as_cuda_array(b)
    grid, block = S.launch_config("vec", n, n, n)
    clock = benchenv.ClockSampler().__enter__()
    out = {
        "what": __doc__.split("\n\n")[1].replace("\n", " "),
        "size": n,
        "command": "python benchmarks/sgemm_attribution.py --out <dir>",
        "environment": benchenv.environment(),
        "kernels": {},
    }
    with clock.timed():
        ms, per, reps = bench.timed(lambda: torch.matmul(a, b, out=c))
    out["torch_fp32"] = {"ms": ms, "per_batch_ms": per, "gflops": flop / ms / 1e6, "sm_clock": clock.take()}
    print(f"torch fp32 {flop / ms / 1e9:.2f} TFLOP/s", flush=True)
    ctx = cuda.current_context()
    for name, (kern, dyn, what) in cases().items():
        rec = {"what": what, "dynamic_shared_bytes": dyn}
        try:
            kern[grid, block](ca, aa, ba)  # compile and bind
            cuda.synchronize()
            cufunc = next(iter(kern.overloads.values()))._codelibrary.get_cufunc()
            if dyn:
                attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                driver.cuKernelSetAttribute(attr, dyn, cufunc.handle, cufunc.device.id)
            try:
                rec["blocks_per_sm"] = int(ctx.get_active_blocks_per_multiprocessor(cufunc, 256, dyn))
            except Exception as ex:  # noqa: BLE001
                rec["blocks_per_sm_error"] = repr(ex)[:200]
            c.fill_(float("nan"))
            kern[grid, block, 0, dyn](ca, aa, ba)
            cuda.synchronize()
            err = float((c.double() - ref).abs().max())
            rec.update({"max_abs_err": err, "max_abs_ref": scale, "ok": err <= 1e-5 * scale})
            with clock.timed():
                ms, per, reps = bench.timed(lambda: kern[grid, block, 0, dyn](ca, aa, ba))
            rec.update(
                {
                    "ms": ms,
                    "per_batch_ms": per,
                    "launches_per_batch": reps,
                    "gflops": flop / ms / 1e6,
                    "fraction_of_torch": flop / ms / 1e6 / out["torch_fp32"]["gflops"],
                    "sm_clock": clock.take(),
                    "registers": int(cufunc.attrs.regs),
                    "static_shared_bytes": int(cufunc.attrs.shared),
                }
            )
            print(
                f"{name:16s} {flop / ms / 1e9:6.2f} TFLOP/s blocks/SM {rec.get('blocks_per_sm')} "
                f"regs {rec.get('registers')} ok {rec['ok']}",
                flush=True,
            )
        except Exception as ex:  # noqa: BLE001
            rec["error"] = repr(ex)[:300]
            print(name, "FAILED", rec["error"], flush=True)
        out["kernels"][name] = rec
    clock.__exit__(None, None, None)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "sgemm_attribution.json").write_text(json.dumps(out, indent=1))
    print("wrote", Path(args.out) / "sgemm_attribution.json")


if __name__ == "__main__":
    main()
