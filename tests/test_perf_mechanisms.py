"""The time model's physical terms added after blind round 3 (issue 24): issue and pipes count
once, stored sectors and L2 fills in the L1 stage, loads of a loop ptxas unrolled in flight
together, a sector's atomic unit taking each warp's addresses in turn; the refit's record; the round-4
pipeline on fake device results."""

import json
import subprocess
import textwrap
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

from gpulab.perf import engine, gpus, model

H200 = gpus.H200
ROOT = Path(__file__).resolve().parents[1]


@cuda.jit
def scatter(out, x, idx):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[idx[i]] = x[i]


@cuda.jit
def hist16(hist, x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.add(hist, x[i] & 15, 1)


@cuda.jit
def relu(out, x, alpha):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = v * alpha if v > 0 else 0.0


@cuda.jit
def col_sum(out, a):
    c = cuda.grid(1)
    if c < a.shape[1]:
        s = float32(0.0)
        for r in range(a.shape[0]):
            s += a[r, c]
        out[c] = s


def test_issue_and_pipe_bounds_count_once():
    t = {"issue": 10e-6, "pipe": 10e-6, "fp64": 4e-6}
    assert model.combine(t, H200) == pytest.approx(H200.launch_s + 10e-6)
    # a bound of another kind still adds through the soft maximum
    assert model.combine({**t, "latency": 10e-6}, H200) > H200.launch_s + 10e-6 * 1.2


def test_scattered_stores_hold_the_l1_per_sector():
    n = 1 << 14
    rng = np.random.default_rng(0)
    args = (np.zeros(n, np.float32), rng.random(n, dtype=np.float32), rng.permutation(n).astype(np.int32))
    c, _ = engine.sample_counts(scatter, n // 256, 256, args, registers=16)
    b = model.bounds(c, H200)
    from gpulab import metrics as M

    st = c.metrics[M.GLOBAL_SECTORS["st"]]
    assert st == pytest.approx(n, rel=0.05)  # a permutation: one sector per lane
    cycles = c.l1_lines + H200.store_sector_cycles * st + H200.l1_fill_sector_cycles * c.l2_read_bytes / 32
    active = min(H200.sms, c.blocks)
    assert b["t"]["l1"] == pytest.approx(cycles / (active * H200.clock_hz * H200.l1_wavefronts_per_sm_cycle))
    # and the store term is what makes the scatter's L1 bound larger than a gather's of the same size
    assert H200.store_sector_cycles * st > c.l1_lines / 2


def test_a_sectors_atomic_unit_applies_each_warps_addresses_in_turn():
    n = 1 << 14
    x = np.random.default_rng(1).integers(0, 1 << 20, n).astype(np.int32)
    c, _ = engine.sample_counts(hist16, n // 256, 256, (np.zeros(16, np.int32), x), registers=16)
    # 16 int bins = 2 sectors of 8: a warp's 32 random lanes hit about 7 of a sector's 8 bins
    # (1 - (7/8)^16 of them), and its lanes on one bin are one integer update
    warps = n // 32
    top, flt = max(c.atomic_sector_hot)
    assert not flt and 6.5 * warps < top < 7.6 * warps
    b = model.bounds(c, H200)
    assert b["t"]["atomics"] == pytest.approx(top * H200.atomic_int_op_s)
    # four times what the busiest bin alone (its lanes one after another) would take
    assert b["t"]["atomics"] > 3 * max(ops for ops, _ in c.atomic_hot) * H200.atomic_int_op_s


def test_the_loop_ptxas_unrolled_waits_once_per_unrolled_group():
    from gpulab.perf import sass

    ok, why = sass.available()
    if not ok:
        pytest.skip(why)
    rows, cols = 64, 1024
    a = np.random.default_rng(2).random((rows, cols), dtype=np.float32)
    p = engine.predict(col_sum, cols // 128, 128, np.zeros(cols, np.float32), a)
    q = engine.predict(col_sum, cols // 128, 128, np.zeros(cols, np.float32), a, use_sass=False)
    # the compiled loop is unrolled (4x by ptxas): its loads are in flight together, so the
    # latency bound with the SASS is well below the source-only estimate's one wait per row
    assert p.bound("latency") < 0.6 * q.bound("latency")


def test_the_refit_is_what_the_h200_uses():
    rec = json.loads((ROOT / "gpulab/data/results/perf_train.json").read_text())
    for k, v in rec["params"].items():
        assert getattr(H200, k) == pytest.approx(v, rel=1e-3), k
    assert set(rec["after"]) >= {
        "train",
        "perf_model_holdout",
        "blind_r3",
        "blind_r4",
        "blind_r5",
        "blind_r6",
    }
    assert not any("blind_r7" in n for n in rec["train"]), "the blind set under test is never trained on"


def test_many_small_blocks_are_bound_by_the_block_launch_rate():
    """The GPU starts block_launch_per_cycle blocks per cycle: 131,072 blocks of 128 threads
    that each copy a float cannot finish faster than that."""

    assert 0.5 < H200.block_launch_per_cycle < 2.0
    x = np.zeros(128 * 1024, np.float32)
    p = engine.predict(relu, 1024, 128, x, x, 1.5)
    assert p.bound("blocks") == pytest.approx(1024 / (H200.block_launch_per_cycle * H200.clock_hz))
    # relu_scale's 131,072 blocks: a bound of 50-130 us, where the H200 took 83 us (the refit after
    # round 6 gives 54 us; with the DRAM bound in the soft maximum the prediction is 0.86x)
    assert 50e-6 < 131072 / (H200.block_launch_per_cycle * H200.clock_hz) < 130e-6


def test_one_long_block_is_the_whole_sample_and_the_report_says_so(monkeypatch):
    """A block whose simulation alone takes half the budget is not simulated twice more."""
    monkeypatch.setattr(engine, "SINGLE_BLOCK_MIN_CPU_S", 0.0)
    x = np.ones(64 * 256, np.float32)
    p = engine.predict(relu, 64, 256, np.zeros_like(x), x, 1.5, budget_s=1e-4, use_sass=False)
    assert p.sampling["single_block"] and p.sampling["blocks_simulated"] == 1
    assert p.sampling["relative_error"] is None
    assert "no sampling error estimate" in str(p)


def test_blind_r4_merge_scores_fake_device_results(tmp_path):
    """benchmarks/blind_r4/run.py merge scores fake device results against recorded predictions.
    Run in a fresh interpreter: loading run.py inside the suite met a TimeLimit left pending by
    tests/test_grading_guard.py's nested time limits (whole fast suite only; noted for
    gpulab.grading.limits)."""
    script = tmp_path / "merge_fake.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import importlib.util, json, pathlib, sys
            here = pathlib.Path({str(ROOT / "benchmarks" / "blind_r4")!r})
            sys.path.insert(0, str(here))
            spec = importlib.util.spec_from_file_location("blind_r4_run", here / "run.py")
            run = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(run)
            tmp = pathlib.Path({str(tmp_path)!r})
            names = [c["name"] for c in run.cases()][:3]
            pred = {{"predicted": {{"cases": {{
                n: {{"predicted_s": 1e-5 * (k + 1), "registers": 16, "limiter": "dram"}}
                for k, n in enumerate(names)}}}}}}
            out = tmp / "blind_r4.json"
            out.write_text(json.dumps(pred))
            run._out = lambda: str(out)
            dev = tmp / "dev"
            dev.mkdir()
            cases = {{n: {{"kernel": n, "ok": True, "measured_s": 1e-5, "registers_driver": 16,
                          "sm_clock": None}} for n in names}}  # measured 1e-5 each: ratios 1, 2, 3
            (dev / "blind_r4_gpu.json").write_text(
                json.dumps({{"environment": {{}}, "reps": 7, "cases": cases}}))
            run.merge(str(dev))
            print(json.dumps({{"names": names, "summary": json.loads(out.read_text())["summary"]}}))
            """
        )
    )
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    s, names = got["summary"], got["names"]
    assert s["cases"] == 3 and s["median_abs_error"] == pytest.approx(1.0)
    assert s["outside_2x"] == [names[2]] and s["registers_match"] == 3 and s["registers_from_ncu"] == 0
