"""The ipywidgets page renderers, served locally, so the browser tests see widgets drawn (issue 21:
"drawn ... under ipywidgets 7.7 and 8; the browser test covers both").

A page with embedded widget state draws its widgets with @jupyter-widgets/html-manager's
``embed-amd.js`` and require.js, both loaded from CDNs, which the browser tests block. These are the
same files from the npm registry (``npm pack``, cached in ``$GPULAB_CACHE/npm``): html-manager
0.20.9 draws ipywidgets 7's state (@jupyter-widgets/controls 1.5.0, what Colab's 7.7.1 writes) and
1.0.6 draws ipywidgets 8's (controls 2.0.0, the book's, the version its pages name). Without npm a
test skips with the reason, and fails under CI=true (tests/needs.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from colabenv import cache_root
from needs import missing

#: ipywidgets major version -> the html-manager that draws its state
HTML_MANAGER = {7: "0.20.9", 8: "1.0.6"}
REQUIREJS = "2.3.4"  # the book's pages name require.js 2.3.4
#: where a page loads them from, relative to the served site's root
SITE_DIR = "_widget_renderer"


def _package(name: str, version: str) -> Path:
    """The unpacked npm package ``name@version`` (its ``package/`` folder), fetched once."""
    dest = cache_root() / "npm" / f"{name.replace('/', '+')}-{version}"
    if (dest / "package" / "package.json").exists():
        return dest / "package"
    npm = shutil.which("npm")
    if npm is None:
        missing("drawing widgets in the browser needs npm to fetch their renderer (apt-get install npm)")
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(
            [npm, "pack", "--silent", f"{name}@{version}"],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=600,
        )
        tgz = sorted(Path(tmp).glob("*.tgz"))
        if p.returncode or not tgz:
            raise RuntimeError(f"npm pack {name}@{version} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        part = dest.with_name(dest.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        with tarfile.open(tgz[0]) as tf:
            tf.extractall(part, filter="data")
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(part, dest)
    return dest / "package"


def install(site: Path, major: int) -> tuple[str, str, str]:
    """Copy the renderer for ipywidgets ``major`` and require.js into ``site``, laid out as the CDN
    has them (the renderer fetches its fonts from there); returns their URLs relative to the site's
    root: (embed-amd.js, require.js, the CDN root for a page's ``data-jupyter-widgets-cdn``)."""
    dist = _package("@jupyter-widgets/html-manager", HTML_MANAGER[major]) / "dist"
    req = _package("requirejs", REQUIREJS) / "require.js"
    out = site / SITE_DIR / "npm" / "@jupyter-widgets" / "html-manager" / "dist"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(dist, out, ignore=shutil.ignore_patterns("*.map"))
    shutil.copy(req, site / SITE_DIR / "require.js")
    return (
        f"{SITE_DIR}/npm/@jupyter-widgets/html-manager/dist/embed-amd.js",
        f"{SITE_DIR}/require.js",
        f"{SITE_DIR}/npm/",
    )


def point_at_local(html: str, embed: str, require: str, cdn: str) -> str:
    """A built book page with its CDN require.js and html-manager script tags pointed at local
    copies (``embed``, ``require``, ``cdn``: URLs as install() gives them, as the page should write
    them). The integrity and crossorigin attributes go with the CDN URL they were for."""
    out, n_req = re.subn(
        r'<script[^>]*src="https://[^"]*/require(\.min)?\.js"[^>]*>', f'<script src="{require}">', html
    )
    out, n_emb = re.subn(
        r'<script[^>]*src="https://[^"]*@jupyter-widgets/html-manager@[^"]*/dist/embed-amd\.js"[^>]*>',
        f'<script data-jupyter-widgets-cdn="{cdn}" src="{embed}">',
        out,
    )
    if n_req != 1 or n_emb != 1:
        raise AssertionError(
            f"the page names require.js {n_req} times and html-manager {n_emb} times, not once"
        )
    return out


def named_version(html: str) -> str | None:
    """The html-manager version a built page loads from its CDN, or None."""
    m = re.search(r'@jupyter-widgets/html-manager@([^/"]+)/dist/embed-amd\.js', html)
    return m.group(1) if m else None


#: per widget view on the page: whether the renderer drew it (the element it put in place of the
#: view's script holds widget elements) and the text it shows
_DRAWN = """
return Array.from(document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]'))
  .map(s => {
    const area = s.previousElementSibling;
    const drawn = !!area && area.classList.contains('widget-subarea')
      && area.querySelectorAll('.jupyter-widgets').length > 0;
    return [JSON.parse(s.textContent).model_id, drawn, drawn ? area.innerText : ''];
  });
"""


def drawn_views(drv, timeout: float = 60) -> list[tuple[str, bool, str]]:
    """(model id, drawn, text shown) for every widget view of the open page, once the renderer has
    drawn them all or ``timeout`` seconds have passed."""
    t0 = time.time()
    while True:
        views = [tuple(v) for v in drv.execute_script(_DRAWN)]
        if (views and all(d for _, d, _ in views)) or time.time() - t0 > timeout:
            return views
        time.sleep(0.5)
