"""Same-value writes are not races (compute-sanitizer racecheck on an H200: 0 hazards for every
warp writing one value to one shared element, 1025 for a missing barrier); conflicting values
are. Benign cases are counted per line in ``report.benign_races``."""

import numpy as np
import pytest
from numba import cuda, float32, int32

import gpulab
from gpulab import errors

TABLE = 16


def run(kernel, grid, block, *args, **kw):
    return gpulab.launch(kernel, grid, block, *args, backend="sim", **kw)


@cuda.jit
def every_warp_fills_the_table(out):
    tab = cuda.shared.array(TABLE, int32)
    t = cuda.threadIdx.x
    for k in range(TABLE):  # all warps write tab[k] = k * k, no barrier between them
        tab[k] = k * k
    cuda.syncthreads()
    out[cuda.grid(1)] = tab[t % TABLE]


@cuda.jit
def every_warp_writes_its_own_id(out):
    tab = cuda.shared.array(1, int32)
    w = cuda.threadIdx.x // 32
    tab[0] = w  # warps disagree: a real write-after-write race
    cuda.syncthreads()
    out[cuda.grid(1)] = tab[0]


@cuda.jit
def flag_set_twice(out):
    flag = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        flag[0] = 0
    cuda.syncthreads()
    if t % 32 == 0:
        flag[0] = 1  # one lane of every warp, one instruction per warp
    cuda.syncthreads()
    out[t] = flag[0]


@cuda.jit
def missing_barrier(out, a):
    sh = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    v = sh[127 - t]  # reads what another warp writes: no barrier
    out[t] = v


def test_same_value_table_fill_is_benign_and_reported():
    out = np.zeros(128, np.int32)
    rep = run(every_warp_fills_the_table, 1, 128, out)
    assert np.array_equal(out, (np.arange(128) % TABLE) ** 2)
    line = every_warp_fills_the_table.py_func.__code__.co_firstlineno + 5
    assert set(rep.benign_races) == {line}
    # per element: 4 warps x 32 lanes write it; all but the first lane are same-value conflicts
    assert rep.benign_races[line] > 0


def test_one_lane_per_warp_same_value_is_benign():
    out = np.zeros(96, np.int32)
    rep = run(flag_set_twice, 1, 96, out)
    assert (out == 1).all() and sum(rep.benign_races.values()) == 2


def test_conflicting_values_are_a_race():
    with pytest.raises(errors.SharedMemoryRace, match="write-after-write.*`tab\\[0\\]`") as e:
        run(every_warp_writes_its_own_id, 1, 64, np.zeros(64, np.int32))
    assert "different value" in str(e.value)


def test_missing_barrier_is_still_a_race():
    with pytest.raises(errors.SharedMemoryRace, match="read-after-write"):
        run(missing_barrier, 1, 128, np.zeros(128, np.float32), np.arange(128, dtype=np.float32))


def test_no_benign_races_in_a_clean_kernel():
    @cuda.jit
    def clean(out):
        sh = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        sh[t] = t
        cuda.syncthreads()
        out[t] = sh[63 - t]

    rep = run(clean, 1, 64, np.zeros(64, np.float32))
    assert rep.benign_races == {}
