"""SASS of one of chapter 11's steps, compiled on a CPU: benchmarks/raw/sgemm_<step>_sm90_cpu.sass.gz.

A recorded run keeps SASS listings only for the steps it was asked to (``sgemm.py --asm``);
for the others sgemm.json holds instruction counts. This compiles a step the way numba-cuda does
on the GPU (numba-cuda's PTX for sm_90, then ptxas and nvdisasm from the CUDA 13 compiler wheels,
``pip install 'gpulab[sass]'``), with no GPU needed. The compiler is this machine's, not the GPU
driver's: compare the listing with the recorded counts (chapter 11 compares its instructions per
step along K with Nsight Compute's) before reading it as the code that ran. The file's first
lines say what compiled it.

Run from the repository root:  python benchmarks/sgemm_sass_cpu.py reg1d     (a few seconds)
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

RAW = Path(__file__).resolve().parent / "raw"
ARGTYPES = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"  # c, a, b as sgemm.py passes them


def listing(step: str) -> str:
    """nvdisasm's listing of ``step`` (a key of gpulab.kernels.sgemm.STEPS) for sm_90."""
    from numba import cuda

    from gpulab.kernels import sgemm as S
    from gpulab.perf import sass

    if step not in S.STEPS:
        raise SystemExit(f"unknown step {step!r}; known: {', '.join(S.STEPS)}")
    kernel = S.STEPS[step][0]
    fastmath = bool(kernel.targetoptions.get("fastmath", False))
    ptx, _ = cuda.compile_ptx(kernel.py_func, ARGTYPES, cc=(9, 0), fastmath=fastmath)
    ptxas, nvdisasm = sass.tools()
    with tempfile.TemporaryDirectory() as d:
        src, cubin = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        Path(src).write_text(ptx)
        subprocess.run([ptxas, "-arch=sm_90", "-O3", src, "-o", cubin], check=True)
        text = subprocess.run([nvdisasm, "-c", cubin], check=True, capture_output=True, text=True).stdout
        versions = [
            subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
            for exe in (ptxas, nvdisasm)
        ]
    head = [
        f"// {step} ({kernel.py_func.__name__}) for sm_90, fastmath={fastmath}, argument types {ARGTYPES}",
        f"// numba-cuda {metadata.version('numba-cuda')}; ptxas: {versions[0]}; nvdisasm: {versions[1]}",
        f"// command: python benchmarks/sgemm_sass_cpu.py {step}",
    ]
    return "\n".join(head) + "\n" + text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("steps", nargs="+", help="steps of gpulab.kernels.sgemm.STEPS, e.g. reg1d")
    ap.add_argument("--out", type=Path, default=RAW, help="directory for the .sass.gz files")
    args = ap.parse_args(argv)
    for step in args.steps:
        path = args.out / f"sgemm_{step}_sm90_cpu.sass.gz"
        with gzip.open(path, "wt") as f:
            f.write(listing(step))
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
