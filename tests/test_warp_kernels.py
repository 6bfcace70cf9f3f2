"""Tests for chapter 08: warp kernels on the simulator, the seed's bugs, the shuffle model and plot,
the exercise checks (they must fail wrong kernels, with the reason) and the widget."""

import math
import types

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda, float32, int32

import matplotlib

matplotlib.use("Agg")

import gpulab  # noqa: E402
from gpulab import errors  # noqa: E402
from gpulab.checks import warp as cw  # noqa: E402
from gpulab.kernels import warp as wk  # noqa: E402
from gpulab.plots import shuffle as sh  # noqa: E402

FULL = 0xFFFFFFFF


def sim(kernel, grid, block, *args):
    return gpulab.launch(kernel, grid, block, *args, backend="sim")


def ints(rng, n):
    """Small integers as float32: every sum below is exact, so comparisons can be exact."""
    return rng.integers(-9, 10, n).astype(np.float32)


# ---- the shuffle rule and the coefficient model ---------------------------------------------


@given(st.integers(0, 31))
def test_xor_is_an_involution_and_a_permutation(m):
    src = sh.shuffle_sources("xor", m)
    assert sorted(src) == list(range(32))
    assert np.array_equal(src[src], np.arange(32))


@given(st.integers(1, 31))
def test_up_and_down_read_their_own_value_out_of_range(d):
    up, down = sh.shuffle_sources("up", d), sh.shuffle_sources("down", d)
    lane = np.arange(32)
    assert np.array_equal(up[lane >= d], lane[lane >= d] - d)
    assert np.array_equal(up[lane < d], lane[lane < d])
    assert np.array_equal(down[lane < 32 - d], lane[lane < 32 - d] + d)
    assert np.array_equal(down[lane >= 32 - d], lane[lane >= 32 - d])


