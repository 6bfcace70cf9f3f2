"""The runtime state of one simulated launch: the active mask and the structured control flow.

The transformed kernel calls these methods (see ``transform.py``); their names are the
constants of ``protocol.Runtime``, the one list a newcomer reads. The active mask is a bool
array over all lanes of the launch; masks are replaced, never mutated, so identical masks can
be recognised by identity and their per-warp counts cached.
"""

import operator
import time

import numpy as np

from .. import errors, metrics
from .layout import WARP
from .trace import MaskStep, Trace


LINE_BITS = 16  # Context.when(): (statement << LINE_BITS) + line + 1
LINE_SPAN = 1 << LINE_BITS


class _Undefined:
    """The value of a local variable before the kernel first assigns it."""

    def __repr__(self):
        """Shown when an undefined variable turns up in a message."""
        return "<undefined>"


UNDEF = _Undefined()


class _IfFrame:
    """An open ``if``: the mask before it and the per-lane (or uniform) condition."""

    __slots__ = ("saved", "saved_full", "cond")

    def __init__(self, saved, saved_full, cond):
        """Record the mask before the ``if`` and its condition."""
        self.saved, self.saved_full, self.cond = saved, saved_full, cond


class _LoopFrame:
    """An open loop: the mask before it, the lanes still looping, those that broke or continued."""

    __slots__ = ("saved", "saved_full", "live", "brk", "cont", "ifdepth", "line", "iterations")

    def __init__(self, saved, saved_full, ifdepth, line):
        """Record the mask before the loop, the open ``if`` depth and the loop's line."""
        self.saved, self.saved_full, self.live = saved, saved_full, saved
        self.brk = self.cont = None
        self.ifdepth = ifdepth
        self.line, self.iterations = line, 0


class _FnFrame:
    """An open function call: the mask at entry, the lanes that returned and their values."""

    __slots__ = ("saved", "saved_full", "ret", "retval", "ifdepth", "loopdepth")

    def __init__(self, saved, saved_full, ifdepth, loopdepth):
        """Record the mask at entry and the open ``if``/loop depths to unwind to."""
        self.saved, self.saved_full = saved, saved_full
        self.ret, self.retval = None, UNDEF
        self.ifdepth, self.loopdepth = ifdepth, loopdepth


class RangeState:
    """A ``for ... in range(...)`` whose bounds may differ per lane."""

    __slots__ = ("value", "stop", "step", "started")

    def __init__(self, start, stop, step):
        """Bounds as given to range(); the first ``loop_next`` yields ``start``."""
        self.value, self.stop, self.step, self.started = start, stop, step, False


class IterState:
    """A ``for`` over a uniform Python sequence (a tuple of constants, say)."""

    __slots__ = ("items", "pos", "value")

    def __init__(self, items):
        """The items, iterated in order."""
        self.items, self.pos, self.value = list(items), 0, UNDEF


_BINOPS = {
    "Add": operator.add,
    "Sub": operator.sub,
    "Mult": operator.mul,
    "Div": operator.truediv,
    "FloorDiv": operator.floordiv,
    "Mod": operator.mod,
    "Pow": operator.pow,
    "LShift": operator.lshift,
    "RShift": operator.rshift,
    "BitOr": operator.or_,
    "BitXor": operator.xor,
    "BitAnd": operator.and_,
    "MatMult": operator.matmul,
}
_U64 = np.dtype(np.uint64)
_ARITHMETIC = {"Add", "Sub", "Mult", "Div", "FloorDiv", "Mod", "Pow"}


def _is_narrow_float(value):
    dt = getattr(value, "dtype", None)
    return dt is not None and dt.kind == "f" and dt.itemsize < 8


def _is_bool(value):
    return isinstance(value, (bool, np.bool_)) or getattr(value, "dtype", None) == np.bool_


def _is_u64(value):
    return getattr(value, "dtype", None) == _U64


def _signed_int(value):
    """True for a signed integer or bool operand (numpy value or Python int)."""
    if isinstance(value, (bool, int)):
        return True
    dt = getattr(value, "dtype", None)
    return dt is not None and dt.kind in "ib"


def _as(value, dtype):
    if isinstance(value, (bool, int)):
        return dtype.type(value % 2**64) if dtype == _U64 else dtype.type(value)
    return value.astype(dtype)


