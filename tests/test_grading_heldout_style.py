"""Held-out submissions (issue 14, second round), graded through the checks the hidden tests call.

The kernels live in ``exercises/<hw>/submissions_heldout.py``: correct work in styles the
prepared submissions do not use must pass, wrong and hostile work must fail for the reason the
entry names. Literal answers and plain functions are graded here directly. Homework-level Otter
runs are tests/test_homework.py's (slow); these call the same check functions in-process.
"""

import importlib.util
import math
import os
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from numba import cuda, float32

from gpulab.checks import (
    amdahl,
    divergence,
    formats,
    memory,
    mma_fragments,
    occupancy,
    precision,
    reduction,
    sgemm,
    shared,
    simt,
    tiling,
    tree_reduction,
    vector,
    warp,
)
from gpulab.checks.answers import as_whole

_EX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "exercises")

CHECKS = {  # the notebook's name -> the check its hidden test calls, with the test's arguments
    "saxpy": vector.check_saxpy,
    "invert": simt.check_invert,
    "parity_scale": divergence.check_parity_scale,
    "scale": memory.check_scale,
    "row_sums": shared.check_row_sums,
    "matmul_tiled": lambda k, **kw: tiling.check_tiled_matmul(k, tile=16, **kw),
    "transpose": tiling.check_padded_transpose,
    "block_sum": reduction.check_block_sum,
    "warp_reduce": warp.check_warp_reduce,
    "warp_scan": warp.check_warp_scan,
    "tree_sum": lambda k, **kw: tree_reduction.check_tree_reduce(k, block=256, prescribed=True, **kw),
    "load_a": lambda k, **kw: mma_fragments.check_fragment_load(k, "A", **kw),
    "sgemm_1d": sgemm.check_register_blocking,
}

HWS = [
    "hw02_simt",
    "hw03_04_divergence_occupancy",
    "hw05_06_memory",
    "hw07_08_reduction",
    "hw09_10_formats_amdahl",
    "hw11_sgemm",
]


def _heldout(hw):
    path = os.path.join(_EX, hw, "submissions_heldout.py")
    spec = importlib.util.spec_from_file_location(f"heldout_{hw}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.HELDOUT


ENTRIES = [(hw, *e) for hw in HWS for e in _heldout(hw)]


def _define(src, name, tmp_path):
    """What the notebook cell ``src`` defines as ``name``, from a file (the simulator reads it)."""
    path = tmp_path / f"{name}_{abs(hash(src))}.py"
    path.write_text(src)
    ns = {"cuda": cuda, "float32": float32, "np": np, "math": math}
    exec(compile(src, str(path), "exec"), ns)
    return ns[name]


def test_every_homework_has_three_heldout_kernels_or_more():
    for hw in HWS:
        kinds = {e[1].split(":")[0] for e in _heldout(hw)}
        assert len(_heldout(hw)) >= 3 and "correct" in kinds, hw


@pytest.mark.parametrize("hw,name,style,target,src,why", ENTRIES, ids=[f"{e[0][:4]}-{e[1]}" for e in ENTRIES])
def test_heldout_kernel_graded_as_written(tmp_path, hw, name, style, target, src, why):
    res = CHECKS[target](_define(src, target, tmp_path))
    if why is None:
        assert res, f"{style}: correct work lost points: {res.message}"
    else:
        assert not res, f"{style}: wrong work passed: {res.message}"
        assert why in res.message, res.message


# ---- random inputs must catch a wrong answer on every run, not only usually ------------------


def test_a_guard_hard_coded_to_the_demo_size_fails_on_every_seed(tmp_path):
    """hw02's demo launches n = 1000: ``if i < 1000`` passed whenever the one random length
    happened to be at most 1000 (about 1 run in 5); a length of 16 blocks or more is now always
    among the cases."""
    src = next(e[3] for e in _heldout("hw02_simt") if e[0] == "guard_hard_coded_1000")
    k = _define(src, "saxpy", tmp_path)
    for seed in range(12):
        assert max(vector.edge_sizes(128, seed)) >= 16 * 128
        res = vector.check_saxpy(k, seed=seed)
        assert not res and "never written" in res.message, (seed, res.message)


# ---- literal answers and functions in the styles a class writes ------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda n, b: divmod(n, b)[0] + (divmod(n, b)[1] > 0),
        lambda n, b: int(np.ceil(np.float32(n) / np.float32(b))),
        lambda n, b: np.int32((n + b - 1) // b),
        lambda n, b: math.ceil(n / b),
    ],
    ids=["divmod", "float32_ceil", "np_int32", "math_ceil"],
)
def test_blocks_for_in_other_styles_passes(fn):
    res = vector.check_blocks_for(fn)
    assert res, res.message


