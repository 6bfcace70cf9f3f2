"""Arrays as kernels see them: global, shared, local and constant memory.

Each proxy takes per-lane indices, checks them for the active lanes (negative ones too),
gathers or scatters only for those lanes, and reports every warp-level access to the
counters (``metrics.py`` holds the rules). Shared memory also keeps a shadow of who last
wrote and read each element in the current barrier interval, to find races between warps, and
of which bytes were ever written, to find reads of uninitialised shared memory; global memory
keeps one of which blocks stored, loaded and updated each element (``globalrace.py``).
"""

import numpy as np

from .. import errors, metrics
from . import atomics
from .context import FromEnd
from .blockrace import BlockShadow
from .globalrace import GlobalShadow
from .pyshims import widen
from .layout import WARP
from .trace import GlobalAccess, SharedAccess

ALLOC_ALIGN = 256  # cudaMalloc aligns allocations to at least 256 bytes
NO_WARP = -1
MANY_WARPS = -2


def _is_array(x):
    """True for a per-lane value (a numpy array with dimensions)."""
    return isinstance(x, np.ndarray) and x.ndim > 0


class _Partial:
    """``a[i]`` of a multi-dimensional array, waiting for the rest of the index (``a[i][j]``)."""

    def __init__(self, array, prefix):
        self._array, self._prefix = array, prefix

    def __getitem__(self, idx):
        return self._array[self._prefix + _as_tuple(idx)]

    def __setitem__(self, idx, value):
        self._array[self._prefix + _as_tuple(idx)] = value

    @property
    def shape(self):
        return self._array.shape[len(self._prefix) :]

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return _product(self.shape)

    @property
    def dtype(self):
        return self._array.dtype

    def __len__(self):
        return self.shape[0]


class _Record:
    """``a[i]`` of an array of records (a numpy structured dtype, as numba.cuda.random's states):
    ``r["s0"]`` or ``r.s0`` reads a field, and assigning one stores the record back into the
    array, as numba does. (The store is counted as the whole record's.)"""

    def __init__(self, array, idx, value):
        object.__setattr__(self, "_where", (array, idx))
        object.__setattr__(self, "_value", value)

    def __getitem__(self, field):
        return widen(self._value[field])

    def __setitem__(self, field, v):
        array, idx = self._where
        mask = array.ctx.mask
        new = np.array(self._value)
        if _is_array(v) and not new.ndim:
            new = np.broadcast_to(new, mask.shape).copy()
        with np.errstate(all="ignore"):
            new[field] = v
        array[idx] = new
        object.__setattr__(self, "_value", new if new.ndim else new[()])

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __setattr__(self, name, v):
        self[name] = v


def _as_tuple(idx):
    return idx if isinstance(idx, tuple) else (idx,)


def _product(shape):
    """Elements in ``shape`` (whose lengths may differ per lane)."""
    n = 1
    for d in shape:
        n = n * d
    return n if _is_array(n) else int(n)


def _has_slice(idx):
    return any(isinstance(i, slice) for i in _as_tuple(idx))