def test_width_splits_the_warp_into_segments():
    src = sh.shuffle_sources("idx", 3, width=8)
    assert np.array_equal(src, (np.arange(32) // 8) * 8 + 3)
    # xor across segments: a later segment is out of reach (own value), an earlier one is not
    src = sh.shuffle_sources("xor", 16, width=16)
    assert np.array_equal(src, np.r_[np.arange(16), np.arange(16)])


@cuda.jit
def _xor_width16(x, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_xor_sync(FULL, x[i], 16, 16)


def test_numba_has_no_width_argument_so_the_simulator_refuses_it():
    """CUDA C++'s __shfl_xor_sync takes a width; numba-cuda 0.30's shfl_xor_sync does not, and
    the simulator runs only what numba compiles (gpulab/sim/typecheck.py)."""
    from gpulab.errors import NotCompilable

    x = np.arange(32, dtype=np.int32) * 10
    with pytest.raises(NotCompilable, match="shfl_xor_sync"):
        sim(_xor_width16, 1, 32, x, np.zeros(32, np.int32))


@given(st.permutations([16, 8, 4, 2, 1]))
def test_butterfly_gives_every_lane_the_total_in_any_order(order):
    assert sh.lanes_with_total(sh.steps_from_rule("xor", order)) == list(range(32))


@given(st.permutations([16, 8, 4, 2, 1]))
def test_shfl_down_gives_only_lane_0_the_total(order):
    assert sh.lanes_with_total(sh.steps_from_rule("down", order)) == [0]


def test_a_repeated_offset_double_counts():
    assert sh.lanes_with_total(sh.steps_from_rule("xor", [16, 8, 4, 2, 1, 1])) == []
    assert sh.lanes_with_total(sh.steps_from_rule("xor", [16, 8, 4, 2])) == []


def test_scan_coefficients_are_the_lower_triangle():
    c = sh.coefficients(sh.steps_from_rule("up", [1, 2, 4, 8, 16]), combine="scan")[-1]
    assert np.array_equal(c, np.tril(np.ones((32, 32), dtype=int)))


def test_inactive_lanes_keep_their_value():
    step = sh.ShuffleStep("down 1", sh.shuffle_sources("down", 1), mask=0x0000FFFF)
    c = sh.coefficients([step])[-1]
    assert np.array_equal(c[16:], np.eye(32, dtype=int)[16:])
    assert c[0, 1] == 1


# ---- the kernels, on the simulator ----------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 700), block=st.sampled_from([32, 64, 96, 128, 256]), seed=st.integers(0, 99))
def test_warp_reductions_match_numpy(n, block, seed):
    rng = np.random.default_rng(seed)
    x = ints(rng, n)
    grid = math.ceil(n / block)
    out = np.full(grid * block // 32, np.nan, np.float32)
    rep = sim(wk.warp_sum_down, grid, block, x, out)
    assert np.array_equal(out, cw.warp_sums_reference(x, out.size))
    assert rep.barriers == 0
    allsum = np.full(n, np.nan, np.float32)
    sim(wk.warp_allsum_xor, grid, block, x, allsum)
    assert np.array_equal(allsum, np.repeat(cw.warp_sums_reference(x), 32)[:n])


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 900), block=st.sampled_from([32, 64, 128, 256, 512]), seed=st.integers(0, 99))
def test_block_sums_tree_and_shuffle_agree_with_numpy(n, block, seed):
    rng = np.random.default_rng(seed)
    x = ints(rng, n)
    grid = math.ceil(n / block)
    want = np.zeros(grid * block)
    want[:n] = x
    want = want.reshape(grid, block).sum(axis=1)
    for kern in (wk.block_sum_tree, wk.block_sum_shfl):
        out = np.full(grid, np.nan, np.float32)
        sim(kern, grid, block, x, out)
        assert np.array_equal(out, want), kern


def test_shuffle_block_sum_works_for_block_sizes_that_are_not_powers_of_two():
    x = ints(np.random.default_rng(1), 3 * 96)
    out = np.zeros(3, np.float32)
    sim(wk.block_sum_shfl, 3, 96, x, out)
    assert np.array_equal(out, x.reshape(3, 96).sum(axis=1))


@pytest.mark.parametrize("block,tree_barriers", [(256, 9), (1024, 11), (64, 7)])
def test_barrier_counts(block, tree_barriers):
    """Tree: one after the load plus one per halving; shuffles: one, whatever the block size."""
    x = np.ones(block, np.float32)
    out = np.zeros(1, np.float32)
    assert sim(wk.block_sum_tree, 1, block, x, out).barriers == tree_barriers
    assert out[0] == block
    assert sim(wk.block_sum_shfl, 1, block, x, out).barriers == 1
    assert out[0] == block


def test_shuffles_cut_shared_memory_traffic():
    x = np.ones(256, np.float32)
    out = np.zeros(1, np.float32)
    tree = sim(wk.block_sum_tree, 1, 256, x, out)
    shfl = sim(wk.block_sum_shfl, 1, 256, x, out)
    # tree: 8 warps store, then 12 warp-steps of (2 loads + 1 store), then thread 0 loads s[0]
    assert cw.shared_accesses(tree) == (8 + 12) + (24 + 1)
    # shuffles: lane 0 of each of the 8 warps stores once, warp 0 loads once
    assert shfl.metrics[cw.SHARED_ST] == 8 and shfl.metrics[cw.SHARED_LD] == 1


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 700), block=st.sampled_from([32, 64, 128, 256]), seed=st.integers(0, 99))
def test_warp_scans_match_numpy(n, block, seed):
    rng = np.random.default_rng(seed)
    x = ints(rng, n)
    grid = math.ceil(n / block)
    for inclusive in (1, 0):
        out = np.full(n, np.nan, np.float32)
        rep = sim(wk.warp_scan_kernel, grid, block, x, out, inclusive)
        assert np.array_equal(out, cw.warp_scan_reference(x, inclusive=bool(inclusive)))
        assert rep.barriers == 0


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 900), block=st.sampled_from([32, 64, 96, 128, 256, 512]), seed=st.integers(0, 99))
def test_block_scan_matches_numpy_with_two_barriers(n, block, seed):
    rng = np.random.default_rng(seed)
    x = ints(rng, n)
    grid = math.ceil(n / block)
    out = np.full(n, np.nan, np.float32)
    rep = sim(wk.block_scan, grid, block, x, out)
    want = np.concatenate([np.cumsum(x[b : b + block]) for b in range(0, n, block)])
    assert np.array_equal(out, want)
    assert rep.barriers == 2


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 900), block=st.sampled_from([32, 64, 128, 256]), seed=st.integers(0, 99))
def test_compaction_keeps_exactly_the_positive_values(n, block, seed):
    rng = np.random.default_rng(seed)
    x = ints(rng, n)
    out = np.full(n, np.nan, np.float32)
    count = np.zeros(1, np.int32)
    sim(wk.compact_positive, math.ceil(n / block), block, x, out, count)
    k = int(count[0])
    assert k == int((x > 0).sum())
    assert np.array_equal(np.sort(out[:k]), np.sort(x[x > 0]))
    assert np.isnan(out[k:]).all()


