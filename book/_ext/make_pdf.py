"""The whole book as one PDF, printed from the same sources as the HTML.

    python book/_ext/make_pdf.py            # after `jupyter-book build .`

1. `jupyter-book build . --builder singlehtml`: one page with every chapter. It reuses the
   HTML build's environment (_build/.doctrees), so no notebook is executed again.
2. Headless Chromium prints that page (served over a local HTTP server so MathJax and its
   fonts load; no network needed) to `_build/html/gpulab-book.pdf`, which the intro links.

Needs Debian's `chromium` (.ci/run installs it). Exit status 0 when the PDF was written.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SINGLE = ROOT / "_build" / "singlehtml"
PDF_NAME = "gpulab-book.pdf"
PDF = ROOT / "_build" / "html" / PDF_NAME


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def build_singlehtml(root: Path = ROOT) -> subprocess.CompletedProcess:
    """`jupyter-book build ROOT --builder singlehtml -W -n --keep-going`."""
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "jupyter_book.cli.main"]
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    return subprocess.run(
        [*cmd, "build", str(root), "--builder", "singlehtml", "-W", "-n", "--keep-going"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def single_page(html_dir: Path, root: Path = ROOT) -> str:
    """The single-page build writes the book at the root document's path (book/intro.html)
    but links its assets relative to the build folder; a copy at the top makes them resolve.
    Returns the copy's name."""
    import yaml

    root_doc = yaml.safe_load((root / "_toc.yml").read_text())["root"]
    src = html_dir / f"{root_doc}.html"
    if not src.exists():
        raise FileNotFoundError(
            f"{src}: the single-page build wrote no page for the root document {root_doc!r}"
        )
    dest = html_dir / "gpulab-book.html"
    dest.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    return dest.name


def print_pdf(
    html_dir: Path, pdf: Path, chrome: str, page: str | None = None, budget_ms: int = 30000, root: Path = ROOT
) -> subprocess.CompletedProcess:
    """Serve ``html_dir`` on 127.0.0.1 and print ``page`` (default: the whole single-page
    book) to ``pdf`` with headless Chromium."""
    page = page or single_page(html_dir, root)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(html_dir)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        pdf.parent.mkdir(parents=True, exist_ok=True)
        if pdf.exists():
            pdf.unlink()
        url = f"http://127.0.0.1:{srv.server_address[1]}/{page}"
        return subprocess.run(
            [
                chrome,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                "--no-pdf-header-footer",
                "--generate-pdf-document-outline",
                f"--virtual-time-budget={budget_ms}",
                f"--print-to-pdf={pdf}",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        srv.shutdown()


def main() -> int:
    chrome = find_chromium()
    if chrome is None:
        print("make_pdf: no chromium found (apt-get install chromium)", file=sys.stderr)
        return 2
    built = build_singlehtml()
    if built.returncode != 0:
        print(built.stdout[-4000:] + built.stderr[-4000:], file=sys.stderr)
        print("make_pdf: the single-page build failed", file=sys.stderr)
        return built.returncode
    done = print_pdf(SINGLE, PDF, chrome)
    if not PDF.exists() or PDF.stat().st_size == 0:
        print(done.stdout[-2000:] + done.stderr[-2000:], file=sys.stderr)
        print(f"make_pdf: Chromium wrote no PDF at {PDF}", file=sys.stderr)
        return 1
    print(f"make_pdf: wrote {PDF.relative_to(ROOT)} ({PDF.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
