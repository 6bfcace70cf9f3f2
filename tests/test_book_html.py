"""The rendered book as a reader sees it (issue 15), checked on the built HTML and the PDF.

Each check is a function run first on small hand-made HTML (so a check that cannot fail is
caught), then on every page of the book built once per session (tests/bookbuild.py):
no machine paths or development words in reader-facing text; code outputs and tables fit the
text column; every figure numbered, captioned, sharp and with text >= 9 pt; every chapter links
to another chapter and to References; every widget has a static fallback and its saved snapshot
is the state it starts in; math served from the book; the whole-book PDF has every chapter.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

bs4 = pytest.importorskip("bs4")

from bookbuild import HTML, ROOT, build_book, toc_files  # noqa: E402
from needs import missing  # noqa: E402

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import book_tools  # noqa: E402
import make_pdf  # noqa: E402

from gpulab.plots.style import MIN_FONT_PT  # noqa: E402
from gpulab.show import START_KEY  # noqa: E402

# The text column of the book theme, measured in headless Chromium at a 1280 px wide window
# (test_browser.py's size): paragraphs and output blocks are 676 CSS px wide; a 93-character
# output line took 816 px (14 px monospace, ~8.6 px a character plus padding), so an output
# block holds about 76 characters; body text (16 px) about 84.
COLUMN_PX = 676
MAX_OUTPUT_CHARS = 76
MAX_TABLE_CHARS = 84
MIN_PNG_DENSITY = 1.5  # PNG pixels per displayed CSS px

MACHINE_PATHS = re.compile(
    r"/work/|/root/|/home/|/tmp/|site-packages|/usr/lib/python|"
    r"[A-Z]:\\\\Users\\\\"
)
DEV_WORDS = re.compile(
    r"\bissue #?\d+(?![\d.,]*\s*(?:ns|us|µs|ms|s)\b)|\bseeds? 0\d\d|\bseed[- ]0\d\d\b|design notes|\bTODO\b|\bFIXME\b|\bXXX\b|"
    r"appear as they are finished|not been able to try|as we ran earlier|in an earlier run",
    re.I,
)

PAGES = toc_files()
CHAPTERS = [p for p in PAGES if p.startswith("chapters/")]
REFERENCES = "book/references"


# --- parsing ----------------------------------------------------------------------------------


def soup(html: str):
    return bs4.BeautifulSoup(html, "html.parser")


def article(page_soup):
    """The page's reader-facing content (the theme's article), without scripts and styles."""
    art = page_soup.find("article") or page_soup.find("main") or page_soup
    art = bs4.BeautifulSoup(str(art), "html.parser")
    for t in art(["script", "style", "noscript"]):
        t.decompose()
    return art


def reader_text(art) -> str:
    return re.sub(r"[ \t]+", " ", art.get_text(" "))


# --- checks (each returns a list of problems, empty when the page is fine) ----------------------


def text_problems(art) -> list[str]:
    """Machine paths and words about how the book was made, with some context."""
    text = reader_text(art)
    out = []
    for rx, what in ((MACHINE_PATHS, "machine path"), (DEV_WORDS, "development words")):
        for m in rx.finditer(text):
            ctx = text[max(0, m.start() - 60) : m.end() + 60].replace("\n", " ")
            out.append(f"{what} {m.group(0)!r}: ...{ctx}...")
    return out


def wide_output_lines(art, limit: int = MAX_OUTPUT_CHARS) -> list[str]:
    """Code-output lines longer than the column holds (they scroll sideways and print cut).
    Kernel listings from gpulab.show_source (python blocks in an output) wrap by CSS."""
    out = []
    for pre in art.select(".cell_output pre, .output pre"):
        if pre.find_parent(class_="highlight-python"):
            continue
        for line in pre.get_text().expandtabs(8).splitlines():
            if len(line.rstrip()) > limit:
                out.append(f"{len(line.rstrip())} chars: {line.rstrip()[:70]}...")
    return out


def table_problems(art, limit: int = MAX_TABLE_CHARS) -> list[str]:
    """Tables wider than the column, and pandas tables that show their 0..n-1 index. Cells
    wrap at spaces, so a table's narrowest width is, per column, its longest unbreakable word
    (plus 3 characters of padding); wider than the column, it scrolls and prints cut."""
    out = []
    for t in art.find_all("table"):
        if t.find_parent(class_="gpulab-widget-fallback"):
            continue
        rows = [[c.get_text(" ", strip=True) for c in r.find_all(["td", "th"])] for r in t.find_all("tr")]
        rows = [r for r in rows if r]
        if not rows:
            continue
        ncol = max(len(r) for r in rows)
        widths = [
            max((len(w) for r in rows if i < len(r) for w in r[i].split()), default=0) for i in range(ncol)
        ]
        width = sum(widths) + 3 * ncol
        head = " | ".join(rows[0])[:60]
        if width > limit:
            out.append(f"table [{head}] is ~{width} characters wide (column ~{limit})")
        if "dataframe" in (t.get("class") or []):
            idx = [r.find("th").get_text(strip=True) for r in t.select("tbody tr") if r.find("th")]
            if idx and idx == [str(i) for i in range(len(idx))]:
                out.append(
                    f"table [{head}] shows the pandas index 0..{len(idx) - 1} "
                    "(display with index=False / hide_index)"
                )
    return out


def _png_size(path: Path):
    from PIL import Image

    with Image.open(path) as im:
        return im.size


def _css_px(value) -> float | None:
    if value is None:
        return None
    m = re.match(r"\s*([\d.]+)\s*(px)?\s*$", str(value))
    return float(m.group(1)) if m else None


def svg_font_problems(svg_text: str, shown_px: float | None = None, min_pt: float = MIN_FONT_PT) -> list[str]:
    """Text in an SVG smaller than ``min_pt`` at the size it is shown (natural size, or
    ``shown_px`` wide), or an SVG whose text was turned into paths (size unknowable)."""
    m = re.search(
        r"<svg[^>]*\bwidth=\"([\d.]+)(pt|px)?\"[^>]*viewBox=\"[\d.\s-]+?([\d.]+)\s+[\d.]+\"", svg_text
    )
    if not m:
        return ["SVG without width/viewBox"]
    width, unit, vb_w = float(m.group(1)), m.group(2) or "px", float(m.group(3))
    natural_px = width * (4 / 3 if unit == "pt" else 1)
    shown = min(shown_px or natural_px, COLUMN_PX)  # max-width: 100% shrinks wide figures
    pt_per_unit = (shown / vb_w) * 0.75  # user units -> CSS px -> pt
    sizes = [float(s) for s in re.findall(r"font-size:\s*([\d.]+)px", svg_text)]
    sizes += [float(s) for s in re.findall(r"font:\s*(?:[a-z]+\s+)*([\d.]+)px", svg_text)]
    if not sizes:
        if "<text" not in svg_text and re.search(r"<g id=\"text_\d", svg_text):
            return ["SVG text drawn as paths (svg.fonttype must be 'none')"]
        return []
    smallest = min(sizes) * pt_per_unit
    if smallest < min_pt - 0.05:
        return [f"smallest text {smallest:.1f} pt at {shown:.0f} px wide (minimum {min_pt} pt)"]
    return []


def figure_problems(art, page_dir: Path) -> list[str]:
    """Every image in the content is a numbered, captioned figure; PNGs have >= 1.5 pixels per
    displayed px; SVG text is legible. Widget fallbacks and the theme's logos are exempt."""
    out = []
    for img in art.find_all("img"):
        if img.find_parent(class_="gpulab-widget-fallback") or "logo" in (img.get("alt") or "").lower():
            continue
        src = img.get("src", "")
        name = src.rsplit("/", 1)[-1][:24]
        fig = img.find_parent("figure")
        cap = fig.find("figcaption") if fig else None
        if cap is None or not cap.find(class_="caption-number"):
            out.append(
                f"image {name} is not a numbered figure with a caption "
                "({glue:figure} with :name:, or a figure directive)"
            )
        elif not cap.find(class_="caption-text") or not cap.find(class_="caption-text").get_text(strip=True):
            out.append(f"figure {name} has a number but no caption text")
        if src.startswith(("http:", "https:", "data:")):
            continue
        path = (page_dir / src.split("#")[0]).resolve()
        if not path.exists():
            out.append(f"image {name} missing on disk")
            continue
        shown = _css_px(img.get("width"))
        style = re.search(r"width:\s*([\d.]+)px", img.get("style") or "")
        shown = shown or (float(style.group(1)) if style else None)
        if path.suffix.lower() == ".svg":
            out += [f"figure {name}: {p}" for p in svg_font_problems(path.read_text(errors="replace"), shown)]
        elif path.suffix.lower() in (".png", ".jpg", ".jpeg"):
            w, _ = _png_size(path)
            shown = min(shown or w, COLUMN_PX)
            if w < MIN_PNG_DENSITY * shown:
                out.append(
                    f"figure {name}: {w} px shown {shown:.0f} px wide "
                    f"({w / shown:.2f}x; needs >= {MIN_PNG_DENSITY}x or SVG)"
                )
    return out


