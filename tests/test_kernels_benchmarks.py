"""The chapter 05-06 GPU benchmarks skip cleanly without a GPU and leave the results alone."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _gpu():
    try:
        from numba import cuda

        return cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(_gpu(), reason="a GPU is present: the scripts would measure, not skip")
@pytest.mark.parametrize(
    "script,result", [("bandwidth.py", "bandwidth.json"), ("latency.py", "latency.json")]
)
def test_skips_without_gpu(script, result, tmp_path):
    out = tmp_path / result
    env = dict(os.environ, GPULAB_BENCH_OUT=str(out), GPULAB_QUIET="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("SKIP"), proc.stdout
    assert not out.exists()


@pytest.mark.skipif(_gpu(), reason="a GPU is present: the script would measure, not skip")
def test_strided_copy_skips_without_gpu(tmp_path):
    out = tmp_path / "strided_copy.json"
    env = dict(os.environ, GPULAB_BENCH_OUT=str(out))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "strided_copy.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("SKIP") and not out.exists()


def _bench(name):
    import importlib

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.mark.parametrize("n", [1, 2, 3, 64, 1000])
def test_latency_chase_is_one_cycle_through_every_node(n):
    import numpy as np

    lat = _bench("latency")
    a = lat.single_cycle(n, 32, np.random.default_rng(n))
    assert lat.is_single_cycle(a, 32)
    nodes = a[::32] // 32
    assert sorted(nodes.tolist()) == list(range(n))  # a permutation of the nodes
    broken = a.copy()
    if n >= 3:  # two cycles are caught
        broken[0], broken[int(a[0])] = broken[int(a[0])], broken[0]
        assert not lat.is_single_cycle(broken, 32) or n < 3


def test_divergence_paths_all_have_the_same_length():
    import re

    div = _bench("divergence_paths")
    src = div.kernel_source()
    lines = src.splitlines()
    # walk the tree: every loop (leaf) sits under exactly LEVELS tests and has FMA_PER_ITER FMAs
    loops = [k for k, ln in enumerate(lines) if ln.strip().startswith("for it in range(iters)")]
    assert len(loops) == 2**div.LEVELS
    for k in loops:
        depth = (len(lines[k]) - len(lines[k].lstrip()) - 8) // 4
        assert depth == div.LEVELS
        body = [ln for ln in lines[k + 1 : k + 1 + div.FMA_PER_ITER]]
        assert all(re.search(r"v = v \* float32\(.+\) \+ float32\(.+\)", b) for b in body)
    consts = {div.constants(k, j) for k in range(32) for j in range(div.FMA_PER_ITER)}
    assert len(consts) == 32 * div.FMA_PER_ITER  # no two paths share code


def test_divergence_kernel_matches_numpy_on_the_simulator():
    import numpy as np
    import gpulab

    div = _bench("divergence_paths")
    kern = div.build()
    x = np.random.default_rng(1).random(64, dtype=np.float32)
    for P in (1, 4, 32):
        sel = div.selector(P, "divergent", 64)
        out = np.zeros(64, np.float32)
        gpulab.launch(kern, 1, 64, out, x, sel, 2, backend="sim")
        np.testing.assert_allclose(out, div.reference(x, sel, 2), rtol=1e-6)


def test_stall_kernels_on_the_simulator():
    stall = _bench("stall_reasons")
    res = stall.run("sim", small=True)
    assert all(v["correct"] for v in res.values()), res
    m = res["conflicted_stores"]["metrics"]
    # every store of a warp is a 32-way conflict: 32 wavefronts, 31 of them conflicts
    st = m["smsp__sass_inst_executed_op_shared_st.sum"]
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 32 * st
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 31 * st
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0
    assert res["dependent_loads"]["metrics"]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] > 0
