"""Sphinx fix-ups for the gpulab book (loaded through _config.yml `sphinx.local_extensions`).

Jupyter Book 1.0.4 registers sphinx-thebe's and sphinx-togglebutton's inline scripts twice per
page (once with filename None, once with filename ""), and the second
`const THEBE_JS_URL = ...` is a JavaScript SyntaxError in every page (found by
tests/test_browser.py). Dropping exact duplicates from the page's script list fixes it.
"""
from __future__ import annotations


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


def setup(app):
    # html-page-context is emitted with emit_firstresult: a handler returning a template name stops
    # later ones, so run early.
    app.connect("html-page-context", dedupe_scripts, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
