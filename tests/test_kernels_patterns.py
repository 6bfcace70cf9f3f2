"""Access-pattern pictures, explorers and widget checks of chapters 05-07 (no kernel runs)."""

import math

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

matplotlib.use("Agg")

from gpulab import images  # noqa: E402
from gpulab.checks import memory as ch05, shared as ch06, patterns as ch07  # noqa: E402
from gpulab.plots import memory as pm  # noqa: E402
from gpulab.widgets import memory as wm  # noqa: E402


@pytest.mark.parametrize("stride,sectors", [(0, 1), (1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_float32_stride_sectors(stride, sectors):
    assert pm.coalescing_summary(pm.warp_addresses(stride))["sectors"] == sectors


def test_offset_adds_one_sector_and_wide_elements_scale():
    assert pm.coalescing_summary(pm.warp_addresses(1, offset=1))["sectors"] == 5
    assert pm.coalescing_summary(pm.warp_addresses(1, offset=8))["sectors"] == 4
    assert pm.coalescing_summary(pm.warp_addresses(1, elem_bytes=16), 16)["sectors"] == 16


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 64), st.integers(0, 64), st.sampled_from([1, 2, 4, 8, 16]))
def test_sectors_bounds(stride, offset, eb):
    """Sectors lie between the bytes' lower bound and one sector per lane (plus straddles)."""
    s = pm.coalescing_summary(pm.warp_addresses(stride, offset, eb), eb)
    distinct_bytes = len(set((offset + np.arange(32) * stride).tolist())) * eb
    assert s["sectors"] >= math.ceil(distinct_bytes / 32)
    assert s["sectors"] <= 32 * math.ceil(eb / 32 + 1)
    assert 0 < s["efficiency"] <= 32 * eb / 32 + 1e-9


def test_random_gather_is_mostly_one_sector_per_lane():
    s = pm.coalescing_summary(pm.random_addresses(1 << 20))
    assert s["sectors"] >= 30


@pytest.mark.parametrize("width,wavefronts", [(32, 32), (33, 1), (34, 2), (16, 16), (31, 1), (48, 16)])
def test_column_read_wavefronts(width, wavefronts):
    """Column of a float32 tile `width` wide: lanes collide gcd(width, 32)-fold."""
    assert pm.bank_summary(pm.column_addresses(0, width))["wavefronts"] == wavefronts
    assert math.gcd(width, 32) == wavefronts


def test_broadcast_is_one_wavefront():
    assert pm.bank_summary(pm.warp_addresses(0))["wavefronts"] == 1


def test_plots_draw_and_title_counts():
    ax = pm.plot_sectors(pm.warp_addresses(2, 1))
    assert ax.get_title().startswith("8 sectors")
    ax = pm.plot_banks(pm.column_addresses(0, 34))
    assert ax.get_title().startswith("2 wavefront")
    ax = pm.plot_access(
        {"addresses": pm.column_addresses(0, 32), "mask": np.ones(32, bool), "space": "shared", "size": 4}
    )
    assert ax.get_title().startswith("32 wavefront")
    ax = pm.plot_access({"addresses": pm.warp_addresses(1), "mask": 0xFFFF, "space": "global", "size": 4})
    assert ax.get_title().startswith("2 sectors")  # 16 active lanes x 4 bytes


def test_coalescing_explorer_writes_answer_and_check():
    ns = {}
    e = wm.coalescing(ns)
    assert ns["answer"]["sectors"] == 4
    e.stride.value = 7
    assert not ch05.check_own_sector(ns["answer"])
    e.stride.value = 8
    assert ns["answer"]["sectors"] == 32 and ch05.check_own_sector(ns["answer"])
    e.stride.value = 12
    assert not ch05.check_own_sector(ns["answer"])
    e.stride.value, e.offset.value = 8, 1
    assert not ch05.check_own_sector(ns["answer"])
    assert not ch05.check_own_sector(None)


def test_bank_explorer_and_check():
    ns = {}
    b = wm.banks(ns, name="pick")
    assert ns["pick"]["wavefronts"] == 32
    b.elem.value = 8
    assert ns["pick"]["ideal"] == 2 and not ch06.check_float64_padding(ns["pick"])
    b.width.value = 34
    assert ns["pick"]["wavefronts"] == 4 and not ch06.check_float64_padding(ns["pick"])
    b.width.value = 35
    assert ns["pick"]["conflicts"] == 0 and not ch06.check_float64_padding(ns["pick"])
    b.width.value = 33
    assert ch06.check_float64_padding(ns["pick"])


def test_halo_cost_and_check():
    c = wm.halo_cost(16, 4)
    assert c["naive_loads_per_pixel"] == 81 and c["tiled_loads_per_pixel"] == pytest.approx(2.25)
    assert c["shared_bytes"] == 24 * 24 * 4
    ns = {}
    h = wm.halo(ns)
    assert not ch07.check_halo_tile(ns["answer"])
    h.tile.value = 32
    assert ch07.check_halo_tile(ns["answer"])
    h.tile.value = 40
    assert not ch07.check_halo_tile(ns["answer"])  # over 1024 threads
    assert ch07.check_halo_tile({"tile": 24, "radius": 4}, target=1.8)


def test_images_and_blur_reference():
    img = images.test_image(30, 50)
    assert img.shape == (30, 50, 4) and img.dtype == np.float32
    assert img.min() >= 0 and img.max() <= 1 and np.all(img[..., 3] == 1)
    g = images.grey(img)
    assert g.shape == (30, 50) and g.std() > 0.1  # there is something to see
    b = images.box_blur_reference(g, 2)
    assert np.isclose(b[10, 20], g[8:13, 18:23].mean(), atol=1e-6)  # interior: plain mean
    assert np.isclose(b[0, 0], np.pad(g, 2, mode="edge")[0:5, 0:5].mean(), atol=1e-6)
    assert b.std() < g.std()  # blurring smooths
    assert np.allclose(images.box_blur_reference(np.full((7, 9), 0.3, np.float32), 3), 0.3)
