"""The time model's measured atomic and math-library costs (benchmarks/instruction_costs.py):
which atomics a warp combines, what a same-address atomic costs, what a sin call costs."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32, float64

from gpulab.perf import gpus, model, predict
from gpulab.perf.engine import sample_counts
from gpulab.perf import weights as W
from gpulab.perf.uniform import aggregated_atomic_lines

ROOT = Path(__file__).resolve().parents[1]
H200 = gpus.H200


@cuda.jit
def count_all(count, x):
    i = cuda.grid(1)
    if i < x.shape[0] and x[i] > 0:
        cuda.atomic.add(count, 0, 1)  # uniform address: combined per warp


@cuda.jit
def per_block(partial, x):
    b = cuda.blockIdx.x
    slot = b % 4
    cuda.atomic.add(partial, slot, x[cuda.grid(1)])  # uniform: from blockIdx through a local


@cuda.jit
def histogram(hist, data):
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(hist, data[i], 1)  # per-lane address: never combined


@cuda.jit
def lane_dependent_local(out, x):
    j = 0
    if cuda.threadIdx.x < 16:  # a branch on the lane: j differs across the warp
        j = 1
    cuda.atomic.add(out, j, 1)


@cuda.jit
def float_sum(total, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.add(total, 0, x[i])


@cuda.jit
def sines(out, x, iters):
    i = cuda.grid(1)
    if i < out.shape[0]:
        v = x[i]
        for _ in range(iters):
            v = math.sin(v) * float32(0.5)
        out[i] = v


def _rel(kernel):
    f = kernel.py_func
    return sorted(ln - f.__code__.co_firstlineno for ln in aggregated_atomic_lines(f))


def test_static_uniformity_of_atomic_addresses():
    assert _rel(count_all) == [4]
    assert _rel(per_block) == [4]
    assert _rel(histogram) == []
    assert _rel(lane_dependent_local) == []


def test_same_address_integer_atomics_cost_one_operation_per_warp():
    n = 1 << 20
    p = predict(count_all, n // 256, 256, np.zeros(1, np.int32), np.ones(n, np.float32))
    assert p.limiter_key == "atomics"
    assert p.bound("atomics") == pytest.approx(n // 32 * H200.atomic_int_op_s, rel=1e-6)


def test_same_address_lanes_serialise_when_not_combined():
    n = 1 << 14
    p = predict(histogram, n // 256, 256, np.zeros(4, np.int32), np.zeros(n, np.int32))
    assert p.bound("atomics") == pytest.approx(n * H200.atomic_int_op_s, rel=1e-6)
    q = predict(float_sum, n // 256, 256, np.zeros(1, np.float32), np.ones(n, np.float32))
    assert q.bound("atomics") == pytest.approx(n * H200.atomic_float_op_s, rel=1e-6)


def test_math_calls_cost_their_measured_instructions():
    iters, n = 16, 256 * 64
    args = (np.zeros(n, np.float32), np.ones(n, np.float32), iters)
    counts, _ = sample_counts(sines, n // 256, 256, list(args))
    sin_inst = n // 32 * iters * W.MATH_CALL_INSTRUCTIONS["sin"]["float32"]
    assert model.math_instructions(counts) == pytest.approx(sin_inst, rel=1e-9)
    p = predict(sines, n // 256, 256, *args)
    assert p.metrics["smsp__inst_executed.sum"] > sin_inst


def test_math_table_is_the_recorded_measurement():
    res = json.loads((ROOT / "gpulab/data/results/instruction_costs.json").read_text())
    rec = res["math_warp_instructions_per_call"]
    assert set(rec) == set(W.MATH_CALL_INSTRUCTIONS)
    for name, v in rec.items():
        for prec in ("float32", "float64"):
            assert W.MATH_CALL_INSTRUCTIONS[name][prec] == pytest.approx(max(v[prec], 0.0)), name
    at = res["same_address_atomics"]
    assert H200.atomic_int_op_s == pytest.approx(at["int"]["s_per_instruction_one_lane"], rel=0.005)
    float_lane = at["float"]["s_per_extra_lane"]
    assert H200.atomic_float_op_s == pytest.approx(float_lane, rel=0.005)


@cuda.jit
def f64_chain(out, iters):
    i = cuda.grid(1)
    v = float64(i) * 1e-9
    for _ in range(iters):
        v = v * 0.999 + 1e-7  # float64: one DFMA per iteration on the FP64 units
    out[i] = v


def test_float64_arithmetic_bounds_on_the_fp64_pipe():
    iters, blocks = 64, 132
    args = (np.zeros(blocks * 256), iters)
    p = predict(f64_chain, blocks, 256, *args)
    fmas = blocks * 256 // 32 * iters  # one fused multiply-add per warp per iteration
    want = fmas * H200.fp64_cycles_per_warp_inst / (H200.sms * H200.clock_hz * H200.issue_per_sm_cycle)
    assert p.bound("fp64") == pytest.approx(want, rel=0.03)  # + the one multiply before the loop
    t4 = predict(f64_chain, blocks, 256, *args, gpu="T4")
    assert t4.bound("fp64") > 20 * p.bound("fp64")  # Turing: 2 FP64 units per SM
    q = predict(sines, 4, 256, np.zeros(1024, np.float32), np.ones(1024, np.float32), 4)
    assert q.bound("fp64") == 0.0  # float32 arithmetic stays on the FP32 units
