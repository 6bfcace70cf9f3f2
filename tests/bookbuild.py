"""Build the book once per test session (shared by test_book.py and test_browser.py).

The full build executes every chapter, so it is the slowest thing in the suite; a module-level
cache makes sure it runs once however many test modules ask for it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"


@dataclass
class BuildResult:
    returncode: int
    log: str
    seconds: float
    html: Path
    toc: list  # the _toc.yml entries as they were when the build started


_RESULT: BuildResult | None = None


def jupyter_book_cmd() -> list[str]:
    """The jupyter-book CLI of the running interpreter's environment."""
    exe = Path(sys.executable).parent / "jupyter-book"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "jupyter_book.cli.main"]


def run_build(path: Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`jupyter-book build PATH -W -n --keep-going`: any Sphinx warning or cell error fails it."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # keep the inline backend
    return subprocess.run(
        [*jupyter_book_cmd(), "build", str(path), "-W", "-n", "--keep-going", *extra],
        cwd=path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


KERNEL_START_FLAKE = "Kernel died before replying to kernel_info"


def build_book() -> BuildResult:
    """Build the whole book into _build/html, once per process."""
    global _RESULT
    if _RESULT is None:
        toc = toc_files()
        t0 = time.perf_counter()
        proc = run_build(ROOT, ("--all",))
        if proc.returncode and KERNEL_START_FLAKE in proc.stdout + proc.stderr:
            # A Jupyter kernel that dies before its first reply is the machine, not the book
            # (ports taken by kernels started at the same moment): build once more, and only then.
            proc = run_build(ROOT, ("--all",))
        _RESULT = BuildResult(proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - t0, HTML, toc)
    return _RESULT


def toc_files() -> list[str]:
    """Every `file:` entry of _toc.yml (root included), in order."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    out = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                out.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc.get("parts", toc.get("chapters", [])))
    return out