class ArrayView:
    """A slice taken inside a kernel (``row[1:]``, ``a[:, j]``, ``a[lo:hi]``), as numba allows.

    Each dimension of the array is either fixed (an index) or sliced (start, step, length, per
    lane or uniform); an element of the view maps back to one element of the array, which then
    checks, counts and stores it as any access. Indices beyond the view are reported even where
    they would still fall inside the array."""

    _gpulab_array = True

    def __init__(self, base, dims):
        self._base, self._dims = base, dims  # dims: ("fix", i) or ("slice", start, step, length)
        self.ctx, self.name, self.space = base.ctx, base.name, base.space

    def __getattr__(self, attr):
        if attr.startswith("__") or attr.startswith("_"):
            raise AttributeError(attr)
        self._base._refuse(f"`{self.name}[...].{attr}`")

    @property
    def shape(self):
        return tuple(d[3] for d in self._dims if d[0] == "slice")

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return _product(self.shape)

    @property
    def dtype(self):
        return self._base.dtype

    def __len__(self):
        return self.shape[0]

    def _map(self, idx):
        """The array index of view index ``idx`` (a new view's dims when ``idx`` slices)."""
        idx = list(_as_tuple(idx))
        if len(idx) > self.ndim:
            self.ctx.error(
                errors.KernelPythonError,
                f"a {self.ndim}-dimensional slice of `{self.name}` was indexed with {len(idx)} indices.",
                lanes=self.ctx.first_active()[:1],
            )
        dims, sliced = [], False
        for d in self._dims:
            if d[0] == "fix":
                dims.append(d)
                continue
            _, start, step, length = d
            i = idx.pop(0) if idx else slice(None)
            if isinstance(i, slice):
                s2, st2, len2 = _slice_dim(self.ctx, i, length, self.name)
                dims.append(("slice", start + s2 * step, step * st2, len2))
                sliced = True
                continue
            if isinstance(i, FromEnd):
                i = length + int(i)
            bad = self.ctx.mask & ((np.asarray(i) < 0) | (np.asarray(i) >= length))
            if np.any(bad):
                lanes = np.flatnonzero(np.broadcast_to(bad, self.ctx.mask.shape))
                self.ctx.error(
                    errors.OutOfBounds,
                    f"index {int(np.broadcast_to(i, self.ctx.mask.shape)[lanes[0]])} is outside the "
                    f"slice of `{self.name}` (length "
                    f"{int(np.broadcast_to(length, self.ctx.mask.shape)[lanes[0]])}) in "
                    f"{self.ctx.layout.describe(lanes)}.",
                    lanes=lanes,
                    hint="keep the index below the slice's shape[...] (on a GPU it would read "
                    "past the slice).",
                )
            dims.append(("fix", start + i * step))
        if sliced:
            return dims, True
        return tuple(d[1] for d in dims), False

    def __getitem__(self, idx):
        if not _has_slice(idx) and len(_as_tuple(idx)) < self.ndim:
            return _Partial(self, _as_tuple(idx))
        res, sliced = self._map(idx)
        return ArrayView(self._base, res) if sliced else self._base[res]

    def __setitem__(self, idx, value):
        res, sliced = self._map(idx)
        if sliced or len(_as_tuple(idx)) < self.ndim:
            self.ctx.error(
                errors.UnsupportedFeature,
                f"assigning to a slice of `{self.name}` is not supported by gpulab's simulator.",
                hint="assign one element at a time in a loop.",
            )
        self._base[res] = value

    def atomic(self, op, idx, *vals):
        res, sliced = self._map(idx)
        if sliced:
            self.ctx.error(
                errors.KernelPythonError, f"atomic on a slice of `{self.name}`: index one element."
            )
        return self._base.atomic(op, res, *vals)


