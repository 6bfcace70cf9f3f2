"""No development notes in what a reader reads (issue 25: "This remedy has not been tried on Colab by
the authors", "date not recorded" are notes to ourselves, not reader text). Checked on the page
sources, so a note is caught before any build: every page in _toc.yml (book/*.md, the appendix
notebooks' and every chapter's markdown cells). Code is left out (inline code and fenced blocks:
a file name such as ``..._issue7.json`` is not a note); what code prints is checked on the built
pages by tests/test_book_html.py."""

from __future__ import annotations

import re

import nbformat
import pytest

from bookbuild import ROOT, toc_files

NOTES = re.compile(
    r"not (?:been )?tried on Colab|by the authors|date not recorded|not been (?:tried|able to try)|"
    r"\bTODO\b|\bFIXME\b|\bXXX\b|\bTBD\b|to be (?:written|filled in)|appear as they are finished|"
    r"as we ran earlier|in an earlier run|\bdesign notes\b|\bseeds? 0\d\d\b|\bissue #?\d+\b",
    re.I,
)


def source(page: str):
    for ext in (".ipynb", ".md"):
        p = ROOT / (page + ext)
        if p.exists():
            return p
    raise FileNotFoundError(page)


def prose(path) -> str:
    """The reader-facing Markdown of a page: a Markdown file, or a notebook's markdown cells."""
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return path.read_text(encoding="utf-8")


def without_code(md: str) -> str:
    md = re.sub(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1\s*$", "", md, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", md)


def notes(md: str) -> list[str]:
    text = without_code(md)
    return [
        f"{m.group(0)!r}: ...{' '.join(text[max(0, m.start() - 50) : m.end() + 30].split())}..."
        for m in NOTES.finditer(text)
    ]


def test_the_check_finds_development_notes_outside_code():
    md = (
        "This remedy has not been tried on Colab by the authors. Run `tensor_cores_issue7.json`.\n"
        "```\n# TODO in a listing is code\n```\n"
        "The date not recorded here. TODO: a figure. As in issue 7.\n"
    )
    found = [f.split(":", 1)[0].strip("'").lower() for f in notes(md)]
    assert found == ["not been tried on colab", "by the authors", "date not recorded", "todo", "issue 7"], (
        found
    )
    assert not notes("The run recorded no SM clock; the file `x_issue7.json` is undated.")


@pytest.mark.parametrize("page", toc_files())
def test_page_source_has_no_development_notes(page):
    assert notes(prose(source(page))) == []
