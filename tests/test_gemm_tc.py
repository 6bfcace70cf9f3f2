"""gpulab.kernels.gemm_tc: the tensor-core GEMM's factory, its CUDA C++ side, and (on a GPU) its answer.

On the CPU the generated numba kernel is run thread by thread (each thread a generator, every
``cuda.syncthreads()`` a yield) with the CUDA C++ device function replaced by an emulation of what
it does: ``ldmatrix`` by the PTX ISA's rule (lane 8j + r gives row r of matrix j; lane l receives
row l/4, columns 2(l%4), 2(l%4)+1, or their transpose) and ``mma.sync`` by gpulab.models.mma. So the
kernel's copies, shared layouts, addressing and epilogue are checked against A B here; the real
instructions are checked on the GPU (the last tests, skipped without one).
"""

import os
import re
import shutil
import subprocess
import types

import numpy as np
import pytest

from gpulab.errors import BackendUnavailable, LaunchConfigError
from gpulab.kernels import gemm_tc as G
from gpulab.models import mma


# ------------------------------------------------------------------ the emulated device function
def _ldmatrix_x4(halves, addrs, trans):
    """Registers j = 0..3 of each lane as (32, 4, 2) halves; ``addrs``: each lane's row address (halves)."""
    out = np.zeros((32, 4, 2), np.float16)
    for j in range(4):
        rows = np.stack([halves[addrs[8 * j + r] : addrs[8 * j + r] + 8] for r in range(8)])  # 8 x 8
        for lane in range(32):
            g, q = lane // 4, lane % 4
            out[lane, j] = rows[2 * q : 2 * q + 2, g] if trans else rows[g, 2 * q : 2 * q + 2]
    return out


def _warp_mma_ktile(v, calls):
    """What warp_mma_ktile<WM, WN, BK, LDA, LDB> does, for the 32 lanes' calls (acc, sa, sb, wrow, wcol)."""
    (acc0, _), (sa, sa_off), (sb, sb_off), wrow, wcol, _ = calls[0]
    h = v.halves
    sah, sbh = sa.view(np.float16), sb.view(np.float16)
    sa_off, sb_off, wrow, wcol = sa_off * h, sb_off * h, int(wrow), int(wcol)
    accs = [c[0][0] for c in sorted(calls, key=lambda c: int(c[5]))]
    lanes = np.arange(32)
    mt, nt = v.wm // 16, v.wn // 8
    a_row = (wrow + (lanes & 15)) * v.lda
    b_row = (((lanes >> 3) & 1) * 8 + (lanes & 7)) * v.ldb
    a_key = (lanes >> 1) & 3 if v.bk == 32 else lanes & 7  # swizzle keys of the lanes' rows
    b_key = lanes & 7
    for kk in range(0, v.bk, 16):
        a = []
        ca = kk // 8 + (lanes >> 4)
        a_col = 8 * (ca ^ a_key if v.swizzle else ca)
        for mi in range(mt):
            addrs = sa_off + a_row + mi * 16 * v.lda + a_col
            a.append(_ldmatrix_x4(sah, addrs, trans=False).reshape(32, 8))  # a0..a7
        b = [None] * nt
        for nj in range(0, nt, 2):
            cb = (wcol >> 3) + nj + (lanes >> 4)
            addrs = sb_off + b_row + kk * v.ldb + 8 * (cb ^ b_key if v.swizzle else cb)
            r = _ldmatrix_x4(sbh, addrs, trans=True)
            b[nj], b[nj + 1] = r[:, 0:2].reshape(32, 4), r[:, 2:4].reshape(32, 4)
        for mi in range(mt):
            for ni in range(nt):
                i = (mi * nt + ni) * 4
                c = np.stack([acc[i : i + 4] for acc in accs])
                d = mma.mma_sync_m16n8k16(a[mi], b[ni], c)
                for lane, acc in enumerate(accs):
                    acc[i : i + 4] = d[lane]


