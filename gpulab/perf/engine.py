"""``gpulab.predict``: simulate a representative sample of a launch's blocks on the CPU, scale
the counts to the whole launch, and turn them into a predicted time on a named GPU."""

from __future__ import annotations

import ast
import inspect
import textwrap
import time

import numpy as np

from .. import errors
from .. import metrics as M
from ..launch import check_limits, dim3
from ..sim.runner import python_function
from . import dynamic
from . import gpus as G
from . import model
from . import sass as S
from . import weights as W
from .prediction import Prediction
from .sample import DRAM_CHUNK, KEY, choose_blocks, simulate

PRED_ON_FACTOR = 0.9912  # fitted: pred-on / all thread instructions (perf_model.json)
MAX_BLOCKS_PER_HALF = 64
# a pilot block costing more CPU seconds than this and half the budget is the whole sample (a tiny
# budget asked for to force sampling does not make every block "long")
SINGLE_BLOCK_MIN_CPU_S = 1.0


def estimate_registers(fn) -> int:
    """A guess at registers per thread from the kernel's variables (ptxas decides on a GPU)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return 32
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return int(min(255, 16 + 2 * (len(names) + fn.__code__.co_argcount)))


def compiled(kernel, args, arch="sm_90"):
    """(sass.KernelSASS, "") for this launch's argument types, or (None, why not): the model
    then falls back to its source-based estimates."""
    fn = python_function(kernel)
    if fn is None:
        return None, "not a numba.cuda kernel or Python function"
    ok, why = S.available()
    if not ok:
        return None, why
    try:
        # the dispatcher itself where there is one: its lineinfo and fastmath options shape the code
        src = kernel if hasattr(kernel, "targetoptions") else fn
        return S.compile_sass(src, S.argtypes_of(args), arch), ""
    except S.SassUnavailable as e:
        return None, str(e)


def attach_sass(c, ks, fn):
    """Put the executed SASS counts of ``ks`` for Counts ``c`` into c.extra["sass_dynamic"]."""
    E = {ln: v.get(M.INST_EXECUTED, 0.0) for ln, v in c.lines.items()}
    T = {ln: v.get(M.THREAD_INST_EXECUTED, 0.0) for ln, v in c.lines.items()}
    wide = {ln: v[model.WIDE_DIVISION] for ln, v in c.lines.items() if v.get(model.WIDE_DIVISION)}
    c.extra["sass_dynamic"] = dynamic.count(
        ks, E, T, c.blocks * c.warps_per_block, dynamic.structure(fn), wide_division=wide
    )
    return c


def _counts(ctx, rec, lay_blocks, grid, block, total, registers, shared_bytes, infos, wall):
    scale = total / lay_blocks
    tpb = block[0] * block[1] * block[2]
    lines = {ln: {k: v * scale for k, v in c.items()} for ln, c in ctx.per_line.items()}
    for ln, touched in rec.line_warps.items():
        if ln in lines:
            lines[ln][model.WARPS_TOUCHING] = float(touched.sum()) * scale
    mets = {k: v * scale for k, v in ctx.counters.items()}
    l2_read = 0.0
    foot_ld, foot_st, partial = {}, {}, {}
    for name, a in rec.arrays.items():
        cap64 = -(-a["nbytes"] // DRAM_CHUNK) * DRAM_CHUNK
        cap32 = -(-a["nbytes"] // M.SECTOR_BYTES) * M.SECTOR_BYTES
        l2_read += a["l1_sec"].count() * 32 * scale
        foot_ld[name] = (min(a["dram_ld"].count() * 64 * scale, cap64), a["l1_64"].count() * 64 * scale)
        foot_st[name] = min(a["dram_st"].count() * 32 * scale, cap32)
        if "st_blk_sec" in a:  # (bytes of the sectors each block writes, bytes it stores)
            partial[name] = (a["st_blk_sec"].count() * M.SECTOR_BYTES * scale, a["st_bytes"] * scale)
    c = model.Counts(
        kernel=ctx.kernel_name,
        grid=grid,
        block=block,
        blocks=total,
        warps_per_block=-(-tpb // M.WARP),
        threads=total * tpb,
        sampled_blocks=lay_blocks,
        lines=lines,
        sources=dict(ctx.lines),
        infos=infos,
        metrics=mets,
        registers=registers,
        sim_wall_s=wall,
        static_shared=rec.static_shared,
        extra={"dynamic_shared": shared_bytes, "foot_ld": foot_ld, "foot_st": foot_st, "st_blocks": partial},
    )
    c.l2_read_bytes = l2_read
    c.dram_write_bytes = float(sum(foot_st.values()))
    if rec.global_atomics:
        names = {n: k for k, n in enumerate(sorted({g[0] for g in rec.global_atomics}))}
        addr = np.concatenate([e + names[n] * KEY for n, e, _, _ in rec.global_atomics])
        ops = np.concatenate([o for _, _, o, _ in rec.global_atomics])
        flt = np.concatenate([np.full(len(o), f) for _, _, o, f in rec.global_atomics])
        uniq, inv = np.unique(addr, return_inverse=True)
        per_addr = np.bincount(inv, weights=ops) * scale
        is_f = np.bincount(inv, weights=flt) > 0
        hot = np.argsort(per_addr)[-8:]
        c.atomic_requests = len(addr) * scale
        c.atomic_sectors = rec.atomic_sectors * scale
        c.atomic_hot = [(float(per_addr[k]), bool(is_f[k])) for k in hot]
        chunks = np.concatenate([ch + names[n] * KEY for n, ch in rec.atomic_chunks])
        c.atomic_chunk_requests = float(np.unique(chunks, return_counts=True)[1].max()) * scale
        sec = np.concatenate([se + names[n] * KEY for n, se, _, _ in rec.atomic_sector_ops])
        sw = np.concatenate([o for _, _, o, _ in rec.atomic_sector_ops])
        sf = np.concatenate([np.full(len(o), f) for _, _, o, f in rec.atomic_sector_ops])
        _, sinv = np.unique(sec, return_inverse=True)
        per_sec = np.bincount(sinv, weights=sw) * scale
        sec_f = np.bincount(sinv, weights=sf) > 0
        c.atomic_sector_hot = [(float(per_sec[k]), bool(sec_f[k])) for k in np.argsort(per_sec)[-8:]]
    for ln, inst in rec.math_inst.items():
        if ln in lines:
            lines[ln][model.MATH_INST] = inst * scale
    for ln, n in rec.wide_division.items():
        if ln in lines:
            lines[ln][model.WIDE_DIVISION] = n * scale
    for ln, n in rec.arith.items():
        if ln in lines and n:
            lines[ln][model.F64_SHARE] = rec.arith_f64.get(ln, 0) / n
    c.l1_lines = rec.l1_lines * scale
    c.shared_atomic_steps = rec.shared_atomic_steps * scale
    c.extra["shared_atomic_lines"] = {ln: (n * scale, f) for ln, (n, f) in rec.shared_atomic_lines.items()}
    # bytes between the lowest and highest address a block reads in each array, averaged over the
    # blocks that read it (a gather within a window re-reads lines its neighbours read)
    span = {}
    for name, a in rec.arrays.items():
        if "lo" in a and (a["hi"] >= 0).any():
            ok = a["hi"] >= 0
            span[name] = float(np.mean(a["hi"][ok] - a["lo"][ok])) + M.SECTOR_BYTES
    c.extra["ld_span"] = span
    c.extra["ld_nbytes"] = {name: a["nbytes"] for name, a in rec.arrays.items()}
    return c


L2_STATES = ("cold", "warm")


def l2_resident(c, gpu, l2="cold"):
    """True when the launch's bytes are already in L2 as it starts: timed again and again with no
    flush between launches (l2="warm": CUDA events around repeated launches) and its whole
    footprint, read and written, fits in L2. Nsight Compute flushes the caches before each
    measured launch by default (l2="cold"). blind_r5's four_block_sum (4 MB read by 4 blocks)
    took 228 ns per group of 4 loads under events: an L2 round trip, not DRAM's 350 ns."""
    if l2 not in L2_STATES:
        raise ValueError(f"l2 must be one of {L2_STATES}, not {l2!r}")
    if l2 == "cold" or "foot_ld" not in c.extra:
        return False
    total = sum(f for f, _ in c.extra["foot_ld"].values()) + sum(c.extra["foot_st"].values())
    return total <= gpu.l2_bytes