def _slice_dim(ctx, sl, n, name):
    """(start, step, length) of slice ``sl`` over a dimension of length ``n``, as Python and
    numba take it; the bounds and ``n`` may differ per lane (then the step must be positive)."""
    step = 1 if sl.step is None else sl.step
    if _is_array(step) or int(step) == 0:
        ctx.error(
            errors.UnsupportedFeature if _is_array(step) else errors.KernelPythonError,
            f"slicing `{name}` needs a nonzero step that is the same in every thread.",
            lanes=ctx.first_active()[:1],
        )
    step = int(step)
    bounds = (sl.start, sl.stop)
    if not any(_is_array(b) for b in bounds + (n,)):
        start, stop, step = slice(*(None if b is None else int(b) for b in bounds), step).indices(int(n))
        return start, step, len(range(start, stop, step))
    if step < 0:
        ctx.error(
            errors.UnsupportedFeature,
            f"slicing `{name}` backwards with bounds that differ between threads is not supported "
            f"by gpulab's simulator.",
            hint="loop over the indices instead.",
        )

    def clip(b, default):
        if b is None:
            return default
        b = np.where(b < 0, b + n, b)
        return np.clip(b, 0, n)

    start, stop = clip(sl.start, 0), clip(sl.stop, n)
    return start, step, np.maximum(0, (stop - start + step - 1) // step)


class ArrayProxy:
    """Common indexing machinery. Subclasses say which lanes own which storage."""

    _gpulab_array = True
    space = "global"
    counted = True

    def __init__(self, ctx, data, name):
        self.ctx, self._data, self.name = ctx, data, name

    def __getattr__(self, attr):
        """Refuse what numba refuses on a device array (``.data``, numpy methods, ...)."""
        if attr.startswith("__") or attr in ("ctx", "_data", "name"):
            raise AttributeError(attr)
        self._refuse(f"`{self.name}.{attr}`")

    def __array__(self, *args, **kwargs):
        self._refuse(f"using `{self.name}` as a whole numpy array")

    def _refuse(self, what):
        self.ctx.error(
            errors.UnsupportedFeature,
            f"{what} is not available in a kernel on gpulab's simulator: an array "
            f"offers shape, ndim, size, dtype and element indexing (numba.cuda refuses "
            f".data; numpy methods such as .sum() would run as one thread's serial loop "
            f"on a GPU, which the simulator does not model).",
            lanes=self.ctx.first_active()[:1],
            hint="read and write one element per thread, e.g. `out[i] = a * x[i] + y[i]`, "
            "and loop over indices where one thread needs several elements.",
        )

    # numba-visible attributes
    @property
    def shape(self):
        return self._data.shape[self._lead :]

    @property
    def ndim(self):
        return self._data.ndim - self._lead

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def dtype(self):
        return self._data.dtype

    def __len__(self):
        return self.shape[0]

    _lead = 0

    def _prefix(self):
        """Leading per-lane index dimensions (block for shared, lane for local)."""
        return ()

    # -- index handling -----------------------------------------------------------------------
    def _resolve(self, idx):
        """Per-dimension index values, checked for the active lanes."""
        idx = _as_tuple(idx)
        shape = self.shape
        if len(idx) < len(shape):
            return None, idx
        if len(idx) > len(shape):
            self.ctx.error(
                errors.KernelPythonError,
                f"`{self.name}` has {len(shape)} dimension(s) but was indexed with {len(idx)}.",
                lanes=self.ctx.first_active()[:1],
            )
        mask = self.ctx.mask
        out = []
        for d, (i, n) in enumerate(zip(idx, shape)):
            if isinstance(i, slice):
                self.ctx.error(
                    errors.UnsupportedFeature,
                    f"slicing `{self.name}` inside a kernel is not supported.",
                    hint="index one element at a time.",
                )
            if isinstance(i, (float, np.floating)) or (_is_array(i) and i.dtype.kind not in "iub"):
                self.ctx.error(
                    errors.KernelPythonError,
                    f"index {d} of `{self.name}` is not an integer.",
                    lanes=self.ctx.first_active()[:1],
                    hint="array indices must be integers: use int(...) or //.",
                )
            if _is_array(i):
                iv = i[mask] if i.shape == mask.shape else np.broadcast_to(i, mask.shape)[mask]
                if iv.size and (iv.min() < 0 or iv.max() >= n):
                    self._oob(d, i, n)
                if not self.ctx.full or iv.size != i.size:
                    i = np.where(mask, i, 0)
            else:
                if isinstance(i, FromEnd) and -n <= i < 0:
                    i = n + i
                i = int(i)
                if (i < 0 or i >= n) and mask.any():
                    self._oob(d, i, n)
            out.append(i)
        return tuple(out), None

    def _oob(self, dim, i, n):
        mask = self.ctx.mask
        if _is_array(i):
            iv = np.broadcast_to(i, mask.shape)
            bad_lanes = np.flatnonzero(mask & ((iv < 0) | (iv >= n)))
            value = int(iv[bad_lanes[0]])
        else:
            bad_lanes = np.flatnonzero(mask)
            value = i
        where = f"index {value}" + (f" in dimension {dim}" if len(self.shape) > 1 else "")
        shape = self.shape if len(self.shape) > 1 else self.shape[0]
        neg = (
            (
                " Negative indices are bugs here: numba on a GPU would silently wrap "
                "them to the end of the array."
            )
            if value < 0
            else ""
        )
        self.ctx.error(
            errors.OutOfBounds,
            f"{where} is out of bounds for `{self.name}` ({self.space} memory, "
            f"shape {shape}) in {self.ctx.layout.describe(bad_lanes)}.{neg}",
            lanes=bad_lanes,
            hint="guard the access (e.g. `if i < a.shape[0]:`) or fix the index arithmetic.",
        )

    def _full_index(self, idx):
        return self._prefix() + idx

    def _flat_elements(self, idx):
        """Element offsets (row-major within this array) for every lane."""
        shape = self.shape
        flat = 0
        for i, n in zip(idx, shape):
            flat = flat * n + i
        return flat

    # -- element access --------------------------------------------------------------------
    def _view(self, idx):
        """``a[...]`` with a slice in it: a view (dimensions the index leaves out are whole)."""
        idx = _as_tuple(idx)
        whole = tuple(("slice", 0, 1, n) for n in self.shape)
        return ArrayView(self, whole)[idx]

    def __getitem__(self, idx):
        if _has_slice(idx):
            return self._view(idx)
        res, partial = self._resolve(idx)
        if res is None:
            return _Partial(self, partial)
        self._account("ld", res)
        value = self._data[self._full_index(res)]
        if self._data.dtype.names:
            return _Record(self, idx, value)
        return widen(value)

    def __setitem__(self, idx, value):
        res, partial = self._resolve(idx)
        if res is None:
            self.ctx.error(
                errors.KernelPythonError, f"assigning to a row of `{self.name}`: index every dimension."
            )
        if isinstance(value, (ArrayProxy, _Partial, ArrayView)):
            self.ctx.error(
                errors.KernelPythonError, f"cannot store an array into an element of `{self.name}`."
            )
        value = _narrow(value, self._data.dtype)
        self._account("st", res, value)
        mask = self.ctx.mask
        full_idx = self._full_index(res)
        uniform_address = not any(_is_array(i) for i in full_idx)
        if uniform_address:
            if _is_array(value):
                lanes = np.flatnonzero(mask)
                if not len(lanes):
                    return
                value = np.broadcast_to(value, mask.shape)[lanes[-1]]
            elif not mask.any():
                return
            with np.errstate(all="ignore"):
                self._data[full_idx] = value
            return
        if self.ctx.every:
            with np.errstate(all="ignore"):
                self._data[full_idx] = value
            return
        lanes = np.flatnonzero(mask)
        sel = tuple(np.broadcast_to(i, mask.shape)[lanes] if _is_array(i) else i for i in full_idx)
        if _is_array(value):
            value = np.broadcast_to(value, mask.shape)[lanes]
        with np.errstate(all="ignore"):
            self._data[sel] = value

    def _account(self, op, idx, value=None):
        """Count one warp-level access (``value``: what a store writes, per lane or uniform)."""

    def _atomic_access(self, res, flat, old):
        """Hook for shadow checks of an atomic read-modify-write at ``res`` (flat elements and
        the old value per active lane, after the update)."""

    def _lane_values(self, value, lanes):
        """The values a store writes, per active lane, converted to the array's dtype."""
        with np.errstate(all="ignore"):
            v = np.asarray(value)
            v = np.broadcast_to(v, self.ctx.mask.shape)[lanes] if v.ndim else np.full(len(lanes), v)
            return v.astype(self._data.dtype, copy=False)

    # -- atomics ---------------------------------------------------------------------------------
    def atomic(self, op, idx, *vals):
        """Apply an atomic read-modify-write for every active lane, in lane order; return old values."""
        res, partial = self._resolve(idx)
        if res is None:
            self.ctx.error(errors.KernelPythonError, f"atomic on a row of `{self.name}`.")
        mask = self.ctx.mask
        lanes = np.flatnonzero(mask)
        self.ctx.atomics[self.space] = self.ctx.atomics.get(self.space, 0) + len(lanes)
        full_idx = self._full_index(res)
        flat = np.ravel_multi_index(
            tuple(
                np.broadcast_to(i, mask.shape)[lanes] if _is_array(i) else np.full(len(lanes), i)
                for i in full_idx
            ),
            self._data.shape,
        )
        vals = [_narrow(np.broadcast_to(np.asarray(v), mask.shape)[lanes], self._data.dtype) for v in vals]
        flat_data = self._data.reshape(-1)
        old = np.empty(len(lanes), dtype=self._data.dtype)
        atomics.apply(atomics.BY_NAME[op], flat_data, flat, vals, old)
        self._atomic_access(res, flat, old)
        out = np.zeros(mask.shape, dtype=self._data.dtype)
        out[lanes] = old
        return widen(out)


def _narrow(value, dtype):
    """An integer value stored into an integer array of ``dtype``: truncated to its width, as a
    GPU's store does (numba computes integers at 64 bits; see ``pyshims.widen``)."""
    if dtype.kind not in "iu":
        return value
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, int):
        value = np.int64(value) if -(2**63) <= value < 2**63 else np.uint64(value % 2**64)
    if isinstance(value, (np.ndarray, np.integer)) and value.dtype.kind in "iu" and value.dtype != dtype:
        with np.errstate(all="ignore"):
            v = np.asarray(value).astype(dtype)
        return v if v.ndim else v[()]
    return value


