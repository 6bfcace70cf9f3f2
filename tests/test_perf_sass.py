"""gpulab.perf.sass and gpulab.perf.dynamic: real SASS from the CPU, executed counts, fallback.

The compiler wheels are in requirements.txt, so CI has them: there a missing compiler FAILS
these tests instead of skipping them. Elsewhere (a bare pip install gpulab) they skip, saying why.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from numba import cuda, float32

from gpulab import metrics as M
from gpulab.perf import dynamic, engine, sass

OK, WHY = sass.available()
if not OK and os.environ.get("CI"):
    raise RuntimeError(f"CI must have the compiler wheels (requirements.txt): {WHY}")
needs_sass = pytest.mark.skipif(not OK, reason=f"compiler wheels missing (pip install 'gpulab[sass]'): {WHY}")


@cuda.jit(device=True)
def _twice(v):
    return v * float32(2.0)


def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


def uses_device_fn(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = _twice(x[i])


def loop_kernel(out, x, n):
    i = cuda.grid(1)
    if i < out.shape[0]:
        v = x[i]
        for k in range(n):
            v = v * float32(0.5) + float32(0.25)
        out[i] = v


def halves_loop(out, x, n):
    """Lanes 0-15 loop n times, lanes 16-31 do not: the loop runs with 16 lanes."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        v = x[i]
        if cuda.threadIdx.x % 32 < 16:
            for k in range(n):
                v = v * float32(0.5) + float32(0.25)
        out[i] = v


def int64_digits(out, x, base):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        s = 0
        while v > 0:
            s += v % base
            v //= base
        out[i] = s


ARGS = (np.zeros(64, np.float32), np.float32(2.0), np.ones(64, np.float32), np.ones(64, np.float32))


def _line_of(fn, text):
    import inspect

    src, start = inspect.getsourcelines(fn)
    return start + next(k for k, s in enumerate(src) if text in s)


@needs_sass
def test_saxpy_compiles_with_registers_and_an_ffma_on_its_line():
    ks = sass.compile_sass(saxpy, ARGS, "sm_90")
    assert 8 <= ks.registers <= 32
    assert ks.launch_registers == max(16, ks.registers)
    line = _line_of(saxpy, "out[i] = a * x[i]")
    ops = [i.op for i in ks.insns if i.line == line]
    assert "FFMA" in ops and "ST" in ops or "STG" in ops
    assert ks.loops == []  # straight code: no back edge


@needs_sass
@pytest.mark.parametrize("arch", ["sm_80", "sm_75"])
def test_other_architectures_compile(arch):
    ks = sass.compile_sass(loop_kernel, (np.zeros(4, np.float32), np.zeros(4, np.float32), 3), arch)
    assert ks.arch == arch and ks.registers > 0 and ks.loops
    assert ks.launch_registers == ks.registers  # the 16 floor is measured on the H200 only


@needs_sass
def test_a_kernel_calling_a_device_function_compiles_without_a_driver():
    ks = sass.compile_sass(uses_device_fn, (np.zeros(4, np.float32), np.zeros(4, np.float32)), "sm_90")
    assert ks.registers > 0
    assert not _twice.targetoptions.get("lineinfo")  # put back as it was


@needs_sass
def test_a_signature_string_is_accepted_and_a_bad_arch_refused():
    ks = sass.compile_sass(loop_kernel, "void(float32[:], float32[:], int32)", "sm_90")
    assert ks.insns
    with pytest.raises(ValueError, match="unknown architecture"):
        sass.compile_sass(loop_kernel, "void(float32[:], float32[:], int32)", "sm_61")


def _dyn(fn, args, grid, block):
    ks = sass.compile_sass(fn, args, "sm_90")
    c, _ = engine.sample_counts(fn, grid, block, args)
    E = {ln: v[M.INST_EXECUTED] for ln, v in c.lines.items()}
    T = {ln: v[M.THREAD_INST_EXECUTED] for ln, v in c.lines.items()}
    return ks, dynamic.count(ks, E, T, c.blocks * c.warps_per_block, dynamic.structure(fn))


@needs_sass
def test_unrolled_loop_counts_each_ffma_once_per_iteration():
    """The loop is unrolled 4x with a remainder loop; 37 iterations run 37 FFMAs per warp."""
    n = 37
    args = (np.zeros(64, np.float32), np.ones(64, np.float32), n)
    ks, d = _dyn(loop_kernel, args, 1, 64)
    assert sorted(d.unroll[_line_of(loop_kernel, "for k in range(n)")], reverse=True)[0] == 4
    assert d.per_op["FFMA"] == pytest.approx(2 * n, rel=0.03)  # 2 warps
    assert d.threads_per_inst == pytest.approx(32.0)