def dram_reads(c, gpu, l2="cold"):
    """DRAM read bytes: each array's footprint once, plus re-reads that miss a full L2 (none when
    the footprint is already in L2: l2_resident)."""
    if l2_resident(c, gpu, l2):
        return 0.0
    # the read half of each partial sector's read-modify-write
    rmw = sum(b / M.SECTOR_BYTES * DRAM_CHUNK for b in scattered_store_bytes(c, gpu, l2).values())
    return rmw + _dram_loads(c, gpu)


def _dram_loads(c, gpu):
    """DRAM bytes of the launch's loads (dram_reads, without read-modify-writes)."""
    foot = c.extra["foot_ld"]
    total_foot = sum(f for f, _ in foot.values()) + sum(c.extra["foot_st"].values())
    if total_foot <= gpu.l2_bytes:
        return float(sum(f for f, _ in foot.values()))
    # a re-read hits L2 if fewer bytes than L2 holds moved through it since the line's last read
    # (LRU): the launch's traffic divided by the reads per line, when the reads are spread over
    # the launch (ell_spmv's 4 MB x, read 187 times per line), or the traffic of the blocks whose
    # read windows overlap, when a block reads a window of the array (gather_local_perm: 16 KB of
    # 64 MB, read again by the next 15 blocks); a random gather over 64 MB (gather_random) misses
    traffic = sum(max(f, r) for f, r in foot.values()) + sum(c.extra["foot_st"].values())
    span = c.extra.get("ld_span", {})
    nbytes = c.extra.get("ld_nbytes", {})
    out = 0.0
    for name, (f, r) in foot.items():
        if r <= f or f <= 0:
            out += f
            continue
        between = traffic * f / r
        if name in span and nbytes.get(name):
            between = min(between, traffic * min(1.0, span[name] / nbytes[name]))
        out += f + (r - f) * (0.0 if between <= gpu.l2_bytes else 1.0)
    return float(out)