def test_compaction_keeps_order_inside_a_warp():
    x = np.arange(-16, 16, dtype=np.float32)[::-1].copy()
    out = np.zeros(32, np.float32)
    count = np.zeros(1, np.int32)
    sim(wk.compact_positive, 1, 32, x, out, count)
    assert np.array_equal(out[: count[0]], x[x > 0])


@pytest.mark.parametrize("grid,block", [(1, 32), (3, 128), (8, 256)])
def test_device_sum_streams_any_length(grid, block):
    rng = np.random.default_rng(grid)
    x = rng.random(5003).astype(np.float32)
    out = np.zeros(1, np.float32)
    sim(wk.device_sum, grid, block, x, out)
    assert out[0] == pytest.approx(x.astype(np.float64).sum(), rel=1e-5)
    pairs = np.zeros(1, np.float32)
    xe = x[:5002]
    sim(wk.device_sum_pairs, grid, block, xe.view(np.complex64), pairs)
    assert pairs[0] == pytest.approx(xe.astype(np.float64).sum(), rel=1e-5)


# ---- seed 000's bugs, caught -----------------------------------------------------------------


def test_article_reduction_barrier_inside_first_lane_branch_is_caught():
    x = np.ones(256, np.float32)
    with pytest.raises(errors.BarrierDivergence) as e:
        sim(wk.article_reduce_as_written, 1, 256, x, np.zeros(1, np.float32))
    assert "syncthreads" in str(e.value)


def test_article_reduction_second_bug_single_lane_wave_sum_is_caught():
    x = np.ones(256, np.float32)
    with pytest.raises(errors.WarpMaskError):
        sim(wk.article_reduce_barrier_moved, 1, 256, x, np.zeros(1, np.float32))


def test_article_prefix_sum_race_is_caught():
    x = np.ones(256, np.float32)
    with pytest.raises(errors.SharedMemoryRace) as e:
        sim(wk.article_scan_as_written, 1, 256, x, np.zeros(256, np.float32))
    assert "offs" in str(e.value)


def test_article_prefix_sum_fixed_is_an_exclusive_scan_with_three_barriers():
    x = ints(np.random.default_rng(3), 256)
    out = np.full(256, np.nan, np.float32)
    rep = sim(wk.article_scan_fixed, 1, 256, x, out)
    assert np.array_equal(out, np.cumsum(x) - x)
    assert rep.barriers == 3


# ---- the simulator's shuffle trace agrees with CUDA's rule --------------------------------------


@pytest.mark.parametrize(
    "kind,offsets",
    [("down", [16, 8, 4, 2, 1]), ("xor", [1, 2, 4, 8, 16]), ("up", [1, 2, 4]), ("idx", [0, 5, 31])],
)
def test_trace_matches_rule_and_values_match_model(kind, offsets):
    x = (np.arange(32) * 3 + 1).astype(np.float32)
    out, rep = cw.run_shuffle_loop(kind, offsets, x=x, trace=True)
    steps = sh.steps_from_report(rep)
    rule = sh.steps_from_rule(kind, offsets)
    assert len(steps) == len(rule)
    for a, b, d in zip(steps, rule, offsets):
        assert np.array_equal(a.src, b.src) and a.mask == FULL
        assert a.label.startswith(f"{kind} {d} (line ")
    c = sh.coefficients(rule)[-1]
    assert np.array_equal(out, (c @ x.astype(np.int64)).astype(np.float32))