@needs_sass
def test_half_warp_loop_gives_16_threads_per_loop_instruction():
    n = 64
    args = (np.zeros(64, np.float32), np.ones(64, np.float32), n)
    _, d = _dyn(halves_loop, args, 1, 64)
    assert d.per_op["FFMA"] == pytest.approx(2 * n, rel=0.03)
    # most instructions are in the loop, run by 16 lanes: the launch's average is near 16
    assert 16.0 < d.threads_per_inst < 20.0


@needs_sass
def test_int64_division_fast_path_is_counted_and_its_subroutine_is_not():
    args = (np.zeros(64, np.int64), np.full(64, 123456, np.int64), 10)  # a runtime divisor
    ks, d = _dyn(int64_digits, args, 1, 64)
    assert any(i.sub for i in ks.insns)  # the 64-bit division routine is in the cubin
    # six digits: six trips, each dozens of instructions (two 64-bit divisions), but bounded
    per_warp = d.inst / 2
    assert 6 * 20 < per_warp < 6 * 200


def test_parse_finds_back_edges_lines_and_subroutines():
    text = """
\t//## File "/k.py", line 3
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_0:
\t//## File "/k.py", line 5
        /*0010*/                   FFMA R2, R2, R3, R4 ;
        /*0020*/               @P0 BRA `(.L_x_0) ;
\t//## File "/other.py", line 99
        /*0030*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_div_s64) ;
        /*0040*/                   EXIT ;
$__internal_0_$__cuda_sm20_div_s64:
        /*0050*/                   IMAD.WIDE.U32 R2, R3, R4, RZ ;
        /*0060*/                   RET.REL.NODEC R10 `(k) ;
.L_x_1:
        /*0070*/                   BRA `(.L_x_1);
        /*0080*/                   NOP;
"""
    insns = sass.parse(text, "/k.py")
    assert [i.op for i in insns] == ["LDC", "FFMA", "BRA", "CALL", "EXIT", "IMAD", "RET"]
    assert [i.line for i in insns[:5]] == [3, 5, 5, 5, 5]  # another file keeps the kernel's line
    assert insns[2].target == 0x10 and insns[2].pred.strip() == "@P0"
    assert sass._loops(insns) == [(0x10, 0x20)]
    assert [i.sub for i in insns] == [False] * 5 + [True, True]
    assert insns[5].pipe == "int64" and insns[1].pipe == "fp32"


def test_without_the_compiler_predict_still_runs_and_says_so(monkeypatch):
    def missing():
        raise sass.SassUnavailable("no usable ptxas (test)")

    monkeypatch.setattr(sass, "available", lambda: (False, "no usable ptxas (test)"))
    monkeypatch.setattr(sass, "tools", missing)
    p = engine.predict(saxpy, 1, 64, *ARGS)
    assert p.time_s > 0
    assert any("No SASS here: no usable ptxas (test)" in n for n in p.notes)
    assert any("estimated from the source" in n for n in p.notes)


@needs_sass
def test_predict_with_the_compiler_uses_ptxas_registers_and_sass_counts():
    p = engine.predict(saxpy, 1, 64, *ARGS)
    ks = sass.compile_sass(saxpy, ARGS, "sm_90")
    assert p.occupancy["registers_per_thread"] == ks.launch_registers
    assert any("from the compiled code" in n for n in p.notes)
    q = engine.predict(saxpy, 1, 64, *ARGS, use_sass=False)
    assert any("estimated from the source" in n for n in q.notes)
    # the SASS count is an integer number of instructions per warp (2 warps, straight code)
    assert p.metrics["smsp__inst_executed.sum"] / 2 == pytest.approx(
        round(p.metrics["smsp__inst_executed.sum"] / 2)
    )


@needs_sass
def test_occupancy_takes_registers_from_ptxas():
    from gpulab.models.occupancy import kernel_occupancy, kernel_registers, occupancy

    regs, why = kernel_registers(saxpy, *ARGS)
    assert regs == sass.compile_sass(saxpy, ARGS, "sm_90").launch_registers and "ptxas" in why
    assert kernel_occupancy(saxpy, 256, *ARGS) == occupancy(256, regs, 0, "sm_90")


