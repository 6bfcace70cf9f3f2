"""Real tensor cores from numba, checked against gpulab's CPU emulation (chapter 09).

Two numba kernels call CUDA C++ device functions (tc_device.cu, compiled to PTX with
``nvcc -arch=sm_XX -rdc=true -ptx`` and linked with ``@cuda.jit(link=[...])`` +
``cuda.declare_device``; pointers come from cffi's ``ffi.from_buffer``):

1. ``mma_m16n8k16_lane``: one ``mma.sync.m16n8k16`` where each lane passes the registers that
   gpulab.models.mma says it holds. D reassembled with gpulab's layout must equal A x B + C;
   this checks the PTX-ISA layout in gpulab on the hardware.
2. ``wmma_tile_gemm``: a 16x16x16-tiled fp16 x fp16 -> fp32 matmul, compared with
   gpulab.models.mma.wmma_matmul and with a float64 reference.

Writes ``gpulab/data/results/tensor_cores_mma.json``; without a GPU it says so and exits 0.
Run: ``python benchmarks/tensor_cores/run_mma.py``   (needs nvcc and the cffi package)
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import datetime as _dt
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/: the shared environment record
SRC = os.path.join(HERE, "tc_device.cu")
BUILD = os.path.join(HERE, "build")
OUT = os.path.join(RESULTS_DIR, "tensor_cores_mma.json")

from gpulab.models import mma  # noqa: E402


def build_ptx(arch: str = "sm_90") -> str:
    """Compile tc_device.cu to relocatable PTX (the step numba links)."""
    os.makedirs(BUILD, exist_ok=True)
    ptx = os.path.join(BUILD, f"tc_device_{arch}.ptx")
    cmd = ["nvcc", f"-arch={arch}", "-rdc=true", "-ptx", SRC, "-o", ptx]
    subprocess.run(cmd, check=True)
    return ptx


def make_kernels(ptx: str):
    """The two numba kernels, linked against ``ptx``."""
    from cffi import FFI
    from numba import cuda

    ffi = FFI()
    mma_lane = cuda.declare_device(
        "mma_m16n8k16_lane",
        "int32(CPointer(uint32), CPointer(uint32), CPointer(float32), CPointer(float32), int32)",
    )
    wmma_tile = cuda.declare_device(
        "wmma_tile_gemm",
        "int32(CPointer(float16), CPointer(float16), CPointer(float32), int32, int32, int32, int32, int32)",
    )

    @cuda.jit(link=[ptx])
    def mma_kernel(a_regs, b_regs, c_frag, d_frag):
        mma_lane(
            ffi.from_buffer(a_regs),
            ffi.from_buffer(b_regs),
            ffi.from_buffer(c_frag),
            ffi.from_buffer(d_frag),
            cuda.threadIdx.x,
        )

    @cuda.jit(link=[ptx])
    def wmma_kernel(a, b, c, m, n, k):
        wmma_tile(
            ffi.from_buffer(a),
            ffi.from_buffer(b),
            ffi.from_buffer(c),
            m,
            n,
            k,
            cuda.blockIdx.y,
            cuda.blockIdx.x,
        )

    return mma_kernel, wmma_kernel


def check_fragments(mma_kernel, seed: int = 0) -> dict:
    """One mma.sync with lane-wise fragments from gpulab's layout; compare D."""
    from numba import cuda

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    c = rng.standard_normal((16, 8)).astype(np.float32)
    fa = np.ascontiguousarray(mma.load_fragments(a, "A"))  # (32, 8) fp16
    fb = np.ascontiguousarray(mma.load_fragments(b, "B"))  # (32, 4) fp16
    fc = np.ascontiguousarray(mma.load_fragments(c, "C"))  # (32, 4) fp32
    d = cuda.to_device(np.zeros((32, 4), np.float32))
    mma_kernel[1, 32](
        cuda.to_device(fa.view(np.uint32)), cuda.to_device(fb.view(np.uint32)), cuda.to_device(fc), d
    )
    got = mma.store_fragments(d.copy_to_host(), "D")
    emu = mma.store_fragments(mma.mma_sync_m16n8k16(fa, fb, fc), "D")
    ref = a.astype(np.float64) @ b.astype(np.float64) + c
    return dict(
        max_abs_err_vs_fp64=float(np.max(np.abs(got - ref))),
        max_abs_diff_vs_emulation=float(np.max(np.abs(got - emu))),
        bitwise_equal_to_emulation=bool(np.array_equal(got, emu)),
        layout_ok=bool(np.allclose(got, ref, rtol=1e-5, atol=1e-5)),
    )


