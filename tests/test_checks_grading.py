"""The exercise checks (gpulab.checks) give right answers in every form full marks and wrong ones
nothing: float32 arithmetic and numpy integers pass; serial lanes, blended work, hand-typed
widget figures, conflicted stores, oversized grids and hard-coded sizes fail; expected values are
never in reach of the reader's function while it runs (issue 14, items 3, 4, 8, 9, 10, 12)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numba import cuda, float32

from gpulab.checks import amdahl, divergence, formats, latency, memory, occupancy, patterns, shared
from gpulab.checks import vector, warp
from gpulab.models import amdahl as A

FULL = 0xFFFFFFFF
F = np.float32


# ---- item 4: tolerances that fit the question, messages with enough digits ------------------


def speedup_f32(f, p):
    f, p = F(f), F(p)
    return F(1) / ((F(1) - f) + f / p)


def test_float32_amdahl_passes_and_a_near_miss_shows_its_digits():
    assert speedup_f32(0.95, 100) != A.speedup(0.95, 100)  # float32 really differs
    assert amdahl.check_speedup(speedup_f32), amdahl.check_speedup(speedup_f32).message
    miss = amdahl.check_speedup(lambda f, p: A.speedup(f, p) * (1 + 1e-3))
    assert not miss
    want, got = A.speedup(0.95, 100), A.speedup(0.95, 100) * 1.001
    assert f"{want:.10g}" in miss.message and f"{got:.10g}" in miss.message, miss.message
    assert "Gustafson" in amdahl.check_speedup(lambda f, p: f * p + 1 - f).message


def test_float32_estimate_f_passes():
    def est(p1, t1, p2, t2):
        p1, t1, p2, t2 = F(p1), F(t1), F(p2), F(t2)
        par = (t1 - t2) / (F(1) / p1 - F(1) / p2)
        ser = t1 - par / p1
        return par / (ser + par)

    for seed in range(5):
        assert amdahl.check_estimate_f(est, seed=seed), amdahl.check_estimate_f(est, seed=seed).message
    assert not amdahl.check_estimate_f(lambda p1, t1, p2, t2: A.f_from_speedup(t1 / t2, p2 / p1))


# ---- item 3: any integral value --------------------------------------------------------------


def test_numpy_integers_are_grid_sizes_floats_and_bools_are_not():
    assert vector.check_blocks_for(lambda n, b: np.int64(-(-n // b)))
    assert vector.check_blocks_for(lambda n, b: np.int32(-(-n // b)))
    assert not vector.check_blocks_for(lambda n, b: float(-(-n // b)))
    assert vector.is_integral(np.uint16(3)) and not vector.is_integral(True)


# ---- item 12: nothing to peek at while the reader's function runs ---------------------------

_ORACLE_NAMES = ("want", "expected", "lane_of", "idx_of", "reference")


def _peek():
    """What a hostile submission does: walk up the stack for an expected value."""
    fr = sys._getframe(1)
    while fr is not None:
        for name in _ORACLE_NAMES:
            if name in fr.f_locals:
                return fr.f_locals[name]
        fr = fr.f_back
    return None


@pytest.mark.parametrize(
    "check,fn",
    [
        (amdahl.check_speedup, lambda f, p: _peek()),
        (amdahl.check_estimate_f, lambda p1, t1, p2, t2: _peek()),
        (vector.check_blocks_for, lambda n, b: _peek()),
        (occupancy.check_register_limit, lambda t, r: _peek()),
        (latency.check_warps_needed, lambda bw, L, n, b: _peek()),
    ],
)
def test_a_function_that_reads_the_callers_frames_finds_no_expected_value(check, fn):
    res = check(fn)
    assert not res, res.message


def test_c_owner_table_is_built_after_every_call():
    seen = []

    def c_owner(row, col):
        fr = sys._getframe(1)
        seen.append(any(k in fr.f_locals for k in ("lane_of", "idx_of", "want")))
        return _peek() or (0, 0)

    assert not formats.check_c_owner(c_owner)
    assert seen and not any(seen)


# ---- item 8: warp reduce and scan are graded on shuffles ------------------------------------


@cuda.jit
def reduce_down(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.shape[0] else float32(0.0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def reduce_xor_unrolled(x, out):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    v += cuda.shfl_xor_sync(FULL, v, 16)
    v += cuda.shfl_xor_sync(FULL, v, 8)
    v += cuda.shfl_xor_sync(FULL, v, 4)
    v += cuda.shfl_xor_sync(FULL, v, 2)
    v += cuda.shfl_xor_sync(FULL, v, 1)
    if cuda.threadIdx.x % 32 == 0:
        out[i // 32] = v


@cuda.jit
def reduce_lane0_serial(x, out):
    i = cuda.grid(1)
    if cuda.laneid == 0:
        s = float32(0.0)
        for k in range(32):
            if i + k < x.shape[0]:
                s += x[i + k]
        out[i // 32] = s


@cuda.jit
def reduce_shuffles_then_serial(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.shape[0] else float32(0.0)
    for d in (16, 8, 4, 2, 1):
        cuda.shfl_down_sync(FULL, v, d)  # shuffles for show; the sum is serial
    if cuda.laneid == 0:
        s = float32(0.0)
        for k in range(32):
            if i + k < x.shape[0]:
                s += x[i + k]
        out[i // 32] = s


@cuda.jit
def reduce_32_broadcasts(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.shape[0] else float32(0.0)
    s = float32(0.0)
    for k in range(32):
        s += cuda.shfl_sync(FULL, v, k)
    if cuda.laneid == 0:
        out[i // 32] = s


@cuda.jit
def scan_up(x, out):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    v = x[i] if i < x.shape[0] else float32(0.0)
    d = 1
    while d < 32:
        u = cuda.shfl_up_sync(FULL, v, d)
        if lane >= d:
            v += u
        d *= 2
    if i < out.shape[0]:
        out[i] = v


@cuda.jit
def scan_lane0_serial(x, out):
    i = cuda.grid(1)
    if cuda.laneid == 0:
        s = float32(0.0)
        for k in range(32):
            if i + k < x.shape[0]:
                s += x[i + k]
                out[i + k] = s


def test_warp_reduce_requires_a_shuffle_tree():
    for k in (reduce_down, reduce_xor_unrolled):
        res = warp.check_warp_reduce(k)
        assert res, res.message
    serial = warp.check_warp_reduce(reduce_lane0_serial)
    assert not serial and "shuffle steps per warp" in serial.message, serial.message
    show = warp.check_warp_reduce(reduce_shuffles_then_serial)
    assert not show and "efficiency" in show.message, show.message
    bcast = warp.check_warp_reduce(reduce_32_broadcasts)
    assert not bcast and "32 shuffles per warp" in bcast.message, bcast.message


def test_warp_scan_requires_shuffles():
    assert warp.check_warp_scan(scan_up)
    serial = warp.check_warp_scan(scan_lane0_serial)
    assert not serial and "shuffle" in serial.message, serial.message


# ---- item 9: chapter checks that passed wrong answers ----------------------------------------


@cuda.jit
def shade_blend(out, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        a = x[i]
        b = x[i]
        for k in range(8):
            a = a * 0.5 + 1.0
            b = b * 2.0 - 1.0
        p = i % 2
        out[i] = a * (1 - p) + b * p


@cuda.jit
def shade_by_warp(out, x):
    """Another correct style: even warps take even elements, odd warps odd ones."""
    t = cuda.grid(1)
    n = x.shape[0]
    w = t // 32
    lane = t % 32
    i = 2 * (32 * (w // 2) + lane) + (w % 2)
    if i < n:
        v = x[i]
        if w % 2 == 0:
            for k in range(8):
                v = v * 0.5 + 1.0
        else:
            for k in range(8):
                v = v * 2.0 - 1.0
        out[i] = v


def test_warp_uniform_caps_the_work():
    blend = divergence.check_warp_uniform(shade_blend)
    assert not blend and "both recurrences" in blend.message, blend.message


def test_warp_uniform_by_warp_parity_passes():
    res = divergence.check_warp_uniform(shade_by_warp)
    assert res, res.message


def test_uniform_split_runs_the_condition_again():
    typed = {
        "condition": "lane < 16",
        "data": "random",
        "efficiency": 1.0,
        "threads_then": 64,
        "threads_else": 64,
    }
    res = divergence.check_uniform_split(typed)
    assert not res and "splits some warp" in res.message
    assert divergence.check_uniform_split(dict(typed, condition="warp % 2 == 0"))
    assert not divergence.check_uniform_split(dict(typed, data="upside down"))


TILE = 32
PADDED = 33


@cuda.jit
def row_sums_transposed_store(out, a):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    tile[tx, ty] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0  # 32-way store conflict
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(TILE):
            s += tile[k, tx]  # conflict-free read
        if row0 + tx < a.shape[0]:
            out[row0 + tx] = s


@cuda.jit
def row_sums_padded(out, a):
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    tile[ty, tx] = a[row0 + ty, tx] if row0 + ty < a.shape[0] else 0.0
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(TILE):
            s += tile[tx, k]
        if row0 + tx < a.shape[0]:
            out[row0 + tx] = s


def test_row_sums_checks_stores_too():
    assert shared.check_row_sums(row_sums_padded)
    bad = shared.check_row_sums(row_sums_transposed_store)
    assert not bad and "store" in bad.message, bad.message


@cuda.jit
def invert_guarded(out, img, contrast):
    x, y = cuda.grid(2)
    if x >= img.shape[1] or y >= img.shape[0]:
        return
    for ch in range(3):
        out[y, x, ch] = (1.0 - img[y, x, ch] - 0.5) * contrast + 0.5
    out[y, x, 3] = img[y, x, 3]


def test_invert_requires_the_minimal_grid():
    assert patterns.check_invert(invert_guarded, lambda w, h: ((w + 7) // 8, (h + 7) // 8))
    assert patterns.check_invert(invert_guarded, lambda w, h: (np.int64(-(-w // 8)), -(-h // 8)))
    big = patterns.check_invert(invert_guarded, lambda w, h: (w // 8 + 1, h // 8 + 1))
    assert not big and "fewer blocks" in big.message, big.message


# ---- item 10: several sizes, fresh inputs on every run ----------------------------------------


@cuda.jit
def scale_guard_64(out, a, factor):
    c, r = cuda.grid(2)
    if r < 64 and c < 64:  # hard-coded size
        out[r, c] = factor * a[r, c]


@cuda.jit
def scale_ok(out, a, factor):
    c, r = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = factor * a[r, c]


@cuda.jit
def row_sums_guard_64(out, a):
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    tile[ty, tx] = a[row0 + ty, tx] if row0 + ty < 64 else 0.0  # hard-coded size
    cuda.syncthreads()
    if ty == 0:
        s = float32(0.0)
        for k in range(TILE):
            s += tile[tx, k]
        if row0 + tx < 64:
            out[row0 + tx] = s


def test_row_sums_catches_a_hard_coded_size_every_time():
    for _ in range(5):
        assert not shared.check_row_sums(row_sums_guard_64)


def test_scale_catches_a_hard_coded_size():
    assert memory.check_scale(scale_ok)
    assert not memory.check_scale(scale_guard_64)


def test_checks_draw_new_inputs_on_every_call():
    seen = []

    def est(p1, t1, p2, t2):
        seen.append((p1, t1, p2, t2))
        par = (t1 - t2) / (1 / p1 - 1 / p2)
        return par / (t1 - par / p1 + par)

    amdahl.check_estimate_f(est)
    first = list(seen)
    seen.clear()
    amdahl.check_estimate_f(est)
    assert first[1:] != seen[1:]
    args = []
    import gpulab

    real = gpulab.launch

    def spy(kernel, grid, block, *a, **k):
        args.append(a[1].shape)
        return real(kernel, grid, block, *a, **k)

    gpulab.launch = spy
    try:
        for _ in range(3):
            memory.check_scale(scale_ok)
    finally:
        gpulab.launch = real
    runs = [tuple(args[k : k + 3]) for k in (0, 3, 6)]
    assert len(args) == 9 and len(set(runs)) > 1, runs  # sizes change between runs


def _shortening(right):
    """A hostile function: answer the first case right (``right`` is the model), then empty the
    check's list of cases through the caller's frame, so that the loop would end there; every
    later call answers 0."""
    calls = []

    def fn(*args):
        calls.append(args)
        if len(calls) > 1:
            return 0
        fr = sys._getframe(1)
        while fr is not None:
            cases = fr.f_locals.get("cases")
            if hasattr(cases, "clear"):
                cases.clear()
            fr = fr.f_back
        return right(*args)

    return fn


def _warps_needed(bw, L, n_sm, b):
    from gpulab.models import latency as lat

    return lat.warps_needed(bw, L, n_sm, b)


def _register_blocks(t, r):
    from gpulab.models import occupancy as occ

    return occ.occupancy(t, r, 0, "sm_90").limits["registers"]


@pytest.mark.parametrize(
    "check,right",
    [
        (amdahl.check_speedup, A.speedup),
        (amdahl.check_estimate_f, lambda p1, t1, p2, t2: A.fit_times([p1, p2], [t1, t2]).f),
        (vector.check_blocks_for, lambda n, b: -(-n // b)),
        (occupancy.check_register_limit, _register_blocks),
        (latency.check_warps_needed, _warps_needed),
    ],
)
def test_a_function_cannot_shorten_the_list_of_cases(check, right):
    res = check(_shortening(right))
    assert not res, res.message


# ---- answers that claim to equal everything ------------------------------------------------


class AlwaysEqual(int):
    """An int whose comparisons always say 'equal' (what a hostile answer returns)."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