def scattered_store_bytes(c, gpu, l2="cold"):
    """{array: bytes of its sectors written partially by scattered blocks} when those sectors
    leave L2 before the other blocks complete them: a block that stores under half of each sector
    it writes (a random scatter, not a transpose, whose blocks write whole sectors), in a launch
    whose footprint exceeds L2. Each such sector then costs DRAM a 64-byte read and write (HBM's
    burst, merged with the partial data: a read-modify-write). blind_r6's scatter_perm_f64 (8 M
    float64 stores at random into 64 MB) took 425 us where round 3's scatter_random, the same
    pattern within L2 for half the stores, took 81 us: 129 bytes of DRAM per store in between."""
    st = c.extra.get("st_blocks") or {}
    if not st or l2_resident(c, gpu, l2):
        return {}
    total = sum(f for f, _ in c.extra["foot_ld"].values()) + sum(c.extra["foot_st"].values())
    if total <= gpu.l2_bytes:
        return {}
    return {k: sec for k, (sec, stored) in st.items() if sec and stored < 0.5 * sec}


def dram_writes(c, gpu, l2="cold"):
    """DRAM write bytes: each written array's footprint, or none when the launch's lines stay in
    L2 from one launch to the next (a write-back L2 keeps them dirty there: l2_resident); a
    partially written sector that leaves L2 is written back as a 64-byte burst per block that
    wrote it (scattered_store_bytes)."""
    if "foot_st" not in c.extra:
        return c.dram_write_bytes
    if l2_resident(c, gpu, l2):
        return 0.0
    rmw = scattered_store_bytes(c, gpu, l2)
    return float(
        sum(
            max(f, rmw[k] / M.SECTOR_BYTES * DRAM_CHUNK) if k in rmw else f
            for k, f in c.extra["foot_st"].items()
        )
    )


