"""Issue 26 through Otter's whole run (slow: one otter assign and a few gradings): the issue's own
attack on hw07 (a neutered tamper.py written into the installed package, check_tree_reduce
replaced through the module's dict) and importlib.reload replaced are scored 0 and flagged
``hostile:`` by ``python -m gpulab.grading grade``; a correct kernel in a new style keeps full
marks. Each runs on a private copy of gpulab (exercises/round3.py), never this checkout's files.
The whole round is ``python exercises/round3.py --dist DIR --work DIR``."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("otter", reason="otter-grader is not installed (pip install 'gpulab[grading]')")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "exercises"))
import round3  # noqa: E402

sys.path.pop(0)

ENTRIES = ["issue_disk_tamper_tree", "reload_replaced", "warp_reduce_ascending_offsets"]


def test_the_issues_attack_through_otter(tmp_path, capsys):
    hw = "hw07_08_reduction"
    round3.main(
        ["--dist", str(tmp_path / "dist"), "--work", str(tmp_path / "work"), "--hw", hw, "--only", *ENTRIES]
    )
    import json

    results = {r["name"]: r for r in json.load(open(tmp_path / "work" / "results.json"))}
    out = capsys.readouterr().out
    assert set(results) == set(ENTRIES), out
    for name in ENTRIES:
        assert results[name]["ok"], (name, results[name]["why"], results[name]["row"])
    issue = results["issue_disk_tamper_tree"]["row"]
    assert issue["flags"].startswith("hostile:") and float(issue["total"]) == 0, issue
    assert "grading/tamper.py" in issue["flags"], issue["flags"]  # seen on disk too
    assert "WARNING: files of this checkout changed" not in out or "tamper.py" not in out
