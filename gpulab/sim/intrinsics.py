"""The ``cuda`` module as a simulated kernel sees it: indices, memory, barriers, warp intrinsics.

One ``SimCuda`` per launch. Warp intrinsics check their member mask against the lanes that are
really active, as the hardware requires; barriers check that whole blocks arrive.

Extending it: a warp intrinsic is one function decorated with :func:`warp_intrinsic` (the member
mask check and the tally come with it); an atomic is one entry in ``atomics.OPS``.
"""

import functools

import numpy as np

from .. import errors, metrics
from ..models.occupancy import ARCHS
from . import atomics
from .context import _bits, _is_array
from .fp16 import Fp16
from .layout import WARP
from .memory import ConstArray, LocalArray, SharedArray
from .protocol import RESULT_UNUSED
from .shuffle_rule import source_lanes
from .trace import ShuffleRecord

_LIMITS = ARCHS["sm_90"]  # hardware limits: one home
STATIC_SHARED_LIMIT = _LIMITS.shared_per_block_default  # 48 KB of static shared memory
FULL = 0xFFFFFFFF


def _dtype(t):
    """numpy dtype for a numba type, numpy type or dtype string."""
    try:
        return np.dtype(t)
    except TypeError:
        pass
    try:
        from numba.np.numpy_support import as_dtype

        return as_dtype(t)
    except Exception:
        return np.dtype(str(t))


class _Dim3:
    """threadIdx / blockIdx / blockDim / gridDim: per-lane (or uniform) x, y, z."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z


class _Shared:
    """``cuda.shared``."""

    def __init__(self, sim):
        self._sim = sim

    def array(self, shape, dtype, alignment=None):
        # alignment (bytes) matters only to the compiler (vector loads); numpy arrays suffice here
        self._sim._tally("shared.array")
        return self._sim._shared(shape, dtype)


class _Local:
    """``cuda.local``."""

    def __init__(self, sim):
        self._sim = sim

    def array(self, shape, dtype):
        self._sim._tally("local.array")
        return self._sim._local(shape, dtype)


class _Const:
    """``cuda.const``."""

    def __init__(self, sim):
        self._sim = sim

    def array_like(self, ary):
        self._sim._tally("const.array_like")
        return self._sim._const(ary)


class _GridGroup:
    """``cuda.cg.this_grid()``: the whole grid, with ``sync()``."""

    def __init__(self, sim):
        self._sim = sim

    def sync(self):
        """Grid-wide barrier: every thread of the launch arrives; then no block's earlier
        global accesses race with another's later ones (the cooperative-launch contract)."""
        sim = self._sim
        sim._tally("cg.grid.sync")
        ctx = sim.ctx
        missing = np.flatnonzero(ctx.alive & ~ctx.mask)
        if len(missing):
            here = np.flatnonzero(ctx.mask)
            ctx.error(
                errors.BarrierDivergence,
                f"grid.sync() was reached by only part of the grid: {ctx.layout.describe(here, 2)} "
                f"arrived, but {ctx.layout.describe(missing, 2)} did not (they took another path). "
                f"On a GPU this hangs.",
                lanes=list(here[:1]) + list(missing[:1]),
                hint="call grid.sync() where every thread of every block reaches it.",
            )
        ctx.synced_blocks(np.ones(ctx.layout.blocks, dtype=bool))
        ctx.barriers += 1
        for array in ctx.global_arrays:
            array.grid_synced()


class _Cg:
    """``cuda.cg`` (cooperative groups): ``this_grid()``."""

    def __init__(self, sim):
        self._grid = _GridGroup(sim)

    def this_grid(self):
        return self._grid


