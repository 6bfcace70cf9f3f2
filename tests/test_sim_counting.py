"""The counting rules against hand-computed cases (the Nsight Compute rules in metrics.py)."""

import numpy as np
import pytest
from numba import cuda, float32, float64

import gpulab
from gpulab import metrics


def run(kernel, grid, block, *args, **kw):
    return gpulab.launch(kernel, grid, block, *args, backend="sim", **kw)


@cuda.jit
def strided_copy(out, a, stride):
    i = cuda.grid(1)
    out[i] = a[i * stride]


@pytest.mark.parametrize("stride,sectors", [(1, 4), (2, 8), (4, 16), (8, 32), (16, 32), (33, 32)])
def test_sectors_per_request_for_strided_float32(stride, sectors):
    a = np.zeros(64 * stride, np.float32)
    out = np.zeros(64, np.float32)
    rep = run(strided_copy, 2, 32, out, a, stride)
    assert rep.sectors_per_request("ld") == sectors
    assert rep.sectors_per_request("st") == 4
    assert rep.metrics[metrics.GLOBAL_REQUESTS["ld"]] == 2


@cuda.jit
def offset_copy(out, a, off):
    i = cuda.grid(1)
    out[i] = a[i + off]


@pytest.mark.parametrize("off,sectors", [(0, 4), (1, 5), (8, 4), (7, 5)])
def test_misaligned_float32_warp_touches_one_more_sector(off, sectors):
    a = np.zeros(128, np.float32)
    rep = run(offset_copy, 1, 32, np.zeros(32, np.float32), a, off)
    assert rep.sectors_per_request("ld") == sectors


def test_float64_consecutive_is_8_sectors_and_broadcast_is_1():
    @cuda.jit
    def k(out, a):
        i = cuda.grid(1)
        out[i] = a[i] + a[0]

    rep = run(k, 1, 32, np.zeros(32), np.zeros(32))
    # two load instructions: a[i] (8 sectors) and a[0] (1 sector)
    assert rep.metrics[metrics.GLOBAL_SECTORS["ld"]] == 9
    assert rep.metrics[metrics.GLOBAL_REQUESTS["ld"]] == 2


def test_inactive_lanes_do_not_count_and_empty_warps_make_no_request():
    @cuda.jit
    def k(out, a):
        i = cuda.grid(1)
        if i < 8:
            out[i] = a[i]

    rep = run(k, 1, 64, np.zeros(64, np.float32), np.zeros(64, np.float32))
    assert rep.metrics[metrics.GLOBAL_REQUESTS["ld"]] == 1
    assert rep.metrics[metrics.GLOBAL_SECTORS["ld"]] == 1


@cuda.jit
def shared_stride(out, stride):
    sh = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    for k in range(t, 1024, 32):  # fill the whole array: reads below reach all of it
        sh[k] = k
    cuda.syncthreads()
    out[t] = sh[(t * stride) % 1024]


@pytest.mark.parametrize(
    "stride,ways", [(1, 1), (2, 2), (3, 1), (4, 4), (8, 8), (16, 16), (32, 32), (33, 1), (0, 1)]
)
def test_shared_bank_conflicts_for_strided_reads(stride, ways):
    rep = run(shared_stride, 1, 32, np.zeros(32, np.float32), stride)
    assert rep.wavefronts_per_instruction("ld") == ways
    assert rep.bank_conflicts("ld") == ways - 1
    assert rep.bank_conflicts("st") == 0


def test_shared_float64_needs_two_wavefronts_without_conflict():
    @cuda.jit
    def k(out):
        sh = cuda.shared.array(64, float64)
        t = cuda.threadIdx.x
        sh[t] = t
        cuda.syncthreads()
        out[t] = sh[t]

    rep = run(k, 1, 32, np.zeros(32))
    assert rep.wavefronts_per_instruction("ld") == 2
    assert rep.bank_conflicts() == 0


TILE = 32
TILE_PAD = 33


