"""Compare gpulab's occupancy calculator with the CUDA driver on the GPU at hand.

For a family of numba kernels (different register counts, forced with ``max_registers``, and
static shared arrays) and many block sizes and dynamic shared sizes, ask the driver
(``cuOccupancyMaxActiveBlocksPerMultiprocessor``) how many blocks fit per SM and compare with
``gpulab.models.occupancy.occupancy`` fed the kernel's actual register and shared-memory counts.
Also records the device limits next to gpulab's table, and each kernel's registers and local
(spill) bytes. Writes ``gpulab/data/results/occupancy_vs_driver.json``; skips without a GPU.

Run: ``python benchmarks/occupancy_vs_driver.py``
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
OUT = os.path.join(RESULTS_DIR, "occupancy_vs_driver.json")

BLOCKS = [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 384, 416, 512, 640, 768, 896, 1024]
DYNAMIC = [0, 100, 1024, 4096, 10_000, 16 * 1024, 24_000, 40 * 1024, 47 * 1024, 48 * 1024, 60 * 1024]
OPTIN_DYNAMIC = [
    0,
    50 * 1024,
    64 * 1024,
    100 * 1024,
    150 * 1024,
    200 * 1024,
    226 * 1024,
    227 * 1024,
    228 * 1024,
]
# (accumulators, max_registers cap or None, static shared float32 count)
VARIANTS = [
    (1, None, 0),
    (4, None, 0),
    (16, None, 0),
    (24, 32, 0),
    (32, 40, 0),
    (32, None, 0),
    (48, 56, 0),
    (48, None, 0),
    (64, 72, 0),
    (64, None, 0),
    (96, 128, 0),
    (96, None, 0),
    (160, 168, 0),
    (160, None, 0),
    (220, 255, 0),
    (8, None, 256),
    (8, None, 3000),
    (32, 40, 6000),
    (64, None, 9000),
    (16, 24, 11_000),
]


# device limit as the driver names it (CU_DEVICE_ATTRIBUTE_<name>) -> gpulab's Arch field (None: no
# field to compare with). Every name is checked against the driver binding before the GPU is used.
DEVICE_LIMITS = {
    "MULTIPROCESSOR_COUNT": None,
    "MAX_THREADS_PER_MULTIPROCESSOR": "max_threads_per_sm",
    "MAX_BLOCKS_PER_MULTIPROCESSOR": "max_blocks_per_sm",
    "MAX_REGISTERS_PER_MULTIPROCESSOR": "registers_per_sm",
    "MAX_REGISTERS_PER_BLOCK": "registers_per_block",
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": "shared_per_sm",
    "MAX_SHARED_MEMORY_PER_BLOCK": "shared_per_block_default",
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": "shared_per_block_optin",
    "RESERVED_SHARED_MEMORY_PER_BLOCK": "shared_reserved_per_block",
}


def check_attribute_names(names) -> None:
    """Raise ValueError naming every name with no ``CU_DEVICE_ATTRIBUTE_<name>`` in the driver
    binding: a misspelled limit must stop the run, not be recorded as "not reported"."""
    from numba.cuda.cudadrv.driver import binding

    known = binding.CUdevice_attribute
    unknown = [n for n in names if not hasattr(known, f"CU_DEVICE_ATTRIBUTE_{n}")]
    if unknown:
        raise ValueError(
            "no such CUDA device attribute: "
            + ", ".join(f"CU_DEVICE_ATTRIBUTE_{n}" for n in unknown)
            + " (see cuda.bindings.driver.CUdevice_attribute)"
        )


def device_attribute(dev, name: str) -> int | None:
    """The driver's value of device attribute ``name``; None only when the driver refuses a known
    attribute (CudaAPIError); an unknown name raises ValueError."""
    from numba.cuda.cudadrv.driver import CudaAPIError

    check_attribute_names([name])
    try:
        return int(getattr(dev, name))
    except CudaAPIError:
        return None


def build(k, cap, smem):
    from gpulab.kernels.pressure import compile_on_gpu

    return compile_on_gpu(k, cap, smem)


def driver_blocks(ctx, fn, block, dynamic):
    try:
        r = ctx.get_active_blocks_per_multiprocessor(fn, block, dynamic)
    except Exception as e:  # the driver refuses: count as 0, keep the text
        return 0, f"{type(e).__name__}: {e}"
    if isinstance(r, tuple):
        r = r[-1]
    return int(r), None


def set_attr(fn, name, value):
    from numba.cuda.cudadrv.driver import binding, driver

    attr = getattr(binding.CUfunction_attribute, name)
    driver.cuKernelSetAttribute(attr, int(value), fn.handle, fn.device.id)


def main() -> int:
    from benchenv import environment, gpu_present

    if not gpu_present():
        print("occupancy_vs_driver: no CUDA GPU available; skipped (nothing written)")
        return 0
    from numba import cuda
    from gpulab.models.occupancy import ARCHS, occupancy

    dev = cuda.get_current_device()
    ctx = cuda.current_context()
    cc = dev.compute_capability
    arch = f"sm_{cc[0]}{cc[1]}"
    if arch not in ARCHS:
        print(f"occupancy_vs_driver: {arch} is not in gpulab's table; skipped")
        return 0
    a = ARCHS[arch]

    check_attribute_names(DEVICE_LIMITS)
    device_limits = {
        name: device_attribute(dev, name)
        if field is None
        else [device_attribute(dev, name), getattr(a, field)]
        for name, field in DEVICE_LIMITS.items()
    }

    kernels, configs = [], []
    t0 = time.time()
    for vi, (k, cap, smem) in enumerate(VARIANTS):
        fn = build(k, cap, smem)
        regs, static, local = fn.attrs.regs, fn.attrs.shared, fn.attrs.local
        kernels.append(
            {
                "accumulators": k,
                "max_registers": cap,
                "static_shared_floats": smem,
                "registers": regs,
                "static_shared_bytes": static,
                "local_bytes_per_thread": local,
                "max_threads": fn.attrs.maxthreads,
            }
        )

        def compare(kind, block, dyn, optin=None, carveout=None):
            drv, err = driver_blocks(ctx, fn, block, dyn)
            o = occupancy(
                block,
                regs,
                static + dyn,
                arch,
                max_dynamic_shared_bytes=optin,
                static_shared_bytes=static,
                carveout=carveout,
            )
            configs.append(
                {
                    "kind": kind,
                    "kernel": vi,
                    "registers": regs,
                    "static_shared": static,
                    "block": block,
                    "dynamic_shared": dyn,
                    "optin": optin,
                    "carveout": carveout,
                    "driver": drv,
                    "driver_error": err,
                    "gpulab": o.blocks_per_sm,
                    "limiter": o.limiter,
                    "match": drv == o.blocks_per_sm,
                }
            )

        for block in BLOCKS:
            if block > fn.attrs.maxthreads:
                continue
            for dyn in DYNAMIC:
                compare("default", block, dyn)
        if vi % 4 == 0:  # opt-in above 48 KB
            optin = a.shared_per_block_optin - static
            set_attr(fn, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", optin)
            for block in (64, 256, 1024):
                for dyn in OPTIN_DYNAMIC:
                    compare("opt-in", block, dyn, optin=optin)
            set_attr(
                fn, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", a.shared_per_block_default - static
            )
        if vi % 5 == 1:  # carveout preference
            for carve in (0, 25, 50, 100):
                set_attr(fn, "CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT", carve)
                for block in (128, 512):
                    for dyn in (1024, 10_000, 24_000, 40 * 1024):
                        compare("carveout", block, dyn, carveout=carve)
            set_attr(fn, "CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT", -1)

    summary = {}
    for kind in ("default", "opt-in", "carveout"):
        rows = [c for c in configs if c["kind"] == kind]
        summary[kind] = {
            "configurations": len(rows),
            "match": sum(c["match"] for c in rows),
            "distinct_register_counts": len({c["registers"] for c in rows}),
        }
    result = {
        "script": "benchmarks/occupancy_vs_driver.py",
        "environment": environment(),
        "arch": arch,
        "device_limits_vs_gpulab": device_limits,
        "kernels": kernels,
        "summary": summary,
        "mismatches": [c for c in configs if not c["match"]][:200],
        "configs": configs,
        "seconds": round(time.time() - t0, 1),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(result, f, indent=1, default=str)
    print(
        json.dumps(
            {k: result[k] for k in ("environment", "arch", "summary", "device_limits_vs_gpulab")}, indent=1
        )
    )
    print(
        "kernels (registers, local bytes):",
        [
            (kk["accumulators"], kk["max_registers"], kk["registers"], kk["local_bytes_per_thread"])
            for kk in kernels
        ],
    )
    print("mismatches:", len(result["mismatches"]), "->", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