def _same(a, b):
    """Element-wise equality of stored values, NaN equal to NaN (the bits a store leaves)."""
    eq = a == b
    if a.dtype.kind in "fc":
        eq |= np.isnan(a) & np.isnan(b)
    return eq


class GlobalArray(ArrayProxy):
    """A kernel argument: global memory, counted in requests and 32-byte sectors."""

    def __init__(self, ctx, data, name, base):
        super().__init__(ctx, data, name)
        self.base = base
        # races between blocks (gpulab/sim/globalrace.py); one block cannot race another
        self._races = GlobalShadow(self) if ctx.layout.blocks > 1 else None
        # races between the threads of one block (gpulab/sim/blockrace.py)
        self._block_races = BlockShadow(self) if ctx.layout.threads_per_block > 1 else None
        ctx.global_arrays.append(self)

    def grid_synced(self):
        """After ``grid.sync()``: accesses before it are ordered before those after it."""
        if self._races is not None:
            self._races = GlobalShadow(self)

    def _lanes_elements(self, idx):
        ctx = self.ctx
        lay = ctx.layout
        flat = self._flat_elements(idx)
        if ctx.every:  # every lane active: no gathers needed
            return lay.all_lanes, lay.block_of, np.broadcast_to(flat, ctx.mask.shape)
        lanes = np.flatnonzero(ctx.mask)
        return lanes, lay.block_of[lanes], np.broadcast_to(flat, ctx.mask.shape)[lanes]

    def _check_races(self, op, idx, value):
        lanes, blk, el = self._lanes_elements(idx)
        if not len(lanes):
            return
        between, within = self._races, self._block_races  # races between blocks reported first
        if op == "ld":
            if between is not None:
                between.load(lanes, blk, el)
            if within is not None:
                within.load(lanes, blk, el)
        else:
            old = self._data[tuple(np.broadcast_to(i, self.ctx.mask.shape)[lanes] for i in idx)]
            new = self._lane_values(value, lanes)
            if between is not None:
                between.store(lanes, blk, el, new, old)
            if within is not None:
                within.store(lanes, blk, el, ~_same(new, old))

    def _atomic_access(self, res, flat, old):
        if self._races is not None or self._block_races is not None:
            lanes, blk, el = self._lanes_elements(res)
            if len(lanes):
                changed = ~_same(self._data.reshape(-1)[flat], old)
                if self._races is not None:
                    self._races.atomic(lanes, blk, el, changed)
                if self._block_races is not None:
                    self._block_races.atomic(lanes, blk, el, changed)

    def _byte_addresses(self, idx):
        off = 0
        for i, stride in zip(idx, self._data.strides):
            off = off + i * stride
        return self.base + off

    def _account(self, op, idx, value=None):
        ctx = self.ctx
        mask = ctx.mask
        addr = np.broadcast_to(self._byte_addresses(idx), mask.shape)
        m2 = mask.reshape(-1, WARP)
        a2 = addr.reshape(-1, WARP)
        size = self._data.itemsize
        sectors = metrics.global_sectors(a2, size, m2)
        ctx.count(metrics.GLOBAL_REQUESTS[op], int(metrics.global_requests(m2).sum()))
        ctx.count(metrics.GLOBAL_SECTORS[op], int(sectors.sum()))
        tw = ctx.trace_warp
        if m2[tw].any():
            ctx.trace.add(
                "accesses",
                lambda: GlobalAccess(
                    line=ctx.line,
                    array=self.name,
                    space="global",
                    op=op,
                    addresses=np.where(m2[tw], a2[tw], -1),
                    mask=m2[tw].copy(),
                    size=size,
                    sectors=int(sectors[tw]),
                ),
            )
        if self._races is not None or self._block_races is not None:
            self._check_races(op, idx, value)