def run_emulated(v, a16, b16):
    """C = A B by the generated kernel, emulated on the CPU (see the module docstring)."""
    m, k = a16.shape
    n = b16.shape[1]
    G.check_shapes(v, m, n, k)
    word = np.uint32 if v.word == 32 else np.uint64
    a, b = np.ascontiguousarray(a16).view(word), np.ascontiguousarray(b16).view(word)
    c = np.full((m, n), np.nan, np.float32)
    src = G.gemm_tc_source(v).replace("cuda.syncthreads()", "yield")
    # lanes run one after another here, so a warp's last MMA must finish before any lane reads acc
    src = src.replace("    # C fragments", "    yield\n    # C fragments")
    code = compile(src, "<gemm_tc emulated>", "exec")
    grid, nthreads = G.launch_config(v, m, n)
    for by in range(grid[1]):
        for bx in range(grid[0]):
            shared = []
            pending = {}

            def tc_ktile(accp, sap, sbp, wrow, wcol, lane, _t=None):
                calls = pending.setdefault(_t // 32, [])
                calls.append((accp, sap, sbp, wrow, wcol, lane))
                if len(calls) == 32:  # the whole warp has arrived: mma.sync is warp-collective
                    _warp_mma_ktile(v, calls)
                    calls.clear()

            def thread(t):
                def shared_array(size, dtype, alignment=None):
                    i = getattr(shared_array, "i", 0)
                    shared_array.i = i + 1
                    if len(shared) <= i:
                        shared.append(np.zeros(size, dtype))
                    return shared[i]

                fake = types.SimpleNamespace(
                    threadIdx=types.SimpleNamespace(x=t),
                    blockIdx=types.SimpleNamespace(x=bx, y=by),
                    shared=types.SimpleNamespace(array=shared_array),
                    local=types.SimpleNamespace(array=lambda size, dtype: np.zeros(size, dtype)),
                    syncthreads=None,
                )
                scope = {
                    "cuda": fake,
                    "float32": np.float32,
                    "U": np.uint32,
                    "WORD": word,
                    "addr": lambda arr, i: (arr, int(i)),
                    "tc_ktile": lambda *args: tc_ktile(*args, _t=t),
                }
                exec(code, scope)
                return scope[f"gemm_tc_{v.name}"](c, a, b)

            gens = [thread(t) for t in range(nthreads)]
            live = list(gens)
            while live:  # one barrier phase per round; every thread must reach the same barriers
                done = []
                for g_ in live:
                    try:
                        next(g_)
                    except StopIteration:
                        done.append(g_)
                assert len(done) in (0, len(live)), "threads disagree on the number of barriers"
                live = [g_ for g_ in live if g_ not in done]
            assert not any(pending.values()), "a warp's lanes did not all call tc_ktile"
    return c


def _inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)


def _close(c, a, b):
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    return np.max(np.abs(c - ref) / scale) <= a.shape[1] * np.finfo(np.float32).eps


# ------------------------------------------------------------------ CPU tests
def test_default_variant_emulated_computes_ab():
    v = G.VARIANTS[G.DEFAULT]
    a, b = _inputs(v.bm, v.bn, 2 * v.bk)  # two k-tiles: both shared stages and the prefetch
    c = run_emulated(v, a, b)
    assert not np.isnan(c).any()
    assert _close(c, a, b)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in G.VARIANTS if n != G.DEFAULT])
def test_every_variant_emulated_on_a_2x2_grid(name):
    v = G.VARIANTS[name]
    a, b = _inputs(2 * v.bm, 2 * v.bn, 3 * v.bk, seed=1)
    assert _close(run_emulated(v, a, b), a, b)


def test_emulation_notices_a_wrong_kernel(monkeypatch):
    """The emulated check is not vacuous: B's shared row stride off by 8 halves gives a wrong C."""
    v = G.VARIANTS[G.DEFAULT]
    a, b = _inputs(v.bm, v.bn, v.bk)
    real = G.gemm_tc_source
    monkeypatch.setattr(
        G,
        "gemm_tc_source",
        lambda v_: real(v_).replace(f"br * U({v.ldb // v.halves})", f"br * U({v.bn // v.halves})"),
    )
    assert not _close(run_emulated(v, a, b), a, b)


