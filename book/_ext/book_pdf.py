"""The whole-book PDF, written by the HTML build itself (issue 21: the start page's link was a 404
because only a separate `python book/_ext/make_pdf.py` printed it).

When an HTML build of the book finishes, this runs make_pdf's two steps: the single-page build
(it reuses the HTML build's environment, so no notebook runs again) and headless Chromium's print
of it, into ``_build/html/gpulab-book.pdf``. Without Chromium it is a Sphinx warning (so the
``-W`` build fails and says what to install); ``GPULAB_BOOK_PDF=0`` builds the HTML without the
PDF on purpose.
"""

from __future__ import annotations

import os
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)


def write_pdf(app, exc) -> None:
    if exc is not None or app.builder.name != "html":
        return
    if os.environ.get("GPULAB_BOOK_PDF", "1") == "0":
        logger.info("book_pdf: GPULAB_BOOK_PDF=0, the whole-book PDF is not printed")
        return
    import make_pdf  # beside this file (book/_ext is on sys.path as a local extension folder)

    root, out = Path(app.srcdir), Path(app.outdir)
    chrome = make_pdf.find_chromium()
    if chrome is None:
        logger.warning(
            "book_pdf: no Chromium, so the whole-book PDF the start page links (%s) was not printed: "
            "apt-get install chromium, or set GPULAB_BOOK_PDF=0 to build the HTML without it",
            make_pdf.PDF_NAME,
        )
        return
    logger.info("book_pdf: single-page build, then Chromium prints %s", make_pdf.PDF_NAME)
    built = make_pdf.build_singlehtml(root)
    if built.returncode != 0:
        logger.warning("book_pdf: the single-page build failed:\n%s", (built.stdout + built.stderr)[-3000:])
        return
    pdf = out / make_pdf.PDF_NAME
    done = make_pdf.print_pdf(out.parent / "singlehtml", pdf, chrome, root=root)
    if not pdf.is_file() or pdf.stat().st_size == 0:
        logger.warning("book_pdf: Chromium wrote no PDF at %s:\n%s", pdf, done.stderr[-2000:])
        return
    logger.info("book_pdf: wrote %s (%.1f MB)", pdf, pdf.stat().st_size / 1e6)


def setup(app):
    app.connect("build-finished", write_pdf)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
