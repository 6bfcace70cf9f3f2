"""A stub's starting answer (None) is a neutral note in notebooks and on the page, and still a
fail for the grader (issue 25, point 2)."""

from gpulab.checks import latency, occupancy
from gpulab.checks.result import CheckResult


def stub(*args):
    return None


def test_a_stub_shows_a_neutral_note_and_still_fails():
    for res in (latency.check_warps_needed(stub), occupancy.check_register_limit(stub)):
        assert res.not_started and not res.passed and not bool(res)
        text = repr(res)
        assert "❌" not in text and "✅" not in text
        assert text.startswith("✎ Not answered yet") and "returns None" in text


def test_a_wrong_answer_is_still_a_red_cross():
    res = latency.check_warps_needed(lambda bw, lat, n, b: 1)
    assert not res.passed and not res.not_started
    assert repr(res).startswith("❌")
    assert repr(CheckResult(True, "ok")).startswith("✅")
    # "not solved yet" marks only a failure: a pass that mentions it stays a pass
    assert not CheckResult(True, "not solved yet").not_started