def test_occupancy_without_ptxas_says_so(monkeypatch):
    from gpulab.models.occupancy import kernel_occupancy, kernel_registers

    monkeypatch.setattr(sass, "available", lambda: (False, "no usable ptxas (test)"))
    regs, why = kernel_registers(saxpy, *ARGS)
    assert regs is None and "no usable ptxas (test)" in why
    with pytest.raises(ValueError, match="needs ptxas"):
        kernel_occupancy(saxpy, 256, *ARGS)


def halving_while(out, x):
    """A data-dependent while loop: never unrolled, whatever its body's instruction counts."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        k = 0
        while v > float32(1.0):
            v = v * float32(0.5) + float32(0.01) * v * float32(0.5)
            k += 1
        out[i] = k


@needs_sass
def test_a_while_loop_is_not_taken_as_unrolled():
    args = (np.zeros(64, np.int64), np.full(64, 1000.0, np.float32))
    ks, d = _dyn(halving_while, args, 1, 64)
    assert all(u == 1 for us in d.unroll.values() for u in us)
    c, _ = engine.sample_counts(halving_while, 1, 64, args)
    body = _line_of(halving_while, "v = v * float32(0.5)")
    iters = c.lines[body][M.INST_EXECUTED]
    fmul_like = sum(d.per_op.get(op, 0) for op in ("FMUL", "FFMA"))
    assert fmul_like >= 2 * iters  # every iteration runs the line's multiplies


def blur9(out, img):
    """blur_naive's shape: a 9x9 box of global loads; ptxas unrolls dx fully and dy 4 times."""
    x, y = cuda.grid(2)
    h = img.shape[0]
    w = img.shape[1]
    if x < w and y < h:
        s = float32(0.0)
        for dy in range(-4, 5):
            yy = min(max(y + dy, 0), h - 1)
            for dx in range(-4, 5):
                xx = min(max(x + dx, 0), w - 1)
                s += img[yy, xx]
        out[y, x] = s / 81


def layernorm_like(out, x, eps):
    sh = cuda.shared.array(256, float32)
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = x.shape[1]
    s = float32(0.0)
    for j in range(t, n, 256):
        s += x[row, j]
    sh[t] = s
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            sh[t] += sh[t + h]
        cuda.syncthreads()
        h //= 2
    mean = sh[0] / n
    cuda.syncthreads()
    q = float32(0.0)
    for j in range(t, n, 256):
        d = x[row, j] - mean
        q += d * d
    sh[t] = q
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            sh[t] += sh[t + h]
        cuda.syncthreads()
        h //= 2
    inv = float32(1.0) / math.sqrt(sh[0] / n + eps)
    for j in range(t, n, 256):
        out[row, j] = (x[row, j] - mean) * inv


def gemv_cols(y, a, x):
    col = cuda.grid(1)
    if col < a.shape[1]:
        acc = float32(0.0)
        for r in range(a.shape[0]):
            acc += a[r, col] * x[r]
        y[col] = acc


@needs_sass
def test_registers_come_from_the_ptx_the_gpu_runs_without_line_info():
    """NVVM writes different PTX with line info: blind_r4's layer norm is 39 registers with it and
    44 without; the H200 ran it (compiled without line info) with 44."""
    args = (np.zeros((8, 2048), np.float32), np.zeros((8, 2048), np.float32), 1e-5)
    ks = sass.compile_sass(layernorm_like, args)
    assert (ks.registers, ks.registers_lineinfo) == (44, 39)
    assert ks.launch_registers == 44


@needs_sass
def test_an_inner_loop_unrolled_away_counts_once_per_outer_trip():
    """blur_naive on the H200 ran 929 warp instructions per warp (ncu, 4096^2 image: 487.06 M
    for 524,288 warps). Counting the 9 taps of the unrolled dx loop once per execution of the
    line gave 3.5x that; they run once per trip of the (4x unrolled) dy loop."""
    n = 64
    args = (np.zeros((n, n), np.float32), np.ones((n, n), np.float32))
    ks, d = _dyn(blur9, args, (n // 16, n // 16), (16, 16))
    assert d.unroll[_line_of(blur9, "for dy in range")] == [4]
    assert d.inst / (n * n // 32) == pytest.approx(929, rel=0.12)


@needs_sass
def test_load_waits_counts_the_groups_of_loads_a_loop_body_waits_for():
    """gemv's loop is unrolled 4x but loads two rows, uses them, then loads two more: 2 waits."""
    args = (np.zeros(256, np.float32), np.ones((64, 256), np.float32), np.ones(64, np.float32))
    ks = sass.compile_sass(gemv_cols, args)
    main = max(ks.loops, key=lambda r: r[1] - r[0])
    assert sass.load_waits(ks.insns, *main) == 2