def check_wmma(wmma_kernel, m=256, n=256, k=1024, seed: int = 1) -> dict:
    """Tiled wmma matmul on the GPU vs gpulab.models.mma.wmma_matmul vs float64."""
    from numba import cuda

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = cuda.to_device(np.zeros((m, n), np.float32))
    wmma_kernel[(n // 16, m // 16), 32](cuda.to_device(a), cuda.to_device(b), c, m, n, k)
    got = c.copy_to_host()
    emu = mma.wmma_matmul(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    eps = np.finfo(np.float32).eps
    return dict(
        shape=[m, n, k],
        max_abs_err_vs_fp64=float(np.max(np.abs(got - ref))),
        max_abs_diff_vs_emulation=float(np.max(np.abs(got - emu))),
        max_err_in_units_of_eps_sum_abs=float(np.max(np.abs(got - ref) / (eps * scale))),
        emulation_max_abs_err_vs_fp64=float(np.max(np.abs(emu - ref))),
        within_accumulation_rounding=bool(np.all(np.abs(got - emu) <= 2 * (k // 16) * eps * scale)),
    )


def sass_hmma_count(kernel) -> int | None:
    """How many HMMA instructions the compiled kernel holds (None if nvdisasm is missing)."""
    try:
        sass = (
            next(iter(kernel.inspect_sass().values()))
            if isinstance(kernel.inspect_sass(), dict)
            else kernel.inspect_sass()
        )
        return sum(1 for line in sass.splitlines() if "HMMA" in line)
    except Exception:
        return None


def main() -> int:
    try:
        from numba import cuda

        have_gpu = cuda.is_available()
    except Exception:
        have_gpu = False
    if not have_gpu:
        print("no CUDA GPU here: skipping the tensor-core check (the chapter uses the emulation)")
        return 0
    if shutil.which("nvcc") is None:
        print("nvcc not found: cannot build tc_device.cu to PTX; skipping")
        return 0
    dev = cuda.get_current_device()
    cc = dev.compute_capability
    if cc < (8, 0):
        print(f"compute capability {cc}: mma.sync.m16n8k16 needs sm_80+; skipping")
        return 0
    ptx = build_ptx(f"sm_{cc[0]}{cc[1]}")
    mma_kernel, wmma_kernel = make_kernels(ptx)
    frag = check_fragments(mma_kernel)
    tile = check_wmma(wmma_kernel)
    from benchenv import environment

    res = dict(
        source="benchmarks/tensor_cores/run_mma.py",
        device=dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name),
        compute_capability=list(cc),
        measured_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        nvcc=subprocess.run(["nvcc", "--version"], capture_output=True, text=True)
        .stdout.strip()
        .splitlines()[-1],
        environment=environment(),
        mma_m16n8k16_fragments=frag,
        wmma_tiled_matmul=tile,
        sass_hmma_count=dict(
            mma_kernel=sass_hmma_count(mma_kernel), wmma_kernel=sass_hmma_count(wmma_kernel)
        ),
    )
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        json.dump(res, fh, indent=2)
    print(json.dumps(res, indent=2))
    return 0 if frag["layout_ok"] and tile["within_accumulation_rounding"] else 1


if __name__ == "__main__":
    sys.exit(main())
