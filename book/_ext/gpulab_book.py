"""Sphinx fix-ups for the gpulab book (loaded through _config.yml `sphinx.local_extensions`).

Jupyter Book 1.0.4 registers sphinx-thebe's and sphinx-togglebutton's inline scripts twice per
page (once with filename None, once with filename ""), and the second
`const THEBE_JS_URL = ...` is a JavaScript SyntaxError in every page (found by
tests/test_browser.py). Dropping exact duplicates from the page's script list fixes it.

Also (issue 15): solution titles open their dropdown (book_solutions.py), every widget has a
static fallback (book_widgets.py), MathJax is served from the book (book_math.py), the book's
CSS (static/gpulab_book.css), and myst-nb's hidden-cell node renders in the single-page build
that the PDF is printed from (book/_ext/make_pdf.py).
"""

from __future__ import annotations

from pathlib import Path


def _script_key(js):
    attrs = getattr(js, "attributes", {}) or {}
    return (str(getattr(js, "filename", js) or ""), tuple(sorted((k, str(v)) for k, v in attrs.items())))


def dedupe_scripts(app, pagename, templatename, context, doctree):
    """Keep the first of identical <script> entries (same file or same inline body)."""
    files = context.get("script_files")
    if not files:
        return
    seen, out = set(), []
    for js in files:
        key = _script_key(js)
        if key in seen:
            continue
        seen.add(key)
        out.append(js)
    # in place: later handlers (myst-nb's widget state) add to this same list object; Sphinx
    # restores the builder's list before the next page
    files[:] = out


STATIC = Path(__file__).resolve().parent / "static"


def add_static(app, config):
    """Serve book/_ext/static (only the files named below are linked into pages)."""
    config.html_static_path = list(config.html_static_path or []) + [str(STATIC)]


def hidden_cells_in_singlehtml(app):
    """myst-nb registers its hide-input/hide-cell node for the `html` builder only; the
    single-page builder (same HTML translator) then fails on every hidden cell."""
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput, visit_HideCellInput

    app.registry.add_translation_handlers(
        HideCodeCellNode, singlehtml=(visit_HideCellInput, depart_HideCellInput)
    )


def setup(app):
    import book_math
    import book_solutions
    import book_widgets

    # html-page-context is emitted with emit_firstresult: a handler returning a template name stops
    # later ones, so run early.
    app.connect("html-page-context", dedupe_scripts, priority=100)
    app.connect("config-inited", add_static)
    app.connect("builder-inited", hidden_cells_in_singlehtml)
    app.add_css_file("gpulab_book.css")
    book_solutions.setup(app)
    book_widgets.setup(app)
    book_math.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
