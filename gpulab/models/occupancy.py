"""Theoretical occupancy: how many blocks and warps of a kernel fit on one SM at once.

The rules are those of NVIDIA's CUDA occupancy calculator (``cuda_occupancy.h`` in the CUDA
toolkit, which is what ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` and Nsight Compute's
"theoretical occupancy" implement) and the per-architecture limits of the CUDA C++ Programming
Guide, table "Technical Specifications per Compute Capability" (CUDA 12.x). Per SM, a kernel gets
as many whole blocks as all four limits allow at once:

- warps: ``max_warps_per_sm // ceil(threads_per_block / 32)``;
- blocks: a fixed cap per SM (16, 24 or 32 depending on the architecture);
- registers: each warp's allocation is ``32 * R`` rounded up to 256 registers; the register file
  is split into 4 sub-partitions (one per warp scheduler) and a warp must fit in one of them, so
  the SM holds ``4 * floor((F / 4) / alloc)`` warps, in whole blocks. A block also may not need
  more than 64 K registers (counting its warps rounded up to a multiple of 4), and R <= 255;
- shared memory: per block ``shared + reserved`` (1 KB reserved by the driver on sm_80+) rounded up
  to the allocation unit (256 B before sm_80, 128 B since), divided into the SM's shared-memory
  carveout (by default the largest one). A block may use at most 48 KB unless the kernel opts in
  (``max_dynamic_shared_bytes``), then up to the architecture's opt-in limit.

The seed's ``W <= floor(F / (32 R))`` is :func:`naive_register_warps`: the register limit
without the allocation granularity, the sub-partitions and whole blocks. On an H200 this module
was checked against the driver's ``cuOccupancyMaxActiveBlocksPerMultiprocessor``
(``benchmarks/occupancy_vs_driver.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = [
    "Arch",
    "ARCHS",
    "WARP",
    "Occupancy",
    "occupancy",
    "naive_register_warps",
    "waves",
    "issue_utilization",
    "KB",
    "load_driver_check",
    "describe_driver_check",
    "describe_register_counts",
]

KB = 1024


@dataclass(frozen=True)
class Arch:
    """Per-SM limits of one compute capability (CUDA Programming Guide table + cuda_occupancy.h)."""

    name: str
    gpus: str
    max_warps_per_sm: int
    max_blocks_per_sm: int
    shared_per_sm: int  # largest shared-memory carveout, bytes
    shared_per_block_optin: int  # opt-in per-block maximum, bytes
    carveouts_kb: tuple  # shared-memory sizes the L1/shared split can take, KB
    shared_reserved_per_block: int  # reserved by the driver per block, bytes
    shared_alloc_unit: int  # shared allocation granularity, bytes
    shared_per_block_default: int = 48 * KB
    registers_per_sm: int = 64 * KB  # 32-bit registers
    registers_per_block: int = 64 * KB
    max_registers_per_thread: int = 255
    register_alloc_unit: int = 256  # registers, per warp
    sub_partitions: int = 4
    max_threads_per_block: int = 1024
    max_block_dims: tuple = (1024, 1024, 64)  # x, y, z threads (all cc >= 3.0)
    max_grid_dims: tuple = (2**31 - 1, 65535, 65535)  # x, y, z blocks (all cc >= 3.0)
    warp_size: int = 32

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size


#: lanes per warp, 32 on every NVIDIA GPU so far: the one definition the rest of gpulab imports
WARP = Arch.warp_size

# Sources: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
# (max resident warps/blocks per SM, shared memory per SM and per block, 64 K registers per SM
# and per block, 255 registers per thread) and cuda_occupancy.h (allocation units, reserved
# shared memory per block, carveout sizes, 4 sub-partitions).
ARCHS = {
    "sm_70": Arch(
        "sm_70",
        "Volta V100",
        max_warps_per_sm=64,
        max_blocks_per_sm=32,
        shared_per_sm=96 * KB,
        shared_per_block_optin=96 * KB,
        carveouts_kb=(0, 8, 16, 32, 64, 96),
        shared_reserved_per_block=0,
        shared_alloc_unit=256,
    ),
    "sm_75": Arch(
        "sm_75",
        "Turing (T4, RTX 20xx)",
        max_warps_per_sm=32,
        max_blocks_per_sm=16,
        shared_per_sm=64 * KB,
        shared_per_block_optin=64 * KB,
        carveouts_kb=(32, 64),
        shared_reserved_per_block=0,
        shared_alloc_unit=256,
    ),
    "sm_80": Arch(
        "sm_80",
        "Ampere A100",
        max_warps_per_sm=64,
        max_blocks_per_sm=32,
        shared_per_sm=164 * KB,
        shared_per_block_optin=163 * KB,
        carveouts_kb=(0, 8, 16, 32, 64, 100, 132, 164),
        shared_reserved_per_block=KB,
        shared_alloc_unit=128,
    ),
    "sm_86": Arch(
        "sm_86",
        "Ampere RTX 30xx, A10, A40",
        max_warps_per_sm=48,
        max_blocks_per_sm=16,
        shared_per_sm=100 * KB,
        shared_per_block_optin=99 * KB,
        carveouts_kb=(0, 8, 16, 32, 64, 100),
        shared_reserved_per_block=KB,
        shared_alloc_unit=128,
    ),
    "sm_89": Arch(
        "sm_89",
        "Ada (L4, L40, RTX 40xx)",
        max_warps_per_sm=48,
        max_blocks_per_sm=24,
        shared_per_sm=100 * KB,
        shared_per_block_optin=99 * KB,
        carveouts_kb=(0, 8, 16, 32, 64, 100),
        shared_reserved_per_block=KB,
        shared_alloc_unit=128,
    ),
    "sm_90": Arch(
        "sm_90",
        "Hopper (H100, H200)",
        max_warps_per_sm=64,
        max_blocks_per_sm=32,
        shared_per_sm=228 * KB,
        shared_per_block_optin=227 * KB,
        carveouts_kb=(0, 8, 16, 32, 64, 100, 132, 164, 196, 228),
        shared_reserved_per_block=KB,
        shared_alloc_unit=128,
    ),
}


def _arch(arch) -> Arch:
    if isinstance(arch, Arch):
        return arch
    if isinstance(arch, tuple):
        arch = f"{arch[0]}{arch[1]}"
    key = "sm_" + str(arch).lower().replace("sm", "").replace("_", "").replace(".", "")
    if key not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r}; known: {', '.join(ARCHS)}")
    return ARCHS[key]


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _carveout_bytes(a: Arch, need: int) -> int:
    """Smallest shared-memory carveout of ``a`` holding ``need`` bytes (the largest if none)."""
    for kb in a.carveouts_kb:
        if need <= kb * KB:
            return kb * KB
    return a.carveouts_kb[-1] * KB


@dataclass(frozen=True)
class Occupancy:
    """Result of :func:`occupancy`: blocks and warps per SM, each limit, and what binds."""

    arch: str
    threads_per_block: int
    registers_per_thread: int
    shared_bytes: int
    blocks_per_sm: int
    warps_per_block: int
    max_warps_per_sm: int
    limits: dict = field(default_factory=dict)  # limit name -> blocks per SM it allows
    registers_per_block: int = 0  # allocated, after rounding
    shared_per_block: int = 0  # allocated, after reserve and rounding
    reason: str = ""  # why 0 blocks fit, if they do not

    @property
    def active_warps(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def occupancy(self) -> float:
        """Active warps / maximum warps per SM, 0..1."""
        return self.active_warps / self.max_warps_per_sm

    @property
    def limiting(self) -> tuple:
        """Names of every limit that equals the result (ties are all reported, as NVIDIA does)."""
        return tuple(k for k, v in self.limits.items() if v == self.blocks_per_sm)

    @property
    def limiter(self) -> str:
        """The one binding limit to report (first in the order registers, shared, warps, blocks)."""
        return self.limiting[0] if self.limiting else "none"

    def __str__(self) -> str:
        lim = ", ".join(f"{k}: {'∞' if v >= 2**31 - 1 else v}" for k, v in self.limits.items())
        s = (
            f"{self.arch}: {self.threads_per_block} threads/block, {self.registers_per_thread} "
            f"registers/thread, {self.shared_bytes} B shared/block -> {self.blocks_per_sm} "
            f"blocks = {self.active_warps}/{self.max_warps_per_sm} warps per SM "
            f"({self.occupancy:.0%}); limited by {' = '.join(self.limiting) or '-'} "
            f"[blocks allowed by {lim}]"
        )
        return s + (f"; {self.reason}" if self.reason else "")


_INF = 2**31 - 1


def occupancy(
    threads_per_block: int,
    registers_per_thread: int = 32,
    shared_bytes: int = 0,
    arch="sm_90",
    *,
    max_dynamic_shared_bytes: int | None = None,
    static_shared_bytes: int = 0,
    carveout: int | None = None,
) -> Occupancy:
    """Blocks and warps of one kernel resident per SM, and the limiting resource.

    ``shared_bytes`` is the shared memory one block uses (static + dynamic, without the driver's
    reserve). ``max_dynamic_shared_bytes`` is the kernel's opt-in attribute
    (``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``); ``static_shared_bytes`` is the static
    part of ``shared_bytes``, needed only with the opt-in. ``carveout`` is the preferred shared
    share of L1 in percent (None: no preference, the largest carveout is used). Hopper's
    block-barrier limit (2 per block slot) is left out: it binds only above 1 barrier per block.
    """
    a = _arch(arch)
    T, R, S = int(threads_per_block), int(registers_per_thread), int(shared_bytes)
    if T <= 0 or R < 0 or S < 0:
        raise ValueError("threads_per_block must be > 0, registers and shared bytes >= 0")
    warps_per_block = math.ceil(T / a.warp_size)
    reasons = []

    # warps per SM
    if T > a.max_threads_per_block:
        lim_warps = 0
        reasons.append(f"{T} threads per block exceeds {a.max_threads_per_block}")
    else:
        lim_warps = a.max_warps_per_sm // warps_per_block

    # registers: per-warp allocation, per sub-partition, whole blocks
    regs_per_warp = _round_up(R * a.warp_size, a.register_alloc_unit)
    regs_per_block = regs_per_warp * warps_per_block
    regs_checked = regs_per_warp * _round_up(warps_per_block, a.sub_partitions)
    if R > a.max_registers_per_thread:
        lim_regs = 0
        reasons.append(f"{R} registers per thread exceeds {a.max_registers_per_thread}")
    elif max(regs_per_block, regs_checked) > a.registers_per_block:
        lim_regs = 0
        reasons.append(
            f"the block needs {max(regs_per_block, regs_checked)} registers "
            f"(> {a.registers_per_block} per block)"
        )
    elif regs_per_warp == 0:
        lim_regs = _INF
    else:
        warps_per_sub = (a.registers_per_sm // a.sub_partitions) // regs_per_warp
        lim_regs = (warps_per_sub * a.sub_partitions) // warps_per_block

    # shared memory
    alloc = _round_up(S + a.shared_reserved_per_block, a.shared_alloc_unit)
    per_block_limit = a.shared_per_block_default
    dynamic = S - static_shared_bytes
    if max_dynamic_shared_bytes is not None:
        wanted = static_shared_bytes + a.shared_reserved_per_block + max_dynamic_shared_bytes
        if wanted > a.shared_per_block_default:
            per_block_limit = a.shared_per_block_optin
    per_block_limit += a.shared_reserved_per_block
    if max_dynamic_shared_bytes is not None and dynamic > max_dynamic_shared_bytes:
        lim_smem = 0
        reasons.append(
            f"{dynamic} B dynamic shared exceeds the kernel's {max_dynamic_shared_bytes} B attribute"
        )
    elif alloc > per_block_limit:
        lim_smem = 0
        hint = "" if max_dynamic_shared_bytes is not None else " (opt in for more)"
        reasons.append(f"{alloc} B shared per block exceeds {per_block_limit} B{hint}")
    elif alloc == 0:
        lim_smem = _INF
    else:
        if carveout is None or carveout < 0:
            pref = a.shared_per_sm
        else:
            pref = _carveout_bytes(a, (int(carveout) * a.shared_per_sm) // 100)
        smem_sm = pref if pref >= alloc else _carveout_bytes(a, alloc)
        lim_smem = smem_sm // alloc

    lim_blocks = a.max_blocks_per_sm
    limits = {"registers": lim_regs, "shared memory": lim_smem, "warps": lim_warps, "blocks": lim_blocks}
    n = min(limits.values())
    return Occupancy(
        arch=a.name,
        threads_per_block=T,
        registers_per_thread=R,
        shared_bytes=S,
        blocks_per_sm=n,
        warps_per_block=warps_per_block,
        max_warps_per_sm=a.max_warps_per_sm,
        limits=limits,
        registers_per_block=regs_per_block,
        shared_per_block=alloc,
        reason="; ".join(reasons),
    )


def naive_register_warps(registers_per_thread: int, registers_per_sm: int = 64 * KB) -> int:
    """The seed's register limit W <= floor(F / (32 R)), without granularity or whole blocks."""
    return registers_per_sm // (WARP * registers_per_thread)


