"""README.md quotes the latest blind round of gpulab.predict; its figures must be that round's, as
recorded (a stale sentence once said 34 kernels and 14.7% after the round had grown to 35 and 14.3%)."""

import re
from pathlib import Path

from gpulab import results, results_views as rv

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _blind_paragraph():
    start = README.index("is tested blind")
    return re.sub(r"\s+", " ", README[start : README.index("measure before trusting a time", start)])


def test_readme_names_the_latest_blind_round():
    text = _blind_paragraph()
    assert f"benchmarks/{rv.BLIND_ROUND}/" in text and f"{rv.BLIND_ROUND}.json" in text


def test_readme_blind_figures_are_the_recorded_ones():
    text = _blind_paragraph()
    acc = rv.blind_accuracy()
    summary = results.load(rv.BLIND_ROUND)["summary"]
    n = acc["kernels"]
    assert f"on {n} kernels" in text
    assert f"median error of {100 * acc['median_error']:.1f}%" in text
    assert f"{acc['outside_2x']} of {n} off by more than 2x" in text or (
        acc["outside_2x"] == 0 and "none off by more than 2x" in text
    )
    regs = re.search(r"registers per thread matched the H200 on (\d+) of (\d+)", text)
    assert regs, "README no longer says how many kernels' registers matched"
    assert (int(regs.group(1)), int(regs.group(2))) == (summary["registers_match"], n)


def test_readme_names_the_model_and_earlier_rounds_as_recorded():
    text = _blind_paragraph()
    acc = rv.blind_accuracy()
    m = re.search(r"by the model of commit (\w+)", text)
    assert m and acc["model_commit"].startswith(m.group(1))
    # "the model shipped now" only while no refit or revision has followed the round
    assert ("the model shipped now" in text) == bool(acc["current_model"])
    earlier = re.findall(r"round (\d+) (?:had )?([\d.]+)%", text)
    assert earlier, "README no longer quotes the earlier rounds"
    for n, pct in earlier:
        past = rv.blind_accuracy(f"blind_r{n}")
        assert pct == f"{100 * past['median_error']:.1f}", f"round {n}: README {pct}%"
