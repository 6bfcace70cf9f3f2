"""Occupancy calculator: documented cases, the register staircase, and packing invariants."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from gpulab.models.occupancy import ARCHS, KB, issue_utilization, naive_register_warps, occupancy, waves


# --- documented cases -------------------------------------------------------------------------


def test_sm90_256_threads_32_registers_is_full():
    o = occupancy(256, 32, 0, "sm_90")
    assert (o.blocks_per_sm, o.active_warps, o.occupancy) == (8, 64, 1.0)
    assert "registers" in o.limiting and "warps" in o.limiting


@pytest.mark.parametrize("threads, blocks, pct", [(128, 12, 75.0), (320, 4, 62.5)])
def test_best_practices_guide_volta_37_registers(threads, blocks, pct):
    # CUDA C++ Best Practices Guide, "Calculating Occupancy": on compute capability 7.0,
    # 128-thread blocks at 37 registers give 12 blocks and 75%; 320-thread blocks give 4 and 63%.
    o = occupancy(threads, 37, 0, "sm_70")
    assert o.blocks_per_sm == blocks
    assert o.occupancy * 100 == pytest.approx(pct)
    assert o.limiter == "registers"


@pytest.mark.parametrize(
    "arch, warps, blocks",
    [
        ("sm_70", 64, 32),
        ("sm_75", 32, 16),
        ("sm_80", 64, 32),
        ("sm_86", 48, 16),
        ("sm_89", 48, 24),
        ("sm_90", 64, 32),
    ],
)
def test_programming_guide_limits(arch, warps, blocks):
    # Max resident warps and blocks per SM, Programming Guide compute-capability table.
    tiny = occupancy(32, 16, 0, arch)  # one-warp blocks hit the block cap
    assert tiny.blocks_per_sm == blocks and tiny.limiter == "blocks"
    assert occupancy(1024, 16, 0, arch).active_warps == warps - warps % 32
    big = max(occupancy(t, 16, 0, arch).active_warps for t in range(32, 1025, 32))
    assert big == warps


def test_a_block_needs_all_its_warps_at_once():
    # 1024-thread blocks on sm_86 (48 warps/SM): one block of 32 warps, the other 16 stay empty.
    o = occupancy(1024, 16, 0, "sm_86")
    assert o.blocks_per_sm == 1 and o.occupancy == pytest.approx(32 / 48)
    assert o.limiter == "warps"


def test_register_staircase_sm90_1024_threads():
    # 32 regs -> 2 blocks (100%); 33..64 -> 1 block (50%); 65+ -> the block no longer fits.
    occ = {r: occupancy(1024, r, 0, "sm_90").occupancy for r in (24, 32, 33, 40, 64, 65, 128)}
    assert occ == {24: 1.0, 32: 1.0, 33: 0.5, 40: 0.5, 64: 0.5, 65: 0.0, 128: 0.0}
    assert "65536" in occupancy(1024, 65, 0, "sm_90").reason


def test_register_granularity_makes_40_registers_cost_75_percent():
    # 40 regs/thread = 1280 regs/warp; 16384 per sub-partition holds 12 such warps -> 48 warps.
    o = occupancy(256, 40, 0, "sm_90")
    assert (o.blocks_per_sm, o.active_warps, o.limiter) == (6, 48, "registers")
    assert naive_register_warps(40) == 51  # the seed's floor(F/(32R)) says 51
    # rounding per warp: 33 registers cost the same as 40
    assert occupancy(256, 33, 0, "sm_90").blocks_per_sm == 6


def test_more_than_255_registers_is_rejected():
    assert occupancy(32, 255, 0, "sm_90").blocks_per_sm > 0
    o = occupancy(32, 300, 0, "sm_90")
    assert o.blocks_per_sm == 0 and "255" in o.reason


def test_shared_limited_sm90():
    # 48 KB + 1 KB reserve per block: floor(228 KB / 49 KB) = 4 blocks.
    o = occupancy(128, 32, 48 * KB, "sm_90")
    assert (o.blocks_per_sm, o.limiter, o.shared_per_block) == (4, "shared memory", 49 * KB)
    # 128-byte granularity: 1 byte more than a multiple of 128 costs a whole unit
    assert occupancy(64, 32, 8 * KB - 1024 + 1, "sm_90").shared_per_block == 8 * KB + 128


def test_shared_per_block_default_and_opt_in():
    assert occupancy(128, 32, 48 * KB + 1, "sm_90").blocks_per_sm == 0
    o = occupancy(128, 32, 100 * KB, "sm_90", max_dynamic_shared_bytes=227 * KB)
    assert o.blocks_per_sm == 2  # 2 x 101 KB in 228 KB
    assert occupancy(128, 32, 227 * KB, "sm_90", max_dynamic_shared_bytes=227 * KB).blocks_per_sm == 1
    assert occupancy(128, 32, 228 * KB, "sm_90", max_dynamic_shared_bytes=228 * KB).blocks_per_sm == 0
    # A100: 163 KB per block opt-in, 164 KB per SM
    assert occupancy(128, 32, 163 * KB, "sm_80", max_dynamic_shared_bytes=163 * KB).blocks_per_sm == 1
    # dynamic part above the kernel's attribute
    o = occupancy(128, 32, 60 * KB, "sm_90", max_dynamic_shared_bytes=50 * KB)
    assert o.blocks_per_sm == 0 and "attribute" in o.reason


def test_turing_has_no_reserve_and_256_byte_units():
    o = occupancy(128, 32, 1000, "sm_75")
    assert o.shared_per_block == 1024
    assert occupancy(128, 32, 16 * KB, "sm_75").blocks_per_sm == 4  # 64 KB / 16 KB


def test_carveout_preference_limits_shared():
    # 50% of 228 KB = 114 KB -> next carveout 132 KB; 132 // 17 KB = 7 blocks
    o = occupancy(64, 32, 16 * KB, "sm_90", carveout=50)
    assert o.blocks_per_sm == 7
    assert occupancy(64, 32, 16 * KB, "sm_90").blocks_per_sm == 13


def test_block_limited():
    o = occupancy(32, 32, 0, "sm_90")
    assert (o.blocks_per_sm, o.occupancy, o.limiter) == (32, 0.5, "blocks")


def test_too_many_threads_and_bad_input():
    assert occupancy(1025, 16, 0, "sm_90").blocks_per_sm == 0
    with pytest.raises(ValueError):
        occupancy(0, 16)
    with pytest.raises(ValueError, match="unknown architecture"):
        occupancy(128, 16, 0, "sm_99")
    assert occupancy(128, 32, 0, "90").arch == "sm_90"
    assert occupancy(128, 32, 0, (8, 6)).arch == "sm_86"


# --- invariants (hypothesis) ------------------------------------------------------------------

configs = st.tuples(
    st.integers(1, 1024), st.integers(0, 255), st.integers(0, 100 * KB), st.sampled_from(sorted(ARCHS))
)


def _fits(n, t, r, s, a):
    """Whether n blocks fit on one SM, checked resource by resource from the arch table."""
    w = math.ceil(t / 32)
    regs_warp = -(-r * 32 // 256) * 256
    per_sub = (a.registers_per_sm // 4) // regs_warp if regs_warp else 10**9
    smem = -(-(s + a.shared_reserved_per_block) // a.shared_alloc_unit) * a.shared_alloc_unit
    return (
        n <= a.max_blocks_per_sm
        and n * w <= a.max_warps_per_sm
        and n * w <= 4 * per_sub
        and n * smem <= a.shared_per_sm
    )


@settings(max_examples=400, deadline=None)
@given(configs)
def test_result_is_the_largest_number_of_blocks_that_fit(cfg):
    t, r, s, arch = cfg
    a = ARCHS[arch]
    o = occupancy(t, r, s, arch, max_dynamic_shared_bytes=a.shared_per_block_optin)
    n = o.blocks_per_sm
    if n == 0:
        assert o.reason or not _fits(1, t, r, s, a)
        return
    assert _fits(n, t, r, s, a) and not _fits(n + 1, t, r, s, a)
    assert 0 < o.occupancy <= 1
    assert o.limiting and all(o.limits[k] == n for k in o.limiting)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 32), st.integers(1, 255))
def test_seed_formula_is_an_upper_bound_on_register_limited_warps(warps_per_block, r):
    o = occupancy(32 * warps_per_block, r, 0, "sm_90")
    assert o.active_warps <= max(naive_register_warps(r), 0) or o.limiter != "registers"
    # never more warps than the registers can hold outright
    assert o.active_warps * 32 * r <= 64 * KB


@settings(max_examples=200, deadline=None)
@given(st.integers(32, 1024), st.integers(1, 254))
def test_more_registers_never_raise_occupancy(t, r):
    assert occupancy(t, r + 1, 0, "sm_90").occupancy <= occupancy(t, r, 0, "sm_90").occupancy


# --- tail effect and latency hiding -----------------------------------------------------------


def test_waves_tail_effect():
    w = waves(1162, 8, 132)  # 1.1 waves of 1056 blocks
    assert w["rounds"] == 2 and w["full_waves"] == 1
    assert w["utilization"] == pytest.approx(1162 / 2112)
    assert waves(1056, 8, 132)["utilization"] == 1.0
    with pytest.raises(ValueError):
        waves(10, 0, 132)


@pytest.mark.parametrize("latency", [4, 10, 24])
def test_issue_utilization_follows_littles_law(latency):
    assert issue_utilization(1, latency, 1, 2400) == pytest.approx(1 / latency, rel=0.02)
    for warps in (1, 2, 3, 5, 8, 30):
        for ilp in (1, 2, 4):
            u = issue_utilization(warps, latency, ilp, 2400)
            assert u == pytest.approx(min(1.0, warps * ilp / latency), abs=0.03)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_largest_block_shared_memory_per_architecture(arch):
    # Programming Guide table: max shared memory per block (opt-in) and per SM; since sm_80 the
    # difference (1 KB) is "reserved for system use" per block.
    a = ARCHS[arch]
    top = a.shared_per_block_optin
    assert occupancy(32, 16, top, arch, max_dynamic_shared_bytes=top).blocks_per_sm == 1
    assert occupancy(32, 16, top + 1, arch, max_dynamic_shared_bytes=top + 1).blocks_per_sm == 0
    assert top + a.shared_reserved_per_block <= a.shared_per_sm
    # without the opt-in a block stops at 48 KB everywhere
    assert occupancy(32, 16, 48 * KB, arch).blocks_per_sm >= 1
    assert occupancy(32, 16, 48 * KB + 1, arch).blocks_per_sm == 0


@pytest.mark.parametrize(
    "arch, blocks", [("sm_75", 8), ("sm_80", 18), ("sm_86", 11), ("sm_89", 11), ("sm_90", 25)]
)
def test_8kb_blocks_fill_the_shared_memory(arch, blocks):
    # 64-thread blocks with 8 KB of shared memory, worked by hand from the tables:
    # sm_75 64 KB / 8 KB = 8; sm_80 164 KB / (8 + 1) KB = 18; sm_86/89 100 / 9 = 11;
    # sm_90 228 / 9 = 25. Block and warp slots allow more on every architecture.
    o = occupancy(64, 16, 8 * KB, arch)
    assert o.blocks_per_sm == blocks and o.limiter == "shared memory"


def test_max_registers_for_is_the_launch_bounds_cap():
    from gpulab.models.occupancy import max_registers_for, occupancy

    # __launch_bounds__(256) alone: one 256-thread block may use the whole register file, so the
    # cap is the per-thread maximum and changes nothing
    assert max_registers_for(256, 1) == 255
    assert max_registers_for(1024, 1) == 64  # 65,536 / 1,024
    for blocks in (2, 3, 4, 8):
        r = max_registers_for(256, blocks)
        assert occupancy(256, r, 0, "sm_90").limits["registers"] >= blocks
        assert occupancy(256, r + 1, 0, "sm_90").limits["registers"] < blocks
    assert max_registers_for(256, 4) == 64
    with pytest.raises(ValueError):
        max_registers_for(0, 1)


def test_waves_reports_the_partial_last_wave():
    w = waves(1162, 8, 132)
    assert w["last_wave_blocks"] == 1162 - 1056 and w["rounds"] == 2
    assert waves(1056, 8, 132)["last_wave_blocks"] == 1056


def test_verification_merges_driver_and_header_checks():
    from gpulab.models.occupancy import verification

    drv = {
        "arch": "sm_90",
        "device": "GPU X",
        "summary": {
            "default": {"configurations": 10, "match": 10},
            "opt-in": {"configurations": 3, "match": 2},
        },
    }
    hdr = {"per_arch": {"sm_80": {"cases": 7, "agree": 7}, "sm_90": {"cases": 5, "agree": 5}}}
    v = verification(drv, hdr)
    assert list(v) == ["sm_80", "sm_90"]
    assert v["sm_90"]["driver"] == {"cases": 13, "agree": 12, "device": "GPU X"}
    assert "driver" not in v["sm_80"] and v["sm_80"]["header"] == {"cases": 7, "agree": 7}
    assert verification(None, None) == {}
