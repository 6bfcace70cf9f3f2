"""Chapter 11's matmul steps on the simulator, their counters, the exercise check, and the
recorded H200 results."""

import gzip
import inspect
import json
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

import gpulab
from gpulab import metrics, results
from gpulab.checks import sgemm as chk
from gpulab.kernels import sgemm as S

ROOT = Path(__file__).resolve().parents[1]
LD, ST = metrics.GLOBAL_REQUESTS["ld"], metrics.GLOBAL_REQUESTS["st"]
CONF_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
CONF_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"


def run(kernel, step, m, k, n, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    grid, block = S.launch_config(step, m, k, n)
    rep = gpulab.launch(kernel, grid, block, c, a, b, backend="sim")
    return c, a.astype(np.float64) @ b.astype(np.float64), rep


VARIANTS = [(name, v[0], name) for name, v in S.STEPS.items()] + [
    ("vec_nopad", S.make_sgemm_vec(0, False), "vec"),
    ("vec_pad1", S.make_sgemm_vec(1, False), "vec"),
    ("vec_swizzle", S.make_sgemm_vec(0, True), "vec"),
    ("prefetch_bk16", S.make_sgemm_prefetch(16), "prefetch"),
]


@pytest.mark.parametrize("name,kernel,step", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_steps_compute_c(name, kernel, step):
    c, want, _ = run(kernel, step, 128, 48, 256, seed=hash(name) % 1000)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


def test_naive_and_shared_take_ragged_sizes():
    for step in ("naive", "shared"):
        c, want, _ = run(S.STEPS[step][0], step, 37, 21, 45)
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


def test_launch_config_states_the_contract():
    with pytest.raises(ValueError, match="multiples of its block tile 128 x 128"):
        S.launch_config("vec", 100, 64, 128)
    with pytest.raises(ValueError, match="K a multiple of 8"):
        S.launch_config("reg1d", 64, 12, 64)
    with pytest.raises(ValueError, match="unknown step"):
        S.launch_config("cublas", 64, 64, 64)
    assert S.launch_config("reg2d", 256, 64, 384) == ((3, 2), (16, 16))


def test_global_loads_per_fma_fall_step_by_step():
    m, k, n = 128, 64, 128
    per_fma = {}
    for step in ("naive", "shared", "reg1d", "reg2d"):
        _, _, rep = run(S.STEPS[step][0], step, m, k, n)
        per_fma[step] = rep.metrics[LD] / (m * n * k)
    assert per_fma["naive"] > per_fma["shared"] > per_fma["reg1d"] > per_fma["reg2d"]
    assert per_fma["naive"] == pytest.approx(1 / 16)  # 2 requests per warp and k, 32 lanes
    assert per_fma["shared"] == pytest.approx(per_fma["naive"] / 16)
    assert per_fma["reg1d"] == pytest.approx(per_fma["shared"] / 4)


def test_bank_conflicts_of_the_layouts():
    """reg2d reads B with a stride of 8 floats (4-way) and A across two rows (2-way); A stored
    k-major without padding is an 8-way conflict on the stores; padding by 4 or swizzling removes it."""
    m, k, n = 128, 16, 128
    conf = {}
    for name, kern, step in VARIANTS:
        if name in ("reg2d", "vec", "vec_nopad", "vec_pad1", "vec_swizzle"):
            _, _, rep = run(kern, step, m, k, n)
            conf[name] = (rep.metrics[CONF_LD], rep.metrics[CONF_ST])
    assert conf["reg2d"][0] > 3 * conf["vec"][0] > 0
    assert conf["vec_nopad"][1] > conf["vec_pad1"][1] > 0
    assert conf["vec"][1] == 0 and conf["vec_swizzle"][1] == 0


# ------------------------------------------------------------------ the exercise check


@cuda.jit
def _wrong_index(c, a, b):
    sa = cuda.shared.array((64, 8), float32)
    sb = cuda.shared.array((8, 64), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * 64 + tx
    row0, col0 = cuda.blockIdx.y * 64, cuda.blockIdx.x * 64
    acc = cuda.local.array(8, float32)
    for i in range(8):
        acc[i] = float32(0.0)
    for k0 in range(0, a.shape[1], 8):
        sa[t // 8, t % 8] = a[row0 + t // 8, k0 + t % 8]
        sb[ty, tx] = b[k0 + ty, col0 + tx]
        cuda.syncthreads()
        for kk in range(8):
            for i in range(8):
                acc[i] += sa[ty + i, kk] * sb[kk, tx]  # rows ty + i, not ty * 8 + i
        cuda.syncthreads()
    for i in range(8):
        c[row0 + ty * 8 + i, col0 + tx] = acc[i]


@cuda.jit
def _missing_barrier(c, a, b):
    sa = cuda.shared.array((64, 8), float32)
    sb = cuda.shared.array((8, 64), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * 64 + tx
    row0, col0 = cuda.blockIdx.y * 64, cuda.blockIdx.x * 64
    acc = cuda.local.array(8, float32)
    for i in range(8):
        acc[i] = float32(0.0)
    for k0 in range(0, a.shape[1], 8):
        sa[t // 8, t % 8] = a[row0 + t // 8, k0 + t % 8]
        sb[ty, tx] = b[k0 + ty, col0 + tx]
        cuda.syncthreads()
        for kk in range(8):
            for i in range(8):
                acc[i] += sa[ty * 8 + i, kk] * sb[kk, tx]
        # no barrier: the next K step overwrites tiles other warps still read
    for i in range(8):
        c[row0 + ty * 8 + i, col0 + tx] = acc[i]


@cuda.jit
def _plain_shared_tiles(c, a, b):
    """Right values, but each of the 8 outputs re-stages every tile: 8x the global loads."""
    sa = cuda.shared.array((64, 8), float32)
    sb = cuda.shared.array((8, 64), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * 64 + tx
    row0, col0 = cuda.blockIdx.y * 64, cuda.blockIdx.x * 64
    for i in range(8):
        acc = float32(0.0)
        for k0 in range(0, a.shape[1], 8):
            sa[t // 8, t % 8] = a[row0 + t // 8, k0 + t % 8]
            sb[ty, tx] = b[k0 + ty, col0 + tx]
            cuda.syncthreads()
            for kk in range(8):
                acc += sa[ty * 8 + i, kk] * sb[kk, tx]
            cuda.syncthreads()
        c[row0 + ty * 8 + i, col0 + tx] = acc


@cuda.jit
def _b_from_global(c, a, b):
    """Right values, A tiled, but B read from global memory in the inner loop."""
    sa = cuda.shared.array((64, 8), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * 64 + tx
    row0, col0 = cuda.blockIdx.y * 64, cuda.blockIdx.x * 64
    acc = cuda.local.array(8, float32)
    for i in range(8):
        acc[i] = float32(0.0)
    for k0 in range(0, a.shape[1], 8):
        sa[t // 8, t % 8] = a[row0 + t // 8, k0 + t % 8]
        cuda.syncthreads()
        for kk in range(8):
            bv = b[k0 + kk, col0 + tx]
            for i in range(8):
                acc[i] += sa[ty * 8 + i, kk] * bv
        cuda.syncthreads()
    for i in range(8):
        c[row0 + ty * 8 + i, col0 + tx] = acc[i]


def test_check_passes_the_step_kernel():
    res = chk.check_register_blocking(S.sgemm_1d, seed=3)
    assert res, res.message
    assert "of the 16 x 16 shared-tile kernel's global load requests" in res.message
    from gpulab.checks.tiling import matmul_load_bound

    assert 4 * chk.register_blocking_load_bound(128, 64, 192) == matmul_load_bound(128, 64, 192, 16)


@pytest.mark.parametrize(
    "kernel,words",
    [
        (_wrong_index, "elements wrong"),
        (_missing_barrier, "race"),
        (_plain_shared_tiles, "global load requests"),
        (_b_from_global, "global load requests"),
    ],
    ids=["wrong_index", "missing_barrier", "plain_shared_tiles", "b_from_global"],
)
def test_check_fails_typical_mistakes(kernel, words):
    res = chk.check_register_blocking(kernel, seed=4)
    assert not res
    assert words in res.message


def test_check_rejects_a_kernel_that_skips_the_work():
    @cuda.jit
    def zeros(c, a, b):
        i, j = cuda.grid(2)
        if i < c.shape[1] and j < c.shape[0]:
            c[j, i] = 0.0

    res = chk.check_register_blocking(zeros, seed=5)
    assert not res and "elements wrong" in res.message


def _staged(stage_a, shape, read):
    """The step kernel with A's tile staged by ``stage_a`` into a shared array of ``shape``."""
    src = f"""
from numba import cuda, float32

@cuda.jit
def kernel(c, a, b):
    sa = cuda.shared.array({shape}, float32)
    sb = cuda.shared.array((8, 64), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * 64 + tx
    row0, col0 = cuda.blockIdx.y * 64, cuda.blockIdx.x * 64
    acc = cuda.local.array(8, float32)
    for i in range(8):
        acc[i] = float32(0.0)
    for k0 in range(0, a.shape[1], 8):
        {stage_a}
        sb[ty, tx] = b[k0 + ty, col0 + tx]
        cuda.syncthreads()
        for kk in range(8):
            bv = sb[kk, tx]
            for i in range(8):
                acc[i] += {read} * bv
        cuda.syncthreads()
    for i in range(8):
        c[row0 + ty * 8 + i, col0 + tx] = acc[i]
"""
    import importlib.util
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(Path(f.name).stem, f.name)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.kernel


# A staged transposed: lanes tx read 32 rows of A, one float each (18 sectors per load request
# with B's 4), and sa[tx, ty] puts 8 lanes in one bank; right values, few requests
_TRANSPOSED_A = ("sa[tx, ty] = a[row0 + tx, k0 + ty]", "(64, 8)", "sa[ty * 8 + i, kk]")
# coalesced loads, A stored k-major: 8-way store conflicts unpadded, none padded by 4
_K_MAJOR = ("sa[t % 8, t // 8] = a[row0 + t // 8, k0 + t % 8]", "(8, 64)", "sa[kk, ty * 8 + i]")
_K_MAJOR_PAD4 = (_K_MAJOR[0], "(8, 68)", _K_MAJOR[2])


def test_check_requires_coalesced_conflict_free_staging():
    res = chk.check_register_blocking(_staged(*_TRANSPOSED_A), seed=6)
    assert not res
    assert "18.0 sectors per global load request (coalesced tile loads need 4)" in res.message
    assert "sa[t // 8, t % 8]" in res.message
    res = chk.check_register_blocking(_staged(*_K_MAJOR), seed=6)
    assert not res and "bank conflicts on stores" in res.message and "pad" in res.message
    res = chk.check_register_blocking(_staged(*_K_MAJOR_PAD4), seed=6)
    assert res, res.message
    assert "4 sectors per load request, no bank conflicts" in res.message


# ------------------------------------------------------------------ recorded H200 results


def test_recorded_h200_run_is_consistent():
    d = results.load("sgemm")
    assert d is not None, "gpulab/data/results/sgemm.json is missing"
    env = d["environment"]
    for key in ("gpu", "driver", "numba", "numba_cuda", "torch", "date_utc"):
        assert env[key], key
    flop = 2.0 * d["size"] ** 3
    torch_mean = 0.5 * (d["torch_before"]["gflops"] + d["torch_after"]["gflops"])
    assert d["torch_gflops_mean"] == pytest.approx(torch_mean)
    for name, rec in {**d["steps"], **d.get("steps_unrolled", {})}.items():
        assert rec["ok"], f"{name} was wrong on the GPU"
        assert rec["gflops"] == pytest.approx(flop / rec["ms"] / 1e6)
        assert rec["fraction_of_torch"] == pytest.approx(rec["gflops"] / torch_mean)
        assert rec["max_abs_err"] <= 1e-5 * rec["max_abs_ref"]
    assert set(S.STEPS) <= set(d["steps"])
    best = max(d["steps_unrolled"].values(), key=lambda r: r["gflops"])
    assert best["fraction_of_torch"] >= 0.80  # issue 27's goal, as recorded
    assert d["ncu"]["kernels"]["warptile"]["launch__registers_per_thread"] == best["registers"]
    assert (
        d["ncu"]["kernels"]["prefetch"]["launch__registers_per_thread"] == d["steps"]["prefetch"]["registers"]
    )


def test_merge_ncu_reads_the_csv(tmp_path):
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import sgemm as bench

    rows = ['"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
    for i, name in enumerate(["x", "y"]):
        rows.append(f'"{i}","k_{name}","launch__registers_per_thread","","{40 + i}"')
        rows.append(f'"{i}","k_{name}","gpu__time_duration.sum","ns","1,234"')
    csv_path = tmp_path / "n.csv.gz"
    with gzip.open(csv_path, "wt") as f:
        f.write("==PROF== noise\n" + "\n".join(rows) + "\n")
    (tmp_path / "sgemm.json").write_text(json.dumps({"size": 1}))
    doc = bench.merge_ncu(str(csv_path), str(tmp_path / "sgemm.json"), order=["a", "b"])
    assert doc["ncu"]["kernels"]["b"]["launch__registers_per_thread"] == 41
    assert doc["ncu"]["kernels"]["a"]["gpu__time_duration.sum"] == 1234
    with pytest.raises(SystemExit, match="2 profiled launches"):
        bench.merge_ncu(str(csv_path), str(tmp_path / "sgemm.json"), order=["a"])


# ------------------------------------------------------- steps 7-10: the generated, unrolled kernels
UNROLLED_SIM = [  # (make_sgemm_unrolled arguments, M, K, N): two K steps or more, both buffers used
    ({}, 128, 16, 128),
    ({"unsigned": True, "warp": (4, 8)}, 128, 24, 256),
    ({"unsigned": True, "warp": (8, 4), "bn": 64, "bk": 16}, 128, 32, 64),
]


@pytest.mark.slow
@pytest.mark.parametrize("kw,m,k,n", UNROLLED_SIM, ids=["signed", "u32_warp4x8", "128x64x16_warp8x4"])
def test_unrolled_kernels_compute_c_on_the_simulator(kw, m, k, n):
    kernel = S.make_sgemm_unrolled(jit=False, **kw)
    bm, bn = kw.get("bm", 128), kw.get("bn", 128)
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    grid, block = S.launch_config(
        "prefetch", m, k, n, tile=(bm, bn), bk=kw.get("bk", 8), block=((bm // 8) * (bn // 8),)
    )
    gpulab.launch(kernel, grid, block, c, a, b, backend="sim")
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)


def test_unrolled_source_has_no_inner_loop_and_checks_its_shape():
    src = S.sgemm_unrolled_source(unsigned=True)
    assert src.count(" for ") == 1  # only the loop over K steps
    assert src.count("+= a") == 8 * 8 * 8  # every multiply-add of a K step written out
    assert "uint32(" in src and "& 255" not in src
    with pytest.raises(ValueError, match="does not fit the loader"):
        S.sgemm_unrolled_source(tm=6)
    with pytest.raises(ValueError, match="warp shape"):
        S.sgemm_unrolled_source(warp=(4, 4))
    fn = S.make_sgemm_unrolled(jit=False, unsigned=True, warp=(4, 8))
    assert fn.__name__ == "sgemm_unrolled_128x128x8_8x8_u32_w4x8"
    assert "sat[" in "".join(inspect.getsourcelines(fn)[0])  # the simulator reads the source


@pytest.mark.slow
def test_unrolled_sass_is_mostly_ffma():
    """The claim the steps rest on, from this CPU: unrolled with uint32 indices, the K-step loop is
    >= 80% FFMA with 16-byte shared loads; signed 64-bit indices leave it near a third."""
    from gpulab.perf import sass

    ok, why = sass.available()
    if not ok:
        pytest.skip(why)
    sig = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"

    def loop_ffma_share(kernel):
        ks = sass.compile_sass(kernel, sig, fastmath=True)
        s, e = max(ks.loops, key=lambda se: se[1] - se[0])
        body = [i for i in ks.insns if s <= i.addr <= e]
        return sum(i.op == "FFMA" for i in body) / len(body), {i.op + i.mods for i in body}

    share, ops = loop_ffma_share(S.make_sgemm_unrolled(jit=False, unsigned=True))
    assert share >= 0.8 and "LDS.128" in ops
