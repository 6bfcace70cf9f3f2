"""The model's revision on blind round 6 (issue 24): the 64-bit division routine counted for the
warps whose operands need it, float atomics on one sector serialised per address, partial-sector
random stores beyond L2 as DRAM read-modify-writes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from numba import cuda

from gpulab.perf import engine, gpus, sample, sass

H200 = gpus.H200
OK, WHY = sass.available()
needs_sass = pytest.mark.skipif(not OK, reason=f"compiler wheels missing (pip install 'gpulab[sass]'): {WHY}")


@cuda.jit
def mod_by(out, x, m):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] % m


@cuda.jit
def eight_slots(out, x):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, i % 8, x[i])


def test_wide_division_warps_are_those_with_an_operand_beyond_32_bits():
    mask = np.ones(64, bool)
    small = np.arange(64, dtype=np.int64)
    assert sample.wide_division_warps(mask, small, np.int64(7), small % 7) == 0
    wide = small.copy()
    wide[40] = 1 << 40  # one lane of the second warp
    assert sample.wide_division_warps(mask, wide, np.int64(7), wide % 7) == 1
    neg = small - 100  # negative operands have their high bits set: the routine runs
    assert sample.wide_division_warps(mask, neg, np.int64(7), neg % 7) == 2
    mask[32:] = False  # an inactive warp does not run it
    assert sample.wide_division_warps(mask, wide, np.int64(7), wide % 7) == 0
    f = small.astype(np.float64)
    assert sample.wide_division_warps(np.ones(64, bool), f, 7.0, f % 7) == 0  # float: no routine


def test_the_division_routine_is_told_from_other_slow_paths():
    def call(name):
        return sass.Insn(0, 1, "CALL", ".REL.NOINC", "", f"`({name})", callee=name)

    assert call("$__internal_0_$__cuda_sm20_rem_s64").wide_division
    assert call("$__internal_0_$__cuda_sm20_div_u64").wide_division
    assert not call("$__internal_1_$__cuda_sm20_div_rn_f64_full").wide_division


@needs_sass
def test_the_64_bit_division_routine_runs_for_wide_operands_only():
    n = 4096
    small = np.arange(n, dtype=np.int64)
    wide = small + (1 << 40)
    ks = sass.compile_sass(mod_by, (np.zeros(n, np.int64), small, np.int64(97)))
    assert any(i.wide_division for i in ks.insns if i.op == "CALL")
    routine = sum(1 for i in ks.insns if i.sub and "_s64" in i.func)
    warps = n // 32

    def inst(x):
        c, _ = engine.sample_counts(
            mod_by, n // 256, 256, (np.zeros(n, np.int64), x, np.int64(97)), registers=32
        )
        engine.attach_sass(c, ks, mod_by.py_func)
        return c.extra["sass_dynamic"].inst

    # each warp runs the routine's body once more with wide operands (its branches all counted)
    extra = inst(wide) - inst(small)
    assert 0.8 * routine * warps <= extra <= 1.2 * (routine + 8) * warps


def test_float_atomics_on_one_sector_serialise_per_address():
    n = 1 << 16
    p = engine.predict(eight_slots, n // 256, 256, np.zeros(8, np.float32), np.ones(n, np.float32))
    busiest = n / 8 * H200.atomic_float_op_s  # lanes on one address, one after another
    assert p.bound("atomics") == pytest.approx(busiest, rel=0.05)
    assert p.bound("atomics") < 2 * busiest  # not the 8 addresses' lanes one by one (8x)


def _counts(stored, sectors, total_mb):
    mb = 2**20
    return SimpleNamespace(
        extra={
            "foot_ld": {"x": (total_mb * mb / 2, total_mb * mb / 2)},
            "foot_st": {"out": total_mb * mb / 2},
            "st_blocks": {"out": (sectors, stored)},
        }
    )


def test_partial_sector_scatters_beyond_l2_read_and_write_a_burst_each():
    n = 8 * 2**20  # float64 stores, each to its own sector (a block writes 8 of each 32 bytes)
    c = _counts(8.0 * n, 32.0 * n, 160)
    rmw = engine.scattered_store_bytes(c, H200)
    assert rmw == {"out": 32.0 * n}
    assert engine.dram_writes(c, H200) == pytest.approx(64.0 * n)
    assert engine.dram_reads(c, H200) == pytest.approx(64.0 * n + 80 * 2**20)
    # whole sectors per block (a transpose), or a launch that fits in L2: footprints only
    assert engine.scattered_store_bytes(_counts(32.0 * n, 32.0 * n, 160), H200) == {}
    assert engine.scattered_store_bytes(_counts(8.0 * n, 32.0 * n, 40), H200) == {}
    # timed warm, a launch beyond L2 still writes back (blind_r6 was timed so)
    assert engine.scattered_store_bytes(_counts(8.0 * n, 32.0 * n, 160), H200, l2="warm") == rmw