def waves(grid_blocks: int, blocks_per_sm: int, num_sms: int) -> dict:
    """Tail effect: how many waves a grid takes and what share of the block slots it fills.

    ``utilization`` is the share of (block slot x round) pairs that hold a block, assuming every
    block takes the same time: a grid of 1.1 waves fills ~55% of them. It counts slots, not SMs:
    the ``last_wave_blocks`` of a partial round may spread over many SMs and, alone there, often
    run faster than in a full wave, so the time lost is usually smaller.
    """
    per_wave = blocks_per_sm * num_sms
    if per_wave <= 0:
        raise ValueError("no block fits on an SM")
    n_waves = math.ceil(grid_blocks / per_wave)
    return {
        "blocks_per_wave": per_wave,
        "waves": grid_blocks / per_wave,
        "full_waves": grid_blocks // per_wave,
        "rounds": n_waves,
        "last_wave_blocks": grid_blocks - (n_waves - 1) * per_wave,
        "utilization": grid_blocks / (n_waves * per_wave),
    }


def issue_utilization(warps: int, latency: int, ilp: int = 1, cycles: int = 4000) -> float:
    """Fraction of cycles one warp scheduler issues, by direct cycle-by-cycle simulation.

    Each warp runs a long chain of instructions in groups of ``ilp`` independent ones; an
    instruction's result is ready ``latency`` cycles after issue, and the next group waits for it.
    The scheduler issues at most one instruction per cycle from any ready warp (switching warps
    costs nothing). Little's law predicts saturation near ``warps * ilp ≈ latency``.
    """
    if warps <= 0 or latency <= 0 or ilp <= 0:
        raise ValueError("warps, latency and ilp must be positive")
    ready_at = [0] * warps  # cycle when the warp may issue again
    left_in_group = [ilp] * warps  # independent instructions left in the current group
    group_start = [0] * warps  # issue cycle of the group's first instruction
    issued = 0
    rr = 0
    for t in range(cycles):
        for k in range(warps):  # round robin over ready warps
            w = (rr + k) % warps
            if ready_at[w] <= t:
                issued += 1
                if left_in_group[w] == ilp:
                    group_start[w] = t
                left_in_group[w] -= 1
                if left_in_group[w] == 0:  # next group needs this group's results
                    ready_at[w] = max(t + 1, group_start[w] + latency)
                    left_in_group[w] = ilp
                else:
                    ready_at[w] = t + 1
                rr = w + 1
                break
    return issued / cycles


