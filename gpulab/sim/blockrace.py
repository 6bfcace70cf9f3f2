"""Races on global memory between the threads of one block.

compute-sanitizer's racecheck looks only at shared memory; this goes beyond it (issue 26). The
threads of a block are ordered only by a barrier (``cuda.syncthreads()``; ``cuda.syncwarp()``
for the lanes of one warp) or by a fence-plus-flag protocol. gpulab runs them in lockstep, so
"thread 0 zeroes ``out[b]``, then every thread of the block ``atomic.add``\\ s into it" gives the
right sum here, while on a GPU the zeroing can land after some of the adds.

Rules (per element, per launch), for two accesses by *different* threads of one block with no
barrier between them (same ``ctx.barrier_epoch`` of the block; for two lanes of one warp, no
syncwarp since the earlier access: ``ctx.unsynced``):

* a plain store and an atomic, either first: a race whatever the values (an update can be lost);
* a value-changing store and a load, either first: a race, unless the block executed a fence
  (``cuda.threadfence()``, ``threadfence_block()``) after the store and before the load (the
  published-result pattern: store, fence, flag);
* a value-changing atomic then a load: a race unless a fence came between (same pattern);
* two stores of different values: a race; stores of the value already there are benign;
* atomic with atomic, and accesses within one statement: never reported here.

Each kind of access keeps, per element, the lowest and highest lane that did it in the current
barrier interval (with when it happened, ``ctx.when()``, and the block's fence count), so the
check is a few vectorised gathers per access. Blocks are told apart by lane: races *between* blocks are
``globalrace.py``'s.
"""

import numpy as np

from .. import errors
from .context import LINE_BITS
from .layout import WARP

NONE = -1
WARP_BITS = WARP.bit_length() - 1  # lane >> WARP_BITS is its warp (32 lanes)
assert 1 << WARP_BITS == WARP


class _Accesses:
    """Per element: the lowest and highest lane of one block that made one kind of access since
    that block's last barrier, and when the last of them happened (``ctx.when()``). Three 1-D
    arrays: numpy gathers and scatters them several times faster than one (n, 3) array's rows."""

    def __init__(self, n):
        self.lo = np.full(n, NONE, dtype=np.int64)
        self.hi = np.full(n, NONE, dtype=np.int64)
        self.when = np.full(n, NONE, dtype=np.int64)

    def others(self, ctx, lanes, blk, el):
        """Per access: the lane of this block that made such an access to the element since the
        last barrier and is not ordered before it (NONE where there is none)."""
        lo, when = self.lo[el], self.when[el]
        cur = (lo >= 0) & ctx.since_barrier(when, blk)
        if not cur.any():
            return None
        cur &= lo // ctx.layout.lanes_per_block == blk
        hi = self.hi[el]
        w = lanes >> WARP_BITS
        unsynced = ctx.unsynced(when, w)
        out = np.full(len(lanes), NONE, dtype=np.int64)
        for p in (hi, lo):
            unordered = cur & (p != lanes) & (((p >> WARP_BITS) != w) | unsynced)
            out = np.where(unordered, p, out)
        return out

    def record(self, ctx, lanes, blk, el, when=None):
        """Add this statement's accesses (merged with earlier ones of the same interval);
        ``when``: a ``ctx.when()`` recorded earlier (a replayed load), else now."""
        prev_lo, prev_when = self.lo[el], self.when[el]
        same = (prev_lo >= 0) & ctx.since_barrier(prev_when, blk)
        if same.any():
            same &= prev_lo // ctx.layout.lanes_per_block == blk
            prev_hi = self.hi[el]
            w = lanes >> WARP_BITS
            # one warp's earlier accesses that a syncwarp has since ordered are forgotten
            one_warp = ((prev_lo >> WARP_BITS) == w) & ((prev_hi >> WARP_BITS) == w)
            merge = same & ~(one_warp & ~ctx.unsynced(prev_when, w))
            new_lo = np.where(merge, np.minimum(prev_lo, lanes), lanes)
            new_hi = np.where(merge, np.maximum(prev_hi, lanes), lanes)
        else:
            new_lo = new_hi = lanes
        self.lo[el] = new_lo
        self.hi[el] = new_hi
        self.when[el] = ctx.when() if when is None else when
        # several lanes, one element (a broadcast load, atomics into one total): keep the extremes
        dup = (self.lo[el] != new_lo) | (self.hi[el] != new_hi)
        if dup.any():
            np.minimum.at(self.lo, el[dup], new_lo[dup])
            np.maximum.at(self.hi, el[dup], new_hi[dup])

    def published(self, ctx, blk, el):
        """Per access: the block executed a fence after the recorded access (store, fence, flag)."""
        return ctx.fenced_since(self.when[el], blk)

    def line(self, ctx, element):
        return ctx.line_of(self.when[element])