class FromEnd(int):
    """A negative index written as a literal (``a[-1]``): numba wraps it to the end of the array,
    as Python does. Computed negative indices (``a[i - 1]`` at ``i = 0``) stay errors."""


def _is_array(x):
    """True for a per-lane value (a numpy array with dimensions), False for a uniform one."""
    return isinstance(x, np.ndarray) and x.ndim > 0


class Context:
    """Masks, frames, counters and traces of one launch."""

    def __init__(self, layout, kernel_name, trace_warp, max_steps, timeout_s):
        """A fresh launch over ``layout``; ``trace_warp`` is the global index of the traced warp."""
        self.layout = layout
        self.kernel_name = kernel_name
        self.alive = layout.exists.copy()
        self.alive_count = int(self.alive.sum())
        self.mask = self.alive
        self.full = True
        self.ifs, self.loops, self.fns = [], [], []
        self._last_break = None  # the `break` lanes of the loop closed last (for its `else`)
        self.exited = np.zeros(layout.lanes, dtype=bool)
        self.line = None
        self.filename = None
        self.lines = {}
        self.counters = metrics.empty_counters()
        self.per_line = {}
        self.steps = 0
        self.max_steps = max_steps
        self.deadline = time.perf_counter() + timeout_s if timeout_s else None
        self.timeout_s = timeout_s
        self._cpu_start = time.process_time()
        self._count_cache = (None, None)
        self.trace_warp = trace_warp
        self.trace_slice = slice(trace_warp * WARP, (trace_warp + 1) * WARP)
        self.trace = Trace()  # the traced warp's records, capped per kind
        self.mask_history = self.trace.records["mask_history"]
        self.accesses = self.trace.records["accesses"]
        self.shuffles = self.trace.records["shuffles"]
        self._mask_cap = self.trace.limits["mask_history"]
        self.barriers = 0
        self.atomics = {}
        self.intrinsics = {}
        self.benign_races = {}  # line -> same-value conflicting accesses (not hazards)
        self.barrier_epoch = np.zeros(layout.blocks, dtype=np.int64)
        # per warp: the statement (ctx.steps) of its last syncwarp or syncthreads; two lanes of one
        # warp are ordered only by these (racecheck's "Warp Level Programming" hazards)
        self.warp_synced = np.full(layout.warps, -1, dtype=np.int64)
        self.fences = np.zeros(layout.blocks, dtype=np.int64)  # cuda.threadfence() per block
        # per block: the statement (ctx.steps) of its last barrier, and of its last fence of any
        # scope (threadfence_block included): races between the threads of a block (blockrace.py)
        self.block_synced = np.full(layout.blocks, -1, dtype=np.int64)
        self.block_fenced = np.full(layout.blocks, -1, dtype=np.int64)
        self.fence_step = np.full(layout.blocks, -1, dtype=np.int64)  # statement of the last one
        self.printed = 0
        self.global_arrays = []  # the launch's GlobalArrays (grid.sync() orders their accesses)

    # -- masks ---------------------------------------------------------------------------
    def _set(self, mask, full=None):
        """Make ``mask`` the active mask; ``full`` says whether every alive lane is in it."""
        self.mask = mask
        if full is None:
            full = int(np.count_nonzero(mask)) == self.alive_count
        self.full = full

    @property
    def every(self):
        """True when every lane of the launch is active (no padding, nobody exited or waiting)."""
        return self.full and self.alive_count == self.layout.lanes

    def any(self):
        """True when some lane is active."""
        return bool(self.mask.any())

    def none_active(self):
        """True when no lane is active."""
        return not self.mask.any()

    def _off(self):
        """Lanes taken out of the current construct by return/break/continue."""
        off = None
        fn = self.fns[-1]
        if fn.ret is not None:
            off = fn.ret
        if len(self.loops) > fn.loopdepth:
            lp = self.loops[-1]
            for part in (lp.brk, lp.cont):
                if part is not None:
                    off = part if off is None else (off | part)
        return off

    def _restore(self, saved, saved_full):
        """Back to the mask before a construct, less the lanes that left by return/break/continue."""
        off = self._off()
        if off is None:
            self._set(saved, saved_full)
        else:
            self._set(saved & ~off)

    def _lanes(self, value):
        """A per-lane bool array from a uniform or per-lane truth value (under the mask)."""
        if _is_array(value):
            value = value.astype(bool, copy=False)
            if value.shape != self.mask.shape:
                value = np.broadcast_to(value, self.mask.shape)
            return value
        return bool(value)

    # -- statements ----------------------------------------------------------------------
    def _tick(self):
        """One more statement or loop iteration: stop a runaway kernel. The clock is read every
        time (~0.1 us, against several us per simulated statement), so a launch whose statements
        are slow (millions of lanes) stops on time too."""
        self.steps += 1
        if self.steps > self.max_steps:
            self._budget_exceeded()
        if self.deadline and time.perf_counter() > self.deadline:
            self._past_deadline()

    def _past_deadline(self):
        """The budget is this process's CPU time, not the wall clock: a machine busy with other
        work (a class's grader, a shared Colab CPU) must not turn a slow, correct kernel into an
        'infinite loop'. The cheap wall clock is watched every statement; only when it passes the
        deadline is the CPU time read (a system call), and the deadline moved by what is left."""
        used = time.process_time() - self._cpu_start
        if used < self.timeout_s:
            self.deadline = time.perf_counter() + (self.timeout_s - used)
        else:
            self._budget_exceeded()

    def stmt(self, line):
        """Before every statement: count one instruction per active warp, trace, check budget."""
        self.line = line
        self._tick()
        mask = self.mask
        if self._count_cache[0] is mask:
            inst, thr = self._count_cache[1]
        else:
            inst, thr = metrics.instruction_counts(mask.reshape(-1, WARP))
            self._count_cache = (mask, (inst, thr))
        c = self.counters
        c[metrics.INST_EXECUTED] += inst
        c[metrics.THREAD_INST_EXECUTED] += thr
        pl = self.per_line.get(line)
        if pl is None:
            pl = self.per_line[line] = {metrics.INST_EXECUTED: 0, metrics.THREAD_INST_EXECUTED: 0}
        pl[metrics.INST_EXECUTED] += inst
        pl[metrics.THREAD_INST_EXECUTED] += thr
        tm = mask[self.trace_slice]
        if tm.any():
            if len(self.mask_history) < self._mask_cap:
                self.mask_history.append(MaskStep(line, _bits(tm)))
            else:
                self.trace.truncated["mask_history"] = True

    def active_warps(self):
        """Warps with at least one active lane (cached with the mask, like ``stmt``)."""
        mask = self.mask
        if self._count_cache[0] is not mask:
            self._count_cache = (mask, metrics.instruction_counts(mask.reshape(-1, WARP)))
        return self._count_cache[1][0]

    def count(self, name, value, line=None):
        """Add to a launch counter and to the current line's counter."""
        if not value:
            return
        self.counters[name] = self.counters.get(name, 0) + value
        pl = self.per_line.setdefault(self.line if line is None else line, {})
        pl[name] = pl.get(name, 0) + value

    def _budget_exceeded(self):
        """Stop a runaway kernel with an error naming the loop that never ended."""
        why = (
            f"it executed more than {self.max_steps:,} statements and loop iterations"
            if self.steps > self.max_steps
            else f"it used more than {self.timeout_s} s of CPU time"
        )
        if self.loops:
            # the loop that has iterated most without ending: an outer runaway loop, not the
            # inner loop it happens to be in right now
            lp = max(self.loops, key=lambda f: f.iterations)
            lanes = np.flatnonzero(lp.live & self.alive) if lp.live.any() else np.flatnonzero(self.mask)
            where = (
                f"The loop at line {lp.line} had run {lp.iterations:,} iterations and "
                f"never ended for {self.layout.describe(lanes)}."
            )
            waiting = np.flatnonzero(lp.saved & ~lp.live & self.alive)
            if len(waiting):
                where += (
                    f" {len(waiting)} thread(s) that entered it have left it and wait at its end "
                    f"({self.layout.describe(waiting, limit=1)}): gpulab's simulator runs the "
                    f"threads of a launch in lockstep, so none runs the code after the loop until "
                    f"all have left it. A loop that waits for something another thread does after "
                    f"it (releasing a lock, setting a flag) cannot end here, although a GPU, which "
                    f"schedules blocks independently, may finish it."
                )
            self.line = lp.line
        else:
            lanes = np.flatnonzero(self.mask)
            where = f"Still running here: {self.layout.describe(lanes)}."
        self.error(
            errors.StepBudgetExceeded,
            f"The kernel was stopped because {why}: most likely an infinite loop. {where}",
            lanes=lanes,
            hint="check the loop's exit condition for these threads (is the variable it "
            "tests updated in the loop body?); if the kernel really needs longer, pass "
            "timeout_s=... (or max_steps=...) to gpulab.launch.",
        )

    # -- errors --------------------------------------------------------------------------
    def error(self, cls, message, lanes=(), hint=None):
        """Raise ``cls`` with the kernel, file, line, source and the threads involved."""
        threads = [self.layout.thread_name(int(l)) for l in list(lanes)[:8]]
        raise cls(
            message,
            kernel=self.kernel_name,
            filename=self.filename,
            line=self.line,
            source=self.lines.get(self.line),
            threads=threads,
            hint=hint,
        )

    def synced_blocks(self, blocks):
        """A barrier (syncthreads, grid sync) passed by the bool array ``blocks``: a new epoch for
        them, and each of their warps synced now."""
        self.barrier_epoch[blocks] += 1
        self.block_synced[blocks] = self.steps
        self.warp_synced[np.repeat(blocks, self.layout.warps_per_block)] = self.steps

    def synced_warps(self, warps):
        """``cuda.syncwarp()`` by the warps of the bool array ``warps``."""
        self.warp_synced[warps] = self.steps

    def when(self):
        """This statement and its line in one int64 (shadow arrays record it per access)."""
        line = -1 if self.line is None else min(int(self.line), LINE_SPAN - 2)
        return (self.steps << LINE_BITS) + line + 1

    @staticmethod
    def line_of(when):
        """The line a ``when()`` value recorded (-1: none)."""
        return int(when) % LINE_SPAN - 1 if when >= 0 else -1

    def since_barrier(self, when, block):
        """Per access: True where an access recorded at ``when`` in ``block`` came after the
        block's last barrier."""
        return (when >> LINE_BITS) > self.block_synced[block]

    def fenced_since(self, when, block):
        """Per access: True where ``block`` executed a fence after the access recorded at ``when``."""
        return self.block_fenced[block] > (when >> LINE_BITS)

    def unsynced(self, when, warp):
        """Per access: True where an access recorded at ``when`` by a lane of ``warp`` came after
        that warp's last syncwarp/syncthreads (so nothing orders it before the current one)."""
        return (when >> LINE_BITS) > self.warp_synced[warp]  # when = -1 (none): -1, never later

    def first_active(self):
        """The active lanes, in order (callers take the first few for messages)."""
        lanes = np.flatnonzero(self.mask)
        return lanes

    # -- assignment ----------------------------------------------------------------------
    def sel(self, new, old):
        """Value of a variable after ``var = new`` under the current mask."""
        if old is UNDEF or self.full or new is old:
            return new
        if isinstance(new, tuple):
            if isinstance(old, tuple) and len(old) == len(new):
                return tuple(self.sel(n, o) for n, o in zip(new, old))
            return new
        if not isinstance(new, (np.ndarray, np.generic, int, float, bool)) or not isinstance(
            old, (np.ndarray, np.generic, int, float, bool)
        ):
            return new
        if not _is_array(new) and not _is_array(old) and new == old:
            return new
        merged = np.where(self.mask, new, old)
        bits = max(getattr(new, "bits", 64), getattr(old, "bits", 64))
        if bits < 64:  # both sides narrow (int32 ...): the variable keeps that type, as in numba
            from .pyshims import Widened

            merged = merged.view(Widened)
            merged.bits = bits
        return merged

    @staticmethod
    def arith(left, op, right):
        """``left <op> right`` with numba's integer rules where numpy's differ: uint64 with a
        signed integer is int64 (numpy makes it float64, or refuses ``&``, ``|``, ``^``, shifts),
        and a shift keeps the type of its left operand."""
        fn = _BINOPS[op]
        if op in _ARITHMETIC and (_is_bool(left) or _is_bool(right)):
            # numba: True + True is 2 (numpy: logical or, and bool - bool is an error)
            left = np.int64(left) if _is_bool(left) and not _is_array(left) else left
            right = np.int64(right) if _is_bool(right) and not _is_array(right) else right
            left = left.astype(np.int64) if _is_bool(left) else left
            right = right.astype(np.int64) if _is_bool(right) else right
        if type(left) is int or type(right) is int:
            # numba types an int literal as int64, which makes float32 * 3 a float64 (numpy
            # would keep float32)
            if type(left) is int and _is_narrow_float(right):
                left = np.int64(left)
            elif type(right) is int and _is_narrow_float(left):
                right = np.int64(right)
        lu, ru = _is_u64(left), _is_u64(right)
        if lu == ru or not (_signed_int(right) if lu else _signed_int(left)):
            return fn(left, right)
        i64 = np.dtype(np.int64)
        with np.errstate(all="ignore"):
            if op in ("LShift", "RShift"):
                return fn(left, _as(right, _U64 if lu else i64))
            if lu:
                return fn(_as(left, i64), right)
            return fn(left, _as(right, i64))

    def getitem(self, obj, idx):
        """``obj[idx]``; a tuple indexed by a per-lane index gives each lane its element."""
        if not (isinstance(obj, tuple) and _is_array(idx)):
            return obj[idx]
        n = len(obj)
        bad = self.mask & ((idx < -n) | (idx >= n))
        if bad.any():
            lanes = np.flatnonzero(bad)
            self.error(
                errors.OutOfBounds,
                f"index {int(idx[lanes[0]])} is out of range for a tuple of {n} in "
                f"{self.layout.describe(lanes)}.",
                lanes=lanes,
            )
        k = np.where(self.mask, idx % n, 0)
        items = np.stack([np.broadcast_to(np.asarray(v), self.mask.shape) for v in obj])
        return items[k, np.arange(self.mask.shape[0])]

    @staticmethod
    def from_end(value):
        """A literal negative index (``a[-1]``): the array counts it from its end."""
        return FromEnd(value)

    @staticmethod
    def f64(value):
        """A float literal, as numba types it (float64)."""
        return np.float64(value)

    # -- if / else -----------------------------------------------------------------------
    def if_(self, test):
        """Open an ``if`` with its condition (evaluated under the current mask)."""
        cond = self._lanes(test)
        self.ifs.append(_IfFrame(self.mask, self.full, cond))

    def then_(self):
        """Narrow the mask to the lanes whose condition holds; False when there are none."""
        fr = self.ifs[-1]
        cond = fr.cond
        if isinstance(cond, bool):
            return cond
        taken = fr.saved & cond
        n = int(np.count_nonzero(taken))
        if n == int(np.count_nonzero(fr.saved)):  # every active lane takes it: same mask
            fr.cond = True
            return True
        if n == 0:
            fr.cond = False
            return False
        self._set(taken)
        return True

    def else_(self):
        """Switch to the lanes whose condition failed; False when there are none."""
        fr = self.ifs[-1]
        cond = fr.cond
        if isinstance(cond, bool):
            if cond:
                return False
            self._restore(fr.saved, fr.saved_full)
            return self.any()
        self._set(fr.saved & ~cond)
        off = self._off()
        if off is not None:
            self._set(self.mask & ~off)
        return self.any()

    def endif(self):
        """Close the ``if``: the mask before it, less lanes that returned/broke/continued."""
        fr = self.ifs.pop()
        self._restore(fr.saved, fr.saved_full)

    # -- expressions with short-circuit ------------------------------------------------
    def land(self, left, right_thunk):
        """``left and right`` per lane: ``right`` is evaluated only in lanes where left holds."""
        a = self._lanes(left)
        if isinstance(a, bool):
            return right_thunk() if a else False
        saved, saved_full = self.mask, self.full
        inner = saved & a
        if not inner.any():
            return a
        self._set(inner)
        try:
            b = self._lanes(right_thunk())
        finally:
            self._set(saved, saved_full)
        return a & b if _is_array(b) else (a if b else np.zeros_like(a))

    def lor(self, left, right_thunk):
        """``left or right`` per lane: ``right`` is evaluated only in lanes where left fails."""
        a = self._lanes(left)
        if isinstance(a, bool):
            return True if a else right_thunk()
        saved, saved_full = self.mask, self.full
        inner = saved & ~a
        if not inner.any():
            return a
        self._set(inner)
        try:
            b = self._lanes(right_thunk())
        finally:
            self._set(saved, saved_full)
        return a | b if _is_array(b) else (np.ones_like(a) if b else a)

    @staticmethod
    def lnot(value):
        """``not value`` per lane."""
        if _is_array(value):
            return ~value.astype(bool, copy=False)
        return not value

    def ifexp(self, test, then_thunk, else_thunk):
        """``a if test else b`` per lane, each side evaluated only in its own lanes."""
        c = self._lanes(test)
        if isinstance(c, bool):
            return then_thunk() if c else else_thunk()
        saved, saved_full = self.mask, self.full
        try:
            t = saved & c
            e = saved & ~c
            a = b = None
            if t.any():
                self._set(t)
                a = then_thunk()
            if e.any():
                self._set(e)
                b = else_thunk()
        finally:
            self._set(saved, saved_full)
        if a is None:
            return b
        if b is None:
            return a
        return np.where(c, a, b)

    # -- loops ---------------------------------------------------------------------------
    def loop_enter(self):
        """Open a loop at the current line."""
        self.loops.append(_LoopFrame(self.mask, self.full, len(self.ifs), self.line))

    def _loop_begin_iteration(self):
        """Start an iteration: count it, drop lanes that broke or returned, reset ``continue``."""
        lp = self.loops[-1]
        lp.iterations += 1
        self._tick()
        del self.ifs[lp.ifdepth :]
        lp.cont = None
        fn = self.fns[-1]
        off = lp.brk
        if fn.ret is not None:
            off = fn.ret if off is None else (off | fn.ret)
        if off is not None:
            lp.live = lp.live & ~off
            self._set(lp.live)
        elif self.mask is not lp.live:
            self._set(lp.live, lp.saved_full if lp.live is lp.saved else None)
        return lp

    def _loop_narrow(self, lp, test):
        """Keep looping the lanes whose test holds; False when none does."""
        t = self._lanes(test)
        if isinstance(t, bool):
            if not t:
                return False
            return self.any()
        live = lp.live & t
        n = int(np.count_nonzero(live))
        if n == 0:
            return False
        if n != int(np.count_nonzero(lp.live)):
            lp.live = live
            self._set(live)
        return True

    def loop_test(self, thunk):
        """``while`` test: begin an iteration and narrow to the lanes whose test holds."""
        lp = self._loop_begin_iteration()
        if not self.mask.any():
            return False
        return self._loop_narrow(lp, thunk())

    def range_(self, *args):
        """The state of ``for ... in range(...)``, whose bounds may differ per lane."""
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            start, stop, step = args[0], args[1], 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            self.error(errors.UnsupportedFeature, "range() takes 1 to 3 arguments.")
        for v in (start, stop, step):
            if isinstance(v, (float, np.floating)) or (_is_array(v) and v.dtype.kind == "f"):
                self.error(
                    errors.KernelPythonError,
                    "range() needs integers, but got a floating-point bound.",
                    lanes=self.first_active()[:1],
                    hint="convert the bound with int(...).",
                )
        if not _is_array(step) and step == 0:
            self.error(errors.KernelPythonError, "range() step must not be zero.")
        return RangeState(start, stop, step)

    def iter_(self, iterable):
        """The state of ``for ... in`` a uniform sequence (arrays are refused)."""
        if _is_array(iterable) or hasattr(iterable, "_gpulab_array"):
            self.error(
                errors.UnsupportedFeature,
                "iterating directly over an array is not supported.",
                hint="loop over indices: for k in range(a.shape[0]): ... a[k] ...",
            )
        return IterState(iterable)

    def loop_next(self, state):
        """``for`` step: begin an iteration, advance ``state.value``, narrow to lanes in range."""
        lp = self._loop_begin_iteration()
        if not self.mask.any():
            return False
        if isinstance(state, IterState):
            if state.pos >= len(state.items):
                return False
            state.value = state.items[state.pos]
            state.pos += 1
            return True
        if state.started:
            state.value = state.value + state.step
        else:
            state.started = True
        v, stop, step = state.value, state.stop, state.step
        if _is_array(step):
            test = np.where(step > 0, v < stop, v > stop)
        elif step > 0:
            test = v < stop
        else:
            test = v > stop
        return self._loop_narrow(lp, test)

    def loop_exit(self):
        """Close the loop: the mask before it, less lanes that returned."""
        lp = self.loops.pop()
        del self.ifs[lp.ifdepth :]
        self._restore(lp.saved, lp.saved_full)
        self._last_break = lp.brk

    def no_break(self):
        """The test of a loop's ``else``: True in the lanes that did not ``break`` out of the
        loop just closed (those that returned are already out of the mask)."""
        brk = self._last_break
        return True if brk is None else ~brk

    def brk(self):
        """``break``: the active lanes leave the loop."""
        lp = self.loops[-1]
        lp.brk = self.mask if lp.brk is None else (lp.brk | self.mask)
        self._set(np.zeros_like(self.mask), False)

    def brk_done(self):
        """True when no lane is left in the loop: the Python loop itself can stop."""
        lp = self.loops[-1]
        left = lp.live & ~lp.brk
        fr = self.fns[-1]
        if fr.ret is not None:
            left &= ~fr.ret
        return not left.any()

    def cont_done(self):
        """True when no lane is left in this iteration: the Python loop can move on."""
        lp = self.loops[-1]
        left = lp.live & ~lp.cont
        if lp.brk is not None:
            left &= ~lp.brk
        fr = self.fns[-1]
        if fr.ret is not None:
            left &= ~fr.ret
        return not left.any()

    def ret_done(self):
        """True when every lane that entered the function has returned."""
        fr = self.fns[-1]
        return not (fr.saved & ~fr.ret).any()

    def cont(self):
        """``continue``: the active lanes skip the rest of this iteration."""
        lp = self.loops[-1]
        lp.cont = self.mask if lp.cont is None else (lp.cont | self.mask)
        self._set(np.zeros_like(self.mask), False)

    # -- functions -----------------------------------------------------------------------
    def fn_enter(self):
        """Enter a kernel or device function; the frame goes back to ``fn_exit``."""
        fr = _FnFrame(self.mask, self.full, len(self.ifs), len(self.loops))
        self.fns.append(fr)
        return fr

    def ret(self, value):
        """``return value`` by the active lanes (from the kernel: those threads exit)."""
        fr = self.fns[-1]
        if value is not None:
            if fr.retval is UNDEF or self.full:
                fr.retval = value
            else:
                fr.retval = self.sel(value, fr.retval)
        fr.ret = self.mask if fr.ret is None else (fr.ret | self.mask)
        if len(self.fns) == 1:  # returning from the kernel: these threads exit
            self.exited |= self.mask
            self.alive = self.alive & ~self.mask
            self.alive_count = int(self.alive.sum())
        self._set(np.zeros_like(self.mask), False)

    def fn_exit(self, frame):
        """Leave the function: the mask at entry; its value, merged over the lanes that returned."""
        fr = self.fns.pop()
        assert fr is frame
        del self.ifs[fr.ifdepth :]
        del self.loops[fr.loopdepth :]
        self._set(fr.saved, fr.saved_full if fr.ret is None or self.fns else None)
        if not self.fns:
            return None
        return None if fr.retval is UNDEF else fr.retval

    # -- misc statements -------------------------------------------------------------------
    def assert_(self, test):
        """``assert test``: an error naming the lanes where it fails."""
        t = self._lanes(test)
        bad = np.flatnonzero(self.mask & ~t) if _is_array(t) else (np.flatnonzero(self.mask) if not t else [])
        if len(bad):
            self.error(
                errors.KernelPythonError, f"assertion failed in {self.layout.describe(bad)}.", lanes=bad
            )

    def raise_(self):
        """``raise``: an error naming the lanes that reached it."""
        lanes = np.flatnonzero(self.mask)
        if len(lanes):
            self.error(
                errors.KernelPythonError,
                f"the kernel raised an exception in {self.layout.describe(lanes)}.",
                lanes=lanes,
            )


def _bits(lanes32):
    """The 32 lanes of one warp as a mask integer (bit k = lane k)."""
    return int(np.packbits(lanes32, bitorder="little").view("<u4")[0])
