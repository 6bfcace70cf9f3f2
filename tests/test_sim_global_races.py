"""Races on global memory between blocks of one launch are detected (gpulab/sim/globalrace.py):
the simulator runs blocks in lockstep, so it must not let an order-dependent kernel pass."""

import numpy as np
import pytest
from numba import cuda

import gpulab
from gpulab import errors


def run(kernel, grid, block, *args, **kw):
    return gpulab.launch(kernel, grid, block, *args, backend="sim", **kw)


@cuda.jit
def zero_then_accumulate(total, x):
    i = cuda.grid(1)
    if i == 0:
        total[0] = 0.0  # races with the other blocks' atomics
    cuda.atomic.add(total, 0, x[i])


@cuda.jit
def accumulate(total, x):
    i = cuda.grid(1)
    cuda.atomic.add(total, 0, x[i])


@cuda.jit
def shift_in_place(a):
    i = cuda.grid(1)
    if i + 1 < a.shape[0]:
        v = a[i + 1]  # element 64 is read by block 1... and written by block 2
        a[i] = v * 2


@cuda.jit
def every_block_writes_its_id(out):
    out[0] = cuda.blockIdx.x


@cuda.jit
def every_block_writes_one(out):
    out[0] = 1


@cuda.jit
def publish_then_last_block_sums(partial, count, result):
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        partial[b] = b + 1.0
        cuda.threadfence()
        ticket = cuda.atomic.add(count, 0, 1)
        if ticket == cuda.gridDim.x - 1:
            s = 0.0
            for k in range(cuda.gridDim.x):
                s += partial[k]
            result[0] = s


@cuda.jit
def read_neighbour_result_without_fence(partial, result):
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        partial[b] = b + 1.0
        if b > 0:
            result[b] = partial[b - 1]


def test_zeroing_store_racing_atomics_of_other_blocks():
    x = np.ones(128, np.float32)
    with pytest.raises(errors.GlobalMemoryRace) as e:
        run(zero_then_accumulate, 4, 32, np.full(1, 5.0, np.float32), x)
    msg = str(e.value)
    assert "plain store and an atomic" in msg and "`total[0]`" in msg and "block (" in msg
    assert e.value.line == zero_then_accumulate.py_func.__code__.co_firstlineno + 5


def test_zeroing_store_of_zero_still_races_with_atomics():
    """Storing the value already there is no excuse when atomics change it in between."""
    with pytest.raises(errors.GlobalMemoryRace, match="atomic"):
        run(zero_then_accumulate, 4, 32, np.zeros(1, np.float32), np.ones(128, np.float32))


def test_atomics_from_all_blocks_are_fine():
    total = np.zeros(1, np.float32)
    rep = run(accumulate, 4, 32, total, np.ones(128, np.float32))
    assert total[0] == 128 and rep.benign_races == {}


def test_load_of_an_element_another_block_stores():
    a = np.arange(200, dtype=np.float32)
    with pytest.raises(errors.GlobalMemoryRace, match="a load and a store|a store and a load") as e:
        run(shift_in_place, 4, 64, a)
    assert "`a[" in str(e.value)


def test_conflicting_stores_race_same_value_stores_are_benign():
    with pytest.raises(errors.GlobalMemoryRace, match="different values"):
        run(every_block_writes_its_id, 3, 32, np.zeros(1, np.int64))
    out = np.zeros(1, np.int64)
    rep = run(every_block_writes_one, 3, 32, out)
    assert out[0] == 1 and sum(rep.benign_races.values()) > 0


def test_fence_then_flag_publishes_a_blocks_result():
    partial, count, result = np.zeros(4, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32)
    run(publish_then_last_block_sums, 4, 32, partial, count, result)
    assert result[0] == 1 + 2 + 3 + 4


def test_reading_another_blocks_result_without_a_fence_races():
    with pytest.raises(errors.GlobalMemoryRace, match="`partial\\[0\\]`"):
        run(read_neighbour_result_without_fence, 3, 32, np.zeros(3, np.float32), np.zeros(3, np.float32))


def test_one_block_has_nobody_to_race():
    out = np.zeros(1, np.int64)
    run(every_block_writes_its_id, 1, 32, out)
    assert out[0] == 0
