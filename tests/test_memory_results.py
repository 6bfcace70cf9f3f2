"""Chapter 05 reads recorded measurements through gpulab.plots.memory: the latency ladder per
level and the strided read's time per load. Synthetic results files check the rules; bad input
gets a message naming the file to produce."""
import pytest

from gpulab.plots import memory as pm

MiB, GiB = 1 << 20, 1 << 30


def _lat(rows, l2=60 * MiB, clock=2.0):
    return {"environment": {"gpu": "X", "l2_bytes": l2, "date_utc": "2026-12-01T00:00:00Z"},
            "max_sm_clock_GHz": clock, "shared": {"ns": 20.0},
            "global": [{"working_set_bytes": s, "ns": ns} for s, ns in rows]}


def test_levels_take_the_median_of_the_rows_each_level_owns():
    res = _lat([(16 << 10, 34.0), (64 << 10, 36.0), (512 << 10, 90.0), (2 * MiB, 150.0),
                (8 * MiB, 155.0), (16 * MiB, 170.0), (64 * MiB, 250.0), (GiB, 340.0), (2 * GiB, 350.0),
                (4 * GiB, 360.0)])
    lv = pm.latency_levels(res)
    assert lv["L1"]["ns"] == 35.0 and lv["L1"]["sizes"] == [16 << 10, 64 << 10]
    assert lv["L2"]["ns"] == 155.0 and lv["L2"]["sizes"] == [2 * MiB, 8 * MiB, 16 * MiB]
    assert lv["DRAM"]["ns"] == 350.0 and lv["DRAM"]["sizes"] == [GiB, 2 * GiB, 4 * GiB]
    assert (lv["DRAM"]["ns_min"], lv["DRAM"]["ns_max"]) == (340.0, 360.0)
    assert lv["DRAM"]["cycles"] == 700.0 and lv["shared"]["cycles"] == 40.0
    # 512 KiB (between L1 and L2) and 64 MiB (about the L2 size) are transitions, in no level
    assert all(512 << 10 not in lv[k]["sizes"] and 64 * MiB not in lv[k]["sizes"] for k in ("L1", "L2", "DRAM"))


def test_level_boundaries_follow_the_recorded_l2_size():
    rows = [(8 * MiB, 150.0), (GiB, 350.0)]
    assert "DRAM" in pm.latency_levels(_lat(rows, l2=50 * MiB))
    small_l2 = pm.latency_levels(_lat(rows, l2=4 * MiB))       # 8 MiB no longer fits in half an L2
    assert "L2" not in small_l2 and small_l2["DRAM"]["sizes"] == [GiB]


def test_levels_refuse_files_they_cannot_read():
    with pytest.raises(ValueError, match="latency.py"):
        pm.latency_levels(None)
    res = _lat([(GiB, 350.0)])
    del res["environment"]["l2_bytes"]
    with pytest.raises(ValueError, match="l2_bytes"):
        pm.latency_levels(res)


def test_strided_rows_join_timing_and_ncu_counts_by_stride():
    res = {"n_loads": 1000, "rows": [{"stride": 8, "time_s": 1e-6, "span_bytes": 32000},
                                     {"stride": 16, "time_s": 2e-6, "span_bytes": 64000}],
           "ncu": {"rows": [{"stride": 16, "l1_sectors_per_request": 32.0, "l2_bytes_read_per_load": 32.0,
                             "dram_bytes_read_per_load": 64.0,
                             "lts__t_sectors_srcunit_tex_op_read.sum": 1000.0,
                             "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum": 2000.0}]}}
    out = pm.strided_rows(res)
    assert [r["ns_per_load"] for r in out] == pytest.approx([1.0, 2.0])
    assert out[0]["dram_bytes_per_load"] is None                     # no ncu row for stride 8
    assert out[1]["dram_bytes_per_load"] == 64.0 and out[1]["l2_miss_per_requested_sector"] == 2.0
    with pytest.raises(ValueError, match="strided_copy.py"):
        pm.strided_rows({"rows": []})


def test_size_text_and_label_dates():
    assert [pm.size_text(x) for x in (512, 8 << 10, 3 * MiB, GiB, 1536 * MiB)] == \
        ["512 B", "8 KiB", "3 MiB", "1 GiB", "1.5 GiB"]
    assert "2026-12-01" in pm.measured_label(_lat([]))
