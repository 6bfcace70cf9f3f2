"""Every page of the built book in headless Chromium at 1280 px and at 390 px (issue 25).

Per page:
- at 390 px (a phone, mobile emulation) the page does not scroll sideways;
- at 1280 px no code line or output is wider than the text column (a `pre` that would scroll
  sideways), solutions opened so that their code is checked too;
- no visible glue-only cell and no visible environment banner (`import gpulab`'s line);
- no "❌" in a stub's starting output (outputs outside the solutions);
- every figure's smallest text is at least 9 pt as shown at 1280 px, and at 390 px every
  figure is a link to its full-size image (tap to enlarge);
- every table and figure is numbered and captioned, and no empty code block shows;
- no two citations show the same label for different works.

The book is built once per session by tests/bookbuild.py (shared with test_book.py,
test_book_html.py and test_browser.py: never a second build). To check an HTML tree built
elsewhere, e.g. a small throwaway book, set GPULAB_BOOK_HTML to its `_build/html` folder: the
pages it holds are checked and nothing is built. Skips when selenium, Chromium or chromedriver
is missing, and fails instead under CI=true (.ci/run installs them), like test_browser.py.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

import chromium
from bookbuild import HTML, build_book, toc_files

WIDE, PHONE = 1280, 390
MIN_PT = 9.0


def _pages_in(html: Path) -> list[str]:
    """The toc's pages that exist in ``html`` (all of them after a full build)."""
    return [p for p in toc_files() if (html / f"{p}.html").exists()]


OTHER_HTML = os.environ.get("GPULAB_BOOK_HTML")
SITE = Path(OTHER_HTML) if OTHER_HTML else HTML
PAGES = _pages_in(SITE) if OTHER_HTML else toc_files()


@pytest.fixture(scope="module")
def browser():
    chromium.require()  # before the build: no browser, no build
    if not OTHER_HTML:
        built = build_book()
        assert built.returncode == 0, "the book did not build; see test_book.py"
    with chromium.session(SITE, window=(WIDE, 1000), extra_args=("--hide-scrollbars",)) as (drv, base):
        yield drv, base


def open_at(drv, base, page, width):
    """Load ``page`` in a viewport ``width`` CSS px wide (mobile emulation below 600 px)."""
    drv.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    drv.get(f"{base}/{page}.html")
    t0 = time.time()
    while drv.execute_script("return document.readyState") != "complete":
        assert time.time() - t0 < 30, f"{page} did not finish loading"
        time.sleep(0.1)
    time.sleep(0.3)


# --- what is measured in the page (JavaScript), kept small and named ---------------------------

VISIBLE = """
const visible = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility === 'visible';
"""

JS_PAGE_WIDTH = "return [document.documentElement.scrollWidth, window.innerWidth];"

# what widens the page: elements past the screen's right edge that no scrolling box clips
JS_WIDENERS = """
const W = arguments[0];
const clipped = e => { for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
  if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(p).overflowX)) return true; }
  return false; };
const out = [];
document.querySelectorAll('body *').forEach(e => {
  const r = e.getBoundingClientRect();
  if (r.right <= W + 1 || r.width === 0 || clipped(e) || getComputedStyle(e).position === 'fixed') return;
  const p = e.parentElement;
  if (p.getBoundingClientRect().right > W + 1 && !clipped(p)) return;  // report the outermost
  out.push(e.tagName + ' to ' + Math.round(r.right) + ' px: ' + (e.textContent || '').trim().slice(0, 50));
});
return out.slice(0, 6);
"""

JS_WIDE_CODE = (
    VISIBLE
    + """
return Array.from(document.querySelectorAll('article pre'))
  .filter(e => visible(e) && e.scrollWidth > e.clientWidth + 1)
  .map(e => e.scrollWidth + '>' + e.clientWidth + ' px: ' + e.textContent.trim().slice(0, 70));
"""
)

JS_EMPTY_CODE = (
    VISIBLE
    + """
return Array.from(document.querySelectorAll('article pre'))
  .filter(e => visible(e) && e.textContent.trim() === '').length;
"""
)

JS_OPEN_SOLUTIONS = """
document.querySelectorAll('.toggle-hidden > .admonition-title').forEach(t => t.click());
document.querySelectorAll('article details').forEach(d => { d.open = true; });
"""

JS_CELLS = (
    VISIBLE
    + """
return Array.from(document.querySelectorAll('article .cell')).map(c => {
  const inp = c.querySelector('.cell_input');
  const out = Array.from(c.querySelectorAll('.cell_output'));
  return {
    input: inp && visible(inp) ? inp.innerText : null,
    output: out.filter(visible).map(o => o.innerText).join('\\n'),
    in_solution: !!c.closest('.solution'),
  };
});
"""
)

