"""Races on global memory between the blocks of one launch.

Blocks of one launch are not ordered with respect to each other: no barrier spans them, and
the hardware runs them in any order, at any overlap. gpulab's simulator runs every block in
lockstep, one statement at a time, so a kernel whose result depends on block order (a zeroing
store racing other blocks' atomics, a block reading what another block writes) would always
give the same, plausible answer here. We *detect* such conflicts instead of *randomising* the
order of warps and blocks between runs, because:

* detection reports the race on the first run, every run, with the line, both blocks and the
  element (as compute-sanitizer racecheck does for shared memory); a randomised order shows a
  race only when an order that breaks the result happens to be drawn, and only as a wrong
  number, far from its cause;
* lockstep execution of all blocks is what makes the simulator vectorised and fast, and what
  its counters are built on; a randomised schedule would have to run blocks one by one;
* the cost is a few int32 shadow arrays per global array, updated with vectorised numpy.

Rules (per element, per launch), for accesses from *different* blocks:

* a plain store and an atomic: a race whatever the values (the atomic's update can be lost);
* a value-changing store and a load: a race (what the load sees depends on order), unless the
  storing block executed ``cuda.threadfence()`` after its store (the published-result pattern:
  store, fence, atomic flag, the last block reads);
* two stores of different values: a race; two stores of the same value, or a store of the value
  already there, are benign (every order gives the same memory) and counted in
  ``report.benign_races`` (the rule racecheck applies to shared memory);
* an atomic that changes the element and a load: a race (the load sees the element before or
  after the update, depending on order), unless every block that updated it executed
  ``cuda.threadfence()`` after its update (the same published-result pattern, with the sums
  accumulated by atomics); an atomic that leaves the value as it was (``atomic.add(a, i, 0)``,
  an atomic read) is not a change;
* atomic with atomic: never a race.
"""

import numpy as np

from .. import errors

NONE = -1
MANY = -2


def _same(a, b):
    eq = a == b
    if a.dtype.kind in "fc":
        eq |= np.isnan(a) & np.isnan(b)
    return eq