def _merge(a, b):
    """The average of two half-samples' Counts (each already scaled to the whole launch)."""
    lines = {}
    for ln in set(a.lines) | set(b.lines):
        la, lb = a.lines.get(ln, {}), b.lines.get(ln, {})
        lines[ln] = {k: (la.get(k, 0) + lb.get(k, 0)) / 2 for k in set(la) | set(lb)}
    mets = {k: (a.metrics.get(k, 0) + b.metrics.get(k, 0)) / 2 for k in set(a.metrics) | set(b.metrics)}
    c = model.Counts(
        **{
            **a.__dict__,
            "lines": lines,
            "metrics": mets,
            "sampled_blocks": a.sampled_blocks + b.sampled_blocks,
            "sim_wall_s": a.sim_wall_s + b.sim_wall_s,
        }
    )
    for f in (
        "l2_read_bytes",
        "dram_write_bytes",
        "atomic_requests",
        "atomic_sectors",
        "atomic_chunk_requests",
        "shared_atomic_steps",
    ):
        setattr(c, f, (getattr(a, f) + getattr(b, f)) / 2)
    c.atomic_hot = (
        [((pa + pb) / 2, fa or fb) for (pa, fa), (pb, fb) in zip(sorted(a.atomic_hot), sorted(b.atomic_hot))]
        or a.atomic_hot
        or b.atomic_hot
    )
    c.atomic_sector_hot = (
        [
            ((pa + pb) / 2, fa or fb)
            for (pa, fa), (pb, fb) in zip(sorted(a.atomic_sector_hot), sorted(b.atomic_sector_hot))
        ]
        or a.atomic_sector_hot
        or b.atomic_sector_hot
    )
    c.l1_lines = (a.l1_lines + b.l1_lines) / 2
    fa, fb = a.extra["foot_ld"], b.extra["foot_ld"]
    c.extra = {
        **a.extra,
        "foot_ld": {
            k: tuple((x + y) / 2 for x, y in zip(fa.get(k, (0, 0)), fb.get(k, (0, 0))))
            for k in set(fa) | set(fb)
        },
        "foot_st": {
            k: (a.extra["foot_st"].get(k, 0) + b.extra["foot_st"].get(k, 0)) / 2
            for k in set(a.extra["foot_st"]) | set(b.extra["foot_st"])
        },
        "ld_span": {
            k: (a.extra.get("ld_span", {}).get(k, 0.0) + b.extra.get("ld_span", {}).get(k, 0.0))
            / ((k in a.extra.get("ld_span", {})) + (k in b.extra.get("ld_span", {})))
            for k in set(a.extra.get("ld_span", {})) | set(b.extra.get("ld_span", {}))
        },
        "shared_atomic_lines": _merge_lines(
            a.extra.get("shared_atomic_lines", {}), b.extra.get("shared_atomic_lines", {})
        ),
        "st_blocks": {
            k: tuple(
                (x + y) / 2
                for x, y in zip(
                    a.extra.get("st_blocks", {}).get(k, (0, 0)), b.extra.get("st_blocks", {}).get(k, (0, 0))
                )
            )
            for k in set(a.extra.get("st_blocks", {})) | set(b.extra.get("st_blocks", {}))
        },
    }
    return c


def _merge_lines(a, b):
    """The average of two half-samples' {line: (serialised lanes, float?)}."""
    return {
        ln: (
            (a.get(ln, (0.0, False))[0] + b.get(ln, (0.0, False))[0]) / 2,
            a.get(ln, (0, False))[1] or b.get(ln, (0, False))[1],
        )
        for ln in set(a) | set(b)
    }


