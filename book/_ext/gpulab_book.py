"""Sphinx fix-ups for the gpulab book (loaded through _config.yml `sphinx.local_extensions`).

Jupyter Book 1.0.4 registers sphinx-thebe's and sphinx-togglebutton's inline scripts twice per
page (once with filename None, once with filename ""), and the second
`const THEBE_JS_URL = ...` is a JavaScript SyntaxError in every page (found by
tests/test_browser.py). Dropping exact duplicates from the page's script list fixes it.

Also (issue 15): solution titles open their dropdown (book_solutions.py), every widget has a
static fallback (book_widgets.py), MathJax is served from the book (book_math.py), the book's
CSS (static/gpulab_book.css), and myst-nb's hidden-cell node renders in the single-page build
that the PDF is printed from (book/_ext/make_pdf.py).

Also (issue 25): every figure links to its full-size image, and the build writes all notebooks
into one archive (book_download.py); the appendix's figures and tables are numbered A.1, A.2, ...
(book_appendix.py).
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


def link_figures_to_full_size(app):
    """Every figure's image links to the image itself (tap or click to enlarge: on a phone a
    figure shrinks to the screen, issue 25). Sphinx links only images given a size; this runs
    after its own pass, with the same file names it chose."""
    import posixpath

    from docutils import nodes

    builder = app.builder
    if builder.format != "html" or not hasattr(builder, "post_process_images"):
        return
    original = builder.post_process_images

    def post_process_images(doctree):
        original(doctree)
        for node in list(doctree.findall(nodes.image)):
            if isinstance(node.parent, nodes.reference) or node.parent.__class__.__name__ == "reference":
                continue
            if not any(isinstance(a, nodes.figure) for a in _ancestors(node)):
                continue
            uri = node["uri"]
            if uri.startswith("data:"):
                continue
            ref = nodes.reference("", "", internal=True, classes=["gpulab-figure-link"])
            images = getattr(builder, "images", {})
            ref["refuri"] = posixpath.join(builder.imgpath, images[uri]) if uri in images else uri
            node.replace_self(ref)
            ref.append(node)

    builder.post_process_images = post_process_images


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def setup(app):
    import book_appendix
    import book_download
    import book_math
    import book_solutions
    import book_widgets

    # html-page-context is emitted with emit_firstresult: a handler returning a template name stops
    # later ones, so run early.
    app.connect("html-page-context", dedupe_scripts, priority=100)
    app.connect("config-inited", add_static)
    app.connect("builder-inited", hidden_cells_in_singlehtml)
    app.connect("builder-inited", link_figures_to_full_size)
    app.add_css_file("gpulab_book.css")
    # after MathJax (priority 500, deferred): MathJax 2's Hub.Queue for ipywidgets 8's renderer
    app.add_js_file("gpulab_mathjax_hub.js", priority=501, loading_method="defer")
    book_solutions.setup(app)
    book_widgets.setup(app)
    book_math.setup(app)
    book_download.setup(app)
    book_appendix.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