class ConstArray(ArrayProxy):
    """``cuda.const.array_like``: read-only, broadcast to the warp; not counted as global traffic."""

    space = "constant"

    def __setitem__(self, idx, value):
        self.ctx.error(
            errors.KernelPythonError, f"`{self.name}` is in constant memory, which kernels cannot write."
        )


class LocalArray(ArrayProxy):
    """``cuda.local.array``: one private copy per thread."""

    space = "local"
    _lead = 1

    def _prefix(self):
        return (np.arange(self.ctx.layout.lanes, dtype=np.int64),)


class SharedArray(ArrayProxy):
    """``cuda.shared.array``: one copy per block, with bank counting and race detection."""

    space = "shared"
    _lead = 1

    def __init__(self, ctx, data, name, offset, written=None):
        super().__init__(ctx, data, name)
        self.offset = offset  # byte offset within the block's shared memory
        n = int(np.prod(data.shape[1:]))
        blocks = data.shape[0]
        size = data.dtype.itemsize
        # which bytes of each block's copy some thread has written (0xFF) in this launch; views
        # of dynamic shared memory share one such shadow, so aliasing views see each other
        if written is None:
            written = np.zeros((blocks, n * size), dtype=np.uint8)
        part = size if size <= 8 else 8
        self._written = written[:, : n * size].view(f"u{part}").reshape(blocks, n, size // part)
        self._written_full = np.iinfo(f"u{part}").max
        self._flat = data.reshape(blocks, n)
        self.w_lane = np.full((blocks, n), -1, dtype=np.int64)
        self.w_epoch = np.full((blocks, n), -1, dtype=np.int64)
        self.r_warp = np.full((blocks, n), NO_WARP, dtype=np.int64)
        self.r_lane = np.full((blocks, n), -1, dtype=np.int64)
        self.r_lane2 = np.full((blocks, n), -1, dtype=np.int64)
        self.r_epoch = np.full((blocks, n), -1, dtype=np.int64)
        # within one warp (racecheck's "Warp Level Programming" hazards): when (ctx.when(): the
        # statement and its line) the last write and the last read happened; the last read's
        # lanes are r_lane .. r_hi when one warp made it
        self.w_when = np.full((blocks, n), -1, dtype=np.int64)
        self.r_hi = np.full((blocks, n), -1, dtype=np.int64)
        self.r_when = np.full((blocks, n), -1, dtype=np.int64)
        self._n = n
        self._scratch_lo = np.full(blocks * n, np.iinfo(np.int64).max, dtype=np.int64)
        self._scratch_hi = np.full(blocks * n, -1, dtype=np.int64)

    def _prefix(self):
        return (self.ctx.layout.block_of,)

    def _account(self, op, idx, value=None):
        ctx = self.ctx
        mask = ctx.mask
        elem = np.broadcast_to(self._flat_elements(idx), mask.shape)
        size = self._data.itemsize
        addr = self.offset + elem * size
        m2 = mask.reshape(-1, WARP)
        a2 = addr.reshape(-1, WARP)
        counts, wave, ideal = metrics.shared_counts(op, a2, size, m2)
        for name, n in counts.items():
            ctx.count(name, n)
        tw = ctx.trace_warp
        if m2[tw].any():
            ctx.trace.add(
                "accesses",
                lambda: SharedAccess(
                    line=ctx.line,
                    array=self.name,
                    space="shared",
                    op=op,
                    addresses=np.where(m2[tw], a2[tw], -1),
                    mask=m2[tw].copy(),
                    size=size,
                    wavefronts=int(wave[tw]),
                    bank_conflicts=int(wave[tw] - ideal[tw]),
                ),
            )
        lanes = np.flatnonzero(mask)
        if not len(lanes):
            return
        blk = ctx.layout.block_of[lanes]
        el = elem[lanes].astype(np.int64, copy=False)  # numba: uint32*uint32 is uint64
        if op == "ld":
            self._check_written(blk, el, lanes, "reads")
            self._check_race(op, lanes, blk, el, None)
        else:
            self._check_race(op, lanes, blk, el, self._lane_values(value, lanes))
            self._written[blk, el] = self._written_full

    def _atomic_access(self, res, flat, old):
        """An atomic reads the element first: it must have been written (zeroed) before."""
        ctx = self.ctx
        lanes = np.flatnonzero(ctx.mask)
        if len(lanes):
            el = np.broadcast_to(self._flat_elements(res), ctx.mask.shape)[lanes]
            self._check_written(ctx.layout.block_of[lanes], el, lanes, "updates atomically")

    def _check_written(self, blk, el, lanes, verb):
        """compute-sanitizer initcheck's rule, for shared memory: no read of unwritten bytes."""
        ok = (self._written[blk, el] == self._written_full).all(axis=1)
        if ok.all():
            return
        k = int(np.flatnonzero(~ok)[0])
        ctx = self.ctx
        ctx.error(
            errors.UninitializedRead,
            f"Uninitialised shared-memory read: {ctx.layout.thread_name(int(lanes[k]))} "
            f"{verb} `{self.name}[{self._index_text(el[k])}]`, which no thread of its block "
            f"has written in this launch. Shared memory starts with undefined contents "
            f"on a GPU (the simulator does not pretend it is zero).",
            lanes=[lanes[k]],
            hint="write every element before any thread reads it (e.g. each thread stores "
            "its element, or zeroes it, then cuda.syncthreads()), or guard the read "
            "with the same condition as the write.",
        )

    def _index_text(self, element):
        idx = np.unravel_index(int(element), self.shape)
        return str(int(idx[0])) if len(idx) == 1 else ", ".join(str(int(i)) for i in idx)

    def _benign(self, count):
        """Same-value conflicting writes: hazards on paper, but every order gives one result."""
        if count:
            b = self.ctx.benign_races
            b[self.ctx.line] = b.get(self.ctx.line, 0) + int(count)

    def _check_race(self, op, lanes, blk, el, vals):
        ctx = self.ctx
        warp = ctx.layout.warp_of[lanes]
        epoch = ctx.barrier_epoch[blk]
        w_lane = self.w_lane[blk, el]
        w_cur = (self.w_epoch[blk, el] == epoch) & (w_lane >= 0)
        w_other = w_cur & (ctx.layout.warp_of[np.maximum(w_lane, 0)] != warp)
        when = ctx.when()
        if op == "ld":
            bad = np.flatnonzero(w_other)
            if len(bad):
                k = bad[0]
                self._race(
                    "read-after-write", lanes[k], w_lane[k], el[k], "wrote", self.w_when[blk[k], el[k]]
                )
            key = blk * self._n + el
            w_mine = w_cur & (w_lane != lanes) & ~w_other  # another lane of this warp wrote it
            if w_mine.any():
                w_when = self.w_when.flat[key]
                bad = np.flatnonzero(w_mine & ctx.unsynced(w_when, warp))
                if len(bad):
                    k = bad[0]
                    self._warp_race("RAW", lanes[k], w_lane[k], el[k], "wrote", w_when[k])
            # record readers: one warp, or several (then any other warp's write is a race)
            r_cur = self.r_epoch.flat[key] == epoch
            prev = np.where(r_cur, self.r_warp.flat[key], NO_WARP)
            lo, hi = self._scratch_lo, self._scratch_hi
            np.minimum.at(lo, key, lanes)  # lanes are ordered by warp: min/max lane
            np.maximum.at(hi, key, lanes)  # give the min/max warp and one lane of each
            lo_lane, hi_lane = lo[key], hi[key]
            prev_lane = self.r_lane.flat[key]
            many = (
                (lo_lane // WARP != hi_lane // WARP) | (prev == MANY_WARPS) | ((prev >= 0) & (prev != warp))
            )
            self.r_warp.flat[key] = np.where(many, MANY_WARPS, warp)
            # remember two readers from different warps when there are several
            prev_lane2 = np.where(r_cur, self.r_lane2.flat[key], -1)
            prev_lane = np.where(r_cur, prev_lane, -1)
            other = hi_lane
            for cand in (prev_lane, prev_lane2):
                use = (other // WARP == lo_lane // WARP) & (cand >= 0) & (cand // WARP != lo_lane // WARP)
                other = np.where(use, cand, other)
            self.r_lane2.flat[key] = np.where(many, other, -1)
            self.r_lane.flat[key] = lo_lane
            self.r_epoch.flat[key] = epoch
            self._record_warp_readers(key, hi_lane, when)
            lo[key] = np.iinfo(np.int64).max
            hi[key] = -1
        else:
            # a write of the value the element already holds cannot change what any order of
            # the warps produces: racecheck reports no hazard for it, we count it as benign
            unchanged = _same(vals, self._flat[blk, el]) & self._written[blk, el].all(axis=1)
            bad = np.flatnonzero(w_other & ~unchanged)
            if len(bad):
                k = bad[0]
                self._race(
                    "write-after-write", lanes[k], w_lane[k], el[k], "wrote", self.w_when[blk[k], el[k]]
                )
            benign = w_other & unchanged
            r_cur = self.r_epoch[blk, el] == epoch
            r_warp = self.r_warp[blk, el]
            r_other = r_cur & ((r_warp == MANY_WARPS) | ((r_warp >= 0) & (r_warp != warp)))
            benign |= r_other & unchanged
            r_other &= ~unchanged
            bad = np.flatnonzero(r_other)
            if len(bad):
                b0, e0, me = blk[bad[0]], el[bad[0]], lanes[bad[0]]
                reader = self.r_lane[b0, e0]
                if reader // WARP == me // WARP:
                    reader = self.r_lane2[b0, e0]
                self._race("write-after-read", me, reader, el[bad[0]], "read")
            # two warps writing the same element in this very instruction: a race unless they
            # all write one value
            key = blk * (el.max() + 1) + el
            order = np.lexsort((warp, key))
            ks, ws, vs = key[order], warp[order], vals[order]
            group = np.r_[True, ks[1:] != ks[:-1]]
            gid = np.cumsum(group) - 1
            starts = np.flatnonzero(group)
            multi = (np.maximum.reduceat(ws, starts) != np.minimum.reduceat(ws, starts))[gid]
            first = vs[starts][gid]
            differ = multi & ~_same(vs, first)
            if differ.any():
                k = int(np.flatnonzero(differ)[0])
                self._race(
                    "write-after-write",
                    lanes[order][k],
                    lanes[order][starts[gid[k]]],
                    el[order][k],
                    "wrote a different value to",
                )
            benign_now = multi & ~group
            self._benign(int(np.count_nonzero(benign)) + int(np.count_nonzero(benign_now)))
            self._check_warp_writes(lanes, blk, el, warp, ~unchanged, epoch)
            key = blk * self._n + el
            self.w_lane.flat[key] = lanes
            self.w_epoch.flat[key] = epoch
            self.w_when.flat[key] = when

    def _record_warp_readers(self, key, hi_lane, when):
        """The last read's highest lane (``r_lane`` holds the lowest) and when it happened."""
        self.r_hi.flat[key] = hi_lane
        self.r_when.flat[key] = when

    def _check_warp_writes(self, lanes, blk, el, warp, changed, epoch):
        """A store that changes an element another lane of its warp wrote or read since the
        warp's last syncwarp or syncthreads: a write-after-write or -after-read hazard."""
        ctx = self.ctx
        key = blk * self._n + el
        w_lane = self.w_lane.flat[key]
        waw = changed & (w_lane >= 0) & (w_lane != lanes) & (w_lane // WARP == warp)
        if waw.any():
            w_when = self.w_when.flat[key]
            bad = np.flatnonzero(waw & ctx.unsynced(w_when, warp))
            if len(bad):
                k = bad[0]
                self._warp_race("WAW", lanes[k], w_lane[k], el[k], "wrote", w_when[k])
        read = changed & (self.r_epoch.flat[key] == epoch) & (self.r_warp.flat[key] == warp)
        if not read.any():
            return
        lo, hi, r_when = self.r_lane.flat[key], self.r_hi.flat[key], self.r_when.flat[key]
        bad = np.flatnonzero(read & ctx.unsynced(r_when, warp) & ((lo != lanes) | (hi != lanes)))
        if len(bad):
            k = bad[0]
            reader = lo[k] if lo[k] != lanes[k] else hi[k]
            self._warp_race("WAR", lanes[k], reader, el[k], "read", r_when[k])

    def _warp_race(self, kind, lane, other_lane, element, verb, other_when):
        """Raise racecheck's "(Warp Level Programming) Potential <kind> hazard", both lines named."""
        ctx = self.ctx
        name = f"`{self.name}[{self._index_text(element)}]`"
        ctx.error(
            errors.WarpLevelRace,
            f"Shared-memory race within a warp ({kind}: compute-sanitizer racecheck reports "
            f'"(Warp Level Programming) Potential {kind} hazard") on {name}: '
            f"{ctx.layout.thread_name(int(lane))} {'reads' if kind == 'RAW' else 'writes'} it "
            f"here, but {ctx.layout.thread_name(int(other_lane))} of the same warp {verb} it "
            f"{self._at_line(other_when)} with no cuda.syncwarp() or cuda.syncthreads() between. "
            f"The lanes of a warp are not in lockstep on Volta and later GPUs (independent "
            f"thread scheduling): nothing orders the two accesses.",
            lanes=[lane, other_lane],
            hint="put cuda.syncwarp() between one lane's write and another lane's access "
            "(cuda.syncthreads() orders them too, for the whole block).",
        )

    def _at_line(self, when):
        """'at line N (`source`)' for a recorded ``ctx.when()``, or 'earlier' without one."""
        line = self.ctx.line_of(when)
        if line < 0:
            return "earlier"
        src = self.ctx.lines.get(line, "").strip()
        return f"at line {line}" + (f" (`{src}`)" if src else "")

    def _race(self, kind, lane, other_lane, element, verb, other_when=-1):
        ctx = self.ctx
        idx = np.unravel_index(int(element), self.shape)
        idx = idx[0] if len(idx) == 1 else tuple(int(i) for i in idx)
        me = ctx.layout.thread_name(int(lane))
        other = ctx.layout.thread_name(int(other_lane)) if other_lane >= 0 else "another warp"
        where = "" if self.ctx.line_of(other_when) < 0 else f" {self._at_line(other_when)}"
        ctx.error(
            errors.SharedMemoryRace,
            f"Shared-memory race ({kind}) on `{self.name}[{idx}]`: {me} accesses it here, "
            f"but {other} {verb} it{where} since the last barrier, from a different warp.",
            lanes=[lane, other_lane] if other_lane >= 0 else [lane],
            hint="put cuda.syncthreads() between the write and the other access, so one "
            "happens before the other for every warp.",
        )