def _find_result(name: str):
    """Path of a results file (``name`` with .json) where gpulab.results looks, or None."""
    from gpulab import results

    return results.path(name[:-5] if name.endswith(".json") else name)


def load_driver_check(name: str = "occupancy_vs_driver.json") -> dict | None:
    """The JSON written by ``benchmarks/occupancy_vs_driver.py`` on a GPU, or None if not run."""
    import json

    p = _find_result(name)
    if p is None:
        return None
    with open(p) as f:
        return json.load(f)


#: limit names an early occupancy_vs_driver.py asked the driver for, which no
#: CU_DEVICE_ATTRIBUTE_ has (so it recorded None): the correct name of each
_MISSPELLED_LIMITS = {"MAX_THREADS_PER_MULTI_PROCESSOR": "MAX_THREADS_PER_MULTIPROCESSOR"}


def _limit_note(key: str, device, gpulab) -> str:
    """What a device-limit row adds: nothing when equal, a flag when not, why when not compared."""
    if device is None:
        if key in _MISSPELLED_LIMITS:
            return "   (not compared: the script asked for a misspelled attribute name)"
        return "   (not reported by this driver)"
    return "" if device == gpulab else "   <-- differs"


def describe_driver_check(data: dict | None) -> str:
    """A short text summary of a driver comparison: device, configurations, matches, limits."""
    if not data:
        return (
            "no driver comparison recorded yet: run `python benchmarks/occupancy_vs_driver.py`"
            " on a machine with an NVIDIA GPU (it writes gpulab/data/results/"
            "occupancy_vs_driver.json)"
        )
    env = data.get("environment") or data  # files before benchenv kept these at the top
    gpu = _driver_check_gpu(data)
    api = env.get("cuda_driver_api") or data.get("driver_version")
    lines = [f"{gpu} ({data['arch']}), driver {api}, {env.get('date_utc', '')}"]
    for kind, s in data["summary"].items():
        if s["configurations"]:
            lines.append(
                f"  {kind:9s}: {s['match']}/{s['configurations']} configurations agree "
                f"({s['distinct_register_counts']} register counts)"
            )
    for key, val in data.get("device_limits_vs_gpulab", {}).items():
        if isinstance(val, list):
            note = _limit_note(key, *val)
            lines.append(f"  {key:38s} device {val[0]!s:>7}  gpulab {val[1]!s:>7}" + note)
    return "\n".join(lines)


