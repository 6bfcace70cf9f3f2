"""Tests for gpulab.models.comms: alpha-beta all-reduce costs and the scaling model."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gpulab.models import comms as C
from gpulab.models import amdahl as A


def test_ring_formula_by_hand():
    # 4 ranks, 1 MB, alpha 10 us, 100 GB/s: 6 steps of alpha + 2*3/4 MB at 100 GB/s
    t = C.ring_allreduce(4, 1e6, 10e-6, 100e9)
    assert t == pytest.approx(6 * 10e-6 + 1.5e6 / 100e9)
    assert C.ring_allreduce(1, 1e9, 1.0, 1.0) == 0.0


def test_tree_formula_by_hand():
    t = C.tree_allreduce(8, 1e6, 10e-6, 100e9)
    assert t == pytest.approx(2 * 3 * (10e-6 + 1e6 / 100e9))
    # non-power of two rounds the depth up
    assert C.tree_allreduce(5, 0, 1.0, 1.0) == pytest.approx(2 * 3)


@given(st.integers(2, 4096))
def test_ring_bandwidth_term_approaches_2n_over_B(p):
    n, B = 1e9, 1e11
    t = C.ring_allreduce(p, n, 0.0, B)
    assert n / B <= t < 2 * n / B
    assert C.bus_bandwidth(p, n, t) == pytest.approx(B)  # bus bandwidth recovers the link


def test_small_messages_favour_tree_large_favour_ring():
    alpha, B, p = 5e-6, 450e9, 64
    assert C.tree_allreduce(p, 1e3, alpha, B) < C.ring_allreduce(p, 1e3, alpha, B)
    assert C.ring_allreduce(p, 1e9, alpha, B) < C.tree_allreduce(p, 1e9, alpha, B)
    for n in (1e3, 1e9):
        assert C.allreduce(p, n, alpha, B, "best") == min(
            C.allreduce(p, n, alpha, B, "ring"), C.allreduce(p, n, alpha, B, "tree")
        )
    with pytest.raises(ValueError):
        C.allreduce(p, 1, alpha, B, "butterfly")


def test_link_figures_are_per_direction_and_sourced():
    nv4, pcie5 = C.LINKS["NVLink 4 (H100/H200 SXM)"], C.LINKS["PCIe 5.0 x16"]
    assert nv4.per_direction == pytest.approx(450e9)
    assert 62e9 < pcie5.per_direction < 64e9
    assert 7 < nv4.per_direction / pcie5.per_direction < 7.3  # "about 7x PCIe Gen5"
    for link in C.LINKS.values():
        assert link.source and link.quoted
        assert link.beta == pytest.approx(1 / link.per_direction)


def test_no_communication_reduces_to_amdahl():
    m = C.StepModel(serial_s=0.05, compute_s=0.95, grad_bytes=0, alpha=0, bandwidth=1.0)
    ps = np.array([1, 2, 16, 100])
    s = C.scaling(m, ps)["speedup"]
    assert np.allclose(s, A.speedup(0.95, ps))


def test_strong_scaling_peaks_then_falls():
    m = C.StepModel(
        serial_s=1e-3,
        compute_s=0.2,
        grad_bytes=1e9,
        alpha=20e-6,
        bandwidth=C.LINKS["PCIe 5.0 x16"].per_direction,
    )
    p = C.best_p(m, 4096)
    s = C.scaling(m, [1, p, 4096])["speedup"]
    assert 1 < p < 4096 and s[1] > s[2] and s[1] > s[0]
    # a faster link moves the peak out and raises it
    fast = C.StepModel(**{**m.__dict__, "bandwidth": C.LINKS["NVLink 4 (H100/H200 SXM)"].per_direction})
    assert C.scaling(fast, [C.best_p(fast)])["speedup"][0] > s[1]


def test_weak_scaling_is_gustafson_without_comms():
    m = C.StepModel(serial_s=0.05, compute_s=0.95, grad_bytes=0, alpha=0, bandwidth=1.0)
    r = C.scaling(m, [1, 8, 64], mode="weak")
    # per step, the serial share of the scaled run is 0.05, so scaled speedup = Gustafson
    assert np.allclose(r["speedup"], A.gustafson(0.05, np.array([1, 8, 64])))


def test_overlap_hides_communication_up_to_compute():
    base = dict(serial_s=0.0, compute_s=1.0, grad_bytes=1e9, alpha=0.0, bandwidth=1e9)
    t0 = C.step_time(C.StepModel(**base, overlap=0.0), 4, "weak")
    t1 = C.step_time(C.StepModel(**base, overlap=1.0), 4, "weak")
    comm = C.ring_allreduce(4, 1e9, 0.0, 1e9)
    assert t0 == pytest.approx(1.0 + comm)
    assert t1 == pytest.approx(max(1.0, comm))  # can hide at most as much as there is compute
    with pytest.raises(ValueError):
        C.step_time(C.StepModel(**base, overlap=2.0), 2)