@pytest.mark.parametrize("kind,arrows", [("xor", 5 * 32), ("down", 16 + 24 + 28 + 30 + 31)])
def test_plot_draws_one_arrow_per_lane_that_moves(kind, arrows):
    import matplotlib.pyplot as plt

    ax = sh.draw_shuffles(sh.steps_from_rule(kind, [16, 8, 4, 2, 1]))
    assert len(ax.get_xticks()) == 6
    assert len(ax.texts) == arrows  # one annotation arrow per lane reading another lane
    plt.close(ax.figure)


# ---- the exercise checks must reject wrong kernels, for the right reason --------------------------


@cuda.jit
def _good_sum(x, out):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL, v, d)
        d //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def _early_return_sum(x, out):
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return
    v = x[i]
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL, v, d)
        d //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def _missing_step_sum(x, out):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    d = 16
    while d > 1:
        v += cuda.shfl_down_sync(FULL, v, d)
        d //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def _shared_memory_sum(x, out):
    s = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    s[t] = v
    cuda.syncthreads()
    if cuda.laneid == 0:
        acc = float32(0.0)
        for k in range(32):
            acc += s[t + k]
        out[i // 32] = acc


@cuda.jit
def _good_scan(x, out):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL, v, d)
        if cuda.laneid >= d:
            v += y
        d *= 2
    if i < x.shape[0]:
        out[i] = v


@cuda.jit
def _unguarded_scan(x, out):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    d = 1
    while d < 32:
        v += cuda.shfl_up_sync(FULL, v, d)
        d *= 2
    if i < x.shape[0]:
        out[i] = v


def test_check_warp_reduce_passes_a_correct_kernel_and_the_library_one():
    assert cw.check_warp_reduce(_good_sum).passed
    assert cw.check_warp_reduce(wk.warp_sum_down).passed


@pytest.mark.parametrize(
    "kernel,reason",
    [
        (_early_return_sum, "WarpMaskError"),
        (_missing_step_sum, "wrong at out["),  # which warp shows it depends on the random input
        (_shared_memory_sum, "syncthreads"),
    ],
)
def test_check_warp_reduce_rejects_with_the_reason(kernel, reason):
    res = cw.check_warp_reduce(kernel)
    assert not res.passed
    assert reason in res.message
    assert repr(res).startswith("❌")


def test_check_warp_reduce_rejects_a_block_reduction_for_its_barrier():
    res = cw.check_warp_reduce(wk.block_sum_shfl)
    assert not res.passed


def test_check_warp_scan():
    assert cw.check_warp_scan(_good_scan).passed
    bad = cw.check_warp_scan(_unguarded_scan)
    assert not bad.passed and "inclusive" in bad.message
    assert not cw.check_warp_scan(_good_sum).passed


def test_check_allreduce_loop():
    assert cw.check_allreduce_loop({"kind": "xor", "offsets": [16, 8, 4, 2, 1]}).passed
    assert cw.check_allreduce_loop({"kind": "xor", "offsets": [1, 2, 4, 8, 16]}).passed
    res = cw.check_allreduce_loop({"kind": "down", "offsets": [16, 8, 4, 2, 1]})
    assert not res.passed and "[0]" in res.message
    assert not cw.check_allreduce_loop({"kind": "xor", "offsets": [16, 8, 4, 2]}).passed
    assert not cw.check_allreduce_loop(None).passed
    assert not cw.check_allreduce_loop({"kind": "sideways", "offsets": [1]}).passed


def test_barriers_per_block_accepts_int_or_sequence():
    assert cw.barriers_per_block(types.SimpleNamespace(barriers=3)) == 3
    assert cw.barriers_per_block(types.SimpleNamespace(barriers=[0, 2, 1])) == 2


# ---- the widget writes its answer into the namespace ---------------------------------------------


def test_widget_writes_answer_and_checks_it():
    from gpulab.widgets import warp as ww

    ns = {}
    w = ww.explorer(ns, name="answer")
    assert ns["answer"] == {"kind": "down", "offsets": [16, 8, 4, 2, 1]}
    assert "lane(s) 0" in w.status.value
    w.kind.value = "xor"
    assert ns["answer"]["kind"] == "xor" and "every lane" in w.status.value
    w._check()
    assert "✅" in w.verdict.value
    w.offsets.value = "16 8 4 2 1 1"
    w._check()
    assert "❌" in w.verdict.value
    w.offsets.value = "sixteen"
    assert "offsets" in w.status.value and ns["answer"]["offsets"] == [16, 8, 4, 2, 1, 1]
    with pytest.raises(ValueError):
        ww.parse_offsets("40")