def test_emulation_notices_a_store_that_forgets_the_swizzle(monkeypatch):
    v = G.VARIANTS["128x128x32_w64x32_u64_swz"]
    a, b = _inputs(v.bm, v.bn, v.bk)
    assert _close(run_emulated(v, a, b), a, b)
    real = G.gemm_tc_source
    monkeypatch.setattr(G, "gemm_tc_source", lambda v_: real(v_).replace("^ (br & U(7))", "^ U(0)"))
    assert not _close(run_emulated(v, a, b), a, b)


def test_source_has_one_mma_call_per_k_tile_and_no_negative_index_types():
    for v in G.VARIANTS.values():
        src = G.gemm_tc_source(v)
        compile(src, "<gemm_tc>", "exec")
        assert src.count("tc_ktile(") == 1
        assert src.count("cuda.syncthreads()") == 3 - v.stages  # two shared stages: one barrier per k-tile
        stores = re.findall(r"\bc\[r \+ U\((\d+)\), q \+ U\((\d+)\)\] = acc\[(\d+)\]", src)
        assert sorted(int(x[2]) for x in stores) == list(range(v.wm * v.wn // 32))  # each accumulator once
        assert len({(x[0], x[1]) for x in stores}) == len(stores)  # each to its own place
        assert "t = U(cuda.threadIdx.x)" in src


def test_benchmark_records_known_variants():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "sgemm_tc", Path(__file__).parents[1] / "benchmarks" / "sgemm_tc.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert set(mod.RECORDED) <= set(G.VARIANTS) and G.DEFAULT in mod.RECORDED


def test_variant_contract_errors():
    with pytest.raises(ValueError, match="multiples of 16"):
        G.Variant(wm=24)
    with pytest.raises(ValueError, match="whole number"):
        G.Variant(bm=96)
    with pytest.raises(ValueError, match="32 or 64"):
        G.Variant(word=128)
    with pytest.raises(LaunchConfigError, match="K=100 is not a multiple of 32"):
        G.check_shapes(G.Variant(), 128, 128, 100)
    with pytest.raises(ValueError, match="unknown tensor-core variant"):
        G.make_gemm_tc("nope", jit=False)


def test_gpu_only_on_other_backends():
    a, b = _inputs(128, 128, 32)
    with pytest.raises(BackendUnavailable, match="GPU only"):
        G.gemm_tc(a, b, backend="sim")


def test_simulator_launch_says_gpu_only():
    import gpulab

    v = G.VARIANTS[G.DEFAULT]
    a, b = _inputs(v.bm, v.bn, v.bk)
    c = np.zeros((v.bm, v.bn), np.float32)
    with pytest.raises(Exception, match="runs on a GPU only") as e:
        gpulab.launch(
            G.make_gemm_tc(v), (1, 1), v.threads, c, a.view(np.uint64), b.view(np.uint64), backend="sim"
        )
    assert "BackendUnavailable" in str(e.value) or isinstance(e.value, BackendUnavailable)


def _have_gpu():
    try:
        from numba import cuda

        return cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(_have_gpu(), reason="checks the no-GPU message")
def test_no_gpu_raises_clearly():
    a, b = _inputs(128, 128, 32)
    with pytest.raises(BackendUnavailable, match="no NVIDIA GPU is visible"):
        G.gemm_tc(a, b)


def test_cu_source_compiles_to_ptx_with_mma_and_ldmatrix(tmp_path):
    """nvcc (where present) compiles the device function; its PTX holds the instructions we wrote."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        try:
            import nvidia

            cands = [os.path.join(p, "cu13", "bin", "nvcc") for p in nvidia.__path__]
            nvcc = next((c for c in cands if os.path.exists(c)), None)
        except ImportError:
            nvcc = None
    if nvcc is None:
        pytest.skip("no nvcc here")
    v = G.VARIANTS[G.DEFAULT]
    cu = tmp_path / "k.cu"
    cu.write_text(G.cu_source(v))
    r = subprocess.run(
        [nvcc, "-arch=sm_90", "-rdc=true", "-ptx", str(cu), "-o", str(tmp_path / "k.ptx")],
        capture_output=True,
        text=True,
    )
    if r.returncode and ("cannot find" in r.stderr or "No such file" in r.stderr):
        pytest.skip(f"nvcc incomplete here: {r.stderr[:200]}")
    assert r.returncode == 0, r.stderr
    ptx = (tmp_path / "k.ptx").read_text()
    mt, nt = v.wm // 16, v.wn // 8
    assert f".func  (.param .b32 func_retval0) {v.device_function}" in ptx or v.device_function in ptx
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == mt * nt * v.bk // 16
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == (nt // 2) * v.bk // 16


@pytest.mark.slow
def test_linked_sass_has_hmma_and_no_local_memory():
    """The kernel and the device function linked with LTO (nvJitLink) as the GPU links them: HMMA
    in the SASS, no spills, no local loads or stores (the accumulators stayed in registers)."""
    try:
        sass = G.linked_sass(G.VARIANTS[G.DEFAULT])
    except G.SassUnavailable as e:
        pytest.skip(str(e))
    v = G.VARIANTS[G.DEFAULT]
    assert sass["opcodes"].get("HMMA", 0) == (v.wm // 16) * (v.wn // 8) * v.bk // 16
    assert sass["opcodes"].get("LDSM", 0) > 0
    assert sass["spill_bytes"] == 0
    assert sass["opcodes"].get("LDL", 0) == 0 and sass["opcodes"].get("STL", 0) == 0
    assert sass["opcodes"].get("CALL", 0) == 0  # inlined
    assert sass["registers"] <= 255


# ------------------------------------------------------------------ GPU tests
gpu = pytest.mark.skipif(not _have_gpu(), reason="needs a CUDA GPU")


@gpu
@pytest.mark.parametrize("name", list(G.VARIANTS))
def test_gpu_matches_float64(name):
    v = G.VARIANTS[name]
    a, b = _inputs(2 * v.bm, 2 * v.bn, 4 * v.bk, seed=3)
    assert _close(G.gemm_tc(a, b, variant=v), a, b)


# ------------------------------------------------------------------ the recorded GPU run
def _recorded():
    import json

    from gpulab.results import RESULTS_DIR

    path = RESULTS_DIR / "sgemm.json"
    doc = json.loads(path.read_text()) if path.exists() else {}
    if "tensor_core" not in doc:
        pytest.skip("sgemm.json has no tensor_core record yet")
    return doc["tensor_core"]


def test_recorded_run_meets_the_goal_and_every_timed_c_is_right():
    tc = _recorded()
    assert tc["command"].startswith("python benchmarks/sgemm.py --tensor-core")
    assert "H200" in tc["device"]
    best = tc["sizes"]["8192"]["best"]
    assert best["fraction_of_torch_fp16"] >= 0.25  # issue 27's goal
    for size, srec in tc["sizes"].items():
        for name, r in srec["variants"].items():
            assert r["check"]["ok"] and r["check"]["entries_checked"] == int(size) ** 2, (size, name)
            assert r["sm_clock"]["min_MHz"] > 1000, (size, name)
        assert srec["torch_fp16"]["check_fp16_out"]["ok"]
    timed = {n for s in tc["sizes"].values() for n in s["variants"]}
    assert all(tc["variants"][n]["local_bytes"] == 0 for n in timed if G.VARIANTS[n].lto)
    assert tc["variants"]["128x128x32_w64x32_u64_nolto"]["local_bytes"] > 0


def test_fastest_recorded_names_a_known_variant():
    tc = _recorded()
    name = G.fastest_recorded(8192)
    assert name == tc["sizes"]["8192"]["best"]["variant"] and name in G.VARIANTS
