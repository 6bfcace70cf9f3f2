"""The simulator's extension surface (issue 18, item 5): the runtime protocol, show_transformed,
typed trace records with a truncated flag, the warp-intrinsic helper, the atomic op table and its
worked example, ``cuda.atomic.cas``; atomics counted under Nsight Compute's names."""

import ast
import inspect

import numpy as np
import pytest
from numba import cuda

import gpulab
from gpulab import errors, metrics
from gpulab.sim import atomics, protocol, shuffle_rule, trace, transform
from gpulab.sim.context import Context
from gpulab.sim.intrinsics import SimCuda, warp_intrinsic
from gpulab.sim.layout import Layout


# -- the runtime protocol ------------------------------------------------------------------------
def test_every_protocol_name_is_a_context_method():
    for name in protocol.Runtime.names():
        assert callable(getattr(Context, name, None)), f"Context lacks runtime method {name!r}"


def test_transform_names_runtime_methods_only_through_the_protocol():
    """No runtime method name appears as a string literal in transform.py (grep finds them all)."""
    tree = ast.parse(inspect.getsource(transform))
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    names = set(protocol.Runtime.names()) | {protocol.CTX, protocol.FRAME, protocol.UNDEF}
    assert not literals & names, literals & names


@cuda.jit
def _escapes(out, n):
    i = cuda.grid(1)
    for k in range(n):
        if k == i:
            break
        if k % 2 == 1:
            continue
        out[i] += 1
    if i >= out.shape[0] - 1:
        return
    out[i] += 10


def test_show_transformed_prints_the_rewritten_kernel(capsys):
    gpulab.sim.show_transformed(_escapes)
    text = capsys.readouterr().out
    ast.parse(text)  # valid Python
    R = protocol.Runtime
    for name in (
        R.STMT,
        R.RANGE,
        R.LOOP_NEXT,
        R.BREAK,
        R.BREAK_DONE,
        R.CONTINUE_DONE,
        R.RETURN,
        R.RETURN_DONE,
        R.FN_ENTER,
        R.FN_EXIT,
    ):
        assert f"{protocol.CTX}.{name}(" in text, name
    assert protocol.FRAME in text


def test_transformed_kernel_still_runs_as_written():
    out = np.zeros(8, np.int64)
    gpulab.launch(_escapes, 1, 8, out, 6, backend="sim")
    expect = np.zeros(8, np.int64)
    for i in range(8):
        for k in range(6):
            if k == i:
                break
            if k % 2 == 1:
                continue
            expect[i] += 1
        if i < 7:
            expect[i] += 10
    np.testing.assert_array_equal(out, expect)


# -- typed trace records ------------------------------------------------------------------------
@cuda.jit
def _copy_twice(dst, src):
    i = cuda.grid(1)
    if i < src.shape[0]:
        for _ in range(4):
            dst[i] = src[i]


def test_trace_records_are_typed_and_read_like_dicts():
    rep = gpulab.launch(_copy_twice, 1, 32, np.zeros(32, np.float32), np.ones(32, np.float32), backend="sim")
    ld = rep.accesses[0]
    assert isinstance(ld, trace.GlobalAccess) and ld.op == "ld" and ld["op"] == "ld"
    assert ld["sectors"] == ld.sectors == 4  # 32 float32 = 128 bytes = 4 sectors
    assert "wavefronts" not in ld and ld.get("wavefronts") is None
    line, mask = rep.mask_history[0]
    assert mask == 0xFFFFFFFF and isinstance(rep.mask_history[0], trace.MaskStep)
    assert rep.truncated == {"mask_history": False, "accesses": False, "shuffles": False}


def test_a_trace_past_its_cap_says_it_was_truncated(monkeypatch):
    monkeypatch.setattr(trace, "LIMITS", {"mask_history": 3, "accesses": 2, "shuffles": 1})
    rep = gpulab.launch(_copy_twice, 1, 32, np.zeros(32, np.float32), np.ones(32, np.float32), backend="sim")
    assert len(rep.accesses) == 2 and rep.truncated["accesses"]
    assert len(rep.mask_history) == 3 and rep.truncated["mask_history"]
    assert not rep.truncated["shuffles"]  # the kernel has no shuffle
    # counters are not traces: every access is still counted
    assert rep.metrics[metrics.GLOBAL_REQUESTS["ld"]] == 4