def _widget_tree(w):
    """Every widget inside ``w`` (VBox/HBox children, recursively)."""
    yield w
    for c in getattr(w, "children", ()):
        yield from _widget_tree(c)


def test_widget_draws_into_an_image_not_an_output_area():
    """An ipywidgets.Output receiving output makes nbclient send comm messages on the shell
    socket it is polling, which stalled chapter 08 until the cell timeout (gpulab.widgets.figure).
    The explorer must contain no Output, and its PNG must follow the chosen loop."""
    import ipywidgets as W

    from gpulab.widgets import warp as ww

    w = ww.explorer({})
    assert not [x for x in _widget_tree(w.box) if isinstance(x, W.Output)]
    first = w.plot.value
    assert isinstance(w.plot, W.Image) and first[:8] == b"\x89PNG\r\n\x1a\n"
    w.kind.value = "xor"
    assert w.plot.value[:4] == b"\x89PNG" and w.plot.value != first
    w.offsets.value = "nonsense"  # a bad entry keeps the last figure
    assert w.plot.value[:4] == b"\x89PNG"


def test_in_flight_is_littles_law_on_the_recorded_configuration():
    """Bytes in flight per SM: resident threads x loads x bytes (ceiling) and GB/s x ns / SMs
    (mean), for the per-block kernels at the largest size and the fastest grid-stride run."""
    from gpulab.plots import reduction_bench as rb

    red = {
        "environment": {"sm_count": 100},
        "block_sums": [
            {"n": 2**20, "grid": 4096, "block": 256, "tree": {"GBps": 500.0}, "shuffle": {"GBps": 800.0}},
            {"n": 2**10, "grid": 4, "block": 256, "tree": {"GBps": 1.0}, "shuffle": {"GBps": 1.0}},
        ],
        "device_sum": {
            "best": {
                "kernel": "grid-stride, 4 x 8-byte loads in flight",
                "grid": 400,
                "block": 512,
                "GBps": 4000.0,
            }
        },
    }
    lat = {
        "environment": {"l2_bytes": 2**20},
        "max_sm_clock_GHz": 2.0,
        "global": [{"working_set_bytes": 2**30, "ns": 400.0}, {"working_set_bytes": 2**31, "ns": 400.0}],
    }
    f = rb.in_flight(red, lat)
    assert f["latency_ns"] == 400.0 and f["n"] == 2**20
    sh_, gs = f["shuffle"], f["grid_stride"]
    assert sh_["resident_threads"] == 2048 and sh_["max_in_flight"] == 2048 * 4
    assert sh_["ceiling_GBps"] == pytest.approx(8192 * 100 / 400)  # B/ns = GB/s
    assert sh_["mean_in_flight"] == pytest.approx(800e9 * 400e-9 / 100)
    assert f["per_block_fill"] == pytest.approx(3200 / 8192)
    # 400 blocks on 100 SMs: 4 fit by the warp limit, but only 4 are launched per SM
    assert gs["kernel"] == "device_sum_pairs" and gs["resident_threads"] == 2048
    assert gs["max_in_flight"] == 2048 * 4 * 8 and f["gap"] == pytest.approx(5.0)
    assert f["need_for_best"] == pytest.approx(4000e9 * 400e-9 / 100)
    # registers measured on the GPU lower the residency: 64 registers x 512 threads -> 2 blocks
    g2 = rb.in_flight(red, lat, {"device_sum_pairs": (64, 0)})["grid_stride"]
    assert g2["resident_threads"] == 1024
    text = rb.describe_in_flight(f)
    assert "400 ns" in text and "device_sum_pairs" in text and "5.00x" in text
    with pytest.raises(ValueError, match="grid-stride"):
        rb.kernel_of("device_sum, one element per thread")


# ---- every kernel compiles for a real GPU's target (typing + lowering, no GPU needed) -----------