def sample_counts(kernel, grid, block, args, *, shared_bytes=0, registers=None, budget_s=10.0):
    """(Counts of the whole launch, Counts of each half-sample or None when exact)."""
    grid, block = dim3(grid, "grid"), dim3(block, "block")
    check_limits(grid, block, shared_bytes)
    fn = python_function(kernel)
    if fn is None:
        raise errors.LaunchConfigError(f"{kernel!r} is not a numba.cuda kernel or a Python function.")
    regs = registers or estimate_registers(fn)
    total = grid[0] * grid[1] * grid[2]
    infos = W.analyse(fn.__code__.co_filename, fn.__globals__)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]  # the caller's stay

    cpu = {}

    def one(ids):
        t0, c0 = time.perf_counter(), time.process_time()
        ctx, rec = simulate(
            kernel, grid, block, args, ids, shared_bytes=shared_bytes, timeout_s=max(60.0, 4 * budget_s)
        )
        wall = time.perf_counter() - t0
        cpu["last"] = time.process_time() - c0
        return (_counts(ctx, rec, len(ids), grid, block, total, regs, shared_bytes, infos, wall), ctx.elapsed)

    if total <= 8:
        c, _ = one(np.arange(total))
        return c, None
    pilot, wall = one(choose_blocks(total, 1))
    if cpu["last"] > max(budget_s / 2, SINGLE_BLOCK_MIN_CPU_S):
        # one block alone took half the budget of CPU time (a block that loops over all the data:
        # nbody_tile, one_block_shared_loop): two more for a sampling error would triple the
        # wait, so the pilot block is the estimate, and the report says there is no error bar
        pilot.extra = dict(pilot.extra)
        pilot.extra["single_block_sample"] = True
        return pilot, None
    k = int(max(1, min(MAX_BLOCKS_PER_HALF, budget_s / 2 / max(wall, 1e-3))))
    if 2 * k >= total or total * wall <= budget_s:  # the whole launch fits the budget
        c, _ = one(np.arange(total))
        return c, None
    while True:
        try:
            a, _ = one(choose_blocks(total, k, 0, 2))
            b, _ = one(choose_blocks(total, k, 1, 2))
            return _merge(a, b), (a, b)
        except errors.StepBudgetExceeded:
            if k == 1:  # even one block per half runs past the stop: a real runaway
                raise
            k = max(1, k // 4)  # a busy CPU made the pilot look faster than the halves run


def from_counts(c, gpu="H200", halves=None, weights=None, l2="cold") -> Prediction:
    """The Prediction for already-scaled Counts on ``gpu``; ``l2`` says how the launch is timed:
    "cold" (Nsight Compute flushes the caches first) or "warm" (repeated launches, no flush)."""
    gpu = G.get(gpu)
    if "foot_ld" in c.extra:
        c.dram_read_bytes = dram_reads(c, gpu, l2)
        c.dram_write_bytes = dram_writes(c, gpu, l2)
    lat = {}
    w = W.WEIGHTS if weights is None else weights
    for ln, c_l in c.lines.items():
        om = model.line_omega(c.infos.get(ln), c_l, w)
        lat[ln] = (
            om * gpu.alu_latency_cycles
            + (600 if c_l.get(M.GLOBAL_REQUESTS["ld"]) else 0)
            + (40 if c_l.get(M.SHARED_INSTRUCTIONS["ld"]) else 0)
        )
    if c.infos:
        fn_file = c.extra.get("filename")
        if fn_file:
            W.dependency_factors(fn_file, c.infos, lat)
    b = model.bounds(c, gpu, weights)
    t = b["t"]
    time_s = model.combine(t, gpu)
    key = model.limiter(t, b, gpu)
    breakdown = [
        {"key": k, "label": model.LIMITERS[k], "seconds": v, "pct_of_peak": 100.0 * v / time_s}
        for k, v in t.items()
    ]
    breakdown.append(
        {
            "key": "launch",
            "label": model.LIMITERS["launch"],
            "seconds": gpu.launch_s,
            "pct_of_peak": 100.0 * gpu.launch_s / time_s,
        }
    )
    breakdown.sort(key=lambda r: -r["seconds"])
    ratio = b["thr"] / b["inst"] if b["inst"] else 0.0
    mets = {
        "gpu__time_duration.sum": time_s * 1e9,
        M.INST_EXECUTED: b["inst"],
        M.THREADS_PER_INST: ratio,
        "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio": ratio * PRED_ON_FACTOR,
        "dram__bytes_read.sum": c.dram_read_bytes,
        "dram__bytes_write.sum": c.dram_write_bytes,
        "lts__t_sectors_srcunit_tex.sum": b["l2_bytes"] / 32,
    }
    lines = _line_costs(c, b, key, time_s)
    err = None
    if halves:
        ta = model.combine(model.bounds(_with_dram(halves[0], gpu, l2), gpu, weights)["t"], gpu)
        tb = model.combine(model.bounds(_with_dram(halves[1], gpu, l2), gpu, weights)["t"], gpu)
        err = abs(ta - tb) / (ta + tb)
    notes = []
    if not gpu.validated:
        notes.append(
            f"{gpu.name}: datasheet figures and the H200's fitted constants; not validated on this GPU."
        )
    if c.extra.get("sass_arch"):
        notes.append(
            f"instructions and registers from the compiled code: {c.registers} registers per thread "
            f"at launch (ptxas, {c.extra['sass_arch']}); SASS counted per executed line"
        )
    else:
        why = c.extra.get("sass_missing")
        notes.append(
            f"registers per thread guessed as {c.registers} and instructions estimated from the "
            f"source (ptxas decides on a GPU; pass registers=... to gpulab.predict to set it)"
            + (f". No SASS here: {why}" if why else "")
        )
    return Prediction(
        kernel=c.kernel,
        gpu=gpu.name,
        validated=gpu.validated,
        time_s=time_s,
        limiter=model.LIMITERS[key],
        limiter_key=key,
        breakdown=breakdown,
        metrics=mets,
        lines=lines,
        occupancy={
            "blocks_per_sm": b["blocks_per_sm"],
            "warps_per_sm": b["warps_per_sm"],
            "waves": b["waves"],
            "registers_per_thread": c.registers,
        },
        sampling={
            "blocks": c.blocks,
            "blocks_simulated": c.sampled_blocks,
            "relative_error": err,
            "simulator_s": c.sim_wall_s,
            "single_block": bool(c.extra.get("single_block_sample")),
        },
        notes=notes,
        dram_bytes_per_s=gpu.dram_bytes_per_s,
    )


def _with_dram(c, gpu, l2="cold"):
    c.dram_read_bytes = dram_reads(c, gpu, l2)
    c.dram_write_bytes = dram_writes(c, gpu, l2)
    return c


def _line_costs(c, b, key, time_s):
    """Each line's share of the binding resource, and its predicted SASS instructions."""
    if key in ("issue",):
        share = {ln: v for ln, v in b["per_line_inst"].items()}
    elif key in ("latency", "barrier"):
        share = dict(b["lat_line"])
    elif key in ("dram", "l2", "l1"):
        share = {
            ln: v.get(M.GLOBAL_SECTORS["ld"], 0) + v.get(M.GLOBAL_SECTORS["st"], 0)
            for ln, v in c.lines.items()
        }
    elif key == "shared":
        share = {
            ln: v.get(M.SHARED_WAVEFRONTS["ld"], 0) + v.get(M.SHARED_WAVEFRONTS["st"], 0)
            for ln, v in c.lines.items()
        }
    else:
        share = {ln: v for ln, v in b["per_line_inst"].items()}
    tot = sum(share.values()) or 1.0
    return [
        {
            "line": ln,
            "source": c.sources.get(ln, "").strip(),
            "share": share.get(ln, 0) / tot,
            "cost_s": time_s * share.get(ln, 0) / tot,
            "inst": b["per_line_inst"].get(ln, 0.0),
        }
        for ln in sorted(c.lines)
    ]


def predict(
    kernel,
    grid,
    block,
    *args,
    gpu="H200",
    shared_bytes=0,
    registers=None,
    budget_s=10.0,
    use_sass=True,
    l2="cold",
) -> Prediction:
    """Predict ``kernel[grid, block](*args)``'s time on ``gpu`` ("H200", "A100", "T4") from a
    simulation of a sample of its blocks on this CPU (``budget_s`` of simulation, about).

    Arrays are copied: the call leaves ``args`` unchanged. With the compiler wheels
    (``gpulab[sass]``) the kernel is compiled for the GPU's architecture: registers per thread
    come from ptxas and instruction counts from the executed SASS; without them (or with
    ``use_sass=False``) both are estimated from the source and the report says so.
    ``registers`` overrides registers per thread for the occupancy. ``l2="cold"`` predicts a
    launch timed as Nsight Compute times it (caches flushed first); ``l2="warm"`` one of many
    repeated launches timed with CUDA events (a footprint that fits in L2 is already there).
    """
    if l2 not in L2_STATES:
        raise ValueError(f"l2 must be one of {L2_STATES}, not {l2!r}")
    g = G.get(gpu)
    ks, why = compiled(kernel, args, g.arch) if use_sass else (None, "use_sass=False")
    if ks is not None and registers is None:
        registers = ks.launch_registers
    c, halves = sample_counts(
        kernel, grid, block, args, shared_bytes=shared_bytes, registers=registers, budget_s=budget_s
    )
    fn = python_function(kernel)
    for h in [c] + list(halves or ()):
        h.extra = dict(h.extra)
        h.extra["filename"] = fn.__code__.co_filename
        if ks is not None:
            attach_sass(h, ks, fn)
            h.extra["sass_arch"] = ks.arch
        else:
            h.extra["sass_missing"] = why
    return from_counts(c, gpu, halves, l2=l2)


def from_report(report, gpu="H200", registers=32) -> Prediction:
    """A Prediction from a finished simulator Report (no sampling: the report's own counts;
    DRAM bytes taken as the L2 traffic since a Report keeps no address footprint)."""
    if report.backend != "sim" or not report.lines:
        raise errors.LaunchConfigError(
            f"Report.predict needs a report from the simulator (backend 'sim'); this one came "
            f"from backend {report.backend!r}. Use gpulab.predict(kernel, grid, block, *args)."
        )
    infos = {}
    for ln, ls in report.lines.items():
        text = ls.source.strip()
        try:
            stmt = ast.parse(text + (" pass" if text.endswith(":") else "")).body[0]
            f, bar = W._features(stmt)
        except SyntaxError:
            f, bar = dict.fromkeys(W.FEATURES, 0), False
            f["ops"] = 1
        infos[ln] = W.LineInfo(ln, f, None, bar)
        if text.startswith(("for ", "while ")):
            later = [k for k in sorted(report.lines) if k > ln]
            infos[ln].body_line = later[0] if later else None
    total = report.grid[0] * report.grid[1] * report.grid[2]
    tpb = report.block[0] * report.block[1] * report.block[2]
    lines = {ln: dict(ls.counters) for ln, ls in report.lines.items()}
    sec = sum(v for k, v in report.metrics.items() if k in M.GLOBAL_SECTORS.values())
    c = model.Counts(
        kernel=report.kernel,
        grid=report.grid,
        block=report.block,
        blocks=total,
        warps_per_block=-(-tpb // M.WARP),
        threads=total * tpb,
        sampled_blocks=total,
        lines=lines,
        sources={ln: ls.source for ln, ls in report.lines.items()},
        infos=infos,
        metrics=dict(report.metrics),
        registers=registers,
    )
    c.l2_read_bytes = report.metrics.get(M.GLOBAL_SECTORS["ld"], 0) * M.SECTOR_BYTES
    c.dram_read_bytes = c.l2_read_bytes
    c.dram_write_bytes = report.metrics.get(M.GLOBAL_SECTORS["st"], 0) * M.SECTOR_BYTES
    p = from_counts(c, gpu)
    p.notes.append(
        f"from a Report: DRAM bytes taken as all {sec:,.0f} sectors requested (no "
        f"reuse information); gpulab.predict(...) measures the footprint."
    )
    return p
