"""All of the book's notebooks in one download (issue 25: d2l and QuantEcon offer the same).

When an HTML build finishes, every page built from a notebook is written, as its source (no
outputs: run it yourself), into ``gpulab-notebooks.zip`` at the top of the site, under
``gpulab-notebooks/<its path in the repository>``; the start page links to it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

ARCHIVE = "gpulab-notebooks.zip"
FOLDER = "gpulab-notebooks"


def notebook_sources(app) -> list[Path]:
    """The .ipynb files behind the built pages, in a stable order."""
    env = app.env
    out = []
    for doc in sorted(env.found_docs):
        p = Path(env.doc2path(doc))
        if p.suffix == ".ipynb" and p.exists():
            out.append(p)
    return out


def write_archive(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    root = Path(app.srcdir)
    dest = Path(app.outdir) / ARCHIVE
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for p in notebook_sources(app):
            z.write(p, f"{FOLDER}/{p.relative_to(root).as_posix()}")


def setup(app):
    app.connect("build-finished", write_archive)
