"""check_copy_efficiency: a homework copy graded by predicted DRAM-roofline fraction on an H200,
relative to the book's copy; behaviour first, on the simulator."""

import pytest
from numba import cuda

from gpulab.checks.roofline import check_copy_efficiency, copy_fraction
from gpulab.kernels import memory as km

N = 2**22  # big enough for several waves on 132 SMs, quick to predict


@cuda.jit
def transposed_copy(out, a):
    """A correct copy whose warps read and write 32 elements apart (uncoalesced)."""
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + (t % 8) * 32 + t // 8
    if i < out.shape[0]:
        out[i] = a[i]


@cuda.jit
def unguarded_copy(out, a):
    i = cuda.grid(1)
    out[i] = a[i]


@cuda.jit
def shifted_copy(out, a):
    i = cuda.grid(1)
    if i + 1 < out.shape[0]:
        out[i + 1] = a[i]


@cuda.jit
def small_only_copy(out, a):
    """Right on small arrays, does nothing on large ones: must not pass on a tiny time."""
    i = cuda.grid(1)
    if out.shape[0] <= 65536 and i < out.shape[0]:
        out[i] = a[i]


def test_book_copy_passes():
    r = check_copy_efficiency(km.copy, n=N, seed=0)
    assert r, r.message
    assert "DRAM roofline" in r.message


def test_grid_stride_copy_passes_with_a_fixed_grid():
    r = check_copy_efficiency(km.copy_grid_stride, grid=132 * 8, n=N, seed=1)
    assert r, r.message


def test_uncoalesced_copy_fails_on_efficiency_not_correctness():
    r = check_copy_efficiency(transposed_copy, n=N, seed=2)
    assert not r
    assert "roofline" in r.message and "coalescing" in r.message
    ref, _ = copy_fraction(km.copy, N)
    mine, p = copy_fraction(transposed_copy, N)
    assert mine < 0.8 * ref
    assert p.limiter_key != "dram"


def test_missing_guard_fails_on_the_simulator():
    r = check_copy_efficiency(unguarded_copy, n=N, seed=3)
    assert not r
    assert "failed" in r.message and "out of bounds" in r.message.lower()


def test_wrong_output_names_the_first_bad_element():
    r = check_copy_efficiency(shifted_copy, n=N, seed=4)
    assert not r
    assert "wrong output" in r.message and "first at [0]" in r.message


def test_fresh_sizes_each_call():
    seen = {check_copy_efficiency(unguarded_copy, n=N).message.split(",")[0] for _ in range(4)}
    assert len(seen) > 1


@pytest.mark.parametrize("block", [0, 100, 2048, "256"])
def test_bad_block_is_named(block):
    r = check_copy_efficiency(km.copy, block=block, n=N)
    assert not r and "block" in r.message


def test_fraction_matches_bytes_over_bandwidth_and_time():
    frac, p = copy_fraction(km.copy, N)
    assert frac == pytest.approx(8 * N / p.dram_bytes_per_s / p.time_s)
    assert 0 < frac < 1


def test_copy_that_skips_large_arrays_fails_on_bytes_moved():
    r = check_copy_efficiency(small_only_copy, n=N, seed=5)
    assert not r
    assert "every element" in r.message
