"""Appendix A.8 ("Run it on your own GPU", book/measured_rerun.md) gives a command for every
recorded result the pages read, and each command names a script that exists with options that
script accepts: a reader can remake every file from the page alone."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "measured_rerun.md"
RESULTS = ROOT / "gpulab" / "data" / "results"
# results whose record names no script: the script that writes them (benchmarks/...)
WRITTEN_BY = {
    "hw05_copies": "blind_r4/hw05_copies.py",
    "occupancy_vs_driver": "occupancy_vs_driver.py",
    "sim_speed": "sim_speed.py",
}
NO_SCRIPT = {"tensor_cores_throughput_issue7"}  # a previous run's figures, kept for comparison
SCRIPT = re.compile(r"([\w./-]+\.py)\b")


def commands() -> list[str]:
    """The page's command lines (code blocks, continuation lines joined, comments dropped)."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```\n(.*?)^```$", text, flags=re.S | re.M)
    joined = "\n".join(blocks).replace("\\\n", " ")
    return [ln.split("#")[0].strip() for ln in joined.splitlines() if ln.split("#")[0].strip()]


def recorded_scripts(x) -> set[str]:
    """The .py scripts (paths under benchmarks/) a results record names in its command/source/what
    strings: the path, not the bare file name, since several rounds each have a run.py."""
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            if k in ("command", "ncu_command", "source", "what") and isinstance(v, str):
                out |= {p.split("benchmarks/", 1)[1] for p in SCRIPT.findall(v) if "benchmarks/" in p}
            else:
                out |= recorded_scripts(v)
    elif isinstance(x, list):
        for v in x:
            out |= recorded_scripts(v)
    return out


def script_lines():
    """(script path under the repository, its arguments) of every `python benchmarks/...` line."""
    out = []
    for ln in commands():
        m = re.match(r"python (benchmarks/\S+\.py)(.*)$", ln)
        if m:
            out.append((m.group(1), m.group(2).split()))
    return out


@pytest.mark.parametrize("name", sorted(p.stem for p in RESULTS.glob("*.json")))
def test_every_recorded_result_has_a_command(name):
    text = PAGE.read_text(encoding="utf-8")
    if name in NO_SCRIPT:
        assert f"`{name}.json`" in text, f"A.8 should say that {name}.json has no script"
        return
    record = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    wanted = {WRITTEN_BY[name]} if name in WRITTEN_BY else recorded_scripts(record)
    assert wanted, f"{name}.json names no script: add it to WRITTEN_BY or NO_SCRIPT"
    on_page = set(re.findall(r"benchmarks/([\w/]+\.py)", text))
    assert wanted <= on_page, f"{name}.json is written by {sorted(wanted - on_page)}, not in A.8"
    ran = {path.removeprefix("benchmarks/") for path, _ in script_lines()}
    assert ran & wanted, f"no line runs {name}.json's script"


def test_every_command_names_a_script_and_options_it_accepts():
    lines = script_lines()
    assert len(lines) > 40
    for path, args in lines:
        src = ROOT / path
        assert src.is_file(), f"A.8 runs {path}, which does not exist"
        code = src.read_text(encoding="utf-8")
        for opt in (a for a in args if a.startswith("--")):
            assert f'"{opt}"' in code, f"{path} has no option {opt}"
        doc = ast.get_docstring(ast.parse(code)) or ""
        for mode in (a for a in args[:1] if re.fullmatch(r"[a-z][\w-]*", a)):
            # a first bare word is a mode (or a step): the script's code or usage knows it
            known = f'"{mode}"' in code or re.search(rf"\.py {re.escape(mode)}\b", doc)
            assert known, f"{path} has no mode {mode!r}"
