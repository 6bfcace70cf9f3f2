"""Races within a warp (racecheck's "(Warp Level Programming)" hazards) and races on global memory
inside one block (issue 22 point 2, issue 26 points 2 and 3). Each racy kernel has a fixed twin
that must run clean, so a rule that reports everything, or nothing, fails here."""

import numpy as np
import pytest
from numba import cuda, float32

import gpulab
from gpulab import errors

TPB = 3


@cuda.jit
def exchange(out, a):
    sm = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    sm[t] = a[t]
    out[t] = sm[31 - t]


@cuda.jit
def exchange_synced(out, a):
    sm = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    sm[t] = a[t]
    cuda.syncwarp()
    out[t] = sm[31 - t]


@cuda.jit
def exchange_syncthreads(out, a):
    sm = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    sm[t] = a[t]
    cuda.syncthreads()
    out[t] = sm[31 - t]


def test_lanes_exchanging_through_shared_memory_need_syncwarp():
    a = np.arange(32, dtype=np.float32)
    with pytest.raises(errors.WarpLevelRace) as exc:
        gpulab.launch(exchange, 1, 32, np.zeros(32, np.float32), a, backend="sim")
    text = str(exc.value)
    assert "(Warp Level Programming) Potential RAW hazard" in text
    # both lines: the read (the error's own line) and the other lane's write
    assert "out[t] = sm[31 - t]" in text and "sm[t] = a[t]" in text
    assert exc.value.line is not None
    for fixed in (exchange_synced, exchange_syncthreads):
        out = np.zeros(32, np.float32)
        gpulab.launch(fixed, 1, 32, out, a, backend="sim")
        assert np.array_equal(out, a[::-1])


def _tiled_matmul(after_products):
    """GPU-Puzzles' one-warp tiled matmul (3x3 blocks); ``after_products`` is what follows the
    products of a tile before the next tile overwrites the shared arrays."""
    src = f"""
def mm(out, a, b, size):
    a_sh = cuda.shared.array((TPB, TPB), float32)
    b_sh = cuda.shared.array((TPB, TPB), float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    li = cuda.threadIdx.x
    lj = cuda.threadIdx.y
    acc = 0.0
    for k0 in range(0, size, TPB):
        a_sh[li, lj] = 0
        b_sh[li, lj] = 0
        if i < size and k0 + lj < size:
            a_sh[li, lj] = a[i, k0 + lj]
        if j < size and k0 + li < size:
            b_sh[li, lj] = b[k0 + li, j]
        cuda.syncthreads()
        for k in range(TPB):
            acc += a_sh[li, k] * b_sh[k, lj]
        {after_products}
    if i < size and j < size:
        out[i, j] = acc
"""
    import linecache

    name = f"<tiled matmul: {after_products}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"cuda": cuda, "float32": float32, "TPB": TPB}
    exec(compile(src, name, "exec"), ns)
    return cuda.jit(ns["mm"])


@pytest.mark.parametrize("barrier", ["cuda.syncthreads()", "cuda.syncwarp()"])
def test_one_warp_tiled_matmul_with_the_barrier_is_clean(barrier):
    n = 8
    rng = np.random.default_rng(1)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    out = np.zeros((n, n), np.float32)
    gpulab.launch(_tiled_matmul(barrier), (3, 3), (TPB, TPB), out, a, b, n, backend="sim")
    assert np.allclose(out, a @ b, rtol=1e-5)


def test_one_warp_tiled_matmul_missing_the_barrier_after_its_products():
    n = 8
    a = np.ones((n, n), np.float32)
    with pytest.raises(errors.WarpLevelRace, match="Potential WAR hazard") as exc:
        gpulab.launch(_tiled_matmul("pass"), (3, 3), (TPB, TPB), np.zeros((n, n), np.float32), a, a, n)
    assert "acc += a_sh[li, k] * b_sh[k, lj]" in str(exc.value)


@cuda.jit
def warp_tail(out, a):
    """The classic warp-synchronous tail of a shared-memory reduction, without syncwarp."""
    sm = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    sm[t] = a[t] + a[t + 64]
    sm[t + 32] = a[t + 32] + a[t + 96]
    cuda.syncthreads()
    if t < 32:
        sm[t] += sm[t + 32]
        sm[t] += sm[t + 16]
        sm[t] += sm[t + 8]
        sm[t] += sm[t + 4]
        sm[t] += sm[t + 2]
        sm[t] += sm[t + 1]
    if t == 0:
        out[0] = sm[0]


@cuda.jit
def warp_tail_synced(out, a):
    """The same tail with each step's reads and writes separated by syncwarp."""
    sm = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    sm[t] = a[t] + a[t + 64]
    sm[t + 32] = a[t + 32] + a[t + 96]
    cuda.syncthreads()
    s = 32
    while s > 0:
        v = sm[t] + sm[t + s] if t < s else float32(0)
        cuda.syncwarp()
        if t < s:
            sm[t] = v
        cuda.syncwarp()
        s //= 2
    if t == 0:
        out[0] = sm[0]


def test_warp_synchronous_reduction_tail_without_syncwarp():
    a = np.arange(128, dtype=np.float32)
    with pytest.raises(errors.WarpLevelRace, match="Warp Level Programming"):
        gpulab.launch(warp_tail, 1, 32, np.zeros(1, np.float32), a)
    out = np.zeros(1, np.float32)
    gpulab.launch(warp_tail_synced, 1, 32, out, a)
    assert out[0] == a.sum()


def test_partial_mask_syncwarp_and_same_lane_accesses_are_not_races():
    @cuda.jit
    def own_slot(out, a):
        sm = cuda.shared.array(32, float32)
        t = cuda.threadIdx.x
        sm[t] = a[t]
        sm[t] = sm[t] * 2  # the same lane reads and writes its own element
        out[t] = sm[t]

    a = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    gpulab.launch(own_slot, 1, 32, out, a)
    assert np.array_equal(out, 2 * a)