def test_kernels_type_check_for_the_cuda_target(monkeypatch):
    from numba import types as nt

    try:
        import numba.cuda.dispatcher as dispatcher
        from numba.cuda.compiler import compile_cuda
    except Exception as e:  # pragma: no cover - numba-cuda internals moved
        pytest.skip(f"numba-cuda internals not available: {e}")
    monkeypatch.setattr(
        dispatcher, "get_current_device", lambda: types.SimpleNamespace(compute_capability=(9, 0))
    )
    f32, i32, c64 = nt.float32[::1], nt.int32[::1], nt.complex64[::1]
    sigs = {
        "warp_sum_down": (f32, f32),
        "warp_allsum_xor": (f32, f32),
        "block_sum_tree": (f32, f32),
        "block_sum_shfl": (f32, f32),
        "device_sum": (f32, f32),
        "device_sum_pairs": (c64, f32),
        "warp_scan_kernel": (f32, f32, nt.int64),
        "block_scan": (f32, f32),
        "compact_positive": (f32, f32, i32),
        "shuffle_loop": (f32, i32, nt.int64, f32),
        "article_scan_fixed": (f32, f32),
    }
    for name, sig in sigs.items():
        cres = compile_cuda(getattr(wk, name).py_func, nt.void, sig, cc=(9, 0))
        ir = cres.library.get_llvm_str()
        assert "shfl" in ir or name == "block_sum_tree", name


# ---- the GPU benchmark: skips cleanly here; its results file is read back by the chapter -------


def test_benchmark_skips_without_a_gpu(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    if cuda.is_available():  # pragma: no cover - on a GPU machine this would really run it
        pytest.skip("a GPU is present: run benchmarks/reduction.py directly")
    root = Path(__file__).resolve().parents[1]
    target = tmp_path / "reduction.json"
    proc = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "reduction.py"), "--out", str(target)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "SKIP" in proc.stdout and not target.exists()


def test_results_reader_summarises_what_the_benchmark_writes(tmp_path):
    import json

    from gpulab.plots import reduction_bench as rb

    assert "No GPU measurements" in rb.summary(None) and rb.plot(None) is None
    row = lambda n, t, s: {
        "n": n,
        "bytes": 4 * n,
        "block": 256,
        "grid": n // 256,  # noqa: E731
        "tree": {"ms": 1, "GBps": t, "rel_err": 0},
        "shuffle": {"ms": 1, "GBps": s, "rel_err": 0},
        "shuffle_over_tree": s / t,
    }
    best = {"kernel": "grid-stride", "grid": 528, "block": 512, "ms": 0.25, "GBps": 4200.0, "rel_err": 1e-7}
    res = {
        "environment": {
            "gpu": "Test GPU",
            "when_utc": "2026-01-01T00:00:00Z",
            "nvidia_smi": "999.1",
            "numba-cuda": "0.30.4",
        },
        "block_sums": [row(2**16, 100.0, 150.0), row(2**18, 400.0, 500.0)],
        "method": "test",
    }
    res["block_sums"][0]["tree"]["launch_bound"] = True
    res.update(
        {
            "device_sum": {
                "n": 2**28,
                "bytes": 2**30,
                "best": best,
                "runs": [best],
                "libraries": {
                    "cupy": {"version": "13", "GBps": 4500.0},
                    "torch": {"error": "ModuleNotFoundError"},
                },
                "best_over_cupy": 4200 / 4500,
            }
        }
    )
    p = tmp_path / "reduction.json"
    p.write_text(json.dumps(res))
    text = rb.summary(rb.load(p))
    assert "Test GPU" in text and "2026-01-01" in text
    assert "93.3%" in text and "1.50x" in text and "torch: not measured" in text
    assert text.count("launch-bound") == 1
    ax = rb.plot(rb.load(p))
    assert len(ax.lines) == 3  # tree, shuffle, and the cupy line


