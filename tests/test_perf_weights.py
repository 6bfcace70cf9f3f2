"""gpulab.perf.weights: the static look at a kernel's source (features, unrolling, ILP)."""

import linecache

import numpy as np
import pytest

from gpulab.perf import weights as W
from gpulab.perf.sample import choose_blocks

SRC = """\
def k(out, a, n):
    i = cuda.grid(1)
    x = a[i] * 2.0 + 1.0
    y = a[i + n] * 3.0
    for t in range(TILE):
        x += 1.0
    for t in range(n):
        y += 1.0
    s = x / y
    out[i] = s
"""


@pytest.fixture
def infos():
    name = "<perf_weights_test>"
    linecache.cache[name] = (len(SRC), None, SRC.splitlines(True), name)
    return name, W.analyse(name, {"TILE": 16})


def test_multiply_add_is_one_fused_operation(infos):
    _, info = infos
    f = info[3].features  # x = a[i] * 2.0 + 1.0
    assert f["ops"] == 1 and f["const"] == 2 and f["index"] == 1
    assert info[9].features["divmod"] == 1  # s = x / y


def test_loop_over_a_module_constant_is_unrolled(infos):
    _, info = infos
    assert info[5].body_line is None and info[5].features["branch"] == 0
    assert info[7].body_line == 8 and info[7].features["branch"] == 1


def test_independent_statements_overlap(infos):
    name, info = infos
    lat = {ln: 10.0 for ln in info}
    W.dependency_factors(name, info, lat)
    # x and y (lines 3, 4) depend on i only and overlap, as do the two loops (5, 7);
    # the critical path i -> x -> loop -> s -> out is 5 of the 7 statements
    assert info[3].dep_factor == pytest.approx(5 / 7)


def test_fit_keeps_weights_non_negative_and_recovers_exact_data():
    rng = np.random.default_rng(1)
    w_true = np.array([W.PRIOR[k] for k in W.FEATURES]) * rng.uniform(0.5, 1.5, len(W.FEATURES))
    A = rng.uniform(0, 10, (40, len(W.FEATURES)))
    b = A @ w_true
    w = W.fit(A / b[:, None], np.ones(len(b)), strength=1e-6)
    assert (w >= 0).all()
    assert w == pytest.approx(w_true, rel=0.02)


def test_block_samples_are_disjoint_halves_without_the_tail_block():
    a, b = choose_blocks(1000, 16, 0, 2), choose_blocks(1000, 16, 1, 2)
    assert len(a) == len(b) == 16 and not set(a) & set(b)
    assert max(a.max(), b.max()) < 999
    assert (choose_blocks(1000, 16, 0, 2) == a).all()  # seeded


def test_load_chains_count_dependent_loads_only():
    """Loads of one statement are in flight together; a load whose index is loaded waits."""
    src = "def k(out, x, y, idx, n):\n    out[0] = x[idx[n]] + y[n] * x[n]\n    out[1] = x[n] + x.shape[0]\n    n += 1\n"
    name = "<perf_load_depth_test>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    info = W.analyse(name)
    assert info[2].load_depth == 2 and info[3].load_depth == 1 and info[4].load_depth == 0


def test_memory_stages_combine_as_a_pipeline_not_a_sum():
    from gpulab.perf import gpus, model

    g = gpus.H200
    one = model.combine({"dram": 10e-6, "l2": 0.0, "l1": 0.0, "issue": 0.0}, g)
    three = model.combine({"dram": 10e-6, "l2": 10e-6, "l1": 10e-6, "issue": 0.0}, g)
    assert one == pytest.approx(three) == pytest.approx(g.launch_s + 10e-6)
    both = model.combine({"dram": 10e-6, "issue": 10e-6}, g)
    assert both == pytest.approx(g.launch_s + 10e-6 * 2 ** (1 / g.overlap_p))
