"""Small helpers chapter 05 uses to label recorded measurements: sizes in binary units and the
GPU/date line of a results file (old files say when_utc, newer ones date_utc)."""

from gpulab.plots import memory as pm

MiB, GiB = 1 << 20, 1 << 30


def test_size_text():
    assert [pm.size_text(x) for x in (512, 8 << 10, 3 * MiB, GiB, 1536 * MiB)] == [
        "512 B",
        "8 KiB",
        "3 MiB",
        "1 GiB",
        "1.5 GiB",
    ]


def test_measured_label_reads_either_date_key():
    new = {"environment": {"gpu": "NVIDIA H200", "date_utc": "2026-12-01T00:34:40Z"}}
    old = {"environment": {"gpu": "NVIDIA H200", "when_utc": "2026-11-29T12:21:47Z"}}
    assert pm.measured_label(new) == "measured on NVIDIA H200 on 2026-12-01"  # no "(benchmarks/)" in a title
    assert "2026-11-29" in pm.measured_label(old)
    assert "?" in pm.measured_label({})
