"""Math without a CDN: serve MathJax 3 from the book itself.

The MathJax 3 files come from the pip package ``sphinx-mathjax-offline`` (pinned in
requirements.txt); only what the TeX input and CHTML output need is copied into
``_static/mathjax`` (about 4.5 MB; the speech-rule engine and the SVG bundles are left out),
and ``mathjax_path`` points there, so formulas render offline and in the PDF. Without the
package the build says so and keeps Sphinx's CDN default.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.util import logging
from sphinx.util.fileutil import copy_asset

logger = logging.getLogger(__name__)

BUNDLE = "tex-mml-chtml.js"  # Sphinx's default MathJax 3 component, here served locally
PARTS = [BUNDLE, "input", "output/chtml", "output/chtml.js", "a11y", "ui", "adaptors"]
LOCAL_PATH = f"mathjax/{BUNDLE}"  # relative to _static/


def mathjax_source() -> Path | None:
    """The MathJax directory shipped by sphinx-mathjax-offline, or None."""
    from importlib import metadata

    try:
        dist = metadata.distribution("sphinx-mathjax-offline")
    except metadata.PackageNotFoundError:
        return None
    p = Path(dist.locate_file("sphinx-mathjax-offline/static/mathjax"))
    return p if (p / BUNDLE).exists() else None


def use_local_mathjax(app, config):
    if mathjax_source() is None:
        logger.info(
            "gpulab_book: sphinx-mathjax-offline is not installed; MathJax comes from "
            "its CDN (pip install -r requirements.txt for offline math)"
        )
        return
    config.mathjax_path = LOCAL_PATH


def copy_mathjax(app, exc):
    src = mathjax_source()
    if exc is not None or src is None or app.builder.format != "html":
        return
    dest = Path(app.outdir) / "_static" / "mathjax"
    for part in PARTS:
        s = src / part
        if s.is_dir():
            copy_asset(str(s), str(dest / part))
        elif s.exists():
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            (dest / part).write_bytes(s.read_bytes())


def setup(app):
    app.connect("config-inited", use_local_mathjax)
    app.connect("build-finished", copy_mathjax)
