"""The appendix's "measured on" labels for results with parts timed in another run (reader 6,
items 4 and 7): a clock that only a later clock re-run recorded is shown as that re-run's, with
its date, and cases timed apart from the dated run (measured.reruns) are named with their time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from gpulab.plots import measured  # noqa: E402
from gpulab.plots.measured.appendix import _reruns_note, clock_line  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "gpulab" / "data" / "results"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _provenance_row(root: Path, name: str) -> str:
    prov = measured.provenance(root)
    return prov.loc[prov["file"] == f"{name}.json"].iloc[0, 1]


def test_a_clock_from_the_rerun_only_is_labelled_as_the_reruns(tmp_path):
    pm = json.loads((RESULTS / "perf_model.json").read_text())
    pm["clock_rerun"]["environment"]["date_utc"] = "2030-05-06T07:08:09Z"
    (tmp_path / "perf_model.json").write_text(json.dumps(pm))
    row = _provenance_row(tmp_path, "perf_model")
    assert row.startswith("NVIDIA H200") and "2026-12-01 00:56 UTC" in row  # the dated run
    assert row.endswith(
        "; no SM clock record (a re-run of the same launches on 2030-05-06 07:08 UTC: 1974 MHz)"
    )
    del pm["clock_rerun"]["environment"]["date_utc"]  # an undated re-run: no date invented
    assert clock_line("perf_model", pm, short=True) == (
        "no SM clock record (a re-run of the same launches: 1974 MHz)"
    )


def test_a_run_with_its_own_clock_keeps_the_plain_label(tmp_path):
    shutil.copy(RESULTS / "bandwidth.json", tmp_path / "bandwidth.json")
    assert _provenance_row(tmp_path, "bandwidth").endswith("UTC; SM clock 1980 MHz")


def test_launch_overhead_reads_its_reruns_env_block():
    lo = json.loads((RESULTS / "launch_overhead.json").read_text())
    assert clock_line("launch_overhead", lo, short=True) == (
        "no SM clock record (a re-run of the same launches on 2026-12-02 06:42 UTC: 1980 MHz)"
    )


def test_cases_timed_apart_are_named_on_the_measured_on_line(capsys):
    measured.show("blind_r5", with_table=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "2026-12-02 07:20 UTC; SM clock" in out
    assert "(half_axpby: a separate run at 07:35 UTC, measured.reruns)" in out


def test_reruns_note_dates_another_day_in_full_and_leaves_out_a_missing_date():
    res = {
        "measured": {
            "environment": {"gpu": "G", "date_utc": "2030-01-01T10:00:00Z"},
            "reruns": {
                "a": {"environment": {"date_utc": "2030-01-02T11:12:00Z"}},
                "b": {"why": "no environment recorded"},
            },
        }
    }
    assert _reruns_note(res) == (
        " (a: a separate run at 2030-01-02 11:12 UTC; b: a separate run, measured.reruns)"
    )
    assert _reruns_note({"measured": {"environment": {"gpu": "G"}}}) == ""