def test_blocks_for_by_round_fails():
    res = vector.check_blocks_for(lambda n, b: round(n / b))
    assert not res and "round up" in res.message, res.message


@pytest.mark.parametrize(
    "check,answer",
    [
        (simt.check_block_shape, {"width": 100.0, "height": np.int64(60), "block": [8.0, np.float32(4)]}),
        (memory.check_own_sector, {"stride": 8.0, "offset": 0.0, "elem_bytes": np.float64(4)}),
        (shared.check_float64_padding, {"elem_bytes": 8.0, "row_width": 33.0}),
        (
            occupancy.check_register_budget,
            {"arch": "sm_90", "threads": 256.0, "shared": 0, "registers": 40.0},
        ),
    ],
    ids=["block_shape", "own_sector", "float64_padding", "register_budget"],
)
def test_widget_answers_typed_as_integral_floats_pass(check, answer):
    """A hand-typed ``60.0`` is the count 60 (before: "set the image to 100 x 60 (it is 100 x 60.0)")."""
    res = check(answer)
    assert res, res.message


@pytest.mark.parametrize(
    "check,answer,why",
    [
        (simt.check_block_shape, {"width": 100, "height": 60, "block": (8.5, 4)}, "two whole numbers"),
        (memory.check_own_sector, {"stride": 8.25, "offset": 0, "elem_bytes": 4}, "whole number"),
        (memory.check_own_sector, {"stride": "8", "offset": 0, "elem_bytes": 4}, "whole number"),
        (shared.check_float64_padding, {"elem_bytes": 8, "row_width": True}, "whole number"),
        (
            occupancy.check_register_budget,
            {"arch": "sm_90", "threads": 256, "shared": 0, "registers": 40.5},
            "whole",
        ),
    ],
    ids=["block_half", "stride_fraction", "stride_string", "width_bool", "registers_fraction"],
)
def test_widget_answers_that_are_not_whole_numbers_fail(check, answer, why):
    res = check(answer)
    assert not res and why in res.message, res.message


def test_as_whole_rules():
    assert as_whole(60.0) == 60 and type(as_whole(np.float32(4.0))) is int
    for bad in (60.5, float("nan"), float("inf"), True, np.bool_(True), "60", None, [60]):
        assert as_whole(bad) is None, bad