def _driver_check_gpu(data: dict) -> str | None:
    """The GPU a driver comparison ran on: benchenv's record, or the top-level 'device' of
    files written before the script used benchenv."""
    return (data.get("environment") or {}).get("gpu") or data.get("device")


def describe_register_counts(data: dict | None, threads: int = 256) -> str:
    """Registers and spilled bytes the GPU compiler chose for the pressure kernels recorded in a
    driver comparison, with the occupancy each gives at ``threads`` threads per block."""
    if not data or not data.get("kernels"):
        return describe_driver_check(None)
    rows = [
        f"{'accumulators':>12} {'max_registers':>13} {'registers':>9} {'spill B/thread':>14} "
        f"{'occupancy':>9}   ({_driver_check_gpu(data)}, {threads} threads/block)"
    ]
    for k in data["kernels"]:
        if k.get("static_shared_floats"):
            continue
        o = occupancy(threads, k["registers"], 0, data["arch"])
        rows.append(
            f"{k['accumulators']:>12} {str(k['max_registers'] or '-'):>13} "
            f"{k['registers']:>9} {k['local_bytes_per_thread']:>14} {o.occupancy:>9.1%}"
        )
    return "\n".join(rows)


def max_registers_for(threads_per_block: int, min_blocks: int = 1, arch="sm_90") -> int:
    """Most registers per thread that still let ``min_blocks`` blocks of ``threads_per_block``
    threads be resident on one SM (registers only): the cap ``__launch_bounds__(threads,
    min_blocks)`` implies. Never above the per-thread maximum (255); 0 if even 1 register is too many."""
    a = _arch(arch)
    if threads_per_block <= 0 or min_blocks <= 0:
        raise ValueError("threads_per_block and min_blocks must be positive")
    best = 0
    for r in range(1, a.max_registers_per_thread + 1):
        if occupancy(threads_per_block, r, 0, a).limits.get("registers", 0) >= min_blocks:
            best = r
        else:
            break
    return best