def link_problems(art, page: str) -> list[str]:
    """A chapter links to at least one other chapter and to References."""
    hrefs = [a.get("href", "") for a in art.find_all("a", href=True)]
    others, refs = set(), False
    for h in hrefs:
        target = h.split("#")[0]
        if not target or target.startswith(("http:", "https:", "mailto:")):
            continue
        resolved = (Path(page).parent / target).as_posix()
        resolved = re.sub(r"[^/]+/\.\./", "", resolved).removesuffix(".html")
        if resolved.startswith("chapters/") and resolved != page:
            others.add(resolved)
        if resolved == REFERENCES:
            refs = True
    out = []
    if not others:
        out.append("links to no other chapter ({numref}`Chapter %s <chNN>` or {doc})")
    if not refs:
        out.append("links to no entry of References ({cite}`key`)")
    return out


def widget_problems(html: str) -> list[str]:
    """Every widget view has a static fallback after it and records its starting state, and
    the page's saved widget state equals that starting state (nothing moved the widget)."""
    m = re.search(r'widget-state\+json">(.*?)</script>', html, re.S)
    state = json.loads(m.group(1).replace("<\\/", "</"))["state"] if m else {}
    out = []
    for vm in re.finditer(r'widget-view\+json">(.*?)</script>(.{0,60})', html, re.S):
        view = json.loads(vm.group(1).replace("<\\/", "</"))
        mid = view.get("model_id", "?")
        if "gpulab-widget-fallback" not in vm.group(2):
            out.append(f"widget {mid[:8]}: no static fallback after it")
        start = view.get(START_KEY)
        if start is None:
            out.append(f"widget {mid[:8]}: no recorded starting state (import gpulab before making widgets)")
            continue
        for model_id, values in start.items():
            saved = state.get(model_id, {}).get("state")
            if saved is None:
                out.append(f"widget {mid[:8]}: model {model_id[:8]} missing from the saved state")
                continue
            label = saved.get("description") or values.get("description") or model_id[:8]
            for k, v in values.items():
                if k in saved and saved[k] != v:
                    sv, vv = (str(x)[:60] for x in (saved[k], v))
                    out.append(
                        f"widget {label!r}: saved {k} = {sv!r} but it starts at {vv!r} "
                        "(a later cell moved it: solutions set their own variables)"
                    )
    return out