class _Atomic:
    """``cuda.atomic``: one method per entry of ``atomics.OPS``, made by :func:`_atomic_method`."""

    def __init__(self, sim):
        self._sim = sim

    def _do(self, op, ary, idx, vals, result_unused=False):
        """Tally, check the array, count under Nsight Compute's names, apply; old values back."""
        sim = self._sim
        sim._tally("atomic." + op.attr)
        if not getattr(ary, "_gpulab_array", False):
            sim.ctx.error(
                errors.KernelPythonError, f"cuda.atomic.{op.attr} needs an array as its first argument."
            )
        ctx = sim.ctx
        counts = metrics.atomic_counts(
            ary.space, op.name, ctx.mask.reshape(-1, WARP), result_used=not result_unused, kind=ary.dtype.kind
        )
        for name, n in counts.items():
            ctx.count(name, n)
        return ary.atomic(op.name, idx, *vals)

    def compare_and_swap(self, ary, old, val, **kwargs):
        """numba-cuda's older form, ``cas`` on element 0 of a 1-D array; returns the old value."""
        if getattr(ary, "_gpulab_array", False) and ary.ndim != 1:
            self._sim.ctx.error(
                errors.KernelPythonError,
                f"cuda.atomic.compare_and_swap needs a 1-D array; `{ary.name}` has {ary.ndim} dimensions.",
                hint="use cuda.atomic.cas(ary, idx, old, val), which takes an index.",
            )
        return self._do(atomics.OPS["cas"], ary, 0, (old, val), kwargs.pop(RESULT_UNUSED, False))

    def __getattr__(self, name):
        """An atomic the table lacks: say which ones exist."""
        if name.startswith("__"):
            raise AttributeError(name)
        self._sim.ctx.error(
            errors.UnsupportedFeature,
            f"cuda.atomic.{name} is not supported by gpulab's simulator (it has "
            f"{', '.join(sorted(atomics.OPS))} and compare_and_swap).",
            hint="use the GPU backend for it, or add it to gpulab/sim/atomics.py "
            '(CONTRIBUTING.md, "Extending the simulator").',
        )


def _atomic_method(op):
    """``cuda.atomic.<op.attr>(ary, idx, *values)`` for one entry of the op table."""
    nargs = 2 + len(op.values)
    signature = ", ".join(("ary", "idx") + op.values)

    def method(self, *args, **kwargs):
        unused = kwargs.pop(RESULT_UNUSED, False)
        if kwargs or len(args) != nargs:
            self._sim.ctx.error(
                errors.KernelPythonError,
                f"cuda.atomic.{op.attr} takes ({signature}); got {len(args)} "
                f"positional argument(s){' and keywords' if kwargs else ''}.",
            )
        return self._do(op, args[0], args[1], args[2:], unused)

    method.__name__ = op.attr
    method.__doc__ = f"cuda.atomic.{op.attr}({signature}): {op.doc}; returns the old value."
    return method


for _op in atomics.OPS.values():
    setattr(_Atomic, _op.attr, _atomic_method(_op))


def warp_intrinsic(fn):
    """Make ``fn(self, active, mask, *args)`` the warp intrinsic ``cuda.<fn name>(mask, *args)``.

    The wrapper checks the member mask against the lanes really active (``SimCuda._members``:
    a clear WarpMaskError naming the lane otherwise) and hands ``fn`` the member lanes as a
    (warps, 32) bool array; ``fn`` returns the per-lane result (arrays over all lanes of the
    launch). Each call is tallied in ``Report.intrinsics`` under ``fn``'s name. Used in the
    class body, or as ``setattr(SimCuda, name, warp_intrinsic(fn))`` to add one.
    """

    @functools.wraps(fn)
    def intrinsic(self, mask=FULL, *args):
        self._tally(fn.__name__)
        return fn(self, self._members(mask, fn.__name__), mask, *args)

    return intrinsic