def test_same_value_writes_by_several_warps_stay_benign():
    """racecheck reports 0 hazards when several warps write one value to one element."""

    @cuda.jit
    def flag(out):
        sm = cuda.shared.array(1, float32)
        sm[0] = 1.0
        cuda.syncthreads()
        out[cuda.threadIdx.x] = sm[0]

    out = np.zeros(64, np.float32)
    rep = gpulab.launch(flag, 1, 64, out)
    assert (out == 1).all() and sum(rep.benign_races.values()) > 0


# -- global memory inside one block (issue 26, point 2) -------------------------------------------
@cuda.jit
def zero_then_add(out, a):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t == 0:
        out[b] = 0
    cuda.atomic.add(out, b, a[b * cuda.blockDim.x + t])


@cuda.jit
def zero_barrier_add(out, a):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t == 0:
        out[b] = 0
    cuda.syncthreads()
    cuda.atomic.add(out, b, a[b * cuda.blockDim.x + t])


@cuda.jit
def add_then_read(out, a, res):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cuda.atomic.add(out, b, a[b * cuda.blockDim.x + t])
    if t == 0:
        res[b] = out[b]


@cuda.jit
def add_barrier_read(out, a, res):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cuda.atomic.add(out, b, a[b * cuda.blockDim.x + t])
    cuda.syncthreads()
    if t == 0:
        res[b] = out[b]


@cuda.jit
def publish_with_fence(data, flag, out):
    t = cuda.threadIdx.x
    if t == 0:
        data[0] = 42.0
        cuda.threadfence_block()
        cuda.atomic.exch(flag, 0, 1)
    if t == 32:
        while cuda.atomic.add(flag, 0, 0) == 0:
            pass
        out[0] = data[0]


@pytest.mark.parametrize("blocks", [1, 4])
def test_zeroing_store_racing_the_blocks_atomics(blocks):
    a = np.ones(blocks * 64, np.float32)
    with pytest.raises(errors.BlockGlobalRace, match="a plain store and an atomic") as exc:
        gpulab.launch(zero_then_add, blocks, 64, np.zeros(blocks, np.float32), a)
    assert "out[b] = 0" in str(exc.value) and "cuda.atomic.add(out, b" in str(exc.value)
    out = np.full(blocks, np.nan, np.float32)
    gpulab.launch(zero_barrier_add, blocks, 64, out, a)
    assert (out == 64).all()


def test_reading_an_atomic_total_before_the_barrier():
    a = np.ones(128, np.float32)
    with pytest.raises(errors.BlockGlobalRace, match="an atomic and a load"):
        gpulab.launch(add_then_read, 2, 64, np.zeros(2, np.float32), a, np.zeros(2, np.float32))
    res = np.zeros(2, np.float32)
    gpulab.launch(add_barrier_read, 2, 64, np.zeros(2, np.float32), a, res)
    assert (res == 64).all()


def test_in_place_neighbour_update_inside_a_block_is_a_race():
    @cuda.jit
    def shift_add(a):
        i = cuda.grid(1)
        if i < a.size - 1:
            a[i] = a[i] + a[i + 1]

    with pytest.raises(errors.BlockGlobalRace, match="a load and a store"):
        gpulab.launch(shift_add, 1, 64, np.arange(64.0))


def test_fence_and_flag_inside_a_block_orders_the_store():
    out = np.zeros(1)
    gpulab.launch(publish_with_fence, 1, 64, np.zeros(1), np.zeros(1, np.int32), out)
    assert out[0] == 42.0


def test_each_thread_its_own_element_is_clean():
    @cuda.jit
    def axpy(out, a, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = out[i] * 0.5 + a * x[i]

    out = np.ones(300)
    gpulab.launch(axpy, 3, 128, out, 2.0, np.arange(300.0))
    assert np.allclose(out, 0.5 + 2 * np.arange(300.0))


def test_hw07_q1_check_fails_the_global_race_submission_with_the_simulators_message(tmp_path):
    """exercises/hw07_08_reduction/submissions_round3.py's block_sum_global_race, run through
    the check hw07 q1 grades with."""
    import runpy
    from pathlib import Path

    from gpulab.checks.reduction import check_block_sum

    subs = Path(__file__).resolve().parents[1] / "exercises/hw07_08_reduction/submissions_round3.py"
    GLOBAL_RACE = runpy.run_path(str(subs))["GLOBAL_RACE"]

    module = tmp_path / "submission.py"
    module.write_text("from numba import cuda, float32\nFULL = 0xFFFFFFFF\n" + GLOBAL_RACE)
    res = check_block_sum(runpy.run_path(str(module))["block_sum"], seed=0)
    assert not res.passed
    assert "Global-memory race inside a block" in res.message


def test_hw07_q5_check_fails_the_warp_synchronous_tail_submission(tmp_path):
    """submissions_round3.py's tree_warp_synchronous_tail (issue 26 point 3), through the check
    hw07 q5 grades with: the simulator's warp-level race is the reason."""
    import runpy
    from pathlib import Path

    from gpulab.checks.tree_reduction import check_tree_reduce

    subs = Path(__file__).resolve().parents[1] / "exercises/hw07_08_reduction/submissions_round3.py"
    source = runpy.run_path(str(subs))["TREE_WARP_TAIL"]
    module = tmp_path / "submission.py"
    module.write_text("from numba import cuda, float32\n" + source)
    res = check_tree_reduce(runpy.run_path(str(module))["tree_sum"], seed=0)
    assert not res.passed
    assert "Warp Level Programming" in res.message