class BlockShadow:
    """Plain stores, value-changing stores, loads and value-changing atomics of one global array,
    per element, within each block's current barrier interval."""

    #: loads of an array nothing has written yet are only logged (most arrays are read-only, and
    #: recording every load costs a gather and a scatter); the first store or atomic replays the
    #: log; it is also replayed once it holds this many accesses
    LOG_LIMIT = 1 << 22

    def __init__(self, array):
        self.array = array
        self.n = array._data.size
        self.st = self.chg = self.ld = self.at = self.atc = None
        self._log, self._logged = [], 0  # loads not yet recorded: (lanes, blk, el, when)

    def _kind(self, name):
        acc = getattr(self, name)
        if acc is None:
            acc = _Accesses(self.n)
            setattr(self, name, acc)
        return acc

    def load(self, lanes, blk, el):
        ctx = self.array.ctx
        for name, what, did in (
            ("chg", "a store and a load", "stored a new value to it"),
            ("atc", "an atomic and a load", "updated it atomically"),
        ):
            acc = getattr(self, name)
            if acc is None:
                continue
            other = acc.others(ctx, lanes, blk, el)
            if other is None:
                continue
            bad = np.flatnonzero((other >= 0) & ~acc.published(ctx, blk, el))
            if len(bad):
                self._race(what, "reads it", lanes, bad[0], other, el, did, acc)
        if self.ld is not None:
            self.ld.record(ctx, lanes, blk, el)
            return
        if self._log and len(self._log) % 64 == 0:  # drop loads every block has passed a barrier since
            done = ctx.block_synced.min()
            self._log = [entry for entry in self._log if (entry[3] >> LINE_BITS) > done]
        self._log.append((lanes, blk, el, ctx.when()))
        self._logged += len(el)
        if self._logged > self.LOG_LIMIT:
            self._replay()

    def _replay(self):
        """Record the logged loads (before the first store or atomic checks against them)."""
        ctx = self.array.ctx
        acc = self._kind("ld")
        for lanes, blk, el, when in self._log:
            acc.record(ctx, lanes, blk, el, when)
        self._log, self._logged = [], 0

    def store(self, lanes, blk, el, changed):
        ctx = self.array.ctx
        if self._log:
            self._replay()
        if self.at is not None:
            other = self.at.others(ctx, lanes, blk, el)
            if other is not None:
                bad = np.flatnonzero(other >= 0)
                if len(bad):
                    self._race(
                        "a plain store and an atomic",
                        "stores to it",
                        lanes,
                        bad[0],
                        other,
                        el,
                        "updated it atomically",
                        self.at,
                    )
        if self.ld is not None and changed.any():
            other = self.ld.others(ctx, lanes, blk, el)
            if other is not None:
                bad = np.flatnonzero((other >= 0) & changed)
                if len(bad):
                    self._race(
                        "a load and a store",
                        "stores a new value to it",
                        lanes,
                        bad[0],
                        other,
                        el,
                        "read it",
                        self.ld,
                    )
        if self.st is not None:
            other = self.st.others(ctx, lanes, blk, el)
            if other is not None:
                bad = np.flatnonzero((other >= 0) & changed)
                if len(bad):
                    self._race(
                        "two stores of different values",
                        "stores to it",
                        lanes,
                        bad[0],
                        other,
                        el,
                        "stored to it",
                        self.st,
                    )
        self._kind("st").record(ctx, lanes, blk, el)
        if changed.any():
            c = np.flatnonzero(changed)
            self._kind("chg").record(ctx, lanes[c], blk[c], el[c])

    def atomic(self, lanes, blk, el, changed):
        ctx = self.array.ctx
        if self._log:
            self._replay()
        if self.st is not None:
            other = self.st.others(ctx, lanes, blk, el)
            if other is not None:
                bad = np.flatnonzero(other >= 0)
                if len(bad):
                    self._race(
                        "a plain store and an atomic",
                        "updates it atomically",
                        lanes,
                        bad[0],
                        other,
                        el,
                        "stored to it",
                        self.st,
                    )
        self._kind("at").record(ctx, lanes, blk, el)
        if changed.any():
            c = np.flatnonzero(changed)
            self._kind("atc").record(ctx, lanes[c], blk[c], el[c])

    def _race(self, what, verb, lanes, k, other, el, did, acc):
        arr = self.array
        ctx = arr.ctx
        lay = ctx.layout
        e = int(el[k])
        idx = np.unravel_index(e, arr.shape)
        idx = str(int(idx[0])) if len(idx) == 1 else ", ".join(str(int(i)) for i in idx)
        line = acc.line(ctx, e)
        src = ctx.lines.get(line, "").strip()
        at = f"at line {line}" + (f" (`{src}`)" if src else "") if line >= 0 else "earlier"
        ctx.error(
            errors.BlockGlobalRace,
            f"Global-memory race inside a block ({what}) on `{arr.name}[{idx}]`: "
            f"{lay.thread_name(int(lanes[k]))} {verb} here, but {lay.thread_name(int(other[k]))} "
            f"{did} {at}, with no barrier between. The threads of a block run in no fixed "
            f"order (the simulator runs them in lockstep and would hide it); compute-sanitizer's "
            f"racecheck does not look at global memory, so a GPU run would not tell you either.",
            lanes=[lanes[k], other[k]],
            hint="put cuda.syncthreads() between the two accesses (e.g. zero out[b] in one "
            "thread, cuda.syncthreads(), then let the block's threads add into it), or make "
            "every update an atomic.",
        )
