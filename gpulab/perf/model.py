"""The time model: what the simulator counted (scaled to the whole launch) -> seconds on a GPU.

Each resource gives a lower bound on the kernel's time, as in Nsight Compute's speed-of-light
section: bytes / bandwidth for DRAM and L2, wavefronts / (SMs x clock) for the L1 and
shared-memory pipes, warp instructions / (SMs x 4 schedulers x clock) for issue, serialised
same-address updates for atomics, and one more bound from Little's law: a warp that must wait
out its dependent latencies (memory, ALU, barriers) one after another takes T_warp, and a
launch of several waves of resident warps takes about waves x T_warp however idle the pipes
are. DRAM, L2 and L1 move the same bytes as a pipeline, so the memory system counts once, at its
slowest stage; the kernel takes a soft maximum of that and the other bounds (they overlap, but
not perfectly) plus the fixed cost of a launch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import metrics as M
from ..models.occupancy import occupancy as _occupancy
from . import weights as W

LIMITERS = {
    "dram": "DRAM bandwidth",
    "l2": "L2 bandwidth",
    "l1": "L1 / load-store wavefronts",
    "shared": "shared-memory wavefronts",
    "issue": "instruction issue",
    "atomics": "atomics contention",
    "fp64": "FP64 pipe",
    "pipe": "an execution pipe (integer, MUFU, conversions, shuffles)",
    "latency": "latency with too little in flight (Little's law)",
    "barrier": "barrier stalls",
    "blocks": "block launch rate (the work distributor)",
    "launch": "launch overhead",
}


MEMORY_STAGES = ("dram", "l2", "l1")
# issue slots and the pipes they feed are one scheduler's work seen two ways: a busy pipe is
# busy because the scheduler issued to it, so the two overlap fully and count once (their max)
COMPUTE_STAGES = ("issue", "pipe", "fp64")
WARPS_TOUCHING = "warps executing the line"  # per-line key: warps with >= 1 execution
MATH_INST = "math library warp instructions"  # per-line key: what its math calls cost
F64_SHARE = "share of arithmetic in float64"  # per-line key: numba computes it in double
WIDE_DIVISION = "warps in 64-bit division"  # per-line key: // or % with operands beyond 32 bits


@dataclass
class Counts:
    """Everything the time model reads, already scaled to the whole launch."""

    kernel: str
    grid: tuple
    block: tuple
    blocks: int
    warps_per_block: int
    threads: int
    sampled_blocks: int
    lines: dict  # line -> {metric: value}, scaled
    sources: dict  # line -> source text
    infos: dict  # line -> weights.LineInfo
    metrics: dict  # launch totals of the simulator's counters, scaled
    l2_read_bytes: float = 0.0
    dram_read_bytes: float = 0.0
    dram_write_bytes: float = 0.0
    atomic_requests: float = 0.0  # (warp instruction, address) pairs on global memory
    atomic_sectors: float = 0.0  # (warp instruction, 32-byte sector) pairs
    atomic_hot: list = field(default_factory=list)  # busiest addresses: (L2 operations, float?)
    atomic_chunk_requests: float = 0.0  # (warp, sector) requests to the busiest 2 KB chunk
    atomic_sector_hot: list = field(default_factory=list)  # busiest sectors: (updates, float?)
    l1_lines: float = 0.0  # (warp instruction, 128-byte line) pairs, global
    shared_atomic_steps: float = 0.0
    static_shared: int = 0
    registers: int = 32
    sim_wall_s: float = 0.0
    extra: dict = field(default_factory=dict)


def _line_iters(counts):
    """Warp-level loop iterations charged to each loop header line."""
    out = {}
    for ln, info in counts.infos.items():
        if info.body_line is not None and ln in counts.lines:
            body = counts.lines.get(info.body_line)
            if body:
                out[ln] = (body.get(M.INST_EXECUTED, 0), body.get(M.THREAD_INST_EXECUTED, 0))
    return out


def _mem_per_exec(c):
    """(global, shared) memory instructions per execution of a line, from its counters."""
    n = c.get(M.INST_EXECUTED, 0)
    if not n:
        return 0.0, 0.0
    g = c.get(M.GLOBAL_REQUESTS["ld"], 0) + c.get(M.GLOBAL_REQUESTS["st"], 0)
    s = c.get(M.SHARED_INSTRUCTIONS["ld"], 0) + c.get(M.SHARED_INSTRUCTIONS["st"], 0)
    return g / n, s / n


def line_omega(info, c, w):
    """SASS instructions per execution of one line: its static features plus its global and
    shared memory instructions as the simulator counted them."""
    g, s = _mem_per_exec(c)
    base = info.omega(w) if info is not None else w["ops"]
    return base + g * w["gmem"] + s * w["smem"]


def sass_lines(counts, weights=None):
    """Per-line executed SASS instructions from the compiled code (counts.extra["sass_dynamic"], a
    dynamic.Dynamic), or None without it. A line with math-library calls keeps the smaller of
    that and the source estimate plus the measured instructions per call: the SASS of sin, log,
    pow holds slow paths for rare arguments that the executed count must not include."""
    dyn = counts.extra.get("sass_dynamic")
    if dyn is None:
        return None
    w = W.WEIGHTS if weights is None else weights
    out = dict(dyn.per_line)
    for ln, c in counts.lines.items():
        if c.get(MATH_INST) and ln in out:
            est = c.get(M.INST_EXECUTED, 0) * line_omega(counts.infos.get(ln), c, w) + c[MATH_INST]
            out[ln] = min(out[ln], est)
    return out


def pipe_counts(counts, weights=None):
    """{pipe: executed warp instructions} from the SASS, or None without it. A math-library line
    is scaled down as sass_lines caps it, and its float64 instructions are dropped where the
    simulator saw no float64 on the line (they sit in slow paths for rare arguments: sinf's
    argument reduction has a DMUL)."""
    dyn = counts.extra.get("sass_dynamic")
    if dyn is None:
        return None
    sl = sass_lines(counts, weights)
    out = {}
    for ln, pipes in dyn.per_line_pipe.items():
        c = counts.lines.get(ln, {})
        scale = min(1.0, sl.get(ln, 0.0) / dyn.per_line[ln]) if dyn.per_line.get(ln) else 1.0
        for p, n in pipes.items():
            if p == "fp64" and c.get(MATH_INST) and not c.get(F64_SHARE):
                continue
            out[p] = out.get(p, 0.0) + n * scale
    return out


def instruction_counts(counts, weights=None):
    """(warp instructions, thread instructions, per-line warp instructions) in SASS terms: the
    compiled code's executed count when the SASS is known, else the source-based estimate."""
    w = W.WEIGHTS if weights is None else weights
    sl = sass_lines(counts, weights)
    if sl is not None:
        dyn = counts.extra["sass_dynamic"]
        inst = float(sum(sl.values()))
        lanes = dyn.threads_per_inst or M.WARP
        return inst, inst * lanes, sl
    iters = _line_iters(counts)
    per_line = {}
    inst = thr = 0.0
    for ln, c in counts.lines.items():
        om = line_omega(counts.infos.get(ln), c, w)
        wi = c.get(M.INST_EXECUTED, 0) * om
        ti = c.get(M.THREAD_INST_EXECUTED, 0) * om
        if c.get(MATH_INST):  # library calls, at the line's lanes per instruction
            n = c.get(M.INST_EXECUTED, 0)
            wi += c[MATH_INST]
            ti += c[MATH_INST] * (c.get(M.THREAD_INST_EXECUTED, 0) / n if n else M.WARP)
        if ln in iters:
            wi += iters[ln][0] * w["iter"]
            ti += iters[ln][1] * w["iter"]
        per_line[ln] = wi
        inst += wi
        thr += ti
    nwarps = counts.blocks * counts.warps_per_block
    inst += nwarps * w["warp"]
    thr += counts.threads * w["warp"]
    return inst, thr, per_line