@cuda.jit
def transpose_tile(out, a, pad):
    tile = cuda.shared.array((TILE, TILE_PAD), float32)
    x, y = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    if pad:
        tile[ty, tx] = a[y, x]
        cuda.syncthreads()
        out[y, x] = tile[tx, ty]
    else:
        tile[ty, tx * 33 // 33] = a[y, x]
        cuda.syncthreads()
        out[y, x] = tile[tx, ty]


def test_padded_transpose_is_conflict_free():
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros_like(a)
    rep = run(transpose_tile, 1, (32, 32), out, a, True)
    assert np.array_equal(out, a.T)
    assert rep.bank_conflicts() == 0


def test_unpadded_column_read_is_32_way():
    @cuda.jit
    def naive(out, a):
        tile = cuda.shared.array((32, 32), float32)
        x, y = cuda.grid(2)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        tile[ty, tx] = a[y, x]
        cuda.syncthreads()
        out[y, x] = tile[tx, ty]

    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros_like(a)
    rep = run(naive, 1, (32, 32), out, a)
    assert np.array_equal(out, a.T)
    assert rep.wavefronts_per_instruction("ld") == 32
    assert rep.bank_conflicts("ld") == 32 * 31


def test_warp_efficiency_odd_even_and_per_line():
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i % 2 == 0:
            out[i] = 1.0
        else:
            out[i] = 2.0

    rep = run(k, 1, 64, np.zeros(64))
    assert rep.line_of("out[i] = 1.0").efficiency == 0.5
    assert rep.line_of("if i % 2").efficiency == 1.0
    m = rep.metrics
    assert m[metrics.THREADS_PER_INST] == pytest.approx(
        m[metrics.THREAD_INST_EXECUTED] / m[metrics.INST_EXECUTED]
    )


def test_mask_history_of_traced_warp():
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i % 32 < 17:
            out[i] = 1.0
        else:
            out[i] = 2.0

    rep = run(k, 2, 64, np.zeros(128), trace=(1, 1))
    masks = [m for _, m in rep.mask_history]
    assert (1 << 17) - 1 in masks and 0xFFFFFFFF ^ ((1 << 17) - 1) in masks
    assert rep.traced_warp == (1, 1)


def test_accesses_record_addresses_of_traced_warp():
    rep = run(strided_copy, 1, 32, np.zeros(32, np.float32), np.zeros(64, np.float32), 2)
    ld = [a for a in rep.accesses if a["op"] == "ld"][0]
    assert ld["space"] == "global" and ld["sectors"] == 8
    steps = np.diff(ld["addresses"])
    assert (steps == 8).all()


def test_metric_names_are_nsight_compute_names():
    rep = run(strided_copy, 1, 32, np.zeros(32, np.float32), np.zeros(32, np.float32), 1)
    for name in (
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "smsp__sass_inst_executed_op_shared_ld.sum",
        "smsp__thread_inst_executed_per_inst_executed.ratio",
    ):
        assert name in rep.metrics


def test_rules_directly():
    lanes = np.arange(32)
    active = np.ones((1, 32), bool)
    assert metrics.global_sectors((lanes * 4)[None], 4, active)[0] == 4
    assert metrics.global_sectors((lanes * 128)[None], 4, active)[0] == 32
    half = active.copy()
    half[0, 16:] = False
    assert metrics.global_sectors((lanes * 4)[None], 4, half)[0] == 2
    w, ideal = metrics.shared_wavefronts((lanes * 8)[None], 4, active)  # stride 2 words
    assert (w[0], ideal[0]) == (2, 1)
    w, ideal = metrics.shared_wavefronts(np.zeros((1, 32), np.int64), 4, active)  # broadcast
    assert (w[0], ideal[0]) == (1, 1)
    w, ideal = metrics.shared_wavefronts((lanes * 16)[None], 16, active)  # 16-byte vectors
    assert (w[0], ideal[0]) == (4, 4)