def load_header_check(name: str = "occupancy_vs_cuda_occupancy_h.json") -> dict | None:
    """The JSON written by ``benchmarks/occupancy_vs_cuda_occupancy_h.py``, or None if not run."""
    import json

    p = _find_result(name)
    if p is None:
        return None
    with open(p) as f:
        return json.load(f)


def verification(driver: dict | None, header: dict | None) -> dict:
    """What the recorded checks verify, per architecture: ``driver`` (cases, agree, device) from
    occupancy_vs_driver.json, ``header`` (cases, agree) from occupancy_vs_cuda_occupancy_h.json."""
    out = {}
    if driver:
        s = driver.get("summary", {})
        out.setdefault(driver["arch"], {})["driver"] = {
            "cases": sum(v["configurations"] for v in s.values()),
            "agree": sum(v["match"] for v in s.values()),
            "device": (driver.get("environment") or {}).get("gpu") or driver.get("device"),
        }
    if header:
        for arch, v in header.get("per_arch", {}).items():
            out.setdefault(arch, {})["header"] = {"cases": v["cases"], "agree": v["agree"]}
    return dict(sorted(out.items()))


def kernel_registers(kernel, *args, arch="sm_90"):
    """(registers per thread a launch of ``kernel(*args)`` gets on ``arch``, where from): ptxas's
    count from the compiler wheels (gpulab[sass]) when they are installed, else (None, why not),
    so a caller passes its own figure to :func:`occupancy` instead of a guess."""
    from ..perf import engine  # the one place that compiles a launch for the model

    ks, why = engine.compiled(kernel, args, arch)
    if ks is None:
        return None, f"no compiler here ({why}); pass registers_per_thread yourself"
    return ks.launch_registers, f"ptxas for {arch} ({ks.registers} asked, {ks.launch_registers} at launch)"


def kernel_occupancy(kernel, threads_per_block, *args, shared_bytes=0, arch="sm_90") -> Occupancy:
    """:func:`occupancy` of ``kernel`` launched with ``args``, registers from ptxas
    (:func:`kernel_registers`); raises ValueError saying how to install the compiler without it."""
    regs, why = kernel_registers(kernel, *args, arch=arch)
    if regs is None:
        raise ValueError(f"kernel_occupancy needs ptxas: {why}")
    return occupancy(threads_per_block, regs, shared_bytes, arch)
