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
