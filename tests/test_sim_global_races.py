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


@cuda.jit
def count_then_read_the_total(count, out):
    cuda.atomic.add(count, 0, 1)
    if cuda.grid(1) == 0:
        out[0] = count[0]  # other blocks may not have added yet


@cuda.jit
def read_then_other_blocks_add(count, out):
    if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
        out[0] = count[0]  # before or after the other blocks' atomics, depending on order
    if cuda.blockIdx.x > 0:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def atomic_sums_then_last_block_reads(sums, count, result):
    b = cuda.blockIdx.x
    cuda.atomic.add(sums, cuda.threadIdx.x % 4, 1.0)
    cuda.threadfence()
    if cuda.threadIdx.x == 0:
        ticket = cuda.atomic.add(count, 0, 1)
        if ticket == cuda.gridDim.x - 1:
            result[0] = sums[0] + sums[1] + sums[2] + sums[3] + b * 0


@cuda.jit
def atomic_read_then_plain_read(flag, out):
    v = cuda.atomic.add(flag, 0, 0)  # an atomic read: changes nothing
    out[cuda.grid(1)] = flag[0] + v


def test_reading_a_counter_other_blocks_increment_races():
    """The classic mistake: the simulator runs every block's atomic first, so out[0] would be
    the full count here and the kernel would look right; on a GPU it is any value from 1 up."""
    with pytest.raises(errors.GlobalMemoryRace, match="an atomic and a load") as e:
        run(count_then_read_the_total, 4, 32, np.zeros(1, np.int32), np.zeros(1, np.int32))
    assert "`count[0]`" in str(e.value)


def test_a_load_before_other_blocks_atomics_races():
    with pytest.raises(errors.GlobalMemoryRace, match="a load and an atomic"):
        run(read_then_other_blocks_add, 3, 32, np.zeros(1, np.int32), np.zeros(1, np.int32))


def test_atomics_published_by_a_fence_may_be_read_by_the_last_block():
    sums, count, result = np.zeros(4, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32)
    run(atomic_sums_then_last_block_reads, 3, 32, sums, count, result)
    assert result[0] == 3 * 32


def test_an_atomic_that_changes_nothing_is_not_a_write():
    flag, out = np.full(1, 7, np.int32), np.zeros(64, np.int32)
    run(atomic_read_then_plain_read, 2, 32, flag, out)
    assert (out == 14).all()
