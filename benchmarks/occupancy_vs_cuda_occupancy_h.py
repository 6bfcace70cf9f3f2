"""gpulab's occupancy calculator against NVIDIA's own cuda_occupancy.h, for sm_70 to sm_90, on
the CPU (no GPU needed); writes gpulab/data/results/occupancy_vs_cuda_occupancy_h.json.

cuda_occupancy.h (shipped with the CUDA toolkit and in the nvidia-cuda-runtime wheels) is the
header-only host implementation of the occupancy calculator. ``occupancy_h/occ_grid.cpp`` fills
its ``cudaOccDeviceProp`` for each compute capability with the per-SM limits of the CUDA C++
Programming Guide's "Technical Specifications per Compute Capability" table (DEVICE below,
transcribed here independently of gpulab.models.occupancy.ARCHS) and calls
``cudaOccMaxActiveBlocksPerMultiprocessor`` for a grid of (threads per block, registers per
thread, static and dynamic shared bytes, with and without the opt-in). The header supplies the
rest (blocks per SM, register and shared allocation granularities, carveouts, register file
split). The script compares blocks per SM with ``gpulab.models.occupancy.occupancy``.

What this verifies: gpulab's rules and its per-architecture constants agree with the header's,
given those device limits. What it does not: that a real GPU of each architecture behaves like
the header (only sm_90 was checked against a driver, benchmarks/occupancy_vs_driver.py).

Run: ``python benchmarks/occupancy_vs_cuda_occupancy_h.py [path/to/include]``  (needs g++)
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from benchenv import environment  # noqa: E402

from gpulab.models.occupancy import ARCHS  # noqa: E402

OUT = RESULTS_DIR / "occupancy_vs_cuda_occupancy_h.json"
KB = 1024

# The per-SM limits the header is given, per compute capability: (max resident threads per SM,
# max shared memory per SM, max shared per block with opt-in, shared memory reserved by the driver
# per block), from their one home, gpulab.models.occupancy.ARCHS (CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability"). The comparison checks the rules, not them.
DEVICE = {
    (int(k[3]), int(k[4])): (
        a.max_threads_per_sm,
        a.shared_per_sm,
        a.shared_per_block_optin,
        a.shared_reserved_per_block,
    )
    for k, a in ARCHS.items()
}

THREADS = list(range(32, 1025, 32)) + [1, 33, 100, 250]
REGS = [
    0,
    1,
    2,
    7,
    8,
    9,
    13,
    16,
    21,
    24,
    30,
    32,
    33,
    37,
    40,
    48,
    56,
    64,
    65,
    72,
    80,
    96,
    100,
    128,
    129,
    168,
    200,
    232,
    250,
    255,
]
SHARED = [
    0,
    1,
    1000,
    2048,
    4096,
    8192,
    12000,
    16384,
    24576,
    32768,
    40000,
    47 * KB,
    48 * KB,
    49 * KB,
    64 * KB,
    80_000,
    96 * KB,
    99 * KB,
    100 * KB,
    150_000,
    163 * KB,
    200_000,
    227 * KB,
    228 * KB,
]
STATIC = [0, 4096, 20_000]


def find_header(arg: str | None = None) -> Path:
    """The folder holding cuda_occupancy.h: the argument, $CUDA_OCC_INCLUDE, the toolkit, or the
    nvidia-cuda-runtime wheel's include/ in any site-packages."""
    cands = [arg, os.environ.get("CUDA_OCC_INCLUDE"), "/usr/local/cuda/include"]
    for p in sys.path:
        cands += [
            os.path.join(p, "nvidia", "cuda_runtime", "include"),
            os.path.join(p, "nvidia", "cu13", "include"),
        ]
    for c in cands:
        if c and (Path(c) / "cuda_occupancy.h").is_file():
            return Path(c)
    raise SystemExit(
        "cuda_occupancy.h not found: pass its folder, set CUDA_OCC_INCLUDE, or "
        "`pip download nvidia-cuda-runtime-cu12` and unzip it (include/cuda_occupancy.h)"
    )


def build(include: Path) -> str:
    exe = os.path.join(tempfile.mkdtemp(), "occ_grid")
    cmd = ["g++", "-O2", "-std=c++17", f"-I{include}", str(HERE / "occupancy_h" / "occ_grid.cpp"), "-o", exe]
    subprocess.run(cmd, check=True)
    return exe


def cases():
    """(cc, threads, regs, static, dynamic, optin, max_dynamic) for the whole grid."""
    for cc, (_, _, optin_limit, reserved) in DEVICE.items():
        for t in THREADS:
            for r in REGS:
                for stat in STATIC:
                    for dyn in SHARED:
                        if stat and dyn > 64 * KB and dyn not in (100 * KB, 200_000):
                            continue
                        yield cc, t, r, stat, dyn, 0, 0
                        yield cc, t, r, stat, dyn, 1, optin_limit - stat - reserved