class GlobalShadow:
    """Which block last stored, loaded and atomically updated each element of one array."""

    def __init__(self, array):
        self.array = array
        self.n = array._data.size
        self._st = self._chg = self._chg_fence = self._st_line = self._ld = self._at = None
        self._atc = self._atc_step = self._atc_line = None  # the last value-changing atomics

    def _arr(self, name):
        a = getattr(self, name)
        if a is None:
            a = np.full(self.n, NONE, dtype=np.int32)
            setattr(self, name, a)
        return a

    @staticmethod
    def _record(shadow, el, blk):
        """shadow[el] = blk, or MANY where another block is (or was) recorded for el."""
        prev = shadow[el]
        new = np.where((prev == NONE) | (prev == blk), blk, MANY).astype(np.int32, copy=False)
        shadow[el] = new
        lost = shadow[el] != new  # two blocks in this very statement: both count
        if lost.any():
            shadow[el[lost]] = MANY

    # -- the three kinds of access ------------------------------------------------------------
    def load(self, lanes, blk, el):
        ctx = self.array.ctx
        if self._chg is not None:
            a = self._chg[el]
            other = (a >= 0) & (a != blk)
            if other.any():
                published = ctx.fences[np.maximum(a, 0)] > self._chg_fence[el]
                bad = np.flatnonzero(other & ~published)
                if len(bad):
                    k = bad[0]
                    self._race(
                        "a store and a load",
                        "reads",
                        lanes[k],
                        int(a[k]),
                        el[k],
                        f"stored a different value to it at line {int(self._st_line[el[k]])}",
                    )
        if self._atc is not None:
            self._load_after_atomic(lanes, blk, el)
        self._record(self._arr("_ld"), el, blk)

    def _load_after_atomic(self, lanes, blk, el):
        """A load of an element another block changed atomically, not yet published by a fence."""
        ctx = self.array.ctx
        a = self._atc[el]
        other = (a == MANY) | ((a >= 0) & (a != blk))
        if not other.any():
            return
        step = self._atc_step[el]
        fenced = np.where(a == MANY, ctx.fence_step.min() > step, ctx.fence_step[np.maximum(a, 0)] > step)
        bad = np.flatnonzero(other & ~fenced)
        if len(bad):
            k = bad[0]
            self._race(
                "an atomic and a load",
                "reads",
                lanes[k],
                int(a[k]),
                el[k],
                f"updated it atomically at line {int(self._atc_line[el[k]])}",
            )

    def store(self, lanes, blk, el, new, old):
        ctx = self.array.ctx
        if self._at is not None:
            a = self._at[el]
            bad = np.flatnonzero((a == MANY) | ((a >= 0) & (a != blk)))
            if len(bad):
                k = bad[0]
                self._race(
                    "a plain store and an atomic",
                    "stores to",
                    lanes[k],
                    int(a[k]),
                    el[k],
                    "updated it atomically",
                )
        changed = ~_same(new, old)
        benign = np.zeros(len(el), dtype=bool)
        if self._ld is not None:
            r = self._ld[el]
            other = (r == MANY) | ((r >= 0) & (r != blk))
            bad = np.flatnonzero(other & changed)
            if len(bad):
                k = bad[0]
                self._race(
                    "a load and a store", "stores a new value to", lanes[k], int(r[k]), el[k], "read it"
                )
            benign |= other
        if self._st is not None:
            s = self._st[el]
            other = (s == MANY) | ((s >= 0) & (s != blk))
            bad = np.flatnonzero(other & changed)
            if len(bad):
                k = bad[0]
                self._race(
                    "two stores of different values",
                    "stores to",
                    lanes[k],
                    int(s[k]),
                    el[k],
                    f"stored another value to it at line {int(self._st_line[el[k]])}",
                )
            benign |= other
        st = self._arr("_st")
        self._record(st, el, blk)
        clash = np.flatnonzero(st[el] == MANY)
        if len(clash):
            self._same_instruction(lanes[clash], blk[clash], el[clash], new[clash])
        self._arr("_st_line")[el] = ctx.line
        if changed.any():
            c = np.flatnonzero(changed)
            self._arr("_chg")[el[c]] = blk[c]
            self._arr("_chg_fence")[el[c]] = ctx.fences[blk[c]]
        n_benign = int(np.count_nonzero(benign & ~changed))
        if n_benign:
            ctx.benign_races[ctx.line] = ctx.benign_races.get(ctx.line, 0) + n_benign

    def atomic(self, lanes, blk, el, changed):
        """An atomic read-modify-write by ``lanes``; ``changed``: whether it changed the element."""
        if self._st is not None:
            s = self._st[el]
            bad = np.flatnonzero((s == MANY) | ((s >= 0) & (s != blk)))
            if len(bad):
                k = bad[0]
                self._race(
                    "a plain store and an atomic",
                    "updates atomically",
                    lanes[k],
                    int(s[k]),
                    el[k],
                    f"stored to it at line {int(self._st_line[el[k]])}",
                )
        self._record(self._arr("_at"), el, blk)
        if not changed.any():
            return
        c = np.flatnonzero(changed)
        if self._ld is not None:
            r = self._ld[el[c]]
            bad = np.flatnonzero((r == MANY) | ((r >= 0) & (r != blk[c])))
            if len(bad):
                k = c[bad[0]]
                self._race(
                    "a load and an atomic",
                    "updates atomically",
                    lanes[k],
                    int(self._ld[el[k]]),
                    el[k],
                    "read it",
                )
        ctx = self.array.ctx
        self._record(self._arr("_atc"), el[c], blk[c])
        self._arr("_atc_step")[el[c]] = ctx.steps
        self._arr("_atc_line")[el[c]] = ctx.line

    def _same_instruction(self, lanes, blk, el, new):
        """Several blocks store to one element in this statement: a race if the values differ."""
        order = np.lexsort((blk, el))
        e, b, v = el[order], blk[order], new[order]
        cross = (e[1:] == e[:-1]) & (b[1:] != b[:-1])
        same = _same(v[1:], v[:-1])
        bad = np.flatnonzero(cross & ~same)
        if len(bad):
            k = bad[0]
            self._race(
                "two stores of different values",
                "stores to",
                lanes[order][k + 1],
                int(b[k]),
                e[k],
                "stores a different value to it in the same statement",
            )
        ctx = self.array.ctx
        n = int(np.count_nonzero(cross & same))
        if n:
            ctx.benign_races[ctx.line] = ctx.benign_races.get(ctx.line, 0) + n

    def _race(self, what, verb, lane, other_block, element, other_did):
        arr = self.array
        ctx = arr.ctx
        lay = ctx.layout
        idx = np.unravel_index(int(element), arr.shape)
        idx = str(int(idx[0])) if len(idx) == 1 else ", ".join(str(int(i)) for i in idx)
        if other_block == MANY:
            who = "other blocks"
        else:
            gx, gy, _ = lay.grid
            who = f"block ({other_block % gx}, {other_block // gx % gy}, {other_block // (gx * gy)})"
        ctx.error(
            errors.GlobalMemoryRace,
            f"Global-memory race between blocks ({what}) on `{arr.name}[{idx}]`: "
            f"{lay.thread_name(int(lane))} {verb} it here, but {who} {other_did} in this "
            f"launch. Blocks run in no fixed order, so the result depends on timing "
            f"(the simulator runs them in lockstep and would hide it).",
            lanes=[lane],
            hint="order the two accesses with a kernel boundary (split the kernel in two, "
            "or initialise on the host), or make every update an atomic; a block may "
            "read another block's result only after that block's "
            "cuda.threadfence() and an atomic flag.",
        )