def math_problems(html: str) -> list[str]:
    """MathJax is loaded from the book, not from a CDN."""
    out = []
    for src in re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', html, re.I):
        if src.startswith(("http:", "https:", "//")):
            out.append(f"MathJax from a CDN: {src} (pip install sphinx-mathjax-offline)")
    return out


# --- the checks themselves can fail ----------------------------------------------------------------

GOOD = """<html><body><article>
<h1>Chapter</h1><p>See <a href="02_b.html#x">Beta</a> and <a href="../book/references.html#id1">[H, 2022]</a>.</p>
<div class="cell_output"><pre>short line</pre></div>
<div class="cell_output"><pre>bounds: dram 8.54 us, issue 7.52
  us (the model's instruction-issue bound, wrapped)</pre></div>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
</article><script>/work/ in a script is not text</script></body></html>"""

BAD = """<html><body><article>
<h1>Chapter</h1><p>As in issue 7 and seed 003, see the design notes. TODO.</p>
<div class="cell_output"><pre>KernelError at /work/main/gpulab/kernels/matmul.py line 3 {pad}</pre></div>
<table class="dataframe"><tbody><tr><th>0</th><td>{cell}</td></tr><tr><th>1</th><td>x</td></tr></tbody></table>
<table><tr><td>{words}</td></tr></table>
<div class="cell_output"><div class="highlight-python"><pre>{pad}{pad}</pre></div></div>
<img src="x.png"/>
</article></body></html>""".format(pad="x" * 80, cell="y" * 120, words="wrapping words " * 20)