def test_an_always_equal_answer_is_graded_by_the_value_it_holds():
    from gpulab.checks import simt

    assert not vector.check_blocks_for(lambda n, b: AlwaysEqual(0))
    assert not occupancy.check_register_limit(lambda t, r: AlwaysEqual(0))
    assert not latency.check_warps_needed(lambda bw, L, n, b: AlwaysEqual(0))
    assert not simt.check_block_shape(
        {"width": 100, "height": 60, "block": (AlwaysEqual(32), AlwaysEqual(1))}
    )
    assert not occupancy.check_register_budget(
        {"arch": "sm_90", "threads": 256, "shared": 0, "registers": AlwaysEqual(99)}
    )
    assert not memory.check_own_sector({"stride": AlwaysEqual(2), "offset": 0, "elem_bytes": 4})
    assert not shared.check_float64_padding({"elem_bytes": 8, "row_width": AlwaysEqual(34)})
    # and plain numpy answers still pass
    assert simt.check_block_shape({"width": np.int64(100), "height": 60, "block": (np.int32(8), 4)})
    assert memory.check_own_sector({"stride": np.int64(8), "offset": 0, "elem_bytes": 4})


# ---- issue 14 item 18, issue 17 item 5: the chapter kernels of the homework, by their checks ---
# Each prepared submission's kernel (exercises/<hw>/submissions.py) goes straight to the check its
# hidden test calls; it must pass or fail for the reason named here (Otter's full run, with the
# points, is tests/test_homework.py).