def header_blocks(exe: str, rows) -> list[list[int]]:
    lines = []
    for cc, t, r, stat, dyn, optin, maxdyn in rows:
        tpsm, shsm, shopt, res = DEVICE[cc]
        lines.append(f"{cc[0]} {cc[1]} {tpsm} {shsm} {shopt} {res} {t} {r} {stat} {dyn} {optin} {maxdyn}")
    out = subprocess.run(
        [exe], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
    ).stdout.split("\n")
    return [list(map(int, ln.split())) for ln in out if ln.strip()]


def gpulab_blocks(cc, t, r, stat, dyn, optin, maxdyn) -> int:
    from gpulab.models.occupancy import occupancy

    return occupancy(
        t,
        r,
        stat + dyn,
        f"sm_{cc[0]}{cc[1]}",
        static_shared_bytes=stat,
        max_dynamic_shared_bytes=maxdyn if optin else None,
    ).blocks_per_sm


def compare(exe: str) -> dict:
    from gpulab.models.occupancy import ARCHS

    rows = list(cases())
    hdr = header_blocks(exe, rows)
    assert len(hdr) == len(rows), (len(hdr), len(rows))
    per_arch = {}
    for row, h in zip(rows, hdr):
        cc = row[0]
        a = per_arch.setdefault(
            f"sm_{cc[0]}{cc[1]}",
            {"cases": 0, "agree": 0, "header_errors": 0, "nonzero_cases": 0, "mismatches": []},
        )
        a["cases"] += 1
        if h[6] != 0:
            a["header_errors"] += 1
            continue
        g = gpulab_blocks(*row)
        a["nonzero_cases"] += h[0] > 0
        if g == h[0]:
            a["agree"] += 1
        elif len(a["mismatches"]) < 25:
            a["mismatches"].append(
                {
                    "threads": row[1],
                    "regs": row[2],
                    "static": row[3],
                    "dynamic": row[4],
                    "optin": bool(row[5]),
                    "header": h[0],
                    "gpulab": g,
                    "header_limits": {"regs": h[2], "shared": h[3], "warps": h[4], "blocks": h[5]},
                }
            )
    limits = {}
    for cc, (tpsm, shsm, shopt, res) in DEVICE.items():
        a = ARCHS[f"sm_{cc[0]}{cc[1]}"]
        limits[a.name] = {
            "programming_guide": {
                "max_threads_per_sm": tpsm,
                "shared_per_sm": shsm,
                "shared_per_block_optin": shopt,
                "reserved": res,
            },
            "gpulab_arch": {
                "max_threads_per_sm": a.max_threads_per_sm,
                "shared_per_sm": a.shared_per_sm,
                "shared_per_block_optin": a.shared_per_block_optin,
                "reserved": a.shared_reserved_per_block,
            },
            "equal": (tpsm, shsm, shopt, res)
            == (a.max_threads_per_sm, a.shared_per_sm, a.shared_per_block_optin, a.shared_reserved_per_block),
        }
    for v in per_arch.values():
        v["agreement"] = v["agree"] / max(v["cases"] - v["header_errors"], 1)
    return {"per_arch": per_arch, "device_limits": limits}


def main() -> int:
    include = find_header(sys.argv[1] if len(sys.argv) > 1 else None)
    header = include / "cuda_occupancy.h"
    text = header.read_text(errors="replace")
    ver = re.search(r"#define\s+__CUDA_OCC_(?:MAJOR|VERSION)\S*\s+(\d+)", text)
    exe = build(include)
    res = compare(exe)
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    res = {
        "what": __doc__.strip().splitlines()[0],
        "compared": (
            "blocks per SM from gpulab.models.occupancy.occupancy against those of "
            "cudaOccMaxActiveBlocksPerMultiprocessor (NVIDIA cuda_occupancy.h), case by "
            "case over the grid, given the Programming Guide's per-SM limits (agreement "
            "in per_arch); no GPU of these architectures was run"
        ),
        "header": {
            "path": str(header),
            "sha256": hashlib.sha256(header.read_bytes()).hexdigest(),
            "version_define": ver.group(0) if ver else None,
            "source": os.environ.get("CUDA_OCC_SOURCE", ""),
        },
        "compiler": gxx,
        "environment": environment(numba=False),
        "grid": {
            "threads": THREADS,
            "registers": REGS,
            "dynamic_shared": SHARED,
            "static_shared": STATIC,
            "optin": [False, True],
        },
        **res,
    }
    OUT.write_text(json.dumps(res, indent=1))
    for k, v in res["per_arch"].items():
        print(
            f"{k}: {v['agree']}/{v['cases'] - v['header_errors']} agree "
            f"({v['nonzero_cases']} with >= 1 block); first mismatches: {v['mismatches'][:2]}"
        )
    print("device limits equal:", {k: v["equal"] for k, v in res["device_limits"].items()})
    print("wrote", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