def test_text_checks_find_paths_and_dev_words_only_in_reader_text():
    assert text_problems(article(soup(GOOD))) == []
    bad = text_problems(article(soup(BAD)))
    assert any("/work/" in p for p in bad)
    for w in ("issue 7", "seed 003", "design notes", "TODO"):
        assert any(w in p for p in bad), (w, bad)


def test_width_checks_find_long_outputs_tables_and_pandas_index():
    assert wide_output_lines(article(soup(GOOD))) == []
    assert table_problems(article(soup(GOOD))) == []
    assert len(wide_output_lines(article(soup(BAD)))) == 1
    probs = table_problems(article(soup(BAD)))
    assert any("characters wide" in p for p in probs) and any("pandas index" in p for p in probs)
    assert len(probs) == 2  # a table of short words wraps; a kernel listing wraps too


def test_figure_checks(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from gpulab.plots import style

    style.apply()
    fig = Figure(figsize=(4, 2))
    ax = fig.add_subplot()
    ax.plot([0, 1])
    ax.set_title("ok")
    fig.savefig(tmp_path / "ok.svg", bbox_inches="tight")
    ax.text(0.5, 0.5, "tiny", fontsize=5)
    fig.savefig(tmp_path / "tiny.svg", bbox_inches="tight")
    fig.savefig(tmp_path / "lo.png", dpi=100)
    fig.savefig(tmp_path / "hi.png", dpi=200)

    def page(src, caption=True):
        cap = (
            (
                '<figcaption><p><span class="caption-number">Figure 1.1 </span>'
                '<span class="caption-text">A line.</span></p></figcaption>'
            )
            if caption
            else ""
        )
        w = ' width="400"' if src.endswith(".png") else ""
        return article(soup(f'<article><figure><img src="{src}"{w}/>{cap}</figure></article>'))

    assert figure_problems(page("ok.svg"), tmp_path) == []
    assert figure_problems(page("hi.png"), tmp_path) == []  # 800 px shown at 400
    assert any("not a numbered figure" in p for p in figure_problems(page("ok.svg", False), tmp_path))
    assert any("smallest text 5.0 pt" in p for p in figure_problems(page("tiny.svg"), tmp_path))
    assert any("needs >= 1.5x" in p for p in figure_problems(page("lo.png"), tmp_path))
    # a figure wider than the column is shrunk, and its text with it
    big = Figure(figsize=(14, 3))
    big.add_subplot().plot([0, 1])
    big.savefig(tmp_path / "big.svg", bbox_inches="tight")
    assert any("smallest text" in p for p in svg_font_problems((tmp_path / "big.svg").read_text()))


def test_link_check():
    assert link_problems(article(soup(GOOD)), "chapters/01_a") == []
    lonely = article(soup('<article><a href="01_a.html#x">me</a><a href="https://x.org">x</a></article>'))
    probs = link_problems(lonely, "chapters/01_a")
    assert len(probs) == 2 and "no other chapter" in probs[0] and "References" in probs[1]


def _widget_page(start_index, saved_index, fallback=True):
    state = {
        "state": {
            "m1": {"model_name": "DropdownModel", "state": {"description": "block x", "index": saved_index}}
        }
    }
    view = {
        "version_major": 2,
        "version_minor": 0,
        "model_id": "m1",
        START_KEY: {"m1": {"description": "block x", "index": start_index}},
    }
    fb = '<div class="gpulab-widget-fallback">...</div>' if fallback else ""
    return (
        f'<script type="application/vnd.jupyter.widget-state+json">{json.dumps(state)}</script>'
        f'<script type="application/vnd.jupyter.widget-view+json">{json.dumps(view)}</script>{fb}'
    )


def test_widget_check_compares_snapshot_with_start():
    assert widget_problems(_widget_page(3, 3)) == []
    moved = widget_problems(_widget_page(3, 2))
    assert len(moved) == 1 and "'block x'" in moved[0] and "saved index = '2'" in moved[0]
    assert any("no static fallback" in p for p in widget_problems(_widget_page(3, 3, False)))


def test_widget_fallback_renders_saved_state():
    import book_widgets

    models = {
        "box": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_dd", "IPY_MODEL_h"]}},
        "dd": {
            "model_name": "DropdownModel",
            "state": {"description": "block x", "index": 1, "_options_labels": ["4", "8"]},
        },
        "h": {"model_name": "HTMLModel", "state": {"value": "<b>656</b> idle threads"}},
    }
    view = json.dumps({"model_id": "box"})
    html = book_widgets.with_note_and_fallback(models, "<script>v</script>", view)
    assert html.index("run this notebook") < html.index("<script>v</script>") < html.index("fallback")
    assert "<b>block x</b>: 8" in html and "656</b> idle" in html


def test_setup_cell_check_and_tool(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 3. Warp divergence")] + [
        nbformat.v4.new_code_cell(s) for s in ("# install", "import gpulab", "import numpy", "x = 1")
    ]
    path = tmp_path / "03_divergence.ipynb"
    nbformat.write(nb, str(path))
    probs = book_tools.setup_cell_problems(path)
    assert len(probs) == 3 and "code cell 1" in probs[0]
    ids = [c.id for c in nbformat.read(str(path), 4).cells]
    assert book_tools.hide_setup_cells(path) and not book_tools.hide_setup_cells(path)
    after = nbformat.read(str(path), 4)
    assert book_tools.setup_cell_problems(after) == [] and [c.id for c in after.cells] == ids
    assert "tags" not in after.cells[4].metadata  # the fourth code cell stays visible
    assert len(book_tools.title_problems(after, "ch03")) == 2
    assert book_tools.retitle(path) and not book_tools.retitle(path)
    after = nbformat.read(str(path), 4)
    assert after.cells[0].source == "(ch03)=\n# Warp divergence"
    assert book_tools.title_problems(after, "ch03") == []


def test_install_urls_match_config(tmp_path):
    """Every install line, `git clone` and Gradescope requirement names _config.yml's URL."""
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://example.org/a/b\n")
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "requirements-gradescope.txt").write_text(
        "gpulab @ git+https://example.org/a/b\ngpulab @ git+https://github.com/old/name.git\n"
    )
    probs = book_tools.url_mismatches(tmp_path)
    assert len(probs) == 1 and "line 2" in probs[0] and "old/name" in probs[0]
    mismatches = book_tools.url_mismatches()
    assert not mismatches, "install URLs differ from _config.yml repository.url:\n" + "\n".join(mismatches)


