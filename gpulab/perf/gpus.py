"""GPUs as data: the numbers gpulab's performance model needs, each with where it comes from.

Three kinds of source: a vendor datasheet or whitepaper (``cite`` keys in book/references.bib),
a measurement on the device recorded in ``gpulab/data/results/`` (file named), or a constant
fitted by ``benchmarks/perf_model.py predict`` on its "calibrate" kernels (recorded in
``gpulab/data/results/perf_model.json["calibration"]``; a test checks the two agree). Only the
H200 has been measured; the A100 and T4 carry datasheet figures and the H200's fitted
per-cycle constants, and are marked ``validated=False`` until someone measures them
(``python benchmarks/perf_model.py gpu`` under ncu on that GPU, then ``predict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class GPU:
    """One GPU's throughputs, latencies and the model's calibrated constants."""

    name: str
    arch: str  # key of gpulab.models.occupancy.ARCHS
    sms: int
    clock_hz: float  # SM clock the timings ran at (boost)
    dram_peak_bytes_per_s: float  # datasheet peak (the "% of peak" in the breakdown)
    dram_bytes_per_s: float  # achievable: what the model's DRAM bound uses
    l2_bytes: int
    l2_bytes_per_s: float
    lat_l1_s: float
    lat_l2_s: float
    lat_dram_s: float
    lat_shared_s: float
    launch_s: float  # GPU time of an empty launch (gpu__time_duration)
    # per-cycle constants (calibrated on the H200)
    issue_per_sm_cycle: float = 4.0  # 4 schedulers, 1 warp-instruction each per cycle
    fp64_cycles_per_warp_inst: float = 2.0  # 32 lanes / FP64 units per scheduler
    issue_efficiency: float = 1.0  # fraction of that peak a busy kernel reaches
    shared_wavefronts_per_sm_cycle: float = 1.0
    l1_wavefronts_per_sm_cycle: float = 1.0
    store_sector_cycles: float = 3.0  # L1 cycles per stored 32-byte sector (fitted)
    l1_fill_sector_cycles: float = 0.0  # L1 cycles per sector filled from L2 (fitted: ~0)
    alu_latency_cycles: float = 4.0  # dependent SASS instruction to its consumer
    dram_latency_under_load: float = 1.0  # multiplier on lat_dram_s while memory streams
    barrier_cycles: float = 100.0
    barrier_cycles_per_warp: float = 5.0
    atomic_int_op_s: float = 0.743e-9  # one address: time per integer L2 atomic operation
    atomic_float_op_s: float = 1.75e-9  # one address: time per float L2 atomic operation
    atomic_request_s: float = 2e-10  # one 2 KB chunk: time per (warp, sector) atomic request
    atomics_per_s: float = 5e10  # (warp instruction, sector) pairs, many addresses
    shared_atomic_cycles: float = 2.0  # per same-address lane in a shared atomic
    # SM cycles per same-address lane of a shared atomic compiled to a compare-and-swap loop (float
    # add on sm_90): blind_r5's shared_atomic_sum_f32, 2^22 lanes on one shared float per block,
    # 201.5 us on 132 SMs at 1.98 GHz = 12.6 cycles per lane (one LDS-FADD-CAS round trip each)
    shared_cas_cycles: float = 12.6
    block_launch_per_cycle: float = 1.0  # blocks the GPU starts per SM cycle, all SMs (fitted)
    overlap_p: float = 4.0  # soft maximum of the bounds: (sum t_i^p)^(1/p)
    # cycles one scheduler's pipe is busy per warp instruction, by sass.PIPES class: 32 lanes /
    # (results per clock per SM / 4 schedulers), from the CUDA C++ Programming Guide's table of
    # arithmetic instruction throughput (cc 9.0: FP32 128, FP64 64, 32-bit integer add, logic,
    # compare, shift and multiply-add 64, conversions 16, MUFU 16, warp shuffle 32 per SM-clock)
    pipe_cycles: dict = field(
        default_factory=lambda: {
            "fp32": 1.0,
            "fp64": 2.0,
            "alu": 2.0,
            "int_mad": 2.0,
            "int64": 2.0,
            "mufu": 8.0,
            "conv": 8.0,
            "shuffle": 4.0,
        },
        compare=False,
    )
    validated: bool = False
    sources: dict = field(default_factory=dict, compare=False)

    def with_(self, **changes) -> "GPU":
        """A copy with some fields changed (what the calibration tries)."""
        return replace(self, **changes)


_FIT = (
    "fitted by benchmarks/perf_model.py predict on its calibrate kernels (perf_model.json); the "
    "time constants refitted by benchmarks/perf_train.py fit (perf_train.json)"
)

# Calibrated on the H200 (gpulab/data/results/perf_model.json["calibration"]["params"]); the
# time constants in perf_train.json["params"] were refitted after blind round 6 was measured, on
# perf_model's calibrate kernels, perf_blind and blind rounds 3-6 (python benchmarks/perf_train.py fit),
# and L1 now issues one wavefront per cycle (the fitted 0.43 stood in for the stored sectors).
H200_FIT = {
    "dram_bytes_per_s": 3930000000000.0,
    "l2_bytes_per_s": 6054000000000.0,
    "issue_efficiency": 1.0,
    "l1_wavefronts_per_sm_cycle": 1.0,
    "alu_latency_cycles": 2.981,
    "dram_latency_under_load": 1.14,
    "barrier_cycles": 0.04017,
    "barrier_cycles_per_warp": 1.925,
    "atomic_request_s": 2.066e-10,
    "shared_atomic_cycles": 7.578e-10,
    "overlap_p": 2.198,
    "atomics_per_s": 189200000000.0,
    "store_sector_cycles": 1.92,
    "block_launch_per_cycle": 1.224,
    "l1_fill_sector_cycles": 9.028e-12,
}

H200 = GPU(
    name="H200",
    arch="sm_90",
    sms=132,
    clock_hz=1.98e9,
    dram_peak_bytes_per_s=4.8e12,
    l2_bytes=60 * 2**20,
    lat_l1_s=35.5e-9,
    lat_l2_s=155.7e-9,
    lat_dram_s=350.2e-9,
    lat_shared_s=23.7e-9,
    launch_s=2.05e-6,
    validated=True,
    sources={
        "sms, clock_hz, l2_bytes": "measured: gpulab/data/results/*.json environment (132 SMs, "
        "1980 MHz max SM clock, 62,914,560-byte L2)",
        "dram_peak_bytes_per_s": "NVIDIA H200 datasheet {cite}`nvidia-h200`",
        "lat_*": "measured: gpulab/data/results/latency.json (pointer chase, median per level)",
        "launch_s": "measured: gpulab/data/results/launch_overhead.json (ncu gpu__time_duration "
        "of a tiny kernel, median of 20)",
        "issue_per_sm_cycle": "4 warp schedulers per SM, 1 instruction per cycle each "
        "{cite}`nvidia-hopper-whitepaper`",
        "fp64_cycles_per_warp_inst": "64 FP64 units per SM, 16 per scheduler: 2 cycles per warp "
        "instruction {cite}`nvidia-hopper-whitepaper`",
        "atomic_int_op_s, atomic_float_op_s": "measured: gpulab/data/results/instruction_costs.json "
        "(same-address atomics with 1 to 32 lanes per warp: 0.743 ns per integer warp "
        "instruction, 1.75 ns per float lane)",
        "shared_cas_cycles": "measured: gpulab/data/results/blind_r5.json shared_atomic_sum_f32 (2^22 "
        "lanes adding a float to one shared address per block: 201.5 us on 132 SMs at 1980 MHz)",
        "calibrated": _FIT,
    },
    **H200_FIT,
)

A100 = H200.with_(
    name="A100 (SXM4 80 GB)",
    arch="sm_80",
    sms=108,
    clock_hz=1.41e9,
    dram_peak_bytes_per_s=2.039e12,
    dram_bytes_per_s=2.039e12 * H200_FIT["dram_bytes_per_s"] / 4.8e12,
    l2_bytes=40 * 2**20,
    l2_bytes_per_s=H200_FIT["l2_bytes_per_s"] * 108 * 1.41 / (132 * 1.98),
    # Programming Guide, cc 8.0: FP32 64, FP64 32, integer 64, conversions 16, MUFU 16, shuffle 32
    pipe_cycles={
        "fp32": 2.0,
        "fp64": 4.0,
        "alu": 2.0,
        "int_mad": 2.0,
        "int64": 2.0,
        "mufu": 8.0,
        "conv": 8.0,
        "shuffle": 4.0,
    },
    validated=False,
    sources={
        "sms, clock_hz, l2_bytes, dram_peak_bytes_per_s": "NVIDIA A100 whitepaper and datasheet {cite}`nvidia-a100-whitepaper`, "
        "{cite}`nvidia-a100-datasheet`",
        "everything else": "the H200's measured latencies and fitted per-cycle constants, "
        "bandwidths scaled by SMs x clock or by the datasheet ratio: "
        "NOT VALIDATED on an A100",
    },
)

T4 = H200.with_(
    name="T4",
    arch="sm_75",
    sms=40,
    clock_hz=1.59e9,
    dram_peak_bytes_per_s=320e9,
    dram_bytes_per_s=320e9 * H200_FIT["dram_bytes_per_s"] / 4.8e12,
    l2_bytes=4 * 2**20,
    l2_bytes_per_s=H200_FIT["l2_bytes_per_s"] * 40 * 1.59 / (132 * 1.98),
    launch_s=3e-6,
    fp64_cycles_per_warp_inst=64.0,  # 2 FP64 units per SM (Turing whitepaper): 1/32 of FP32
    # Programming Guide, cc 7.5: FP32 64, FP64 2, integer 64, conversions 16, MUFU 16, shuffle 32
    pipe_cycles={
        "fp32": 2.0,
        "fp64": 64.0,
        "alu": 2.0,
        "int_mad": 2.0,
        "int64": 2.0,
        "mufu": 8.0,
        "conv": 8.0,
        "shuffle": 4.0,
    },
    validated=False,
    sources={
        "sms, clock_hz, l2_bytes, dram_peak_bytes_per_s, fp64_cycles_per_warp_inst": "NVIDIA Turing whitepaper and T4 datasheet {cite}`nvidia-turing-whitepaper`, "
        "{cite}`nvidia-t4-datasheet`",
        "everything else": "the H200's measured latencies and fitted per-cycle constants, "
        "bandwidths scaled: NOT VALIDATED on a T4 (Colab's GPU: run "
        "benchmarks/perf_model.py there to check)",
    },
)

GPUS = {"H200": H200, "A100": A100, "T4": T4}


def get(gpu) -> GPU:
    """A GPU object from a name ("H200", "A100", "T4") or a GPU (returned as it is)."""
    if isinstance(gpu, GPU):
        return gpu
    key = str(gpu).upper().replace("NVIDIA ", "").strip()
    if key not in GPUS:
        raise ValueError(
            f"unknown GPU {gpu!r}; gpulab.perf knows {', '.join(GPUS)} (or pass a gpulab.perf.GPU)."
        )
    return GPUS[key]