class SimCuda:
    """Stands in for ``numba.cuda`` inside a simulated kernel."""

    warpsize = WARP

    def __init__(self, ctx, shared_bytes):
        self.ctx = ctx
        lay = ctx.layout
        self.threadIdx = _Dim3(*lay.tid)
        self.blockIdx = _Dim3(*lay.bid)
        self.blockDim = _Dim3(*lay.block)
        self.gridDim = _Dim3(*lay.grid)
        self.laneid = lay.lane_id
        self.shared = _Shared(self)
        self.local = _Local(self)
        self.const = _Const(self)
        self.atomic = _Atomic(self)
        self.fp16 = Fp16(self)
        self.cg = _Cg(self)
        self.dynamic_shared_bytes = shared_bytes
        self._shared_allocs = {}
        self._static_shared = 0
        self._dynamic = None
        self._local_allocs = {}
        self._consts = {}
        self._absent = None  # per warp: bits of the lanes a partial warp lacks (_absent_bits)

    # -- indices -------------------------------------------------------------------------
    def _ndim(self, ndim, name):
        if isinstance(ndim, bool) or not isinstance(ndim, (int, np.integer)) or ndim not in (1, 2, 3):
            self.ctx.error(
                errors.KernelPythonError,
                f"cuda.{name}({ndim!r}): the argument must be the literal 1, 2 or 3 "
                f"(numba.cuda supports grids of at most three dimensions).",
                hint=f"use cuda.{name}(1), cuda.{name}(2) or cuda.{name}(3).",
            )

    def grid(self, ndim):
        self._ndim(ndim, "grid")
        t, b, d = self.threadIdx, self.blockIdx, self.blockDim
        x = b.x * d.x + t.x
        if ndim == 1:
            return x
        y = b.y * d.y + t.y
        if ndim == 2:
            return (x, y)
        return (x, y, b.z * d.z + t.z)

    def gridsize(self, ndim):
        self._ndim(ndim, "gridsize")
        g, d = self.gridDim, self.blockDim
        sizes = (g.x * d.x, g.y * d.y, g.z * d.z)
        return sizes[0] if ndim == 1 else sizes[:ndim]

    # -- memory ---------------------------------------------------------------------------
    def _shared(self, shape, dtype):
        ctx = self.ctx
        key = (ctx.line, repr(shape), str(dtype))
        if key in self._shared_allocs:
            return self._shared_allocs[key]
        dt = _dtype(dtype)
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        shape = tuple(int(s) for s in shape)
        blocks = ctx.layout.blocks
        if shape in ((0,), ()):
            nbytes = self.dynamic_shared_bytes
            if nbytes == 0:
                ctx.error(
                    errors.KernelPythonError,
                    "cuda.shared.array(0, ...) declares dynamic shared memory, but the launch gave none.",
                    hint="pass shared_bytes=... to gpulab.launch.",
                )
            n = nbytes // dt.itemsize
            if self._dynamic is None:
                self._dynamic = np.zeros((blocks, nbytes), dtype=np.uint8)
                self._dynamic_written = np.zeros((blocks, nbytes), dtype=np.uint8)
            data = self._dynamic[:, : n * dt.itemsize].view(dt).reshape(blocks, n)
            arr = SharedArray(ctx, data, "dynamic shared", 0, written=self._dynamic_written)
        else:
            nbytes = int(np.prod(shape)) * dt.itemsize
            offset = -(-self._static_shared // dt.itemsize) * dt.itemsize
            if offset + nbytes > STATIC_SHARED_LIMIT:
                ctx.error(
                    errors.KernelPythonError,
                    f"static shared memory would be {offset + nbytes:,} bytes per block, "
                    f"over the {STATIC_SHARED_LIMIT:,}-byte "
                    f"({STATIC_SHARED_LIMIT // 1024} KB) limit for static allocations.",
                    hint=f"use smaller tiles, or dynamic shared memory with an opt-in "
                    f"({_LIMITS.shared_per_block_optin // 1024} KB per block on "
                    f"{_LIMITS.name}).",
                )
            self._static_shared = offset + nbytes
            data = np.zeros((blocks,) + shape, dtype=dt)
            name = ctx.lines.get(ctx.line, "").split("=")[0].strip() or "shared"
            arr = SharedArray(ctx, data, name, offset)
        self._shared_allocs[key] = arr
        return arr

    def _local(self, shape, dtype):
        ctx = self.ctx
        key = (ctx.line, repr(shape), str(dtype))
        if key in self._local_allocs:
            return self._local_allocs[key]
        dt = _dtype(dtype)
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
        nbytes = int(np.prod(shape)) * dt.itemsize
        if nbytes > LOCAL_BYTES_PER_THREAD:
            ctx.error(
                errors.KernelPythonError,
                f"cuda.local.array of {nbytes:,} bytes per thread: CUDA gives a thread at most "
                f"{LOCAL_BYTES_PER_THREAD // 1024} KiB of local memory.",
                hint="keep per-thread arrays small (registers hold the first few elements); "
                "large scratch space belongs in a global array indexed by the thread.",
            )
        data = np.zeros((ctx.layout.lanes,) + shape, dtype=dt)
        name = ctx.lines.get(ctx.line, "").split("=")[0].strip() or "local"
        arr = LocalArray(ctx, data, name)
        self._local_allocs[key] = arr
        return arr

    def _const(self, ary):
        data = ary._data if getattr(ary, "_gpulab_array", False) else np.asarray(ary)
        key = id(ary)
        if key not in self._consts:
            self._consts[key] = ConstArray(self.ctx, np.array(data, copy=True), "const")
        return self._consts[key]

    # -- barriers ---------------------------------------------------------------------------
    def _block_arrivals(self, pred=None):
        """Check that every block arrives whole; return the per-lane block of arrivals."""
        ctx = self.ctx
        lay = ctx.layout
        mask = ctx.mask
        waiting = ctx.alive & ~mask  # alive threads elsewhere in the code
        arrived_blocks = np.zeros(lay.blocks, dtype=bool)
        arrived_blocks[lay.block_of[mask]] = True
        stragglers = np.flatnonzero(waiting & arrived_blocks[lay.block_of])
        if len(stragglers):
            here = np.flatnonzero(mask & (lay.block_of == lay.block_of[stragglers[0]]))
            ctx.error(
                errors.BarrierDivergence,
                f"syncthreads() was reached by only part of a block: "
                f"{lay.describe(here, 2)} arrived, but {lay.describe(stragglers, 2)} "
                f"did not (they took another path). On a GPU this hangs or corrupts data.",
                lanes=list(here[:1]) + list(stragglers[:1]),
                hint="move the barrier out of the branch so every thread of the block "
                "reaches it, or make the branch condition the same for the whole block.",
            )
        ctx.synced_blocks(arrived_blocks)
        ctx.barriers += 1
        return arrived_blocks

    def syncthreads(self):
        self._block_arrivals()

    def _block_reduce(self, pred, how):
        ctx = self.ctx
        lay = ctx.layout
        self._block_arrivals()
        p = np.broadcast_to(np.asarray(pred) != 0, ctx.mask.shape) & ctx.mask
        counts = np.bincount(lay.block_of[p], minlength=lay.blocks)
        present = np.bincount(lay.block_of[ctx.mask], minlength=lay.blocks)
        if how == "count":
            per_block = counts
        elif how == "and":
            per_block = (counts == present).astype(np.int64)
        else:
            per_block = (counts > 0).astype(np.int64)
        return per_block[lay.block_of]

    def syncthreads_count(self, pred):
        return self._block_reduce(pred, "count")

    def syncthreads_and(self, pred):
        return self._block_reduce(pred, "and")

    def syncthreads_or(self, pred):
        return self._block_reduce(pred, "or")

    def threadfence(self):
        """Device-scope fence: what this block stored before it is visible to other blocks."""
        ctx = self.ctx
        hit = np.zeros(ctx.layout.blocks, dtype=bool)
        hit[ctx.layout.block_of[ctx.mask]] = True
        ctx.fences[hit] += 1
        ctx.block_fenced[hit] = ctx.steps
        ctx.fence_step[hit] = ctx.steps

    def threadfence_system(self):
        self.threadfence()

    def threadfence_block(self):
        """Block-scope fence: orders nothing between blocks; inside a block it publishes earlier
        stores to a thread that then sees a flag (gpulab/sim/blockrace.py)."""
        ctx = self.ctx
        hit = np.zeros(ctx.layout.blocks, dtype=bool)
        hit[ctx.layout.block_of[ctx.mask]] = True
        ctx.block_fenced[hit] = ctx.steps

    # -- warp intrinsics ----------------------------------------------------------------------
    def _members(self, mask_value, name):
        """Check a member mask against the active lanes; return the active lanes as (warps, 32)."""
        ctx = self.ctx
        active = ctx.mask.reshape(-1, WARP)
        m = np.broadcast_to(np.asarray(mask_value, dtype=np.int64) & FULL, ctx.mask.shape)
        # fast path, O(lanes): every active lane names only active lanes of its warp, and itself.
        # Lanes past the end of a partial warp (a 10-thread block's lanes 10-31) may be named:
        # the hardware treats them as exited threads (numba-cuda's own tests pass a full mask)
        warp_bits = np.packbits(active, axis=1, bitorder="little").view("<u4").astype(np.int64)
        lane_bits = np.repeat(warp_bits.ravel() | self._absent_bits(), WARP)
        ok = ~ctx.mask | (((m & ~lane_bits) == 0) & (((m >> ctx.layout.lane_id) & 1) == 1))
        if ok.all():
            return active
        lanes_bits = (m.reshape(-1, WARP)[:, :, None] >> np.arange(WARP)) & 1  # (W, lane, bit)
        named = lanes_bits.astype(bool)  # lane l names lane b
        exists = ctx.layout.exists.reshape(-1, WARP)
        not_active = named & ~active[:, None, :] & exists[:, None, :]
        bad = np.argwhere(not_active & active[:, :, None])
        if len(bad):
            w, lane, other = (int(v) for v in bad[0])
            gl, go = w * WARP + lane, w * WARP + other
            state = (
                "has exited"
                if ctx.exited[go]
                else (
                    "does not exist (partial warp)"
                    if not ctx.layout.exists[go]
                    else "is not active here (it took another branch)"
                )
            )
            ctx.error(
                errors.WarpMaskError,
                f"{name} was called with member mask 0x{int(m[gl]):08x} by "
                f"{ctx.layout.thread_name(gl)}, but lane {other} named in the mask {state}. "
                f"On a GPU this is undefined behaviour (often a hang).",
                lanes=[gl, go],
                hint="pass cuda.activemask() (or a ballot of the lanes really present) as the "
                "mask, or call the intrinsic where the whole warp is converged.",
            )
        own = named[:, np.arange(WARP), np.arange(WARP)]
        missing = np.argwhere(active & ~own)
        if len(missing):
            w, lane = (int(v) for v in missing[0])
            ctx.error(
                errors.WarpMaskError,
                f"{name}: {ctx.layout.thread_name(w * WARP + lane)} is not in its own member "
                f"mask 0x{int(m[w * WARP + lane]):08x}.",
                lanes=[w * WARP + lane],
                hint="every calling lane must be in the mask.",
            )
        return active

    def _absent_bits(self):
        """Per warp: the bits of lanes past the end of its block (a partial warp's missing lanes)."""
        bits = self._absent
        if bits is None:
            missing = ~self.ctx.layout.exists.reshape(-1, WARP)
            bits = np.packbits(missing, axis=1, bitorder="little").view("<u4").astype(np.int64).ravel()
            self._absent = bits
        return bits

    def _shuffle(self, name, mask, value, src):
        ctx = self.ctx
        active = self._members(mask, name)
        W = active.shape[0]
        src = np.broadcast_to(np.asarray(src, dtype=np.int64), ctx.mask.shape).reshape(W, WARP)
        base = (np.arange(W, dtype=np.int64) * WARP)[:, None]
        gsrc = (base + src).ravel()
        own = np.arange(W * WARP, dtype=np.int64)
        reads_other = ctx.mask & (gsrc != own)
        stale = reads_other & ~ctx.mask[gsrc]
        if stale.any():
            lane = int(np.flatnonzero(stale)[0])
            ctx.error(
                errors.WarpMaskError,
                f"{name}: {ctx.layout.thread_name(lane)} reads lane {int(gsrc[lane]) % WARP}, "
                f"which is not active here (inactive, exited or outside the member mask). "
                f"On a GPU the value it gets is undefined.",
                lanes=[lane, int(gsrc[lane])],
                hint="make sure every lane a shuffle reads from takes part in it: keep the "
                "warp converged and pad with a neutral value instead of exiting early, or pick "
                "a source inside the member mask for every member lane (e.g. "
                "cuda.shfl_sync(mask, v, min(lane + off, last_member))). gpulab stops at the "
                "read itself, even where the value would later be ignored: it does not follow "
                "an undefined value further.",
            )
        tw = ctx.trace_warp
        if active[tw].any():
            ctx.trace.add(
                "shuffles",
                lambda: ShuffleRecord(line=ctx.line, kind=name, src=src[tw].copy(), mask=_bits(active[tw])),
            )
        if not _is_array(value):
            return value
        v = np.broadcast_to(value, ctx.mask.shape)
        return v[gsrc]

    def shfl_sync(self, mask, value, src_lane, width=WARP):
        """Read ``value`` from lane ``src_lane`` (mod ``width``) of the caller's segment."""
        src = source_lanes("idx", src_lane, self.ctx.layout.lane_id, width)
        return self._shuffle("shfl_sync", mask, value, src)

    def shfl_up_sync(self, mask, value, delta, width=WARP):
        """Read ``value`` from lane - ``delta`` (own value where that leaves the segment)."""
        src = source_lanes("up", delta, self.ctx.layout.lane_id, width)
        return self._shuffle("shfl_up_sync", mask, value, src)

    def shfl_down_sync(self, mask, value, delta, width=WARP):
        """Read ``value`` from lane + ``delta`` (own value where that leaves the segment)."""
        src = source_lanes("down", delta, self.ctx.layout.lane_id, width)
        return self._shuffle("shfl_down_sync", mask, value, src)

    def shfl_xor_sync(self, mask, value, lane_mask, width=WARP):
        """Read ``value`` from lane ^ ``lane_mask`` (own value where that is a later segment)."""
        src = source_lanes("xor", lane_mask, self.ctx.layout.lane_id, width)
        return self._shuffle("shfl_xor_sync", mask, value, src)

    def _vote_bits(self, active, mask, pred):
        """Per lane: the ballot of ``pred`` over the member lanes, and the member mask."""
        ctx = self.ctx
        p = np.broadcast_to(np.asarray(pred) != 0, ctx.mask.shape).reshape(-1, WARP)
        m = self._member_bits(active, mask)
        bits = (p & active).astype(np.int64) << np.arange(WARP, dtype=np.int64)
        warp_bits = bits.sum(axis=1)
        return (warp_bits[:, None] & m).ravel(), m

    def _member_bits(self, active, mask):
        """Per lane, (warps, 32): its member mask without the lanes a partial warp lacks."""
        m = np.broadcast_to(np.asarray(mask, dtype=np.int64) & FULL, self.ctx.mask.shape).reshape(-1, WARP)
        return m & ~self._absent_bits()[:, None]

    @warp_intrinsic
    def ballot_sync(self, active, mask, pred):
        """Bit k set when member lane k has a true ``pred``."""
        bits, _ = self._vote_bits(active, mask, pred)
        return _as_int32(bits)  # numba types it int32: bit 31 makes it negative

    @warp_intrinsic
    def all_sync(self, active, mask, pred):
        """1 when ``pred`` is true in every member lane."""
        bits, m = self._vote_bits(active, mask, pred)
        return bits == m.ravel()

    @warp_intrinsic
    def any_sync(self, active, mask, pred):
        """1 when ``pred`` is true in some member lane."""
        bits, _ = self._vote_bits(active, mask, pred)
        return bits != 0

    @warp_intrinsic
    def eq_sync(self, active, mask, pred):
        """1 when ``pred`` is the same in every member lane."""
        bits, m = self._vote_bits(active, mask, pred)
        return (bits == 0) | (bits == m.ravel())

    @warp_intrinsic
    def match_any_sync(self, active, mask, value):
        """Per lane: the member lanes whose value equals this lane's (HLSL's WaveMatch)."""
        ctx = self.ctx
        v = np.broadcast_to(value, ctx.mask.shape).reshape(-1, WARP)
        m = np.broadcast_to(np.asarray(mask, dtype=np.int64) & FULL, ctx.mask.shape).reshape(-1, WARP)
        same = (v[:, :, None] == v[:, None, :]) & active[:, None, :]
        bits = (same.astype(np.int64) << np.arange(WARP, dtype=np.int64)).sum(axis=2) & m
        return _as_int32(bits.ravel())

    @warp_intrinsic
    def match_all_sync(self, active, mask, value):
        """(mask, True) when all member lanes hold the same value, else (0, False)."""
        ctx = self.ctx
        v = np.broadcast_to(value, ctx.mask.shape).reshape(-1, WARP)
        m = self._member_bits(active, mask)
        first = np.argmax(active, axis=1)
        ref = v[np.arange(v.shape[0]), first][:, None]
        all_same = ((v == ref) | ~active).all(axis=1)
        pred = np.repeat(all_same, WARP)
        return (_as_int32(np.where(pred, m.ravel(), 0)), pred)

    def activemask(self):
        """Per lane: the bits of its warp's active lanes."""
        active = self.ctx.mask.reshape(-1, WARP).astype(np.int64)
        bits = (active << np.arange(WARP, dtype=np.int64)).sum(axis=1)
        return np.repeat(bits, WARP).astype(np.uint32)

    def lanemask_lt(self):
        """Per lane: the bits of the lanes below it."""
        lane = self.ctx.layout.lane_id
        return ((np.int64(1) << lane) - 1).astype(np.uint32)

    @warp_intrinsic
    def syncwarp(self, active, mask=FULL):
        """Check that every lane in ``mask`` arrives; order the shared-memory accesses of the
        warp's lanes before it against those after it (the warp gets a new epoch)."""
        self.ctx.synced_warps(active.any(axis=1))

    # -- bit and math helpers numba.cuda exposes ----------------------------------------------------
    # popc, clz, ffs and brev work at the width of their argument's type, as numba types them
    # (llvm.ctpop/ctlz/cttz .i32 or .i64; brev on uint32 or uint64): checked on an H200
    # (benchmarks/probes/bits_probe.py)
    @staticmethod
    def popc(x):
        w, x = _width(x), np.asanyarray(x)
        n = _bitwise_count(_unsigned(x, w))
        return n.astype(x.dtype if x.dtype.kind in "iu" else np.int64)

    @staticmethod
    def ffs(x):
        w, x = _width(x), np.asanyarray(x)
        u = _unsigned(x, w)
        return _bit_length(u & (np.uint64(0) - u)).astype(np.uint32)

    @staticmethod
    def clz(x):
        w, x = _width(x), np.asanyarray(x)
        n = w - _bit_length(_unsigned(x, w))
        return n.astype(x.dtype if x.dtype.kind in "iu" else np.int64)

    @staticmethod
    def brev(x):
        w, x = _width(x), np.asanyarray(x)
        u = _unsigned(x, w)
        out = np.zeros_like(u)
        for k in range(w):
            out |= ((u >> np.uint64(k)) & np.uint64(1)) << np.uint64(w - 1 - k)
        return out.astype(np.uint32 if w <= 32 else np.uint64)

    @staticmethod
    def fma(a, b, c):
        return a * b + c

    @staticmethod
    def selp(pred, a, b):
        return np.where(np.asarray(pred) != 0, a, b)

    @staticmethod
    def cbrt(x):
        return np.cbrt(x)

    def _tally(self, name):
        """Count one warp-level execution of ``cuda.<name>`` per warp with an active lane."""
        ctx = self.ctx
        n = ctx.active_warps()
        if n:
            ctx.intrinsics[name] = ctx.intrinsics.get(name, 0) + n

    def __getattr__(self, name):
        self.ctx.error(
            errors.UnsupportedFeature,
            f"cuda.{name} is not supported by gpulab's simulator.",
            hint="use the GPU backend for it, or tell the gpulab maintainers.",
        )


def _counted(cls, name):
    """Wrap ``cls.<name>`` so each call is tallied in ``Report.intrinsics`` under ``name``."""
    raw = cls.__dict__[name]
    static = isinstance(raw, staticmethod)
    fn = raw.__func__ if static else raw

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        self._tally(name)
        return fn(*args, **kwargs) if static else fn(self, *args, **kwargs)

    setattr(cls, name, wrapper)


for _name in (
    "grid",
    "gridsize",
    "syncthreads",
    "syncthreads_count",
    "syncthreads_and",
    "syncthreads_or",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "activemask",
    "lanemask_lt",
    "popc",
    "ffs",
    "clz",
    "brev",
    "fma",
    "selp",
    "cbrt",
):
    _counted(SimCuda, _name)


# Local memory per thread, compute capability 2.0 and later (CUDA C++ Programming Guide,
# "Features and Technical Specifications", maximum amount of local memory per thread)
LOCAL_BYTES_PER_THREAD = 512 * 1024


def _width(x) -> int:
    """Bits of an integer argument's type: 32 for 32-bit and narrower (numba widens those to the
    32-bit intrinsic; values ``pyshims.widen`` made keep that type in ``bits`` while held at 64
    bits), 64 for 64-bit types and Python ints (numba types those int64)."""
    declared = getattr(x, "bits", None)
    if declared is not None:
        return 32 if declared < 64 else 64
    x = np.asanyarray(x)
    return 64 if x.dtype.itemsize >= 8 or x.dtype.kind not in "iub" else 32


def _unsigned(x, width):
    """``x``'s bits at ``width``, as uint64 (two's complement for negatives)."""
    v = x.astype(np.int64) if x.dtype.kind != "u" else x.astype(np.uint64)
    u = v.view(np.uint64) if v.dtype == np.int64 else v
    return u & np.uint64(0xFFFFFFFF) if width == 32 else u


def _bit_length(u):
    """Position of the highest set bit plus one, per element of a uint64 array (0 for 0)."""
    u = np.array(u, dtype=np.uint64, copy=True)
    n = np.zeros(u.shape, dtype=np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = u >= (np.uint64(1) << np.uint64(s))
        n[big] += s
        u[big] >>= np.uint64(s)
    return n + (u > 0)


def _bitwise_count(u):
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(u).astype(np.int64)
    return np.vectorize(lambda v: bin(int(v)).count("1"), otypes=[np.int64])(u)


def _as_int32(bits):
    """Lane bits (0 .. 2**32 - 1) as the int32 numba returns for votes and matches."""
    return np.asarray(bits, dtype=np.int64).astype(np.uint32).astype(np.int32)