def test_package_metadata_url_is_config_url():
    from gpulab import show

    assert show.repository_url() == book_tools.repository_url()
    assert book_tools.repository_url() in show.install_line()


def test_source_paths_are_package_relative():
    from gpulab import show
    from gpulab.kernels import matmul

    md = show.show_source(matmul.matmul_naive)._repr_markdown_()
    assert "```python\n@cuda.jit\ndef matmul_naive" in md
    assert "gpulab/kernels/matmul.py, lines " in md and str(ROOT) not in md
    assert show.package_path(ROOT / "gpulab" / "errors.py") == "gpulab/errors.py"
    assert show.package_path("/somewhere/else/x.py") == "x.py"
    assert show.package_path("/tmp/ipykernel_123/456.py") == "a notebook cell"
    with pytest.raises(TypeError, match="no Python source"):
        show.show_source(len)
    from gpulab.errors import KernelError

    msg = str(
        KernelError(
            "index 47 out of bounds",
            kernel="k",
            line=36,
            filename=str(ROOT / "gpulab" / "kernels" / "image.py"),
        )
    )
    assert "line 36 of gpulab/kernels/image.py" in msg and str(ROOT) not in msg


# --- the built book -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def built():
    b = build_book()
    if not (HTML / "index.html").exists():
        pytest.fail(f"the book did not build (rc={b.returncode}):\n{b.log[-3000:]}")
    return b


