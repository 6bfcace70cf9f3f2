"""The book builds with every chapter executed, and the build fails on what it must fail on."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import gpulab
from bookbuild import HTML, ROOT, build_book, run_build


def uses_widgets(page: str) -> bool:
    """Whether the notebook behind a page (``chapters/03_divergence``) displays gpulab widgets."""
    nb = ROOT / (page + ".ipynb")
    return nb.exists() and "gpulab.widgets" in nb.read_text(encoding="utf-8")


def test_widget_check_knows_which_pages_have_widgets():
    assert uses_widgets("chapters/03_divergence") and not uses_widgets("book/no_such_page")


@pytest.fixture(scope="session")
def built():
    return build_book()


def test_book_builds_clean(built):
    """`jupyter-book build . -W -n --keep-going` exits 0: no cell error, no Sphinx warning."""
    tail = built.log[-6000:]
    assert built.returncode == 0, f"book build failed (rc={built.returncode}):\n{tail}"
    assert not re.search(r"^.*(WARNING|ERROR):", built.log, re.M), tail
    print(f"book build took {built.seconds:.0f} s")


def test_every_toc_entry_has_a_page(built):
    missing = [f for f in built.toc if not (HTML / (f + ".html")).exists()]
    assert not missing, f"pages not built: {missing}"


def test_images_referenced_by_pages_exist(built):
    """Every <img src> of a built page points at a file that exists (figures are rendered)."""
    bad = []
    for page in HTML.rglob("*.html"):
        for src in re.findall(r'<img[^>]+src="([^"]+)"', page.read_text(errors="replace")):
            if src.startswith(("http", "data:")):
                continue
            if not (page.parent / src.split("#")[0]).resolve().exists():
                bad.append((page.relative_to(HTML), src))
    assert not bad, bad


def test_chapter_pages_have_executed_outputs_and_colab_button(built):
    for f in built.toc:
        if not f.startswith("chapters/"):
            continue
        html = (HTML / (f + ".html")).read_text()
        assert "cell_output" in html, f"{f}: no executed output in the page"
        # `import gpulab`'s environment line is for the notebook, not the page (issue 25;
        # tests/test_pages.py checks that no page shows it)
        assert gpulab.describe() not in html, f"{f}: the environment banner is visible"
        want = f"colab.research.google.com/github/gpulab/gpulab/blob/main/{f}.ipynb"
        assert want in html, f"{f}: no Colab launch link"


def test_pages_embed_widget_state_and_no_duplicate_inline_scripts(built):
    """Every widget view has its saved state in the page (a static snapshot), and no inline
    script is emitted twice (a second `const THEBE_JS_URL` is a JavaScript SyntaxError)."""
    for page in HTML.rglob("*.html"):
        html = page.read_text(errors="replace")
        assert html.count("const THEBE_JS_URL") <= 1, page
        views = re.findall(r'widget-view\+json">(\{.*?\})</script>', html)
        if uses_widgets(str(page.relative_to(HTML).with_suffix(""))):
            assert views, f"{page}: its notebook shows gpulab widgets, but the page has no widget view"
        if views:
            m = re.search(r'widget-state\+json">(.*?)</script>', html, re.S)
            assert m, f"{page}: widget views without embedded widget state"
            import json

            models = json.loads(m.group(1))["state"]
            for v in views:
                assert json.loads(v)["model_id"] in models


def test_chapter01_figures_rendered(built):
    html = (HTML / "chapters" / "01_latency_throughput.html").read_text()
    figures = re.findall(r'<img[^>]+src="(\.\./_images/[^"]+\.(?:png|svg))"', html)
    assert len(figures) >= 3, figures
    for src in figures:  # each figure file was written, and is not empty
        assert (HTML / "chapters" / src).resolve().stat().st_size > 200, src


def _mini_book(tmp_path: Path, files: dict[str, str], root: str) -> Path:
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    shutil.copytree(ROOT / "book" / "_ext", book / "book" / "_ext")
    (book / "_toc.yml").write_text(f"format: jb-book\nroot: {root}\n")
    for name, text in files.items():
        (book / name).write_text(text)
    return book


def _nb(source: str) -> str:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb)


def test_a_failing_cell_fails_the_build(tmp_path):
    book = _mini_book(tmp_path, {"index.ipynb": _nb("1/0")}, "index")
    proc = run_build(book)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "ZeroDivisionError" in proc.stdout + proc.stderr


def test_a_sphinx_warning_fails_the_build(tmp_path):
    book = _mini_book(tmp_path, {"index.md": "# t\n\nSee {doc}`no_such_page`.\n"}, "index")
    proc = run_build(book)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "no_such_page" in proc.stdout + proc.stderr
