"""Random small kernels give the same results on gpulab's simulator and on Numba's."""

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import cuda, float32

import gpulab

LEAVES = ["i", "a[i]", "b[i]", "n", "3", "7", "acc"]


def expr(depth):
    leaf = st.sampled_from(LEAVES)
    if depth == 0:
        return leaf
    sub = expr(depth - 1)
    binop = st.tuples(sub, st.sampled_from(["+", "-", "*"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
    modop = st.tuples(sub, st.sampled_from(["%", "//"]), st.sampled_from(["3", "5", "8"])).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    )
    call = st.tuples(st.sampled_from(["min", "max"]), sub, sub).map(lambda t: f"{t[0]}({t[1]}, {t[2]})")
    return st.one_of(leaf, binop, modop, call)


def cond(depth):
    cmp = st.tuples(expr(depth), st.sampled_from(["<", ">", "==", "!=", "<=", ">="]), expr(depth)).map(
        lambda t: f"{t[0]} {t[1]} {t[2]}"
    )
    return st.one_of(
        cmp, st.tuples(cmp, st.sampled_from(["and", "or"]), cmp).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})")
    )


def stmt(depth):
    assign = st.tuples(st.sampled_from(["acc", "acc", "tmp"]), expr(2)).map(lambda t: f"{t[0]} = {t[1]}")
    aug = expr(2).map(lambda e: f"acc += {e}")
    if depth == 0:
        return st.one_of(assign, aug)
    body = st.lists(stmt(depth - 1), min_size=1, max_size=2)
    ifelse = st.tuples(cond(1), body, body).map(
        lambda t: "if " + t[0] + ":\n" + _ind(t[1]) + "\nelse:\n" + _ind(t[2])
    )
    loop = st.tuples(st.sampled_from(["i % 5", "3", "b[i] % 4", "n % 3"]), body).map(
        lambda t: f"for k in range({t[0]}):\n" + _ind(t[1] + ["acc += k"])
    )
    brk = st.tuples(st.sampled_from(["i % 6", "4"]), cond(0), body).map(
        lambda t: f"for k in range({t[0]}):\n" + _ind([f"if {t[1]}:\n    break"] + t[2])
    )
    return st.one_of(assign, aug, ifelse, loop, brk)


def _ind(lines):
    return textwrap.indent("\n".join(lines), "    ")


def make_kernel(tmp_path, body, counter=[0]):
    counter[0] += 1
    src = (
        "from numba import cuda\n\n@cuda.jit\ndef k(out, a, b, n):\n"
        "    i = cuda.grid(1)\n    if i >= out.shape[0]:\n        return\n"
        "    acc = 0\n    tmp = 1\n" + _ind(body) + "\n    out[i] = acc + tmp\n"
    )
    path = tmp_path / f"rk{counter[0]}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k, src


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.lists(stmt(2), min_size=1, max_size=4), seed=st.integers(0, 2**16), n=st.integers(1, 70))
def test_random_kernels_agree(tmp_path, body, seed, n):
    kernel, src = make_kernel(tmp_path, body)
    rng = np.random.default_rng(seed)
    a = rng.integers(-20, 20, size=n).astype(np.int64)
    b = rng.integers(0, 20, size=n).astype(np.int64)
    out_sim, out_ref = np.zeros(n, np.int64), np.zeros(n, np.int64)
    grid = (n + 31) // 32
    gpulab.launch(kernel, grid, 32, out_sim, a, b, n, backend="sim")
    gpulab.launch(kernel, grid, 32, out_ref, a, b, n, backend="numba-sim")
    assert np.array_equal(out_sim, out_ref), src


@cuda.jit
def rev(out, a):
    sh = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)] * 2
    cuda.syncthreads()
    out[cuda.grid(1)] = sh[63 - t] + t


def test_shared_memory_kernel_agrees_with_numba_sim():
    """(Numba's simulator only swaps a module-global `cuda`, so the kernel lives at module level.)"""
    a = np.arange(128, dtype=np.float32)
    o1, o2 = np.zeros_like(a), np.zeros_like(a)
    gpulab.launch(rev, 2, 64, o1, a, backend="sim")
    gpulab.launch(rev, 2, 64, o2, a, backend="numba-sim")
    assert np.array_equal(o1, o2)


def test_works_with_numba_cudasim_enabled(tmp_path):
    """A kernel defined while NUMBA_ENABLE_CUDASIM=1 runs on gpulab's simulator too."""
    code = textwrap.dedent("""
        import numpy as np
        from numba import cuda
        import gpulab

        @cuda.jit
        def add(out, a, b):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = a[i] + b[i]

        a = np.arange(128.0); b = np.ones(128); out = np.zeros(128)
        rep = gpulab.launch(add, 4, 32, out, a, b, backend="sim")
        assert np.array_equal(out, a + b) and rep.sectors_per_request("ld") == 8.0
        print("backend", gpulab.BACKEND)
    """)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", GPULAB_QUIET="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    script = tmp_path / "cudasim_kernel.py"
    script.write_text(code)
    res = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "backend sim" in res.stdout