# -- the warp-intrinsic helper ------------------------------------------------------------------
def test_a_new_warp_intrinsic_is_one_function(monkeypatch):
    """A made-up ``reduce_add_sync``: the helper brings the member-mask check with it."""

    def reduce_add_sync(self, active, mask, value):
        v = np.broadcast_to(value, self.ctx.mask.shape).reshape(-1, 32)
        return np.repeat(np.where(active, v, 0).sum(axis=1), 32)

    monkeypatch.setattr(SimCuda, "reduce_add_sync", warp_intrinsic(reduce_add_sync), raising=False)
    ctx = Context(Layout((1, 1, 1), (64, 1, 1)), "k", 0, 1000, None)
    sim = SimCuda(ctx, 0)
    lanes = np.arange(64)
    np.testing.assert_array_equal(
        sim.reduce_add_sync(0xFFFFFFFF, lanes), np.repeat([lanes[:32].sum(), lanes[32:].sum()], 32)
    )
    assert ctx.intrinsics["reduce_add_sync"] == 2  # tallied: once per warp
    ctx._set(lanes % 2 == 0)  # odd lanes inactive
    with pytest.raises(errors.WarpMaskError, match="reduce_add_sync.*lane 1"):
        sim.reduce_add_sync(0xFFFFFFFF, lanes)


def test_shuffle_rule_is_the_simulators():
    lane = np.arange(32)
    assert list(shuffle_rule.source_lanes("xor", 1)) == list(lane ^ 1)
    assert list(shuffle_rule.source_lanes("down", 4, width=8)[4:8]) == [4, 5, 6, 7]
    assert list(shuffle_rule.source_lanes("up", 1, width=16)[15:18]) == [14, 16, 16]
    assert list(shuffle_rule.source_lanes("idx", 35, width=16)[14:18]) == [3, 3, 19, 19]
    with pytest.raises(ValueError, match="kind"):
        shuffle_rule.source_lanes("rotate", 1)


# -- the atomic op table and cuda.atomic.cas --------------------------------------------------
def test_op_table_matches_numba_cuda():
    """Every atomic numba.cuda offers with (ary, idx, ...) is in the table, and nothing else."""
    offered = {n for n in dir(cuda.atomic) if not n.startswith("_") and n != "compare_and_swap"}
    assert set(atomics.OPS) == offered
    assert atomics.OPS["cas"].values == ("old", "val")  # cas(ary, idx, old, val)
    sim = SimCuda(Context(Layout((1, 1, 1), (32, 1, 1)), "k", 0, 10, None), 0)
    assert sim.atomic.cas.__doc__.startswith("cuda.atomic.cas(ary, idx, old, val)")


@cuda.jit
def cas_max(out, vals):
    """A lock-free maximum: retry the compare-and-swap until it sticks or is not needed."""
    i = cuda.grid(1)
    if i < vals.shape[0]:
        v = vals[i]
        old = cuda.atomic.cas(out, 0, v, v)  # an atomic read: swaps v for v at most
        while old < v:
            seen = cuda.atomic.cas(out, 0, old, v)
            if seen == old:
                break
            old = seen


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
def test_cas_max_over_several_blocks(dtype):
    rng = np.random.default_rng(7)
    vals = rng.integers(0, 1_000_000, 300).astype(dtype)
    out = np.zeros(1, dtype)
    gpulab.launch(cas_max, 3, 128, out, vals, backend="sim")
    assert out[0] == vals.max()
    ref = np.zeros(1, dtype)
    gpulab.launch(cas_max, 3, 128, ref, vals, backend="numba-sim")  # Numba's own simulator
    assert ref[0] == out[0]


@cuda.jit
def cas_counters(counters, keys):
    """counters[k] += 1 for each key, by compare-and-swap (an array of CAS counters)."""
    i = cuda.grid(1)
    if i < keys.shape[0]:
        k = keys[i]
        old = cuda.atomic.cas(counters, k, 0, 0)
        while True:
            seen = cuda.atomic.cas(counters, k, old, old + 1)
            if seen == old:
                break
            old = seen


def test_array_of_cas_counters_counts_every_key():
    keys = (np.arange(500) * 7919 % 13).astype(np.int64)
    counters = np.zeros(13, np.int32)
    rep = gpulab.launch(cas_counters, 4, 128, counters, keys, backend="sim")
    np.testing.assert_array_equal(counters, np.bincount(keys, minlength=13))
    assert rep.intrinsics["atomic.cas"] >= 16  # at least the read and one swap per warp