def _page(page):
    path = HTML / f"{page}.html"
    if not path.exists():
        pytest.fail(f"{page}.html was not built")
    html = path.read_text(errors="replace")
    return html, article(soup(html)), path.parent


def _report(page, problems, what):
    assert not problems, (
        f"{page}: {what}:\n  "
        + "\n  ".join(problems[:40])
        + (f"\n  ... and {len(problems) - 40} more" if len(problems) > 40 else "")
    )


@pytest.mark.parametrize("page", PAGES)
def test_no_machine_paths_or_dev_words(built, page):
    _, art, _ = _page(page)
    _report(page, text_problems(art), "reader-facing text about the machine or the making")


@pytest.mark.parametrize("page", PAGES)
def test_outputs_and_tables_fit_the_column(built, page):
    _, art, _ = _page(page)
    _report(page, wide_output_lines(art) + table_problems(art), "wider than the text column")


@pytest.mark.parametrize("page", PAGES)
def test_figures_numbered_captioned_and_legible(built, page):
    _, art, d = _page(page)
    _report(page, figure_problems(art, d), "figures")


@pytest.mark.parametrize("page", CHAPTERS)
def test_chapter_links_other_chapters_and_references(built, page):
    _, art, _ = _page(page)
    _report(page, link_problems(art, page), "cross-references")


@pytest.mark.parametrize("page", PAGES)
def test_widgets_have_fallbacks_and_start_state_snapshots(built, page):
    html, _, _ = _page(page)
    _report(page, widget_problems(html), "widgets")


@pytest.mark.parametrize("page", PAGES)
def test_math_served_from_the_book(built, page):
    html, _, _ = _page(page)
    _report(page, math_problems(html), "math")
    if "mathjax" in html.lower():
        assert (HTML / "_static" / "mathjax" / "tex-mml-chtml.js").exists()


def test_solution_titles_do_not_link_back_to_the_exercise(built):
    """A click on a closed solution's title opens it instead of jumping to the exercise."""
    seen = 0
    for page in CHAPTERS:
        html, _, _ = _page(page)
        for title in re.findall(
            r'<div class="solution[^"]*"[^>]*>\s*<p class="admonition-title">(.*?)</p>', html, re.S
        ):
            seen += 1
            assert "<a " not in title, f"{page}: solution title links away: {title[:120]}"
    assert seen, "no solution dropdowns found in the chapters"


def test_chapters_numbered_and_exercises_numbered_per_chapter(built):
    """Chapter k's title reads 'k. ...' once, and its exercises are 'Exercise k.n'."""
    for k, page in enumerate(CHAPTERS, 1):
        html, art, _ = _page(page)
        h1 = art.find("h1").get_text(" ", strip=True).rstrip("#").strip()
        assert h1.startswith(f"{k}. ") and not re.match(rf"{k}\. +{k}\. ", h1), f"{page}: title {h1!r}"
        nums = re.findall(r'<span class="caption-number">Exercise (\S+) </span>', html)
        for n in nums:
            assert n.startswith(f"{k}."), f"{page}: exercise numbered {n}, not {k}.n"


def test_intro_table_links_every_chapter_by_its_title(built):
    html, art, _ = _page("book/intro")
    for page in CHAPTERS:
        ch_html, ch_art, _ = _page(page)
        title = re.sub(r"^\d+\.\s*", "", ch_art.find("h1").get_text(" ", strip=True).rstrip("#").strip())
        links = [
            a
            for a in art.find_all("a", href=True)
            if a["href"].split("#")[0].endswith(page.split("/")[1] + ".html")
        ]
        assert links, f"the intro does not link {page}"
        assert any(title in a.get_text(" ", strip=True) for a in links), (
            f"the intro's link to {page} does not read {title!r}"
        )


