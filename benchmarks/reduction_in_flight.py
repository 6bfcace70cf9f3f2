"""Bytes in flight per SM for the recorded reductions (chapter 08 <-> chapter 01's Little's law);
writes gpulab/data/results/reduction_in_flight.json. Nothing here is timed again.

MEASURED (read from other results files): the per-block reductions' and the best grid-stride
sum's GB/s and launch configuration (reduction.json), the H200's DRAM load latency (latency.json,
largest working set), the SM count. Register and shared-memory use per kernel are read from the
compiled kernels when a GPU is present (numba), else taken as None and the occupancy uses warps
and shared memory alone.
DERIVED: resident threads per SM (gpulab.models.occupancy), the most bytes each SM can have in
flight (resident threads x loads in flight per thread x bytes per load), the bytes in flight
Little's law needs to sustain each measured bandwidth (bandwidth x latency / SMs), and the
bytes in flight the whole device needs to reach the best measured bandwidth.

Run: ``python benchmarks/reduction_in_flight.py``   (CPU; on a GPU it also reads register counts)
"""

from __future__ import annotations
from gpulab.results import RESULTS_DIR

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
OUT = os.path.join(RESULTS_DIR, "reduction_in_flight.json")


def kernel_resources():
    """{kernel: (registers per thread, static shared bytes)} from numba on a GPU, else {}."""
    try:
        from numba import cuda

        if not cuda.is_available():
            return {}
        import numpy as np
        from numba import float32
        from gpulab.kernels import warp

        x = cuda.to_device(np.ones(1 << 20, np.float32))
        out = cuda.device_array(1 << 12, np.float32)
        res = {}
        for name, kern, arg in (
            ("block_sum_tree", warp.block_sum_tree, x),
            ("block_sum_shfl", warp.block_sum_shfl, x),
            ("device_sum", warp.device_sum, x),
            ("device_sum_pairs", warp.device_sum_pairs, cuda.to_device(np.ones(1 << 19, np.complex64))),
        ):
            kern[4, 256](arg, out)
            cuda.synchronize()
            regs, shared = kern.get_regs_per_thread(), kern.get_shared_mem_per_block()
            regs = next(iter(regs.values())) if isinstance(regs, dict) else regs
            shared = next(iter(shared.values())) if isinstance(shared, dict) else shared
            res[name] = (int(regs), int(shared))
        del float32
        return res
    except Exception as e:  # noqa: BLE001
        print("register counts not read:", repr(e)[:200])
        return {}


def derive(red: dict, lat: dict, resources: dict) -> dict:
    from gpulab.models.occupancy import occupancy

    sms = red["environment"]["sm_count"]
    dram = max(lat["global"], key=lambda r: r["working_set_bytes"])
    latency_s = dram["ns"] * 1e-9
    big = max(red["block_sums"], key=lambda r: r["n"])
    best = red["device_sum"]["best"]

    def config(kernel, grid, block, loads, nbytes, gbps):
        regs, shared = resources.get(kernel, (None, None))
        occ = occupancy(block, regs or 0, shared or 0, "sm_90")
        resident_blocks = min(occ.blocks_per_sm, -(-grid // sms))
        threads = resident_blocks * block
        max_inflight = threads * loads * nbytes
        need = gbps * 1e9 * latency_s / sms
        return {
            "kernel": kernel,
            "grid": grid,
            "block": block,
            "loads_in_flight_per_thread": loads,
            "bytes_per_load": nbytes,
            "registers_per_thread": regs,
            "static_shared_bytes": shared,
            "resident_blocks_per_sm": resident_blocks,
            "resident_threads_per_sm": threads,
            "occupancy_limited_by": occ.limiter
            if regs is not None
            else "warps/shared only (registers not read)",
            "measured_GBps": gbps,
            "max_bytes_in_flight_per_sm": max_inflight,
            "littles_law_bytes_in_flight_per_sm_for_measured_GBps": need,
            "implied_latency_if_always_full_ns": max_inflight * sms / (gbps * 1e9) * 1e9,
        }

    per_block = [
        config("block_sum_tree", big["grid"], big["block"], 1, 4, big["tree"]["GBps"]),
        config("block_sum_shfl", big["grid"], big["block"], 1, 4, big["shuffle"]["GBps"]),
    ]
    kname = "device_sum_pairs" if "8-byte" in best["kernel"] else "device_sum"
    grid_stride = config(
        kname, best["grid"], best["block"], 4, 8 if kname.endswith("pairs") else 4, best["GBps"]
    )
    need_best = best["GBps"] * 1e9 * latency_s / sms
    return {
        "measured": {
            "dram_latency_ns": dram["ns"],
            "dram_working_set_bytes": dram["working_set_bytes"],
            "sm_count": sms,
            "per_block_n": big["n"],
            "per_block_GBps": {"tree": big["tree"]["GBps"], "shuffle": big["shuffle"]["GBps"]},
            "grid_stride_best": best,
            "registers_and_shared": resources,
        },
        "derived": {
            "per_block": per_block,
            "grid_stride": grid_stride,
            "bytes_in_flight_per_sm_needed_for_best_GBps": need_best,
            "per_block_max_in_flight_over_needed": per_block[1]["max_bytes_in_flight_per_sm"] / need_best,
            "grid_stride_max_in_flight_over_needed": grid_stride["max_bytes_in_flight_per_sm"] / need_best,
            "bandwidth_ratio_grid_stride_over_per_block_shuffle": best["GBps"] / big["shuffle"]["GBps"],
            "in_flight_ratio_grid_stride_over_per_block": grid_stride["max_bytes_in_flight_per_sm"]
            / per_block[1]["max_bytes_in_flight_per_sm"],
        },
    }


def main() -> int:
    from gpulab import results
    from benchenv import environment, command

    red, lat = results.load("reduction"), results.load("latency")
    if red is None or lat is None:
        print("needs reduction.json and latency.json in gpulab/data/results")
        return 1
    resources = kernel_resources()
    res = derive(red, lat, resources)
    res["what"] = __doc__.strip().splitlines()[0]
    res["method"] = (
        "MEASURED values come from reduction.json and latency.json as recorded; DERIVED = "
        "resident threads (gpulab occupancy) x loads in flight per thread x bytes per load, "
        "and Little's law: bytes in flight needed = bandwidth x DRAM latency / SMs"
    )
    red_env = results.load("reduction")["environment"]
    res["sources"] = {
        "reduction": red_env.get("date_utc") or red_env.get("when_utc"),
        "latency": (lat.get("environment") or {}).get("date_utc")
        or (lat.get("environment") or {}).get("when_utc"),
    }
    res["environment"] = (
        environment() if resources else {"command": command(), "gpu": None, "note": "derived on a CPU"}
    )
    with open(os.environ.get("GPULAB_BENCH_OUT") or OUT, "w") as f:
        json.dump(res, f, indent=1)
    d = res["derived"]
    for c in d["per_block"] + [d["grid_stride"]]:
        print(
            f"{c['kernel']:18s} {c['resident_threads_per_sm']:5d} thr/SM  max in flight "
            f"{c['max_bytes_in_flight_per_sm'] / 1024:6.1f} KiB/SM  measured {c['measured_GBps']:7.0f} GB/s "
            f" Little needs {c['littles_law_bytes_in_flight_per_sm_for_measured_GBps'] / 1024:6.1f} KiB/SM"
        )
    print("needed for best:", d["bytes_in_flight_per_sm_needed_for_best_GBps"] / 1024, "KiB/SM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
