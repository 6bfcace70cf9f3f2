"""Is Hopper's wgmma reachable from a numba kernel the way gemm_tc's mma.sync is? (issue 27)

A CUDA C++ device function issues one ``wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16`` (with
``wgmma.fence`` / ``commit_group`` / ``wait_group``) on shared-memory matrix descriptors; NVRTC
compiles it to LTO-IR for sm_90a and nvJitLink links it into a numba kernel, as for gemm_tc.

- ``--sass`` (CPU): link it here for sm_90a and count HGMMA in the SASS.
- on a GPU: one warpgroup (128 threads) runs it on A = B = all ones in shared memory, so every
  element of D must be 16 whatever the descriptors' layout; writes wgmma_probe.json to --out.

This shows the instruction can be issued and runs; a fast wgmma GEMM also needs TMA, mbarriers
and warp-specialised pipelines, which numba has no Python-level way to write.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

N_ACC = 32  # m64n64 f32: 64 * 64 / 128 threads


def cu_source() -> str:
    regs = ", ".join(f"%{i}" for i in range(N_ACC))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(N_ACC))
    return f"""
__device__ __forceinline__ unsigned long long desc(const void *p) {{
    // matrix descriptor, no swizzle: start address >> 4 (bits 0-13), leading byte offset 128 B >> 4
    // (bits 16-29), stride byte offset 256 B >> 4 (bits 32-45)
    unsigned long long a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    return ((a & 0x3FFFF) >> 4) | (8ull << 16) | (16ull << 32);
}}

extern "C" __device__ int wgmma_probe(int *ret, float *d, const void *sa, const void *sb) {{
    unsigned long long da = desc(sa), db = desc(sb);
    asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{N_ACC + 2}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{regs}}}, %{N_ACC}, %{N_ACC + 1}, p, 1, 1, 0, 0;\\n}}\\n"
        : {outs}
        : "l"(da), "l"(db), "r"(0));
    asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");
    *ret = 0;
    return 0;
}}
"""


def make_kernel(jit=True):
    from numba import cuda, float32, uint32

    from gpulab.kernels.gemm_tc import _addr_intrinsic

    addr = _addr_intrinsic()
    probe = cuda.declare_device(
        "wgmma_probe",
        "int32(CPointer(float32), CPointer(uint32), CPointer(uint32))",
        link=[cuda.CUSource(cu_source())],
    )

    def wgmma_kernel(out):
        sa = cuda.shared.array(2048, uint32, alignment=128)  # 8 KB of fp16 ones (0x3C00 twice)
        sb = cuda.shared.array(2048, uint32, alignment=128)
        t = cuda.threadIdx.x
        for i in range(t, 2048, 128):
            sa[i] = uint32(0x3C003C00)
            sb[i] = uint32(0x3C003C00)
        cuda.syncthreads()
        acc = cuda.local.array(32, float32)
        for i in range(32):
            acc[i] = float32(0.0)
        probe(addr(acc, 0), addr(sa, 0), addr(sb, 0))
        for i in range(32):
            out[t, i] = acc[i]

    return cuda.jit(wgmma_kernel, lto=True) if jit else wgmma_kernel


def sass_here(arch="sm_90a"):
    """Link the probe on this CPU for sm_90a: {'HGMMA': n, 'registers': r, ...}."""
    import re
    import subprocess
    import tempfile

    from cuda.core import Linker, LinkerOptions, ObjectCode
    from numba.cuda.compiler import compile_all

    from gpulab.perf import sass as S

    ptxas, nvdisasm = S.tools()
    codes, _ = compile_all(
        make_kernel().py_func,
        "void(float32[:, ::1])",
        device=False,
        cc=(9, 0, "a"),
        output="ltoir",
        abi="numba",
    )
    objs = [c if isinstance(c, ObjectCode) else ObjectCode.from_ltoir(c) for c in codes]
    ptx = (
        Linker(*objs, options=LinkerOptions(arch=arch, link_time_optimization=True, ptx=True))
        .link("ptx")
        .code
    )
    ptx = (ptx.decode() if isinstance(ptx, bytes) else ptx).rstrip("\x00")
    with tempfile.TemporaryDirectory() as d:
        p, c = f"{d}/k.ptx", f"{d}/k.cubin"
        Path(p).write_text(ptx)
        r = subprocess.run([ptxas, f"-arch={arch}", "-v", p, "-o", c], capture_output=True, text=True)
        if r.returncode:
            return {"error": r.stderr[:600], "ptx_target": re.findall(r"\.target \S+", ptx)}
        s = subprocess.run([nvdisasm, "-c", c], capture_output=True, text=True).stdout
    return {
        "ptx_target": re.findall(r"\.target \S+", ptx),
        "wgmma_in_ptx": ptx.count("wgmma.mma_async"),
        "HGMMA_in_sass": len(re.findall(r"\bHGMMA\b", s)),
        "hgmma_lines": [ln.strip() for ln in s.splitlines() if "HGMMA" in ln][:2],
        "ptxas": r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "",
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sass", action="store_true", help="link on this CPU for sm_90a and count HGMMA")
    ap.add_argument("--out", default=None, help="folder for wgmma_probe.json (GPU run)")
    args = ap.parse_args(argv)
    if args.sass:
        print(json.dumps(sass_here(), indent=1))
        return 0
    import numpy as np
    from numba import cuda

    if not cuda.is_available():
        print("no CUDA GPU here: use --sass for the CPU check")
        return 0
    rec = {"device_cc": list(cuda.get_current_device().compute_capability)}
    try:
        k = make_kernel()
        out = cuda.to_device(np.full((128, N_ACC), np.nan, np.float32))
        k[1, 128](out)
        cuda.synchronize()
        got = out.copy_to_host()
        rec.update(
            ran=True,
            all_16=bool(np.all(got == 16.0)),
            distinct_values=sorted({float(x) for x in np.unique(got)})[:8],
        )
        try:
            sass = k.inspect_sass()
            sass = next(iter(sass.values())) if isinstance(sass, dict) else sass
            rec["HGMMA_in_sass"] = sass.count("HGMMA")
        except Exception as ex:  # noqa: BLE001
            rec["sass_error"] = repr(ex)[:300]
    except Exception as ex:  # noqa: BLE001
        rec.update(ran=False, error=f"{type(ex).__name__}: {str(ex)[:1500]}")
    print(json.dumps(rec))
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "wgmma_probe.json").write_text(json.dumps(rec, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