# --- the whole-book PDF -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def pdf(built):
    """The PDF the HTML build itself printed (book/_ext/book_pdf.py): no separate step."""
    if make_pdf.find_chromium() is None:
        missing("the HTML build prints the PDF with headless Chromium: apt-get install chromium")
    assert make_pdf.PDF.exists(), (
        f"the HTML build wrote no {make_pdf.PDF_NAME} (book/_ext/book_pdf.py); its log:\n"
        + "\n".join(ln for ln in build_book().log.splitlines() if "book_pdf" in ln)[-3000:]
    )
    return make_pdf.PDF


def test_pdf_exists_and_the_start_page_link_resolves_to_it(pdf):
    """The start page's PDF link, resolved against the page's own URL, is the file the build wrote
    (it was a 404 while only a separate script printed the PDF)."""
    from urllib.parse import urljoin, urlparse

    assert pdf.stat().st_size > 100_000 and pdf.read_bytes()[:5] == b"%PDF-"
    html, _, _ = _page("book/intro")
    soup = bs4.BeautifulSoup(html, "html.parser")
    hrefs = [a["href"] for a in soup.find_all("a", href=True) if a["href"].endswith(make_pdf.PDF_NAME)]
    assert hrefs, "the intro does not link the PDF"
    for href in hrefs:
        target = urlparse(urljoin("http://book/book/intro.html", href)).path.lstrip("/")
        assert (HTML / target).resolve() == pdf.resolve(), f"the intro links {href}, which is not {pdf}"


def test_pdf_has_every_chapter(pdf):
    exe = shutil.which("pdftotext")
    if exe is None:
        missing("reading the PDF's text needs pdftotext (apt-get install poppler-utils)")
    text = subprocess.run([exe, "-layout", str(pdf), "-"], capture_output=True, text=True, timeout=300).stdout
    flat = re.sub(r"\s+", "", text).lower()
    absent = []
    for page in CHAPTERS:
        _, art, _ = _page(page)
        title = art.find("h1").get_text(" ", strip=True).rstrip("#").strip()
        title = re.sub(r"^(\d+\.\s*)+", "", title)  # the number is laid out apart from it
        if re.sub(r"\s+", "", title).lower() not in flat:
            absent.append(title)
    assert not absent, f"chapters missing from the PDF: {absent}"


def test_widgets_carry_their_starting_state_when_displayed():
    """gpulab.show records each control's value in the view data at display time, so the book
    can tell a snapshot moved by a later cell from the state the reader starts in."""
    import ipywidgets as W

    from gpulab import show

    assert show.record_widget_starts() and show.record_widget_starts()  # idempotent
    slider = W.IntSlider(value=3, description="n")
    drop = W.Dropdown(options=[4, 8], value=8, description="block x")
    box = W.VBox([slider, W.HBox([drop])])
    view = box._repr_mimebundle_()["application/vnd.jupyter.widget-view+json"]
    start = view[START_KEY]
    assert start[slider.model_id] == {"value": 3, "description": "n"}
    assert start[drop.model_id]["index"] == 1 and view["model_id"] == box.model_id
    slider.value = 5
    assert (
        box._repr_mimebundle_()["application/vnd.jupyter.widget-view+json"][START_KEY][slider.model_id][
            "value"
        ]
        == 5
    )


def test_figure_style_has_no_text_below_the_minimum():
    import matplotlib

    from gpulab.plots import style

    style.apply()
    named = {
        "xx-small": 0.579,
        "x-small": 0.694,
        "small": 0.833,
        "medium": 1.0,
        "large": 1.2,
        "x-large": 1.44,
        "xx-large": 1.728,
    }
    base = matplotlib.rcParams["font.size"]
    for key in (
        "font.size",
        "axes.titlesize",
        "axes.labelsize",
        "xtick.labelsize",
        "ytick.labelsize",
        "legend.fontsize",
        "legend.title_fontsize",
        "figure.titlesize",
    ):
        v = matplotlib.rcParams[key]
        size = base * named[v] if isinstance(v, str) else float(v)
        assert size >= style.MIN_FONT_PT, (key, size)
    assert matplotlib.rcParams["svg.fonttype"] == "none" and matplotlib.rcParams["savefig.dpi"] >= 150
