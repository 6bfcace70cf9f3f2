"""Headless Chromium for the book's browser tests (test_browser.py, test_pages.py): what they need
from the machine, the built HTML served on loopback, and a selenium driver that reaches no other
host (so results do not depend on the network)."""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading

from needs import missing


def _find(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def require() -> tuple[str, str]:
    """(chromium, chromedriver) paths; skips with the reason when selenium, Chromium or
    chromedriver is missing, and fails instead under CI=true (.ci/run installs them)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing("selenium is not installed (pip install -r requirements.txt)")
    chrome = _find("chromium", "chromium-browser", "google-chrome")
    driver_exe = _find("chromedriver")
    if not chrome or not driver_exe:
        missing(
            "the headless browser tests need Debian's chromium and chromium-driver "
            "(apt-get install chromium chromium-driver; .ci/run does this)"
        )
    return chrome, driver_exe


@contextlib.contextmanager
def session(site, window=(1280, 1000), extra_args=(), log_browser=False):
    """``(driver, base_url)`` with ``site`` served on 127.0.0.1; every other host unresolvable."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chrome, driver_exe = require()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for a in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={window[0]},{window[1]}",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        *extra_args,
    ):
        opts.add_argument(a)
    if log_browser:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = None
    try:
        drv = webdriver.Chrome(service=Service(driver_exe), options=opts)
        drv.set_page_load_timeout(60)
        yield drv, base
    finally:
        if drv is not None:
            drv.quit()
        srv.shutdown()