@cuda.jit
def cas_once(a, got):
    i = cuda.grid(1)
    got[i] = cuda.atomic.cas(a, 0, 0, i + 1)


def test_cas_returns_the_old_value_and_swaps_once():
    a, got = np.zeros(1, np.int32), np.full(64, -1, np.int32)
    gpulab.launch(cas_once, 2, 32, a, got, backend="sim")
    winners = np.flatnonzero(got == 0)
    assert len(winners) == 1  # exactly one lane saw 0 and swapped
    assert a[0] == winners[0] + 1
    assert (got[got != 0] == a[0]).all()  # every other lane saw the winner's value


@cuda.jit
def cas_float(a):
    cuda.atomic.cas(a, 0, 0.0, 1.0)


def test_cas_on_floats_is_refused_as_numba_refuses_it():
    with pytest.raises(errors.GpulabError):
        gpulab.launch(cas_float, 1, 32, np.zeros(1, np.float32), backend="sim")


# -- atomics under Nsight Compute's names ----------------------------------------------------------
@cuda.jit
def atomics_mix(g, out):
    s = cuda.shared.array(1, np.int32)
    i = cuda.grid(1)
    if cuda.threadIdx.x == 0:
        s[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(g, 0, 1)  # old value discarded: RED
    out[i] = cuda.atomic.add(g, 1, 1)  # old value used: ATOM
    cuda.atomic.exch(g, 2, i)  # no RED form for exch: ATOM
    cuda.atomic.add(s, 0, 1)  # shared: ATOMS
    cuda.syncthreads()


def test_atomics_are_counted_under_nsight_names():
    rep = gpulab.launch(atomics_mix, 2, 64, np.zeros(3, np.int32), np.zeros(128, np.int32), backend="sim")
    m = rep.metrics
    warps = 4
    assert m[metrics.GLOBAL_RED_INSTRUCTIONS] == m[metrics.GLOBAL_RED_REQUESTS] == warps
    assert m[metrics.GLOBAL_ATOM_INSTRUCTIONS] == m[metrics.GLOBAL_ATOM_REQUESTS] == 2 * warps
    assert m[metrics.SHARED_ATOM_INSTRUCTIONS] == warps
    assert rep.atomics == {"global": 3 * 128, "shared": 128}


def test_atomic_counts_rule():
    active = np.zeros((3, 32), bool)
    active[0, 5] = active[2, :] = True
    assert metrics.atomic_counts("global", "add", active, result_used=False) == {
        metrics.GLOBAL_RED_INSTRUCTIONS: 2,
        metrics.GLOBAL_RED_REQUESTS: 2,
    }
    assert metrics.atomic_counts("global", "cas", active, result_used=False) == {
        metrics.GLOBAL_ATOM_INSTRUCTIONS: 2,
        metrics.GLOBAL_ATOM_REQUESTS: 2,
    }
    assert metrics.atomic_counts("shared", "add", active) == {metrics.SHARED_ATOM_INSTRUCTIONS: 2}
    assert metrics.atomic_counts("global", "add", np.zeros((3, 32), bool)) == {}
    # float max is a compare-and-swap loop in numba-cuda: never a RED
    assert metrics.atomic_counts("global", "max", active, result_used=False, kind="f") == {
        metrics.GLOBAL_ATOM_INSTRUCTIONS: 2,
        metrics.GLOBAL_ATOM_REQUESTS: 2,
    }


@cuda.jit
def cas_old_form(a, got):
    i = cuda.grid(1)
    got[i] = cuda.atomic.compare_and_swap(a, 0, 7)


def test_compare_and_swap_is_cas_on_element_zero():
    a, got = np.zeros(2, np.uint32), np.zeros(32, np.uint32)
    rep = gpulab.launch(cas_old_form, 1, 32, a, got, backend="sim")
    assert list(a) == [7, 0] and got[0] == 0 and (got[1:] == 7).all()
    assert rep.intrinsics["atomic.cas"] == 1


def test_an_atomic_the_table_lacks_is_named():
    sim = SimCuda(Context(Layout((1, 1, 1), (32, 1, 1)), "k", 0, 10, None), 0)
    with pytest.raises(errors.UnsupportedFeature, match="cuda.atomic.mul .*cas"):
        sim.atomic.mul