def fp64_instructions(counts) -> float:
    """Warp instructions of float64 arithmetic: from the SASS (DFMA, DADD, DMUL, ...) when it is
    known, else each line's arithmetic operations (multiply-adds fused, as weights.py counts
    them) times the share the simulator saw computed in float64."""
    pc = pipe_counts(counts)
    if pc is not None:
        return float(pc.get("fp64", 0.0))
    total = 0.0
    for ln, c in counts.lines.items():
        share = c.get(F64_SHARE, 0.0)
        info = counts.infos.get(ln)
        if share and info is not None:
            total += c.get(M.INST_EXECUTED, 0) * info.features.get("ops", 0) * share
    return total


def math_instructions(counts) -> float:
    """Warp instructions of the launch's math-library calls (weights.MATH_CALL_INSTRUCTIONS)."""
    return float(sum(c.get(MATH_INST, 0.0) for c in counts.lines.values()))


def feature_totals(counts):
    """Launch totals of each weights.FEATURES entry (the rows the instruction fit uses)."""
    tot = dict.fromkeys(W.FEATURES, 0.0)
    iters = _line_iters(counts)
    for ln, c in counts.lines.items():
        info = counts.infos.get(ln)
        n = c.get(M.INST_EXECUTED, 0)
        g, s = _mem_per_exec(c)
        tot["gmem"] += n * g
        tot["smem"] += n * s
        if info is None:
            tot["ops"] += n
            continue
        for k, v in info.features.items():
            if k in tot:
                tot[k] += n * v
        if ln in iters:
            tot["iter"] += iters[ln][0]
    tot["warp"] = counts.blocks * counts.warps_per_block
    return tot