def test_benchmark_logic_runs_end_to_end_on_the_simulator(monkeypatch, tmp_path):
    """Dry run of benchmarks/reduction.py with numba.cuda's device API replaced by numpy arrays
    and every launch sent to gpulab's simulator: checks the script's bookkeeping and its
    correctness checks (timings here are fake and not asserted)."""
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("bench_reduction", root / "benchmarks" / "reduction.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    class Dev(np.ndarray):
        def copy_to_host(self):
            return np.asarray(self).copy()

        def copy_to_device(self, ary):
            self[...] = ary

    class Event:
        def record(self):
            pass

        def synchronize(self):
            pass

    fake = types.SimpleNamespace(
        is_available=lambda: True,
        gpus=[0],
        synchronize=lambda: None,
        event=Event,
        event_elapsed_time=lambda a, b: 1.0,
        to_device=lambda h: np.array(h).view(Dev),
        device_array=lambda n, dt: np.zeros(n, dt).view(Dev),
        get_current_device=lambda: types.SimpleNamespace(
            name=b"simulated", MULTIPROCESSOR_COUNT=2, compute_capability=(9, 0)
        ),
        cudadrv=types.SimpleNamespace(
            driver=types.SimpleNamespace(driver=types.SimpleNamespace(get_version=lambda: (12, 8)))
        ),
    )
    monkeypatch.setattr(bench, "cuda", fake)

    class Launcher:
        def __init__(self, kernel):
            self.kernel = kernel

        def __getitem__(self, cfg):
            grid, block = cfg
            return lambda *a: gpulab.launch(
                self.kernel, grid, block, *[np.asarray(v) for v in a], backend="sim"
            )

    for name in ("block_sum_tree", "block_sum_shfl", "device_sum", "device_sum_pairs"):
        monkeypatch.setattr(wk, name, Launcher(getattr(wk, name)))
    monkeypatch.setattr(
        bench,
        "time_kernel",
        lambda fn, **kw: bench.time_launches(
            fn, Event, lambda a, b: 1.0, lambda: None, reps=1, inner=1, warmup=0
        ),
    )
    res = {"environment": bench.environment()}
    bench.bench_block_sums(res, [1024, 4096])
    bench.bench_device_sum(res, 8192)
    assert [r["n"] for r in res["block_sums"]] == [1024, 4096]
    for r in res["block_sums"]:
        assert r["tree"]["rel_err"] < 1e-6 and r["shuffle"]["rel_err"] < 1e-6
    d = res["device_sum"]
    assert d["best"] is not None and d["best"]["rel_err"] < 1e-5
    assert all(r["rel_err"] < 1e-5 for r in d["runs"]), d["runs"]
    assert {r["block"] for r in d["runs"]} >= {256, 512, 1024}
    assert all("launch_bound" in r and r["host_us_per_call"] > 0 for r in d["runs"])
    json.dumps(res)  # everything it stores is JSON-serialisable


_SLOTS = wk.MAX_WARPS_PER_BLOCK  # a global, so numba sees a constant shape
_block_reduce = wk.block_reduce_shfl


@cuda.jit
def _block_sum_int32(x, out):
    partial = cuda.shared.array(_SLOTS, int32)
    v = x[cuda.grid(1)]
    t = _block_reduce(v, partial)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = t


def test_block_reduce_shfl_sums_int32_exactly_and_types_as_an_integer():
    """One block sum for float32 and int32 (scan.py uses it): the zero takes the slot's type, so
    int32 sums stay integers for numba (no float round trip) and exact, with wraparound."""
    from numba.cuda import types as nt

    from gpulab.kernels import scan
    from gpulab.sim import typecheck

    assert not hasattr(scan, "block_sum_int")  # one home: gpulab.kernels.warp
    x = np.full(1024, 2**24 + 1, dtype=np.int32)  # float32 would round 2**24 + 1 to 2**24
    x[0] = 2**31 - 1  # the total wraps modulo 2**32, as int32 arithmetic does on a GPU
    out = np.zeros(1, np.int32)
    sim(_block_sum_int32, 1, 1024, x, out)
    assert out[0] == np.sum(x, dtype=np.int32)
    if typecheck.enabled():
        typecheck.check(_block_sum_int32.py_func, (nt.int32[::1], nt.int32[::1]))
        rts = [
            cr.signature.return_type
            for sig, cr in wk.block_reduce_shfl.overloads.items()
            if sig[0] == nt.int32
        ]
        assert rts and all(isinstance(t, nt.Integer) for t in rts), rts
