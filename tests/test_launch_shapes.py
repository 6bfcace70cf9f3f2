"""Chapter 02 tools: launch arithmetic, what the simulator records per thread, the pictures,
the explorer, and the checks (right kernels pass, wrong ones fail with the reason)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda

from gpulab.checks import simt as chk
from gpulab.checks.kernels import Case, run_cases
from gpulab.kernels import indexing as ix
from gpulab.models import launch as lm
from gpulab.plots import launch as lp
from gpulab.widgets.launch_shape import explorer


def test_summary_counts():
    s = lm.summary(100, 48)
    assert s["grid"] == (3,) and s["threads"] == 144 and s["idle_threads"] == 44
    assert s["warps_per_block"] == 2 and s["empty_lanes_per_block"] == 16
    assert lm.summary((100, 60), (8, 4))["idle_threads"] == 240
    assert not lm.summary((10, 10), (64, 32))["valid"]
    with pytest.raises(ValueError):
        lm.grid_for((10, 10), 8)


def test_fewest_idle_is_a_minimum():
    best, shapes = lm.fewest_idle((100, 60))
    assert best == 240 and (8, 4) in shapes
    for b in lm.block_shapes():
        assert lm.summary((100, 60), b)["idle_threads"] >= best
    best, shapes = lm.fewest_idle((64, 64))
    assert best == 0 and (32, 32) in shapes


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 300), st.integers(1, 130))
def test_fold_recorded_by_the_simulator_matches_the_arithmetic(n, block):
    r = ix.fold_1d(n, block)
    s = lm.summary(n, block)
    st_ = r["state"]
    assert (st_ == 1).sum() == n
    assert (st_ == 2).sum() == s["idle_threads"]
    assert (st_ == 0).sum() == s["empty_lanes_per_block"] * s["blocks"]
    assert st_.shape == (s["grid"][0], s["warps_per_block"] * 32)


def test_owners_2d_records_blocks_warps_and_guard():
    r = ix.owners_2d(10, 6, (4, 4))
    assert r["grid"] == (3, 2) and r["block_id"].shape == (8, 12)
    assert r["block_id"][5, 9] == 5 and r["block_id"][0, 4] == 1
    assert r["inside"].sum() == 60 and r["inside"][6, 0] == 0 and r["inside"][0, 10] == 0
    r = ix.owners_2d(8, 8, (8, 8))  # 64 threads: rows 0-3 warp 0, rows 4-7 warp 1
    assert (r["warp"][:4] == 0).all() and (r["warp"][4:] == 1).all()
    assert r["lane"][4, 0] == 0 and r["lane"][3, 7] == 31


def test_pictures_draw():
    fig = lp.fold(100, 48)
    assert "3 blocks" in fig.axes[0].get_title()
    fig = lp.owners(10, 6, (4, 4))
    assert "36 idle threads" in fig.axes[0].get_title()  # 12 x 8 launched, 60 inside


def test_explorer_and_block_shape_check():
    ns = {}
    ex = explorer(ns, draw=False, width=100, height=60, block=(8, 8))
    assert ns["answer"]["idle_threads"] == lm.summary((100, 60), (8, 8))["idle_threads"]
    # the explorer's starting setting is "not answered yet" (a neutral note, still a fail)
    first = chk.check_block_shape(ns["answer"])
    assert not first.passed and "starting setting" in first.message
    ex.bx.value, ex.by.value = 16, 4  # moved: now judged as an answer
    ex.bx.value, ex.by.value = 8, 8
    assert "fewer" in chk.check_block_shape(ns["answer"]).message
    ex.bx.value, ex.by.value = 8, 4
    assert chk.check_block_shape(ns["answer"]).passed
    ex.bx.value = 12
    assert "multiple of 32" in chk.check_block_shape(ns["answer"]).message
    ex.bx.value, ex.by.value = 64, 32
    assert "1024" in chk.check_block_shape(ns["answer"]).message
    ex.width.value = 50
    assert "set the image" in chk.check_block_shape(ns["answer"]).message
    assert not chk.check_block_shape(None).passed


@cuda.jit
def invert_ok(out, img, k):
    x, y = cuda.grid(2)
    if x < img.shape[1] and y < img.shape[0]:
        for c in range(3):
            out[y, x, c] = (1.0 - img[y, x, c] - 0.5) * k + 0.5
        out[y, x, 3] = img[y, x, 3]


@cuda.jit
def invert_no_guard(out, img, k):
    x, y = cuda.grid(2)
    for c in range(3):
        out[y, x, c] = (1.0 - img[y, x, c] - 0.5) * k + 0.5
    out[y, x, 3] = img[y, x, 3]


@cuda.jit
def invert_swapped(out, img, k):
    y, x = cuda.grid(2)
    if x < img.shape[1] and y < img.shape[0]:
        for c in range(3):
            out[y, x, c] = (1.0 - img[y, x, c] - 0.5) * k + 0.5
        out[y, x, 3] = img[y, x, 3]


@cuda.jit
def invert_no_contrast(out, img, k):
    x, y = cuda.grid(2)
    if x < img.shape[1] and y < img.shape[0]:
        for c in range(3):
            out[y, x, c] = 1.0 - img[y, x, c]
        out[y, x, 3] = img[y, x, 3]


def test_invert_check():
    assert chk.check_invert(invert_ok).passed
    assert chk.check_invert(invert_ok, block=(16, 16)).passed
    r = chk.check_invert(invert_no_guard)
    assert not r.passed and "out-of-bounds" in r.message and "OutOfBounds" in r.message
    r = chk.check_invert(invert_swapped)
    assert not r.passed and "x the column" in r.message
    r = chk.check_invert(invert_no_contrast)
    assert not r.passed and "contrast" in r.message


@cuda.jit
def add_one(out, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        if i % 2 == 0:
            out[i] = x[i] + 1.0
        else:
            out[i] = x[i] + 1.0


def test_generic_run_cases_efficiency_and_errors():
    x = np.arange(64, dtype=np.float32)
    case = Case("64", 1, 64, (np.full(64, np.nan, np.float32), x), {0: x + 1})
    ok, reps = run_cases(add_one, [case])
    assert ok.passed and len(reps) == 1
    bad, _ = run_cases(add_one, [case], min_efficiency=0.95)
    assert not bad.passed and "efficiency" in bad.message
    wrong = Case("64", 1, 64, (np.full(64, np.nan, np.float32), x), {0: x + 2})
    res, _ = run_cases(add_one, [wrong], arg_names=("out", "x"))
    assert not res.passed and "out[0] = 1" in res.message and "64 of 64" in res.message
    res, _ = run_cases(add_one, [Case("short", 1, 64, (np.zeros(8, np.float32), x), {})])
    assert not res.passed and "out-of-bounds" in res.message