JS_FIGURES = (
    VISIBLE
    + """
return Array.from(document.querySelectorAll('article img')).filter(i =>
    !i.closest('.gpulab-widget-fallback') && !/logo/i.test(i.alt || '')).map(i => {
  const fig = i.closest('figure');
  const cap = fig && fig.querySelector('figcaption');
  return {src: i.getAttribute('src'), url: i.src, shown: i.getBoundingClientRect().width,
          natural: i.naturalWidth, visible: visible(i),
          number: !!(cap && cap.querySelector('.caption-number')),
          caption: cap && cap.querySelector('.caption-text') ? cap.querySelector('.caption-text').textContent.trim() : '',
          link: i.closest('a') ? i.closest('a').href : null};
});
"""
)

JS_INLINE_SVG_TEXT = (
    VISIBLE
    + """
let smallest = null, where = '';
document.querySelectorAll('article svg text').forEach(t => {
  if (!visible(t)) return;
  const m = t.getScreenCTM(); if (!m) return;
  const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
  if (smallest === null || px < smallest) { smallest = px; where = t.textContent.slice(0, 30); }
});
return [smallest, where];
"""
)

JS_TABLES = """
return Array.from(document.querySelectorAll('article table')).filter(t =>
    !t.closest('.gpulab-widget-fallback') && !t.closest('.highlight') && !t.closest('.MathJax')
    && !t.closest('mjx-container') && !t.closest('.bibliography') && !t.closest('.glossary')
    && !t.closest('.footnote') && !t.closest('.field-list')).map(t => {
  const cap = t.querySelector(':scope > caption');
  const fig = t.closest('figure');
  const fcap = fig && fig.querySelector('figcaption');
  const c = cap || fcap;
  return {head: t.innerText.trim().slice(0, 60),
          number: !!(c && c.querySelector('.caption-number')),
          caption: c && c.querySelector('.caption-text') ? c.querySelector('.caption-text').textContent.trim() : ''};
});
"""

JS_CITATIONS = """
return Array.from(document.querySelectorAll('article a[href*="references.html#id"], article a[href^="#id"]'))
  .filter(a => /^\\[?.+,\\s*\\d{4}[a-z]?\\]?$/.test(a.innerText.trim()))
  .map(a => [a.innerText.trim().replace(/^\\[|\\]$/g, ''), a.href.split('#')[1]]);
"""


# --- pure checks on what was measured (each can fail: see the tests at the end) ---------------

BANNER = re.compile(r"^gpulab \d+\.\d+[\w.]*: ", re.M)
GLUE_CALL = re.compile(r"^\s*(?:gpulab\.show\.)?glue(?:_figure)?\(")


