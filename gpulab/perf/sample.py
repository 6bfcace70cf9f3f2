"""Simulate a sample of a launch's blocks and record what the time model needs beyond the
simulator's counters: which bytes reach L2 and DRAM, and how atomics pile up on addresses.

The sampled blocks keep their real ``blockIdx`` (and the launch its real ``gridDim``), so a
grid-stride loop or a tile index behaves as in the full launch; counts are then scaled by
(blocks in the launch) / (blocks simulated). Race checks between blocks are switched off here
(a prediction is not a checker: run ``gpulab.launch`` for that).
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..metrics import SECTOR_BYTES
from ..sim import context as _context
from ..sim import intrinsics as _intrinsics
from ..sim import memory as _memory
from ..sim import pyshims as _pyshims
from ..sim.layout import WARP, Layout
from ..sim.runner import python_function
from ..sim.runner import run as _run
from .uniform import aggregated_atomic_lines
from .weights import MATH_CALL_INSTRUCTIONS

_FLOAT_OPS = frozenset({"Add", "Sub", "Mult", "Div"})  # what the FP pipes do (Pow is a call)
_DIVISION_OPS = frozenset({"FloorDiv", "Mod"})
KEY = np.int64(1) << 40  # block * KEY + chunk: byte addresses stay below 2**40
SECTOR = SECTOR_BYTES  # the unit L1 and L2 move (metrics.py holds the rule)
LINE = 4 * SECTOR_BYTES  # an L1 cache line: four sectors under one tag
DRAM_CHUNK = 2 * SECTOR_BYTES  # the model's unit of a DRAM read: a sector pair (H200 measured 64 B)
# Atomic requests to addresses within one such chunk queue at one L2 unit: fitted so that a
# 256-bin integer histogram (1 KB, one chunk) and 4096 float counters (16 KB) both match the
# H200 (gpulab/data/results/perf_model.json: histogram_global_uniform, atomic_spread_4096)
ATOMIC_CHUNK = 2048


def sampled_layout(grid, block, block_ids) -> Layout:
    """A Layout holding only ``block_ids`` (linear block indices of the full ``grid``)."""
    ids = np.asarray(block_ids, dtype=np.int64)
    lay = object.__new__(Layout)
    lay.grid, lay.block = tuple(grid), tuple(block)
    lay.threads_per_block = block[0] * block[1] * block[2]
    lay.warps_per_block = -(-lay.threads_per_block // WARP)
    lay.lanes_per_block = lay.warps_per_block * WARP
    lay.blocks = len(ids)
    lay.lanes = lay.blocks * lay.lanes_per_block
    g = np.arange(lay.lanes, dtype=np.int64)
    lay.all_lanes = g  # every attribute Layout.__post_init__ sets (the simulator reads them)
    lay.block_of = g // lay.lanes_per_block
    lay.thread_of = g % lay.lanes_per_block
    lay.exists = lay.thread_of < lay.threads_per_block
    lay.warp_of = g // WARP
    lay.lane_id = g % WARP
    lay.tid = Layout._unflatten(lay.thread_of, lay.block)
    lay.bid = Layout._unflatten(ids[lay.block_of], lay.grid)
    return lay


class _Keys:
    """A growing set of int64 keys, compacted now and then."""

    def __init__(self):
        self.parts, self.n, self.compacted = [], 0, 0

    def add(self, keys):
        self.parts.append(keys)
        self.n += len(keys)
        # compact when the pieces double what the last compaction left: a set of millions of
        # distinct keys (a random walk over a big table) is not re-sorted on every access
        if len(self.parts) > 64 or self.n > max(4_000_000, 2 * self.compacted):
            self.parts = [np.unique(np.concatenate(self.parts))]
            self.n = self.compacted = len(self.parts[0])

    def count(self):
        return len(np.unique(np.concatenate(self.parts))) if self.parts else 0


class Recorder:
    """Per global array: L1-miss chunks (unique per block), DRAM chunks (unique per launch),
    bytes; atomics: addresses of global atomics, serialised steps of shared atomics."""

    def __init__(self, aggregated_lines=frozenset()):
        self.arrays = {}  # name -> dict of _Keys and sizes
        self.aggregated_lines = aggregated_lines  # lines whose integer atomics a warp combines
        self.global_atomics = []  # (array name, elements, L2 operations on each, float?)
        self.atomic_chunks = []  # (array name, ATOMIC_CHUNK of each (warp, sector) request)
        self.atomic_sector_ops = []  # (array name, sector of each (warp, element), updates, float?)
        self.atomic_sectors = 0  # (warp instruction, 32-byte sector) pairs
        self.math_inst = {}  # line -> warp instructions of math-library calls
        self.arith = {}  # line -> warp-level arithmetic operations executed
        self.arith_f64 = {}  # line -> those of them computed in float64
        self.ctx = None  # the running Context (for the math hooks)
        self.l1_lines = 0  # (warp instruction, 128-byte line) pairs of global accesses
        self.shared_atomic_steps = 0
        self.shared_atomic_warp_inst = 0
        # line -> (serialised lanes, float?): per warp instruction the most lanes on one address
        self.shared_atomic_lines = {}
        self.static_shared = 0
        self.line_warps = {}  # line -> which sampled warps executed it at least once
        # line -> warp operations of 64-bit integer // or % with a lane whose operands do not
        # fit in 32 bits (ptxas calls its 64-bit division routine for those: sass.Insn.wide_division)
        self.wide_division = {}

    def _arr(self, a):
        rec = self.arrays.get(a.name)
        if rec is None:
            rec = self.arrays[a.name] = {
                "nbytes": a._data.nbytes,
                "l1_sec": _Keys(),
                "l1_64": _Keys(),
                "dram_ld": _Keys(),
                "dram_st": _Keys(),
                "st_sec": 0,
            }
        return rec

    def access(self, a, op, idx):
        ctx = a.ctx
        lanes = np.flatnonzero(ctx.mask)
        if not len(lanes):
            return
        addr = np.broadcast_to(a._byte_addresses(idx), ctx.mask.shape)[lanes].astype(np.int64)
        rec = self._arr(a)
        blk = ctx.layout.block_of[lanes]
        w = ctx.layout.warp_of[lanes]
        self.l1_lines += len(np.unique(w * KEY + addr // LINE))
        if op == "ld":
            if "lo" not in rec:  # the address range each sampled block reads (its reuse window)
                rec["lo"] = np.full(ctx.layout.blocks, np.iinfo(np.int64).max)
                rec["hi"] = np.full(ctx.layout.blocks, -1, dtype=np.int64)
            np.minimum.at(rec["lo"], blk, addr)
            np.maximum.at(rec["hi"], blk, addr)
            rec["l1_sec"].add(np.unique(blk * KEY + addr // SECTOR))
            rec["l1_64"].add(np.unique(blk * KEY + addr // DRAM_CHUNK))
            rec["dram_ld"].add(np.unique(addr // DRAM_CHUNK))
        else:
            rec["dram_st"].add(np.unique(addr // SECTOR))
            # which sectors each block writes, and how many bytes: a block that covers only part
            # of each sector it writes leaves the rest to other blocks (a random scatter)
            rec.setdefault("st_blk_sec", _Keys()).add(np.unique(blk * KEY + addr // SECTOR))
            rec["st_bytes"] = rec.get("st_bytes", 0) + len(lanes) * a._data.itemsize

    def atomic(self, a, flat, lanes, op):
        if a.space == "global":
            self._arr(a)
            warp = a.ctx.layout.warp_of[lanes]
            pairs, lanes_on = np.unique(warp * KEY + flat, return_counts=True)  # (warp, element)
            # an L2 operation per lane, or one per warp instruction when the compiler combines
            # the warp's integer updates of a provably uniform address (perf/uniform.py)
            combined = a.ctx.line in self.aggregated_lines and a._data.dtype.kind in "iu"
            ops = np.ones(len(pairs)) if combined else lanes_on.astype(float)
            flt = a._data.dtype.kind == "f"
            self.global_atomics.append((a.name, pairs % KEY, ops, flt))
            requests = np.unique((pairs // KEY) * KEY + (pairs % KEY) * a._data.itemsize // SECTOR)
            self.atomic_sectors += len(requests)
            self.atomic_chunks.append((a.name, (requests % KEY) * SECTOR // ATOMIC_CHUNK))
            # one sector's atomic unit takes a warp's update of each of its addresses in turn, one
            # step per (warp, address): the float lanes on one address then serialise at that
            # address (Counts.atomic_hot), not across the sector (blind_r6's atomic_add_8_slots:
            # 8 float addresses of one sector took what its busiest address alone gives)
            self.atomic_sector_ops.append(
                (a.name, (pairs % KEY) * a._data.itemsize // SECTOR, np.ones(len(pairs)), flt)
            )
        else:
            warp = a.ctx.layout.warp_of[lanes]
            _, counts = np.unique(warp * KEY + flat, return_counts=True)
            # per warp-level instruction: the largest number of lanes on one address
            wkeys = np.unique(warp * KEY + flat) // KEY
            per_warp = np.zeros(len(np.unique(warp)), dtype=np.int64)
            inv = np.searchsorted(np.unique(warp), wkeys)
            np.maximum.at(per_warp, inv, counts)
            self.shared_atomic_steps += int(per_warp.sum())
            self.shared_atomic_warp_inst += len(per_warp)
            ln = a.ctx.line
            steps, flt = self.shared_atomic_lines.get(ln, (0, False))
            self.shared_atomic_lines[ln] = (steps + int(per_warp.sum()), flt or a._data.dtype.kind == "f")


@contextlib.contextmanager
def _recording(rec: Recorder):
    """Hook global accesses and atomics of the simulator while ``rec`` records."""
    G, A = _memory.GlobalArray, _memory.ArrayProxy
    orig_account, orig_atomic, orig_shadow = G._account, A.atomic, _memory.GlobalShadow

    def account(self, op, idx, value=None):
        orig_account(self, op, idx, value)
        rec.access(self, op, idx)

    def atomic(self, op, idx, *vals):
        res, _ = self._resolve(idx)
        if res is not None:
            mask = self.ctx.mask
            lanes = np.flatnonzero(mask)
            if len(lanes):
                full = self._full_index(res)
                flat = np.ravel_multi_index(
                    tuple(
                        np.broadcast_to(i, mask.shape)[lanes] if np.ndim(i) else np.full(len(lanes), i)
                        for i in full
                    ),
                    self._data.shape,
                )
                rec.atomic(self, flat.astype(np.int64), lanes, op)
        return orig_atomic(self, op, idx, *vals)

    S = _intrinsics.SimCuda
    orig_shared = S._shared
    C = _context.Context
    orig_stmt = C.stmt

    def stmt(self, line):
        orig_stmt(self, line)
        rec.ctx = self
        touched = self.mask.reshape(-1, WARP).any(axis=1)
        prev = rec.line_warps.get(line)
        rec.line_warps[line] = touched if prev is None else (prev | touched)

    def shared(self, shape, dtype):
        out = orig_shared(self, shape, dtype)
        rec.static_shared = max(rec.static_shared, self._static_shared)
        return out

    orig_arith = C.__dict__["arith"]

    def arith(left, op, right):
        out = orig_arith.__func__(left, op, right)
        ctx = rec.ctx
        if ctx is not None and op in _DIVISION_OPS:
            n = wide_division_warps(ctx.mask, left, right, out)
            if n:
                rec.wide_division[ctx.line] = rec.wide_division.get(ctx.line, 0) + n
        if ctx is not None and op in _FLOAT_OPS:
            warps = ctx.active_warps()
            rec.arith[ctx.line] = rec.arith.get(ctx.line, 0) + warps
            if getattr(out, "dtype", None) == np.float64:
                rec.arith_f64[ctx.line] = rec.arith_f64.get(ctx.line, 0) + warps
        return out

    math_orig = {n: f for n, f in vars(_pyshims.MATH).items() if n in MATH_CALL_INSTRUCTIONS}
    for n, f in math_orig.items():
        setattr(_pyshims.MATH, n, _counting_math(rec, n, f))
    G._account, A.atomic, S._shared, C.stmt = account, atomic, shared, stmt
    C.arith = staticmethod(arith)
    _memory.GlobalShadow = lambda array: None
    # no shared-memory race or initialisation checks either: they cost a third of a shared loop's
    # simulation (round 3's one_block_shared_loop) and a prediction is not a checker
    Sh = _memory.SharedArray
    orig_race, orig_written = Sh.__dict__["_check_race"], Sh.__dict__["_check_written"]
    Sh._check_race = Sh._check_written = lambda self, *a: None
    try:
        yield rec
    finally:
        Sh._check_race, Sh._check_written = orig_race, orig_written
        G._account, A.atomic, _memory.GlobalShadow = orig_account, orig_atomic, orig_shadow
        S._shared, C.stmt = orig_shared, orig_stmt
        C.arith = orig_arith
        for n, f in math_orig.items():
            setattr(_pyshims.MATH, n, f)


def wide_division_warps(mask, left, right, out) -> int:
    """Warps (of the active lanes in ``mask``) whose 64-bit integer ``left // right`` or
    ``left % right`` has a lane with an operand outside 32 bits: ptxas tests the high words of
    both operands and calls __cuda_sm20_div_s64 / rem_s64 for such a warp (a negative operand
    has its high bits set too). 0 for float or 32-bit division."""
    if getattr(np.asarray(out), "dtype", np.dtype(float)).kind not in "iu" or np.asarray(out).itemsize != 8:
        return 0
    a, b = np.asarray(left), np.asarray(right)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        return 0
    with np.errstate(all="ignore"):
        high = ((a.astype(np.uint64) | b.astype(np.uint64)) >> np.uint64(32)) != 0
    if not high.any():
        return 0
    need = np.broadcast_to(high, mask.shape) & mask
    return int(need.reshape(-1, WARP).any(axis=1).sum())


def _counting_math(rec, name, fn):
    """``fn`` (a math function of the simulator) that also charges its line the warp
    instructions the call costs on the GPU (weights.MATH_CALL_INSTRUCTIONS, by precision)."""
    cost = MATH_CALL_INSTRUCTIONS[name]

    def call(*args):
        out = fn(*args)
        ctx = rec.ctx
        if ctx is not None:
            prec = "float32" if getattr(out, "dtype", None) == np.float32 else "float64"
            warps = ctx.active_warps()
            rec.math_inst[ctx.line] = rec.math_inst.get(ctx.line, 0.0) + warps * cost[prec]
        return out

    return call


def simulate(kernel, grid, block, args, block_ids, *, shared_bytes=0, timeout_s=60.0, max_steps=50_000_000):
    """Run the sampled blocks on the simulator; (Context, Recorder). Arrays in ``args`` are
    written by the kernel: pass copies."""
    lay = sampled_layout(grid, block, block_ids)
    fn = python_function(kernel)
    rec = Recorder(aggregated_atomic_lines(fn) if fn is not None else frozenset())
    with _recording(rec):
        ctx = _run(kernel, lay, args, shared_bytes=shared_bytes, max_steps=max_steps, timeout_s=timeout_s)
    return ctx, rec


def choose_blocks(total_blocks: int, k: int, offset: int = 0, stride: int = 1, seed: int = 0) -> np.ndarray:
    """``k`` block indices, one drawn at random from each of ``k * stride`` equal strata of
    [0, total_blocks - 1), taking strata ``offset, offset + stride, ...`` (so two calls with
    offsets 0 and 1 give two independent, interleaved half-samples). Random positions avoid
    aliasing with power-of-two strides in the kernel's indexing; the last block, which may be
    partial, is left out unless it is the only one. Seeded: the same launch, the same sample."""
    if total_blocks <= 1:
        return np.zeros(1, dtype=np.int64)
    pool = total_blocks - 1
    k = max(1, min(k, pool // max(stride, 1)))
    strata = np.arange(k) * stride + offset
    lo = strata * pool // (k * stride)
    hi = np.maximum((strata + 1) * pool // (k * stride), lo + 1)
    rng = np.random.default_rng(seed + 7919 * offset)
    return np.unique(np.minimum(lo + (rng.random(k) * (hi - lo)).astype(np.int64), pool - 1))
