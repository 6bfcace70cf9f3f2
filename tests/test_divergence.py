"""Divergence: the closed forms, the simulator's measurements against them, the chapter-03
pictures, explorer and checks."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda

import gpulab
from gpulab.checks import divergence as chk
from gpulab.kernels import divergence as kd
from gpulab.models import divergence as md
from gpulab.plots import masks
from gpulab.widgets.divergence import explorer


def test_seed_examples():
    assert md.efficiency(md.lanes(lambda l: l < 17)) == 0.5  # 17/15: both paths run
    assert md.efficiency(md.lanes(lambda l: l % 2 == 0)) == 0.5
    assert md.efficiency(list(range(32))) == pytest.approx(1 / 32)  # 32-way
    assert md.efficiency([True] * 32) == 1.0
    assert md.warp_time(md.lanes(lambda l: l < 17), {True: 3.0, False: 5.0}) == 8.0
    assert md.warp_time(list(range(32)), 2.0) == 64.0
    assert md.warp_time([None] * 32, 2.0) == 0.0
    # unequal paths: 31 lanes on a 1-instruction path, 1 lane on a 10-instruction one
    e = md.efficiency([0] * 31 + [1], {0: 1, 1: 10})
    assert e == pytest.approx((31 + 10) / (32 * 11))
    assert md.efficiency(md.lanes(lambda l: l < 16), common=2) == pytest.approx((64 + 32) / (32 * 4))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=200))
def test_loop_efficiency_bounds_and_sorting(trips):
    e = md.loop_efficiency(trips)
    assert 0 <= e <= 1
    # longest first fills whole warps with the long items and leaves the short ones for a
    # partial last warp: never worse. Ascending order is as good only without a partial warp
    # (otherwise the longest items land in the padded last warp).
    assert md.loop_efficiency(sorted(trips, reverse=True)) >= e - 1e-12
    if len(trips) % 32 == 0:
        assert md.loop_efficiency(sorted(trips)) >= e - 1e-12
    assert md.loop_iterations_issued(sorted(trips, reverse=True)) <= md.loop_iterations_issued(trips)
    if len(set(trips)) == 1 and trips[0] > 0 and len(trips) % 32 == 0:
        assert e == 1.0


@pytest.mark.parametrize("label", list(kd.CONDITIONS))
def test_simulator_per_line_efficiency_matches_lane_counts(label):
    cond, kind = kd.CONDITIONS[label]
    r = kd.run_branch(cond, kind)
    x, n = r["x"], len(r["x"])
    i = np.arange(n)
    lane, warp = i % 32, i // 32
    took = np.array(
        [eval(cond, {"lane": lane[k], "warp": warp[k], "i": k, "n": n, "x": x}) for k in range(n)], bool
    )
    assert r["threads_then"] == took.sum()
    for path, key in ((took, "then_efficiency"), (~took, "else_efficiency")):
        warps_taking = [w for w in range(n // 32) if path[w * 32 : (w + 1) * 32].any()]
        if not warps_taking:
            assert r[key] is None
            continue
        want = path.sum() / (32 * len(warps_taking))
        assert r[key] == pytest.approx(want)


@pytest.mark.parametrize("p", [1, 2, 4, 8, 16, 32])
def test_paths_kernel_body_efficiency_is_one_over_p(p):
    x = np.ones(64, np.float32)
    out = np.zeros(64, np.float32)
    rep = gpulab.launch(kd.paths, 1, 64, out, x, p)
    assert rep.line_of("v = v * 2.0").efficiency == pytest.approx(1 / p)
    assert rep.line_of("v = v * 2.0").inst == 2 * p  # P passes per warp, 2 warps
    lane = np.arange(64) % 32
    assert np.allclose(out, 2.0 + lane % p)


def test_loop_kernel_matches_model_and_sorting_helps():
    rng = np.random.default_rng(1)
    trips = np.minimum(rng.geometric(0.1, 256), 60).astype(np.int32)
    for order in (np.arange(256), np.argsort(trips)):
        order = order.astype(np.int32)
        out = np.zeros(256, np.float32)
        rep = gpulab.launch(kd.varying_loop, 2, 128, out, trips, order)
        assert np.array_equal(out, trips)
        body = rep.line_of("acc += 1.0")
        assert body.efficiency == pytest.approx(md.loop_efficiency(trips[order]))
        assert body.inst == md.loop_iterations_issued(trips[order])


def test_mask_timeline_draws_the_recorded_masks():
    r = kd.run_branch("lane < 17")
    mat = masks.mask_matrix(r["report"].mask_history)
    assert mat.shape[0] == 32
    last_two = mat[:, -2:]
    assert last_two[:, 0].sum() == 17 and last_two[:, 1].sum() == 15
    fig = masks.mask_timeline(r["report"])
    assert "88%" in fig.axes[0].get_title()  # 7 full + 17 + 15 lanes over 8 steps
    rows = [kd.run_branch(c, k) for c, k in list(kd.CONDITIONS.values())[:3]]
    assert masks.efficiency_bars(rows).axes
    data = {
        "device": "X",
        "rows": [
            {"iters": 64, "mode": m, "paths": p, "ratio_to_1_path": p if m == "divergent" else 1.0}
            for m in ("divergent", "uniform")
            for p in (1, 2, 4)
        ],
    }
    assert len(masks.paths_timing(data).axes[0].lines) == 3


def test_branch_kernel_rejects_non_conditions():
    for bad in ("import os", "__import__('os')", "", "x; y"):
        with pytest.raises(ValueError):
            kd.branch_kernel(bad)


def test_explorer_and_uniform_split_check():
    ns = {}
    ex = explorer(ns, draw=False)
    assert ns["answer"]["condition"] == "lane < 17"
    assert not chk.check_uniform_split(ns["answer"]).passed
    ex.choice.value = "whole warps (warp % 2 == 0)"
    assert chk.check_uniform_split(ns["answer"]).passed
    ex.choice.value = "no divergence (True)"
    assert "quarter" in chk.check_uniform_split(ns["answer"]).message
    ex.choice.value = "your own"
    ex.custom.value = "i < 64"
    assert chk.check_uniform_split(ns["answer"]).passed
    ex.custom.value = "lane <"
    assert "does not run" in chk.check_uniform_split(ns["answer"]).message
    assert not chk.check_uniform_split(None).passed


@cuda.jit
def shade_uniform(out, x):
    t = cuda.grid(1)
    n = x.shape[0]
    half = (n + 1) // 2
    if t < n:
        if t < half:
            i = 2 * t
            v = x[i]
            for k in range(8):
                v = v * 0.5 + 1.0
        else:
            i = 2 * (t - half) + 1
            v = x[i]
            for k in range(8):
                v = v * 2.0 - 1.0
        out[i] = v


@cuda.jit
def shade_wrong(out, x):
    t = cuda.grid(1)
    if t < x.shape[0]:
        v = x[t]
        for k in range(8):
            v = v * 0.5 + 1.0
        out[t] = v


def test_warp_uniform_check():
    ok = chk.check_warp_uniform(shade_uniform)
    assert ok.passed and "original kernel" in ok.message
    slow = chk.check_warp_uniform(kd.shade)
    assert not slow.passed and "efficiency" in slow.message
    wrong = chk.check_warp_uniform(shade_wrong)
    assert not wrong.passed and "expected" in wrong.message


def _shade_halves(guarded):
    """The exercise's solution with the usual slip, half = n // 2: on an odd n the even elements
    are one more than the odd ones, so the last odd thread reads x[n] (or, behind a guard,
    element n - 1 is never written)."""

    @cuda.jit
    def shade_half_slip(out, x):
        t = cuda.grid(1)
        n = x.shape[0]
        half = n // 2
        if t < n:
            if t < half:
                i = 2 * t
            else:
                i = 2 * (t - half) + 1
            if guarded and i >= n:
                return
            v = x[i]
            if t < half:
                for k in range(8):
                    v = v * 0.5 + 1.0
            else:
                for k in range(8):
                    v = v * 2.0 - 1.0
            out[i] = v

    return shade_half_slip


def test_warp_uniform_check_fails_the_half_split_slip():
    odd = [n for n in chk.SHADE_SIZES if n % 2]
    assert odd, "an odd size is what catches half = n // 2"
    n = odd[0]
    res = chk.check_warp_uniform(_shade_halves(guarded=False), seed=0)
    assert not res.passed
    assert f"n={n}" in res.message and f"index {n} is out of bounds" in res.message, res.message
    assert "(n + 1) // 2 even elements" in res.message
    res = chk.check_warp_uniform(_shade_halves(guarded=True), seed=0)
    assert not res.passed and f"out[{n - 1}] = nan" in res.message, res.message
    assert "never written" in res.message


def test_ch03_exercise_names_the_checked_sizes_and_limit():
    import json
    from pathlib import Path

    nb = Path(__file__).resolve().parents[1] / "chapters" / "03_divergence.ipynb"
    text = " ".join(
        "".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "markdown"
    )
    (ex,) = [t for t in text.split("```{exercise}") if "ex-ch03-uniform" in t[:200]]
    ex = " ".join(ex.split())
    sizes = [f"{n:,}" for n in chk.SHADE_SIZES]
    assert f"{', '.join(sizes[:-1])} and {sizes[-1]} elements" in ex
    assert f"more than {chk.MAX_WORK_RATIO:g} times" in ex


def test_warp_uniform_message_names_the_limit():
    ok = chk.check_warp_uniform(shade_uniform, seed=0)
    assert ok.passed and f"limit {chk.MAX_WORK_RATIO:.2f}x" in ok.message, ok.message


def test_path_timing_description():
    assert "no GPU timing" in md.describe_path_timings(None)
    data = {
        "device": "X",
        "n_threads": 64,
        "block": 32,
        "rows": [
            {
                "iters": 64,
                "mode": m,
                "paths": p,
                "ms_median": 0.5 * p,
                "ratio_to_1_path": float(p if m == "divergent" else 1),
            }
            for m in ("divergent", "uniform")
            for p in (1, 32)
        ],
    }
    text = md.describe_path_timings(data)
    assert "P=32: x32.0" in text and "P=32: x1.0" in text


def test_explorers_draw_without_error():
    from gpulab.widgets.launch_shape import explorer as shape_explorer

    ns = {}
    ex = explorer(ns, draw=True)
    ex.warp.value = 3
    assert ns["answer"]["condition"] == "lane < 17"
    sx = shape_explorer(ns, name="shape", draw=True, width=12, height=9, block=(4, 8))
    sx.bx.value = 8
    assert ns["shape"]["block"] == (8, 8)


def _timings(equal: bool):
    rows = []
    for iters in (64, 256):
        for m in ("divergent", "uniform"):
            for p in (1, 2, 32):
                r = {
                    "iters": iters,
                    "mode": m,
                    "paths": p,
                    "ms_median": (0.1 * p + 0.02) if m == "divergent" else 0.12,
                }
                if equal:
                    r["sum_Tp_prediction"] = p if m == "divergent" else 1
                rows.append(r)
    data = {"rows": rows}
    if equal:
        data["tests_per_path"] = 5
    return data


def test_path_comparison_predicts_P_only_for_equal_paths():
    cmp = md.path_comparison(_timings(equal=True))
    assert set(cmp) == {64, 256}
    c = cmp[64]
    assert c["paths"] == 32 and c["predicted"] == 32
    assert c["divergent"] == pytest.approx((0.1 * 32 + 0.02) / 0.12)
    assert c["uniform"] == pytest.approx(1.0)
    assert c["ncu"] is None  # no Nsight Compute block recorded
    data = _timings(equal=True)
    data["ncu"] = {
        "rows": [
            {
                "iters": 64,
                "mode": "divergent",
                "paths": p,
                "gpu__time_duration.sum": 100.0 * p,
                "smsp__inst_executed.sum": 10.0 + 30 * p,
                "smsp__thread_inst_executed_per_inst_executed.ratio": 32.0 / p,
                "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio": 30.0 / p,
            }
            for p in (1, 32)
        ]
    }
    n = md.path_comparison(data)[64]["ncu"]
    assert n["time"] == pytest.approx(32) and n["inst"] == pytest.approx(970 / 40)
    assert (n["active_1"], n["pred_on_1"], n["active_P"]) == (32.0, 30.0, 1.0)
    assert md.path_comparison(data)[256]["ncu"] is None  # profiled at 64 iterations only
    # a file whose paths are not declared equal gets no P-fold prediction
    assert md.path_comparison(_timings(equal=False))[64]["predicted"] is None
    assert not md.equal_length_paths(_timings(equal=False))
    with pytest.raises(ValueError, match="divergence_paths"):
        md.path_comparison({})
