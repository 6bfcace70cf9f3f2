"""The start page as a reader meets it (issue 25): its chapter table gives each chapter's number,
and one download holds every notebook of the book (book/_ext/book_download.py writes
gpulab-notebooks.zip when the HTML build finishes; the start page links it).

The archive writer is checked on a hand-made Sphinx app (fast). The built site is checked once the
book is built (tests/bookbuild.py, never a second build), or, with GPULAB_BOOK_HTML set to another
build's `_build/html`, on that build (its book root is two folders up)."""

from __future__ import annotations

import json
import os
import re
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urljoin, urlparse

import pytest

from bookbuild import HTML, ROOT, build_book, toc_files

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import book_download  # noqa: E402

OTHER_HTML = os.environ.get("GPULAB_BOOK_HTML")
SITE = Path(OTHER_HTML) if OTHER_HTML else HTML
SRC = SITE.resolve().parents[1] if OTHER_HTML else ROOT
CHAPTERS = [p for p in toc_files() if p.startswith("chapters/")]


def fake_app(srcdir: Path, outdir: Path, docs: list[str], fmt: str = "html"):
    """The parts of a Sphinx app that write_archive reads."""

    def doc2path(doc):
        for ext in (".ipynb", ".md"):
            if (srcdir / (doc + ext)).exists():
                return str(srcdir / (doc + ext))
        return str(srcdir / (doc + ".md"))

    env = SimpleNamespace(found_docs=set(docs), doc2path=doc2path)
    return SimpleNamespace(
        env=env, srcdir=str(srcdir), outdir=str(outdir), builder=SimpleNamespace(format=fmt)
    )


def nb_json(text: str) -> str:
    return json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": text}], "metadata": {}})


def test_archive_holds_every_notebook_page_under_its_repository_path(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "chapters").mkdir(parents=True)
    (src / "book").mkdir()
    out.mkdir()
    (src / "chapters" / "01_a.ipynb").write_text(nb_json("# A"))
    (src / "chapters" / "02_b.ipynb").write_text(nb_json("# B"))
    (src / "book" / "intro.md").write_text("# Intro")
    app = fake_app(src, out, ["chapters/02_b", "book/intro", "chapters/01_a"])
    book_download.write_archive(app, None)
    with zipfile.ZipFile(out / book_download.ARCHIVE) as z:
        names = z.namelist()
        assert names == ["gpulab-notebooks/chapters/01_a.ipynb", "gpulab-notebooks/chapters/02_b.ipynb"]
        assert z.read(names[1]).decode() == nb_json("# B")


def test_archive_is_not_written_for_a_failed_or_non_html_build(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x.ipynb").write_text(nb_json("# X"))
    book_download.write_archive(fake_app(tmp_path, tmp_path, ["c/x"]), RuntimeError("build failed"))
    book_download.write_archive(fake_app(tmp_path, tmp_path, ["c/x"], fmt="latex"), None)
    assert not (tmp_path / book_download.ARCHIVE).exists()


# --- the built site ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site():
    if not OTHER_HTML:
        assert build_book().returncode == 0, "the book did not build; see test_book.py"
    return SITE


def start_page(site: Path) -> str:
    return (site / "book" / "intro.html").read_text(encoding="utf-8")


def test_start_page_links_the_archive_of_every_notebook(site):
    html = start_page(site)
    hrefs = re.findall(r'href="([^"]*' + re.escape(book_download.ARCHIVE) + ')"', html)
    assert hrefs, f"the start page does not link {book_download.ARCHIVE}"
    for href in hrefs:
        target = site / urlparse(urljoin("http://book/book/intro.html", href)).path.lstrip("/")
        assert target.resolve() == (site / book_download.ARCHIVE).resolve() and target.exists(), href
    notebooks = [p for p in toc_files() if (SRC / (p + ".ipynb")).exists()]
    if not OTHER_HTML:
        assert set(CHAPTERS) <= set(notebooks), "a chapter of the toc is not a notebook"
    with zipfile.ZipFile(site / book_download.ARCHIVE) as z:
        names = set(z.namelist())
        want = {f"{book_download.FOLDER}/{p}.ipynb" for p in notebooks}
        assert want <= names, sorted(want - names)
        for p in notebooks:  # the sources, without outputs: not the executed pages
            nb = json.loads(z.read(f"{book_download.FOLDER}/{p}.ipynb"))
            code = [c for c in nb["cells"] if c["cell_type"] == "code"]
            assert code and not [c for c in code if c.get("outputs") or c.get("execution_count")], p
            first = json.loads((SRC / (p + ".ipynb")).read_text())["cells"][0]["source"]
            assert nb["cells"][0]["source"][:1] == first[:1], p  # the same page (its label line)


def test_start_page_chapter_table_gives_each_chapter_its_number(site):
    """The first column of the chapter table reads 1, 2, ... and each number links its chapter."""
    html = start_page(site)
    table = re.search(r'<table[^>]*id="tab-intro-chapters".*?</table>', html, re.S)
    assert table, "the start page has no chapter table (tab-intro-chapters)"
    rows = re.findall(r"<tr[^>]*>\s*<td>(.*?)</td>", table.group(0), re.S)
    firsts = [(re.sub(r"<[^>]+>", "", r).strip(), re.search(r'href="([^"#]+)', r)) for r in rows]
    assert [n for n, _ in firsts] == [str(k) for k in range(1, len(CHAPTERS) + 1)], firsts
    for (n, link), page in zip(firsts, CHAPTERS):
        assert link and link.group(1).endswith(page.split("/")[1] + ".html"), (n, page)
