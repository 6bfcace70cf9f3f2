"""results_views reads any recorded blind round, not only the latest, so a chapter can phrase the
round before the quoted one from that round's own file (issue 23, reader3 item 4)."""

from __future__ import annotations

import pytest

from gpulab import results, results_views as rv


def test_a_named_round_is_read_from_its_own_file():
    latest = rv.blind_accuracy()
    assert latest["round"] == rv.BLIND_ROUND
    for name in ("blind_r3", "blind_r4", "blind_r5", "blind_r6"):
        r = results.load(name)
        if r is None or r.get("summary", {}).get("median_abs_error") is None:
            continue
        a = rv.blind_accuracy(name)
        out = r["summary"]["outside_2x"]
        assert a["round"] == name and a["kernels"] == r["summary"]["cases"]
        assert a["outside_2x"] == (out if isinstance(out, int) else len(out))
        assert a["median_error_text"] == f"{100 * r['summary']['median_abs_error']:.0f}%"
    with pytest.raises(FileNotFoundError, match="blind_r99"):
        rv.blind_accuracy("blind_r99")


def test_previous_round_is_the_recorded_one_before():
    assert rv.previous_blind_round("blind_r4") == (
        "blind_r3" if results.path("blind_r3") is not None else None
    )
    assert rv.previous_blind_round("blind_r1") is None
    assert rv.previous_blind_round("perf_blind") is None  # no round number
    assert rv.previous_blind_round("blind_r99") is None  # blind_r98 is not recorded
