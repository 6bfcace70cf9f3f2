"""The appendix "Measured on an H200" as _toc.yml lists it: its first page (A.1, A.2) and the pages
under it, one per topic (A.3 onwards). Shared by tests/test_measured.py and tests/test_appendix_pages.py,
so that no test reads only one page of it."""

from __future__ import annotations

from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
FIRST = "book/measured_h200"


def _entry(node, file):
    """The _toc.yml entry (a dict) whose `file` is ``file``, searched depth first."""
    if isinstance(node, dict):
        if node.get("file") == file:
            return node
        node = list(node.values())
    if isinstance(node, list):
        for v in node:
            found = _entry(v, file)
            if found is not None:
                return found
    return None


def pages() -> list[str]:
    """The appendix's pages in reading order: its first page, then the pages under it."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    entry = _entry(toc, FIRST)
    if entry is None:
        raise LookupError(f"_toc.yml has no entry {FIRST!r}")
    return [FIRST, *(s["file"] for s in entry.get("sections", []))]


def source(page: str) -> Path:
    """The file behind a page: a notebook or a Markdown file."""
    for ext in (".ipynb", ".md"):
        p = ROOT / (page + ext)
        if p.exists():
            return p
    raise FileNotFoundError(f"no .ipynb or .md for the appendix page {page}")


def notebooks() -> list[Path]:
    return [p for p in map(source, pages()) if p.suffix == ".ipynb"]


def markdown(page: str) -> str:
    """What the page says: a notebook's markdown cells, or the Markdown file."""
    p = source(page)
    if p.suffix == ".md":
        return p.read_text(encoding="utf-8")
    nb = nbformat.read(p, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def code(page: str) -> str:
    """The page's code cells ('' for a Markdown page)."""
    p = source(page)
    if p.suffix == ".md":
        return ""
    nb = nbformat.read(p, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def all_markdown() -> str:
    return "\n".join(markdown(p) for p in pages())


def all_code() -> str:
    return "\n".join(code(p) for p in pages())