def glue_only(code: str) -> bool:
    """A cell whose every statement passes values to the text (glue(...)) or imports: plumbing
    that the page should not show. Continuation lines of a glue call count with it."""
    lines = [ln for ln in code.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if not lines:
        return False
    depth, any_glue = 0, False
    for ln in lines:
        if depth == 0:
            if GLUE_CALL.match(ln):
                any_glue = True
            elif not re.match(r"\s*(from\s+\S+\s+)?import\s", ln):
                return False
        depth += ln.count("(") + ln.count("[") - ln.count(")") - ln.count("]")
    return any_glue


def cell_problems(cells: list[dict]) -> list[str]:
    out = []
    for c in cells:
        if c["input"] and glue_only(c["input"]):
            out.append(f"visible glue-only cell: {c['input'].strip()[:70]!r}")
        if c["output"] and BANNER.search(c["output"]):
            out.append(f"visible environment banner: {BANNER.search(c['output']).group(0)!r}")
        if c["output"] and "❌" in c["output"] and not c["in_solution"]:
            line = next(ln for ln in c["output"].splitlines() if "❌" in ln)
            out.append(f"a starting output shows a failure: {line.strip()[:70]!r}")
    return out


def svg_smallest_pt(svg_text: str, shown_px: float) -> float | None:
    """The smallest font in a matplotlib SVG (text kept as text), in pt as shown ``shown_px`` wide."""
    m = re.search(r"<svg[^>]*viewBox=\"[\d.\s-]+?([\d.]+)\s+[\d.]+\"", svg_text)
    if not m:
        return None
    sizes = [float(s) for s in re.findall(r"font-size:\s*([\d.]+)px", svg_text)]
    sizes += [float(s) for s in re.findall(r"font:\s*(?:[a-z]+\s+)*([\d.]+)px", svg_text)]
    if not sizes:
        return None
    return min(sizes) * shown_px / float(m.group(1)) * 0.75


def figure_problems(figs: list[dict], page_dir: Path, phone: bool) -> list[str]:
    out = []
    for f in figs:
        name = (f["src"] or "").rsplit("/", 1)[-1][:28]
        if not f["number"] or not f["caption"]:
            out.append(f"image {name}: not a numbered, captioned figure")
        if phone:
            if not f["link"]:
                out.append(f"figure {name}: no link to its full-size image (tap to enlarge)")
            continue
        if not f["visible"] or not f["src"] or f["src"].startswith(("http", "data:")):
            continue
        path = (page_dir / f["src"].split("#")[0]).resolve()
        if path.suffix.lower() == ".svg" and path.exists():
            pt = svg_smallest_pt(path.read_text(errors="replace"), f["shown"])
            if pt is not None and pt < MIN_PT - 0.05:
                out.append(
                    f"figure {name}: smallest text {pt:.1f} pt at {f['shown']:.0f} px (minimum {MIN_PT})"
                )
    return out


def table_problems(tables: list[dict]) -> list[str]:
    return [
        f"table [{t['head'][:50]}]: no number and caption"
        for t in tables
        if not (t["number"] and t["caption"])
    ]


def citation_problems(cites: list[list[str]]) -> list[str]:
    """One label, one work: a label whose links lead to different bibliography entries."""
    seen: dict[str, set[str]] = {}
    for label, target in cites:
        seen.setdefault(label, set()).add(target)
    return [f"[{lab}] names {len(t)} different works" for lab, t in seen.items() if len(t) > 1]


# --- the checks themselves can fail -------------------------------------------------------------


def test_checks_find_what_they_look_for():
    assert glue_only('glue("a", 1, display=False)\nglue("b",\n     2)\n')
    assert glue_only("from gpulab.show import glue\nglue('x', y)")
    assert not glue_only("x = f()\nglue('x', x)")
    cells = [
        {"input": "glue('a', 1)", "output": "", "in_solution": False},
        {"input": None, "output": "gpulab 0.1.0: CPU: gpulab simulator (no GPU found)", "in_solution": False},
        {"input": "check(f)", "output": "❌ your function returned None", "in_solution": False},
        {"input": "check(f)", "output": "❌ in a solution is fine", "in_solution": True},
    ]
    assert len(cell_problems(cells)) == 3
    svg = '<svg width="460pt" viewBox="0 0 460 300"><g style="font: 10px sans"></g><text style="font-size: 8px">'
    assert svg_smallest_pt(svg, 460) == pytest.approx(6.0)
    figs = [{"src": "a.svg", "number": False, "caption": "", "link": None, "visible": True, "shown": 100}]
    assert len(figure_problems(figs, Path("."), phone=True)) == 2
    assert table_problems([{"head": "x", "number": False, "caption": ""}])
    assert citation_problems([["NVIDIA, 2025", "id1"], ["NVIDIA, 2025", "id2"], ["Little, 1961", "id3"]]) == [
        "[NVIDIA, 2025] names 2 different works"
    ]


# --- every page ----------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_page_at_390px_does_not_scroll_sideways_and_figures_enlarge(browser, page):
    drv, base = browser
    open_at(drv, base, page, PHONE)
    # mobile emulation widens the layout viewport (window.innerWidth) to fit the content, so the
    # page is compared with the screen's own width
    width, _ = drv.execute_script(JS_PAGE_WIDTH)
    problems = []
    if width > PHONE + 1:
        wide = drv.execute_script(JS_WIDENERS, PHONE)
        problems.append(f"the page is {width} px wide on a {PHONE} px screen; widened by: {wide}")
    problems += figure_problems(drv.execute_script(JS_FIGURES), (SITE / page).parent, phone=True)
    assert not problems, f"{page} at {PHONE} px: " + "; ".join(problems)


@pytest.mark.parametrize("page", PAGES)
def test_page_at_1280px_reads_cleanly(browser, page):
    drv, base = browser
    open_at(drv, base, page, WIDE)
    problems = cell_problems(drv.execute_script(JS_CELLS))
    problems += figure_problems(drv.execute_script(JS_FIGURES), (SITE / page).parent, phone=False)
    smallest, where = drv.execute_script(JS_INLINE_SVG_TEXT)
    if smallest is not None and smallest * 0.75 < MIN_PT - 0.05:
        problems.append(f"inline SVG text {smallest * 0.75:.1f} pt ({where!r})")
    problems += table_problems(drv.execute_script(JS_TABLES))
    problems += citation_problems(drv.execute_script(JS_CITATIONS))
    empty = drv.execute_script(JS_EMPTY_CODE)
    if empty:
        problems.append(f"{empty} empty code block(s) (a stray fence, e.g. nested ``` of equal length)")
    drv.execute_script(JS_OPEN_SOLUTIONS)
    time.sleep(0.2)
    problems += [f"code wider than the column: {w}" for w in drv.execute_script(JS_WIDE_CODE)]
    assert not problems, f"{page} at {WIDE} px:\n  " + "\n  ".join(problems)