def _occ(counts, gpu):
    shared = counts.static_shared + counts.extra.get("dynamic_shared", 0)
    occ = _occupancy(
        counts.block[0] * counts.block[1] * counts.block[2],
        registers_per_thread=counts.registers,
        shared_bytes=shared,
        arch=gpu.arch,
    )
    return max(occ.blocks_per_sm, 1)


def shared_cas_steps(counts) -> float:
    """Serialised lanes of shared atomics the compiler turns into compare-and-swap loops (a float
    add on sm_90: ATOMS.CAST.SPIN): per warp instruction, the most lanes on one address, summed.
    From the SASS when it is known (dynamic.cas_lines), else every float shared atomic."""
    lines = counts.extra.get("shared_atomic_lines") or {}
    dyn = counts.extra.get("sass_dynamic")
    cas = getattr(dyn, "cas_lines", None) if dyn is not None else None
    return float(sum(n for ln, (n, flt) in lines.items() if (ln in cas if cas is not None else flt)))


def bounds(counts, gpu, weights=None):
    """Every bound in seconds, and the pieces the report shows."""
    clk, sms = gpu.clock_hz, gpu.sms
    inst, thr, per_line_inst = instruction_counts(counts, weights)
    bps = _occ(counts, gpu)
    resident_blocks = min(counts.blocks, bps * sms)
    active_sms = min(sms, counts.blocks)
    warps_per_sm = max(1, resident_blocks * counts.warps_per_block // max(active_sms, 1))
    m = counts.metrics
    req = m.get(M.GLOBAL_REQUESTS["ld"], 0) + m.get(M.GLOBAL_REQUESTS["st"], 0)
    sec = m.get(M.GLOBAL_SECTORS["ld"], 0) + m.get(M.GLOBAL_SECTORS["st"], 0)
    wf_sh = m.get(M.SHARED_WAVEFRONTS["ld"], 0) + m.get(M.SHARED_WAVEFRONTS["st"], 0)
    t = {}
    t["dram"] = (counts.dram_read_bytes + counts.dram_write_bytes) / gpu.dram_bytes_per_s
    l2_bytes = (
        counts.l2_read_bytes + (m.get(M.GLOBAL_SECTORS["st"], 0) + counts.atomic_sectors) * M.SECTOR_BYTES
    )
    t["l2"] = l2_bytes / gpu.l2_bytes_per_s
    lines = counts.l1_lines or (req + sec / 4)
    # L1: a tag lookup (wavefront) per 128-byte line a warp instruction touches; every stored
    # 32-byte sector and every sector filled from L2 holds the L1's data path for more cycles
    # (a scattered store writes a sector per lane: transpose_naive, scatter_random)
    st_sec = m.get(M.GLOBAL_SECTORS["st"], 0)
    l1_cycles = (
        lines
        + gpu.store_sector_cycles * st_sec
        + gpu.l1_fill_sector_cycles * counts.l2_read_bytes / M.SECTOR_BYTES
    )
    t["l1"] = l1_cycles / (active_sms * clk * gpu.l1_wavefronts_per_sm_cycle)
    t["shared"] = (wf_sh + counts.shared_atomic_steps * gpu.shared_atomic_cycles) / (
        active_sms * clk * gpu.shared_wavefronts_per_sm_cycle
    )
    issue_rate = min(gpu.issue_per_sm_cycle, warps_per_sm) * gpu.issue_efficiency
    t["issue"] = inst / (active_sms * clk * issue_rate)
    # float64 arithmetic runs on the FP64 units, fewer than the FP32 ones: a warp instruction
    # holds its scheduler's FP64 pipe for several cycles
    f64 = fp64_instructions(counts)
    t["fp64"] = f64 * gpu.fp64_cycles_per_warp_inst / (active_sms * clk * gpu.issue_per_sm_cycle)
    # the other pipes a scheduler feeds at less than one warp instruction per cycle (SASS known)
    dyn = counts.extra.get("sass_dynamic")
    if dyn is not None:
        busy = max(
            (n * gpu.pipe_cycles.get(p, 0.0) for p, n in pipe_counts(counts, weights).items() if p != "fp64"),
            default=0.0,
        )
        t["pipe"] = busy / (active_sms * clk * gpu.issue_per_sm_cycle)
    # atomics: one address applies its L2 operations one after another (a lane each, or one
    # per warp instruction where the compiler combines them: perf/uniform.py); requests to one
    # 2 KB chunk queue at one L2 unit; and all requests share the L2's atomic throughput
    busiest = max(
        (ops * (gpu.atomic_float_op_s if flt else gpu.atomic_int_op_s) for ops, flt in counts.atomic_hot),
        default=0.0,
    )
    # one sector's atomic unit takes a warp's update of each of its addresses in turn, a step per
    # (warp, address) at the integer operation's time (16 int bins in 2 sectors, 4 M lanes: 777 us
    # on the H200, where the busiest bin alone gives 195 us); float lanes on one address serialise
    # at the address (busiest above): 8 float addresses of one sector (blind_r6's
    # atomic_add_8_slots) took what the busiest address alone gives, not 8 times it
    sector = max((n * gpu.atomic_int_op_s for n, _ in getattr(counts, "atomic_sector_hot", ())), default=0.0)
    t["atomics"] = max(
        counts.atomic_sectors / gpu.atomics_per_s,
        busiest,
        counts.atomic_chunk_requests * gpu.atomic_request_s,
        sector,
        shared_cas_steps(counts) * gpu.shared_cas_cycles / (active_sms * clk),
    )
    # Little's law: one warp's chain of waits, times the waves of resident warps
    ld_sec = m.get(M.GLOBAL_SECTORS["ld"], 0) * M.SECTOR_BYTES
    h1 = 1 - min(1.0, counts.l2_read_bytes / ld_sec) if ld_sec else 0.0
    fd = min(1.0, counts.dram_read_bytes / counts.l2_read_bytes) if counts.l2_read_bytes else 0.0
    lat_glob = h1 * gpu.lat_l1_s + (1 - h1) * (
        fd * gpu.lat_dram_s * gpu.dram_latency_under_load + (1 - fd) * gpu.lat_l2_s
    )
    nwarps = counts.blocks * counts.warps_per_block
    lat_line, t_warp, t_barrier = {}, 0.0, 0.0
    iters = _line_iters(counts)
    w = W.WEIGHTS if weights is None else weights
    for ln, c in counts.lines.items():
        info = counts.infos.get(ln)
        om = line_omega(info, c, w)
        if dyn is not None and c.get(M.INST_EXECUTED):  # the compiled line's instructions
            om = per_line_inst.get(ln, 0.0) / c[M.INST_EXECUTED]
        one = om * gpu.alu_latency_cycles / clk
        # loads of an unrolled loop are scheduled ahead of their uses: one wait per unrolled
        # group of iterations (the compiled code says how far ptxas unrolled a runtime loop)
        unroll = info.unroll_trip if info is not None else 1
        hdr = getattr(info, "loop_header", None)
        if dyn is not None and hdr in dyn.unroll:
            unroll = max(unroll, max(dyn.unroll[hdr]))
            # ... unless the unrolled body waits more than once (loads, use, loads, use)
            waits = (getattr(dyn, "load_waits", None) or {}).get(hdr, 1)
            unroll = max(1.0, unroll / max(1, waits))
        if c.get(M.GLOBAL_REQUESTS["ld"], 0):
            # the loads of one statement are in flight together: a warp waits once per chain
            # of dependent loads (x[idx[i]] is a chain of two), not once per load
            loads = c[M.GLOBAL_REQUESTS["ld"]] / max(c.get(M.INST_EXECUTED, 1), 1)
            chain = min(loads, info.load_depth) if info is not None and info.load_depth else loads
            one += lat_glob * chain / unroll
        if c.get(M.SHARED_INSTRUCTIONS["ld"], 0):
            one += gpu.lat_shared_s / unroll
        # a barrier waits for every warp of the block to arrive: longer with more warps
        bar = (
            (gpu.barrier_cycles + gpu.barrier_cycles_per_warp * counts.warps_per_block) / clk
            if info is not None and info.barrier
            else 0.0
        )
        if dyn is None and c.get(MATH_INST) and c.get(M.INST_EXECUTED):  # a library call: a chain
            one += c[MATH_INST] / c[M.INST_EXECUTED] * gpu.alu_latency_cycles / clk
        dep = info.dep_factor if info else 1.0
        # a block ends with its slowest warp: executions per warp among the warps that run it
        runs = c.get(WARPS_TOUCHING, nwarps) or nwarps
        per_warp = c.get(M.INST_EXECUTED, 0) / runs
        lt = per_warp * (one * dep + bar)
        if ln in iters and dyn is None:  # (the compiled loop control is in the header's SASS)
            lt += iters[ln][0] / runs * w["iter"] * gpu.alu_latency_cycles / clk
        lat_line[ln] = lt
        t_warp += lt
        t_barrier += per_warp * bar
    waves = math.ceil(counts.blocks / (bps * sms))
    t["latency"] = waves * t_warp
    # the GPU starts a limited number of blocks per cycle (all SMs together): a launch of many
    # small blocks that each do little is bound by it (relu_scale: 131,072 blocks of 128 threads
    # took 83 us where its bytes alone need 34 us; the same copy in 1,056 blocks ran at DRAM speed)
    t["blocks"] = counts.blocks / (gpu.block_launch_per_cycle * clk)
    return dict(
        t=t,
        inst=inst,
        thr=thr,
        per_line_inst=per_line_inst,
        lat_line=lat_line,
        t_warp=t_warp,
        t_barrier=t_barrier,
        waves=waves,
        blocks_per_sm=bps,
        warps_per_sm=warps_per_sm,
        l2_bytes=l2_bytes,
        lat_glob=lat_glob,
    )


def combine(t: dict, gpu) -> float:
    """Kernel time from its bounds: launch cost + soft maximum (sum t_i^p)^(1/p)."""
    p = gpu.overlap_p
    # DRAM, L2 and L1 move the same bytes one after another, as a pipeline: the slowest stage
    # is the memory system's time; the soft maximum is taken across kinds of work
    mem = max(t.get(k, 0.0) for k in MEMORY_STAGES)
    comp = max(t.get(k, 0.0) for k in COMPUTE_STAGES)
    staged = MEMORY_STAGES + COMPUTE_STAGES
    vals = np.array(
        [v for k, v in t.items() if v > 0 and k not in staged] + [x for x in (mem, comp) if x > 0]
    )
    if not len(vals):
        return gpu.launch_s
    top = vals.max()
    body = float(top * ((vals / top) ** p).sum() ** (1 / p))  # scaled: no underflow
    return gpu.launch_s + body


def limiter(t: dict, b: dict, gpu) -> str:
    """The key of LIMITERS that binds."""
    key = max(t, key=t.get)
    if t[key] < gpu.launch_s:
        return "launch"
    if key == "latency" and b["t_warp"] > 0 and b["t_barrier"] / b["t_warp"] > 0.3:
        return "barrier"
    return key