import importlib.util  # noqa: E402
import os  # noqa: E402

_EX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "exercises")


def _submission(hw, name, key):
    spec = importlib.util.spec_from_file_location(f"subs_{hw}", os.path.join(_EX, hw, "submissions.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SUBMISSIONS[name]["replace"][key]


def _kernel(src, name, tmp_path):
    """The kernel ``name`` defined by ``src``, from a file (the simulator reads the source)."""
    path = tmp_path / f"{name}_{abs(hash(src))}.py"
    path.write_text(src)
    ns = {"cuda": cuda, "float32": float32, "np": np, "FULL": FULL, "TILE": 32}
    exec(compile(src, str(path), "exec"), ns)
    return ns[name]


def _tiled(k):
    from gpulab.checks import tiling

    return tiling.check_tiled_matmul(k, tile=16)


def _transpose(k):
    from gpulab.checks import tiling

    return tiling.check_padded_transpose(k)


def _tree(k):
    from gpulab.checks import tree_reduction

    return tree_reduction.check_tree_reduce(k, block=256, prescribed=True)  # as hw07 q5's hidden test


def _frag(k):
    from gpulab.checks import mma_fragments

    return mma_fragments.check_fragment_load(k, "A")


def _sgemm(k):
    from gpulab.checks import sgemm

    return sgemm.check_register_blocking(k)


CHAPTER_KERNELS = [  # hw, submission, cell key, kernel, check, None (passes) or why it fails
    ("hw05_06_memory", "correct_tiling_styles", "def matmul_tiled", "matmul_tiled", _tiled, None),
    ("hw05_06_memory", "correct_tiling_styles", "def transpose", "transpose", _transpose, None),
    (
        "hw05_06_memory",
        "naive_untiled_matmul",
        "def matmul_tiled",
        "matmul_tiled",
        _tiled,
        "global load requests",
    ),
    ("hw05_06_memory", "matmul_missing_second_barrier", "def matmul_tiled", "matmul_tiled", _tiled, "race"),
    (
        "hw05_06_memory",
        "matmul_off_by_one_guard",
        "def matmul_tiled",
        "matmul_tiled",
        _tiled,
        "out-of-bounds",
    ),
    ("hw05_06_memory", "matmul_hard_coded_k", "def matmul_tiled", "matmul_tiled", _tiled, "elements wrong"),
    ("hw05_06_memory", "unpadded_transpose", "def transpose", "transpose", _transpose, "bank conflicts"),
    ("hw05_06_memory", "transpose_missing_barrier", "def transpose", "transpose", _transpose, "race"),
    ("hw05_06_memory", "transpose_hard_coded_32", "def transpose", "transpose", _transpose, "elements wrong"),
    ("hw07_08_reduction", "correct_tree_style", "def tree_sum", "tree_sum", _tree, None),
    ("hw07_08_reduction", "tree_missing_round_barrier", "def tree_sum", "tree_sum", _tree, "race"),
    ("hw07_08_reduction", "tree_serial_thread0", "def tree_sum", "tree_sum", _tree, "warp-level loads"),
    ("hw07_08_reduction", "tree_off_by_one_guard", "def tree_sum", "tree_sum", _tree, "out-of-bounds"),
    ("hw09_10_formats_amdahl", "correct_fragment_style", "def load_a", "load_a", _frag, None),
    ("hw09_10_formats_amdahl", "fragment_row_col_swapped", "def load_a", "load_a", _frag, "swapped"),
    (
        "hw09_10_formats_amdahl",
        "fragment_first_tile_only",
        "def load_a",
        "load_a",
        _frag,
        "no element of the tile",
    ),
    (
        "hw09_10_formats_amdahl",
        "fragment_one_lane_copies",
        "def load_a",
        "load_a",
        _frag,
        "requests per warp",
    ),
    ("hw11_sgemm", "correct_styles", "def sgemm_1d", "sgemm_1d", _sgemm, None),
    ("hw11_sgemm", "plain_shared_tiles", "def sgemm_1d", "sgemm_1d", _sgemm, "global load requests"),
    ("hw11_sgemm", "a_from_global_memory", "def sgemm_1d", "sgemm_1d", _sgemm, "global load requests"),
    (
        "hw11_sgemm",
        "transposed_a_staging",
        "def sgemm_1d",
        "sgemm_1d",
        _sgemm,
        "sectors per global load request",
    ),
    ("hw11_sgemm", "hard_coded_k", "def sgemm_1d", "sgemm_1d", _sgemm, "out-of-bounds"),
    ("hw11_sgemm", "missing_second_barrier", "def sgemm_1d", "sgemm_1d", _sgemm, "race"),
]


@pytest.mark.parametrize(
    "hw,name,key,kname,check,why", CHAPTER_KERNELS, ids=[f"{c[0][:4]}-{c[1]}" for c in CHAPTER_KERNELS]
)
def test_homework_chapter_kernels_by_their_checks(tmp_path, hw, name, key, kname, check, why):
    res = check(_kernel(_submission(hw, name, key), kname, tmp_path))
    if why is None:
        assert res, res.message
    else:
        assert not res and why in res.message, res.message


@pytest.mark.parametrize(
    "name,why",
    [
        ("grid_stride_copy", None),
        # under the 80% rule: timed on the H200 at 0.65 of the book copy's speed (hw05_copies.json),
        # and the round-4 model predicts it L1-bound
        ("chunked_copy", "80% of the book's"),
        ("unguarded_copy", "out of bounds"),
    ],
)
def test_hw05_copy_graded_by_predicted_efficiency(tmp_path, name, why):
    """q7's submissions through the check the hidden test calls, with the submission's own grid."""
    from gpulab.checks import roofline

    src = _submission("hw05_06_memory", name, "def copy_grid")
    ns = {"cuda": cuda, "float32": float32, "np": np}
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    exec(compile(src, str(path), "exec"), ns)
    res = roofline.check_copy_efficiency(ns["copy_kernel"], grid=ns["copy_grid"], block=256)
    if why is None:
        assert res and "of the DRAM roofline" in res.message, res.message
    else:
        assert not res and why in res.message, res.message


def test_fp8_times_int8_is_not_a_native_pair():
    from gpulab.checks import precision

    assert precision.check_native_format_choice({"x": "fp16", "w": "fp16"})
    res = precision.check_native_format_choice({"x": "fp8_e4m3", "w": "int8", "acc": "fp32"})
    assert not res and "no Hopper tensor-core instruction multiplies" in res.message


def test_occupancy_question_takes_a_numpy_bool():
    """A comparison of numpy scalars gives numpy's bool, which is not a Python bool."""
    from gpulab.checks import amdahl

    assert amdahl.check_occupancy(np.float64(1.0) > 2.0)
    assert not amdahl.check_occupancy(np.True_)


def test_worth_buying_above_the_power_of_two_that_still_meets_the_bar():
    """p = 20 at f = 0.95 keeps 51% efficiency: the failure must say so, not claim it is below 50%."""
    from gpulab.checks import amdahl

    res = amdahl.check_worth_buying(20)
    assert not res and "not a power of two" in res.message and "below" not in res.message
    assert "below 50%" in amdahl.check_worth_buying(64).message
    assert amdahl.check_worth_buying(16)


def test_halo_tile_answer_that_is_not_a_whole_number_gets_a_message():
    """A typed answer (a float tile, no radius) fails with a message, not a TypeError or KeyError."""
    from gpulab.checks import patterns

    res = patterns.check_halo_tile({"tile": 32.5, "radius": 4})  # 32.0 is the whole number 32
    assert not res and "whole number" in res.message
    assert "set R to 4" in patterns.check_halo_tile({"tile": 32}).message
    assert patterns.check_halo_tile({"tile": np.int64(32), "radius": np.int64(4)})


def test_c_owner_with_true_division_fails():
    """c / 2 instead of c // 2 gives lane 4.5: int() would truncate it to the right lane."""
    from gpulab.checks import formats

    def exact(r, c):
        return 4 * (r % 8) + c // 2, c % 2 + 2 * (r >= 8)

    assert formats.check_c_owner(exact)
    assert formats.check_c_owner(lambda r, c: (np.int64(exact(r, c)[0]), float(exact(r, c)[1])))
    res = formats.check_c_owner(lambda r, c: (4 * (r % 8) + c / 2, exact(r, c)[1]))
    assert not res and "whole numbers" in res.message


@pytest.mark.parametrize("offsets", [[16.5, 8, 4, 2, 1], ["a"], 16, [], [1] * 9, [32]])
def test_allreduce_offsets_that_are_not_1_to_8_lane_numbers_fail_with_a_message(offsets):
    """16.5 used to be truncated to 16 (and pass); a string or a bare number used to raise."""
    from gpulab.checks import warp

    res = warp.check_allreduce_loop({"kind": "xor", "offsets": offsets})
    assert not res and "1 to 8 whole numbers" in res.message


def test_allreduce_offsets_as_numpy_ints_pass():
    from gpulab.checks import warp

    assert warp.check_allreduce_loop({"kind": "xor", "offsets": list(np.array([16, 8, 4, 2, 1]))})


@cuda.jit
def zero_input_tree(partial, values):
    """A cheat: zero the input, then report zero sums (the reference used to read the input back)."""
    i = cuda.grid(1)
    if i < values.shape[0]:
        values[i] = 0.0
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = 0.0


@cuda.jit
def zero_input_block_sum(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] = 0.0
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = 0.0


def test_a_kernel_that_zeroes_its_input_does_not_pass():
    """The kernel gets a copy of the input: the reference is computed from the values it was given."""
    from gpulab.checks import reduction, tree_reduction

    res = tree_reduction.check_tree_reduce(zero_input_tree, seed=0)
    assert not res and "expected" in res.message, res.message
    res = reduction.check_block_sum(zero_input_block_sum, seed=0)
    assert not res and "expected" in res.message, res.message
