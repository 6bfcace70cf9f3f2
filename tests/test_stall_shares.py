"""Chapter 10 draws Nsight Compute's stall breakdown of the three stall kernels
(gpulab/data/results/stall_reasons.json) with gpulab.plots.amdahl.stall_shares."""

import matplotlib
import pytest

matplotlib.use("Agg")

from gpulab.plots import amdahl as aplots  # noqa: E402


def test_stall_shares_draws_each_kernel_and_refuses_other_files():
    res = {
        "kernels": {
            "dependent_loads": {
                "built_for": "long_scoreboard",
                "share_of_stalls": {"long_scoreboard": 0.9, "wait": 0.05, "selected": 0.3},
            },
            "one_warp_works": {"built_for": "barrier", "share_of_stalls": {"barrier": 0.8, "wait": 0.1}},
        }
    }
    ax = aplots.stall_shares(res)
    widths = [p.get_width() for p in ax.patches]
    assert sum(widths) == pytest.approx(2.0)  # each bar sums to the whole of its stalls
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "long scoreboard" in legend and "selected" not in legend  # issuing is not a stall
    with pytest.raises(ValueError, match="ncu_runs.py stalls"):
        aplots.stall_shares({"rows": []})


def test_stall_shares_on_the_recorded_file():
    from gpulab import results

    res = results.load("stall_reasons")
    if res is None:
        pytest.skip("no stall_reasons.json in this copy")
    ax = aplots.stall_shares(res)
    assert len(ax.get_yticklabels()) == len(res["kernels"])