def test_register_blocks_returning_floats_and_numpy_ints_passes():
    def as_float(t, r):
        per = math.ceil(32 * r / 256) * 256
        return float((65536 // 4 // per) * 4 // math.ceil(t / 32))

    def as_np(t, r):
        per = int(np.ceil(32 * r / 256)) * 256
        return np.int32((16384 // per) * 4 // np.ceil(t / 32).astype(np.int64))

    for fn in (as_float, as_np):
        res = occupancy.check_register_limit(fn)
        assert res, res.message


@pytest.mark.parametrize(
    "fn",
    [
        lambda f, p: Fraction(1) / ((1 - Fraction(f)) + Fraction(f) / p),
        lambda f, p: Decimal(1) / ((1 - Decimal(f)) + Decimal(f) / Decimal(p)),
        lambda f, p: np.float32(1) / (np.float32(1 - f) + np.float32(f) / np.float32(p)),
    ],
    ids=["fraction", "decimal", "float32"],
)
def test_speedup_in_exact_and_float32_arithmetic_passes(fn):
    res = amdahl.check_speedup(fn)
    assert res, res.message


def test_speedup_rounded_to_two_places_fails_and_shows_the_digits():
    res = amdahl.check_speedup(lambda f, p: round(1 / ((1 - f) + f / p), 2))
    assert not res and "16.80672269" in res.message and "16.81" in res.message, res.message


@pytest.mark.parametrize(
    "check,fn,call",
    [
        (amdahl.check_speedup, lambda f, p: np.array([1 / ((1 - f) + f / p)] * 2), "speedup("),
        (amdahl.check_speedup, lambda f, p: "16.8", "speedup("),
        (amdahl.check_estimate_f, lambda p1, t1, p2, t2: (0.9, 0.1), "estimate_f("),
    ],
    ids=["array", "string", "tuple"],
)
def test_a_result_that_is_not_a_number_is_named(check, fn, call):
    """Before: "your function returned None (or not a number): not solved yet" for any of them."""
    res = check(fn)
    assert not res and call in res.message and "not a single number" in res.message, res.message
    assert "None" not in res.message


def test_estimate_f_by_linear_solve_passes():
    def fn(p1, t1, p2, t2):
        s, q = np.linalg.solve(np.array([[1, 1 / p1], [1, 1 / p2]]), [t1, t2])
        return q / (s + q)

    res = amdahl.check_estimate_f(fn)
    assert res, res.message


def test_worth_buying_as_float_passes():
    assert amdahl.check_worth_buying(16.0)
    assert not amdahl.check_worth_buying(17)
    res = amdahl.check_worth_buying("16")  # text, not a number (float("16") made it one)
    assert not res and "give a number" in res.message, res.message


def test_c_owner_returning_a_numpy_array_passes_and_a_dict_fails():
    good = formats.check_c_owner(lambda r, c: np.array([(r & 7) * 4 + (c >> 1), (c & 1) | ((r >> 3) << 1)]))
    assert good, good.message
    bad = formats.check_c_owner(lambda r, c: {"lane": (r % 8) * 4 + c // 2, "i": (c % 2) + 2 * (r // 8)})
    assert not bad and "two whole numbers" in bad.message


class _EqualsAll(str):
    """A str whose == is always true, hashing like a real format name."""

    def __eq__(self, other):
        return True

    def __hash__(self):
        return hash("bf16")


def test_native_format_choice_is_graded_by_the_text_it_holds():
    assert precision.check_native_format_choice({"x": np.str_("bf16"), "w": np.str_("bf16"), "acc": "fp32"})
    res = precision.check_native_format_choice({"x": _EqualsAll("zzz"), "w": _EqualsAll("zzz")})
    assert not res and "'zzz'" in res.message, res.message


def test_sgemm_padding_hint_is_code_the_simulator_accepts(tmp_path):
    """The check's message suggests a padded k-major tile; the suggested shape must compile (the
    simulator rejects ``(8, 64 + 4)`` written in the source, see the held-out entry)."""
    import inspect

    text = inspect.getsource(sgemm.check_register_blocking)
    assert "cuda.shared.array((8, 68), float32)" in text


def test_a_numpy_bool_is_no_count():
    """numpy 2 names its bool type 'bool', so a check on the name 'bool_' let ``np.True_`` through
    as the integer 1 (``blocks_for`` returning ``n <= block`` passed the one-block cases)."""
    res = vector.check_blocks_for(lambda n, b: np.True_ if n <= b else -(-n // b))
    assert not res and "np.True_" in res.message, res.message
    res = occupancy.check_register_limit(lambda t, r: True)
    assert not res and "not a number" in res.message, res.message


def test_scale_with_only_the_column_guarded_fails_on_every_seed(tmp_path):
    """check_scale's odd side was only kept off multiples of 32: at m = 40 (a multiple of the
    block's 8 rows) a kernel with no row guard stayed in bounds and passed, about 1 run in 8."""
    src = next(e[3] for e in _heldout("hw05_06_memory") if e[0] == "scale_column_guard_only")
    k = _define(src, "scale", tmp_path)
    for seed in range(40):
        res = memory.check_scale(k, seed=seed)
        assert not res and "guard both sides" in res.message, (seed, res.message)


def test_halo_tile_typed_as_a_float_passes():
    from gpulab.checks import patterns

    res = patterns.check_halo_tile({"tile": 32.0, "radius": 4.0})
    assert res, res.message
    assert not patterns.check_halo_tile({"tile": 32.5, "radius": 4})


def test_warps_needed_draws_new_cases_on_every_call():
    """Chapter 01's check used random.Random(1): the same 20 'random' cases every run, so a table
    of their answers passed. Now a table of one run's answers fails the next."""
    from gpulab.checks import latency
    from gpulab.models import latency as lat

    seen = {}
    assert latency.check_warps_needed(lambda *c: seen.setdefault(c, lat.warps_needed(*c)), seed=1)
    table = dict(seen)
    res = latency.check_warps_needed(lambda *c: table.get(c, 0), seed=2)
    assert not res and "expected" in res.message, res.message


def test_allreduce_offsets_typed_as_integral_floats_pass():
    res = warp.check_allreduce_loop({"kind": "xor", "offsets": [16.0, 8.0, 4.0, 2.0, 1.0]})
    assert res, res.message
    assert not warp.check_allreduce_loop({"kind": "xor", "offsets": [16.5, 8, 4, 2, 1]})


@pytest.mark.parametrize(
    "cond",
    ["(i // 32) % 2 == 0", "cuda.threadIdx.x < 32", "(i >> 5) & 1"],
)
def test_uniform_split_conditions_in_other_styles_pass(cond):
    res = divergence.check_uniform_split({"condition": cond, "data": "random"})
    assert res, res.message


# ---- chapter 03's warp-uniform shade in other correct styles ------------------------------


@cuda.jit
def sh_halves(out, x):
    t = cuda.grid(1)
    n = x.shape[0]
    half = (n + 1) // 2
    if t < half:
        i = 2 * t
        v = x[i]
        for k in range(8):
            v = v * 0.5 + 1.0
        out[i] = v
    elif t < n:
        i = 2 * (t - half) + 1
        v = x[i]
        for k in range(8):
            v = v * 2.0 - 1.0
        out[i] = v


@cuda.jit
def sh_block_halves(out, x):
    tx = cuda.threadIdx.x
    base = cuda.blockIdx.x * cuda.blockDim.x
    h = cuda.blockDim.x // 2
    if tx < h:
        i = base + 2 * tx
        if i < x.shape[0]:
            v = x[i]
            for k in range(8):
                v = v * float32(0.5) + float32(1.0)
            out[i] = v
    else:
        i = base + 2 * (tx - h) + 1
        if i < x.shape[0]:
            v = x[i]
            for k in range(8):
                v = v * float32(2.0) - float32(1.0)
            out[i] = v


@cuda.jit(device=True)
def even_f(v):
    for k in range(8):
        v = v * 0.5 + 1.0
    return v


@cuda.jit(device=True)
def odd_f(v):
    for k in range(8):
        v = v * 2.0 - 1.0
    return v


@cuda.jit
def sh_dev(out, x):
    t = cuda.grid(1)
    w, lane = t // 32, t % 32
    i = 64 * (w // 2) + 2 * lane + (w & 1)
    if i < x.shape[0]:
        out[i] = odd_f(x[i]) if w & 1 else even_f(x[i])


@pytest.mark.parametrize(
    "kernel", [sh_halves, sh_block_halves, sh_dev], ids=["grid_halves", "block_halves", "device_fns"]
)
def test_warp_uniform_shade_in_other_styles_passes(kernel):
    res = divergence.check_warp_uniform(kernel)
    assert res, res.message


# ---- hw05 q7: a grid-stride copy over a tiny grid is graded fast, with a reason ---------------


@cuda.jit
def copy_grid_stride(out, a):
    i = cuda.grid(1)
    while i < out.shape[0]:
        out[i] = a[i]
        i += cuda.gridsize(1)


def test_copy_over_fewer_blocks_than_sms_fails_fast_with_a_reason():
    """copy_grid = 4: the prediction simulated one block copying 4M elements for 60 s and then
    reported 'most likely an infinite loop' (past the test's own 60 s limit)."""
    import time

    from gpulab.checks import roofline

    t0 = time.monotonic()
    res = roofline.check_copy_efficiency(copy_grid_stride, grid=lambda n: 4, block=256)
    assert not res and "fewer than the 132 SMs" in res.message, res.message
    assert time.monotonic() - t0 < 20
    res = roofline.check_copy_efficiency(copy_grid_stride, grid=lambda n: 8 * 132, block=256)
    assert res, res.message  # several blocks per SM: predicted, and at the bar


# ---- public tests (shipped in gpulab/homework) agree with the hidden checks ------------------


def _public(hw, q, name):
    path = os.path.join(os.path.dirname(_EX), "gpulab", "homework", hw, "tests", f"{q}.py")
    spec = importlib.util.spec_from_file_location(f"public_{hw}_{q}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name).test_func


def _register_blocks(t, r):
    per = -(-32 * r // 256) * 256
    return (65536 // 4 // per) * 4 // -(-t // 32)


@pytest.mark.parametrize(
    "wrap", [int, float, np.int32, np.float64], ids=["int", "float", "np_int32", "np_float64"]
)
def test_register_blocks_public_test_takes_any_whole_number(wrap):
    """The hidden check graded 8.0 right while the public test took its point ("not an int")."""
    fn = lambda t, r: wrap(_register_blocks(t, r))  # noqa: E731
    _public("hw03_04_divergence_occupancy", "q2", "test_q2_form")(fn)
    assert occupancy.check_register_limit(fn)


@pytest.mark.parametrize("value", [8.5, True, "8", None])
def test_register_blocks_public_test_rejects_what_is_no_count(value):
    with pytest.raises(AssertionError):
        _public("hw03_04_divergence_occupancy", "q2", "test_q2_form")(lambda t, r: value)


def test_blocks_for_public_test_keeps_floats_out():
    """A grid size is passed to a launch, which rejects floats: 2.0 fails the public test and the
    hidden check alike; a numpy integer passes both."""
    public = _public("hw02_simt", "q1", "test_q1_form")
    public(lambda n, b: np.int64(-(-n // b)))
    with pytest.raises(AssertionError):
        public(lambda n, b: float(-(-n // b)))
    assert not vector.check_blocks_for(lambda n, b: float(-(-n // b)))


# ---- CSV flags: no false alarm on cells Otter never runs ---------------------------------------


def test_widget_cells_that_otter_skips_raise_no_flag(tmp_path):
    """hw09's widget cell imports gpulab.models (for its problem) and is tagged otter_ignore, so
    Otter drops it before grading; every hw09 submission, the untouched one included, was flagged
    'imports the checkers'. The same line in a cell that runs is still flagged."""
    import nbformat

    from gpulab.grading import tamper

    master = nbformat.read(
        os.path.join(_EX, "hw09_10_formats_amdahl", "hw09_10_formats_amdahl.ipynb"), as_version=4
    )
    widget = next(
        c for c in master.cells if c.cell_type == "code" and "from gpulab.models import" in c.source
    )
    assert "otter_ignore" in widget.metadata.get("tags", [])
    nb = nbformat.v4.new_notebook()
    nb.cells = [widget, nbformat.v4.new_code_cell("p_answer = 16")]
    path = tmp_path / "hw09.ipynb"
    nbformat.write(nb, path)
    assert tamper.suspicious(str(path)) == []
    nb.cells.append(nbformat.v4.new_code_cell(widget.source))  # the same import, in a cell that runs
    nbformat.write(nb, path)
    assert "imports the checkers" in tamper.suspicious(str(path))
    ignored = nbformat.v4.new_code_cell("import gc; gc.get_objects()", metadata={"otter": {"ignore": True}})
    nb.cells = [ignored]
    nbformat.write(nb, path)
    assert tamper.suspicious(str(path)) == []


# ---- tampering with what the checks import only when they run ----------------------------------


@pytest.fixture
def fresh_snapshot(monkeypatch):
    from gpulab import grading

    monkeypatch.setattr(grading.tamper, "_SNAPSHOT", None)
    grading.snapshot()
    assert grading.tamper_findings() == []
    yield monkeypatch
    monkeypatch.undo()


@pytest.mark.parametrize(
    "module,attr,replacement",
    [
        ("gpulab.perf.engine", "predict", lambda *a, **k: None),
        ("gpulab.kernels.memory", "copy", None),  # the book's copy hw05 q7 compares with
    ],
    ids=["perf_predict", "book_copy"],
)
def test_replacing_what_the_copy_check_imports_later_is_seen(fresh_snapshot, module, attr, replacement):
    """hw05 q7 is graded by gpulab.predict against the book's copy; both are imported only when
    the check runs, so the snapshot did not hold them and replacing them went unflagged (a slow
    copy would then meet any bar)."""
    import importlib

    from gpulab import grading

    mod = importlib.import_module(module)
    fresh_snapshot.setattr(mod, attr, replacement)
    assert any(f"{module}.{attr}" in f for f in grading.tamper_findings())


def test_a_method_of_the_prediction_patched_is_seen(fresh_snapshot):
    from gpulab import grading
    from gpulab.perf import prediction

    fresh_snapshot.setattr(prediction.Prediction, "dram_roofline_fraction", lambda self, b: 1.0)
    assert any("dram_roofline_fraction" in f for f in grading.tamper_findings())
