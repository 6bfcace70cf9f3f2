"""Does ptxas accept sub-byte (INT4) and INT8 tensor-core PTX for sm_80 and sm_90, and what SASS
does it make? (seed 001's "INT4" claim.) Writes gpulab/data/results/int4_mma_ptx.json.

For each PTX ``mma.sync`` variant below, a one-instruction kernel is assembled with
``ptxas -arch=sm_XX`` and, when that succeeds, disassembled with ``cuobjdump -sass``; the JSON
records the return code, ptxas's message and the tensor-core SASS opcodes (IMMA/HMMA...) found.
Needs the CUDA toolkit (ptxas, cuobjdump), no GPU.

Run: ``python benchmarks/int4_mma_ptx.py``
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(RESULTS_DIR, "int4_mma_ptx.json")

# name -> (mma shape/types, registers of A, B, C/D)
VARIANTS = {
    "m8n8k32 s4 (Turing shape)": ("m8n8k32.row.col.s32.s4.s4.s32", 1, 1, 2),
    "m16n8k32 s4": ("m16n8k32.row.col.s32.s4.s4.s32", 2, 1, 4),
    "m16n8k64 s4 (Ampere shape)": ("m16n8k64.row.col.s32.s4.s4.s32", 4, 2, 4),
    "m16n8k32 s8": ("m16n8k32.row.col.s32.s8.s8.s32", 4, 2, 4),
    "m8n8k128 b1 xor.popc": ("m8n8k128.row.col.s32.b1.b1.s32.xor.popc", 1, 1, 2),
    "m16n8k256 b1 and.popc": ("m16n8k256.row.col.s32.b1.b1.s32.and.popc", 4, 2, 4),
}


def ptx(shape: str, na: int, nb: int, nc: int, sm: str) -> str:
    a = ", ".join(f"a{i}" for i in range(na))
    b = ", ".join(f"b{i}" for i in range(nb))
    c = ", ".join(f"c{i}" for i in range(nc))
    d = ", ".join(f"d{i}" for i in range(nc))
    op = "mma.sync.aligned." + shape
    loads = "\n".join(
        f"  ld.global.b32 {r}, [p+{4 * k}];"
        for k, r in enumerate(
            [f"a{i}" for i in range(na)] + [f"b{i}" for i in range(nb)] + [f"c{i}" for i in range(nc)]
        )
    )
    stores = "\n".join(f"  st.global.b32 [p+{4 * k}], d{k};" for k in range(nc))
    return f""".version 8.0
.target {sm}
.address_size 64
.visible .entry k(.param .u64 arg)
{{
  .reg .b32 a<{na}>, b<{nb}>, c<{nc}>, d<{nc}>;
  .reg .b64 p;
  ld.param.u64 p, [arg];
  cvta.to.global.u64 p, p;
{loads}
  {op} {{{d}}}, {{{a}}}, {{{b}}}, {{{c}}};
{stores}
  ret;
}}
"""


def tool_version(tool):
    try:
        return (
            subprocess.run([tool, "--version"], capture_output=True, text=True)
            .stdout.strip()
            .splitlines()[-1]
        )
    except Exception:  # noqa: BLE001
        return None


def main() -> int:
    from shutil import which

    if which("ptxas") is None:
        print("SKIP: ptxas not found; int4_mma_ptx.json untouched")
        return 0
    tmp = tempfile.mkdtemp()
    rows = []
    for sm in ("sm_80", "sm_90"):
        for name, (shape, na, nb, nc) in VARIANTS.items():
            src = os.path.join(tmp, "k.ptx")
            cub = os.path.join(tmp, "k.cubin")
            with open(src, "w") as f:
                f.write(ptx(shape, na, nb, nc, sm))
            p = subprocess.run(["ptxas", f"-arch={sm}", src, "-o", cub], capture_output=True, text=True)
            row = {
                "arch": sm,
                "variant": name,
                "ptx": shape,
                "ptxas_rc": p.returncode,
                "ptxas_message": (p.stdout + p.stderr).strip()[:600],
            }
            if p.returncode == 0 and which("cuobjdump"):
                sass = subprocess.run(["cuobjdump", "-sass", cub], capture_output=True, text=True).stdout
                ops = re.findall(r"\b([IHDB]MMA[A-Z0-9_.]*|BMMA[A-Z0-9_.]*)", sass)
                row["tensor_sass"] = sorted(set(ops))
                row["tensor_sass_count"] = len(ops)
                row["sass_instructions"] = len(re.findall(r"/\*[0-9a-f]{4}\*/", sass))
            rows.append(row)
            print(sm, name, "rc", p.returncode, row.get("tensor_sass"), row["ptxas_message"][:120])
    sys.path.insert(0, HERE)
    from benchenv import environment

    res = {
        "what": __doc__.strip().splitlines()[0],
        "environment": environment(),
        "ptxas": tool_version("ptxas"),
        "cuobjdump": tool_version("cuobjdump"),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "rows": rows,
    }
    path = os.environ.get("GPULAB_BENCH_OUT") or OUT
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
