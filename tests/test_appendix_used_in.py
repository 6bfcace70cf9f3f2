"""The appendix's "Used in Chapter N" lines (issue 23 review item 19: A.4.4 said chapter 7 used
reduction.json, which it does not). Each chapter a section's line names must use one of the
results files the section shows (a line may leave out a chapter that only mentions a file).
A chapter uses a file when its notebook names it (``reduction.json``, or its script ``reduction.py``), loads it by name
(``results.load("reduction")``, ``load_result(...)``), or calls a ``gpulab.results_views``
function that loads it (read from that module's source, calls within it followed)."""

from __future__ import annotations

import ast
import json
import re

import pytest

import appendix_pages as ap

CHAPTERS = sorted((ap.ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


def view_loads(source: str) -> dict[str, set[str]]:
    """For each function of a results_views-like module: the results files it loads (string
    literals passed to a *load* call), following calls to the module's other functions."""
    tree = ast.parse(source)
    fns = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    direct, calls = {}, {}
    for name, fn in fns.items():
        direct[name], calls[name] = set(), set()
        for n in ast.walk(fn):
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if called in fns:
                calls[name].add(called)
            if "load" in called and n.args and isinstance(n.args[0], ast.Constant):
                if isinstance(n.args[0].value, str):
                    direct[name].add(n.args[0].value)

    def reach(name, seen=()):
        out = set(direct[name])
        for g in calls[name] - set(seen):
            out |= reach(g, (*seen, name))
        return out

    return {name: reach(name) for name in fns}


VIEWS = view_loads((ap.ROOT / "gpulab" / "results_views.py").read_text(encoding="utf-8"))


def results_used(text: str, views: dict[str, set[str]] = VIEWS) -> set[str]:
    """The results files a chapter's text (all its cells) names, loads or reads through views."""
    found = set(re.findall(r"\b([a-z][a-z0-9_]*)\.(?:json|py)\b", text))
    found |= set(re.findall(r"""load(?:_result)?\(\s*\\?["']([a-z][a-z0-9_]*)\\?["']""", text))
    fns = set(re.findall(r"\b(?:rv|views|results_views)\.(\w+)", text))
    for names in re.findall(r"from gpulab\.results_views import \(?([\w ,]+)", text):
        fns |= set(re.findall(r"\w+", names))
    for f in fns:
        found |= views.get(f, set())
    return found


def chapter_uses() -> dict[str, set[str]]:
    """'ch05' -> the results files chapter 5 uses."""
    out = {}
    for p in CHAPTERS:
        nb = json.loads(p.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in nb["cells"])
        out["ch" + p.name[:2]] = results_used(text)
    return out


def used_in_claims(page: str) -> list[tuple[str, set[str], set[str]]]:
    """Per section of an appendix page with a "Used in" line: (heading, chapters it names, results
    files its code shows with measured.show). "Chapter 3 to Chapter 8" names 3, 4, ..., 8."""
    nb = json.loads(ap.source(page).read_text(encoding="utf-8"))
    sections, cur = [], None
    for c in nb["cells"]:
        src = "".join(c["source"])
        if c["cell_type"] == "markdown":
            for para in re.split(r"\n\s*\n", src):
                for line in para.splitlines():
                    if line.startswith("## "):
                        cur = [line[3:].strip(), None, set()]
                        sections.append(cur)
                if para.startswith("Used in ") and cur is not None:  # the whole paragraph
                    chs = [int(x) for x in re.findall(r"<ch(\d\d)>", para)]
                    if re.search(r"<ch\d\d>` to \{numref\}", para):
                        chs = list(range(chs[0], chs[-1] + 1))
                    cur[1] = {f"ch{n:02d}" for n in chs}
        elif cur is not None:
            cur[2] |= set(re.findall(r"""measured\.show\(\s*["']([a-z][a-z0-9_]*)["']""", src))
    return [(h, chs, files) for h, chs, files in sections if chs is not None]


# --- the scan can fail ------------------------------------------------------------------------


def test_the_scan_finds_each_way_a_chapter_uses_a_result():
    views = view_loads(
        'def a(res=None):\n    return _load("reduction", res)\n'
        "def b():\n    return a()\n"
        "def c(r):\n    return r\n"
    )
    assert views == {"a": {"reduction"}, "b": {"reduction"}, "c": set()}
    assert results_used("see `latency.json`", views) == {"latency"}
    assert results_used("`benchmarks/fma_loop.py` times", views) == {"fma_loop"}
    assert results_used('x = results.load("sgemm")', views) == {"sgemm"}
    assert results_used("rv.b()", views) == {"reduction"}
    assert results_used("from gpulab.results_views import c, b\n", views) == {"reduction"}
    assert results_used("rv.c(); a reduction in shared memory", views) == set()


# --- the appendix -------------------------------------------------------------------------------------

USES = chapter_uses()
CLAIMS = [
    (page, *claim)
    for page in ap.pages()
    if ap.source(page).suffix == ".ipynb"
    for claim in used_in_claims(page)
]


def test_the_appendix_has_used_in_lines_to_check():
    assert len(CLAIMS) >= 10 and all(files for *_, files in CLAIMS), CLAIMS


@pytest.mark.parametrize("page, heading, chapters, files", CLAIMS, ids=[c[1][:24] for c in CLAIMS])
def test_used_in_names_only_chapters_that_use_the_section_results(page, heading, chapters, files):
    users = {ch for ch, used in USES.items() if used & files}
    assert chapters <= users, f"{heading}: {sorted(chapters - users)} use none of {sorted(files)}"
