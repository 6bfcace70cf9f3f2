"""Chapters execute headless under nbclient without stalling, on Python 3.11 and 3.12.

A stall here is a cell that waits for the per-cell timeout although its code finished long
before. nbclient then either raises CellTimeoutError or, worse, carries on as if nothing happened
(a reply noticed only when the timeout fires), so a plain "it executed" test cannot see it: every
cell's wall time is compared with the timeout instead.

Cost on CI's 2 cores (about 4 minutes here): the book build (test_book.py) already executes
every chapter once under Python 3.11. This file adds chapter 08 twice more under 3.11 and every
chapter once plus chapter 08 twice more under 3.12, two notebooks at a time (each in its own
kernel), and chapter 08's widget cells alone, 12 times under each interpreter with a short
timeout. With its figure in an ``ipywidgets.Output`` the widget cell stalled in 5 of 28 runs here
(0 of 42 since the figure is an ``Image``, see gpulab/widgets/figure.py). At that rate the 24
widget-only runs would all pass by chance with probability (23/28)**24, about 1%, so a return of
the cause fails this file; the whole-chapter runs catch stalls elsewhere, more weakly.

Run as a script by the interpreter under test: ``python tests/test_chapter_stalls.py NB TIMEOUT``
executes NB and prints one JSON line with every cell's wall time and the kernel's Python version.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
CH08 = ROOT / "chapters" / "08_warp_primitives.ipynb"
STALL_FRACTION = 0.9  # a cell that ran for 90% of the timeout or more waited for it


def book_timeout() -> int:
    """The per-cell timeout the book is built with (`execute.timeout` in _config.yml)."""
    import yaml

    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    return int(cfg["execute"]["timeout"])


def run_notebook(path: str, timeout: int, cwd: str | None = None) -> dict:
    """Execute one notebook with nbclient in this interpreter, its kernel in ``cwd`` (default:
    the notebook's folder); every cell's wall time."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    probe = nbformat.v4.new_code_cell("import sys; print(sys.version_info[0], sys.version_info[1])")
    nb.cells.append(probe)
    cells, start = [], {}

    def on_start(cell, cell_index):
        start[cell_index] = time.monotonic()

    def on_done(cell, cell_index, execute_reply):
        cells.append(
            {
                "index": cell_index,
                "id": cell.get("id"),
                "seconds": round(time.monotonic() - start[cell_index], 3),
                "first_line": cell.source.strip().splitlines()[0][:70],
            }
        )

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": cwd or str(Path(path).parent)}},
        on_cell_start=on_start,
        on_cell_executed=on_done,
    )
    t0, error = time.monotonic(), None
    try:
        client.execute()
    except Exception as e:  # reported, judged by the test
        error = f"{type(e).__name__}: {str(e)[:600]}"
    text = "".join(o.get("text", "") for o in probe.get("outputs", []))
    return {
        "notebook": Path(path).name,
        "error": error,
        "cells": cells,
        "seconds": round(time.monotonic() - t0, 1),
        "kernel_python": text.strip(),
        "client_python": f"{sys.version_info[0]} {sys.version_info[1]}",
    }


def python312() -> tuple[str | None, str]:
    """An interpreter for Python 3.12 that has the pinned requirements, or why there is none.

    Looked for in $GPULAB_PYTHON312, then .venv-312/ in the repository (git ignores it, .ci/run
    makes it from ``$(pyenv prefix 3.12.1)``), then /work/venv312. Not the ``python3.12`` on the
    PATH: that is pyenv's shim, which fails unless pyenv selects 3.12.
    """
    cands = [
        os.environ.get("GPULAB_PYTHON312"),
        str(ROOT / ".venv-312" / "bin" / "python"),
        "/work/venv312/bin/python",
    ]
    why = []
    for c in cands:
        if not c or not Path(c).exists():
            continue
        probe = subprocess.run(
            [c, "-c", "import sys, gpulab, nbclient, ipykernel, numba; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        last = (probe.stdout.strip().splitlines() or [""])[-1]  # `import gpulab` prints a line
        if probe.returncode == 0 and last.split() == ["3", "12"]:
            return c, ""
        why.append(f"{c}: {(probe.stderr.strip().splitlines() or [probe.stdout.strip()])[-1]}")
    return None, (
        "no Python 3.12 with gpulab's requirements ($(pyenv prefix 3.12.1)/bin/python -m venv .venv-312 && "
        ".venv-312/bin/pip install -r requirements.txt -e . , or set "
        "GPULAB_PYTHON312)" + (f"; tried {why}" if why else "")
    )


def execute(
    python: str,
    notebook: Path,
    timeout: int,
    cwd: Path | None = None,
    prefix: tuple = (),
    env: dict | None = None,
) -> dict:
    """Run NOTEBOOK in a child interpreter, from chapters/ as the book build does (or from
    ``cwd``), the command behind ``prefix`` (e.g. ``unshare -n``), ``env`` added to the environment.

    Chapters write no files, so two runs at once (even of the same chapter) do not collide.
    """
    where = Path(cwd or notebook.parent)
    p = subprocess.run(
        [
            *prefix,
            os.path.abspath(python),
            str(Path(__file__).resolve()),
            str(notebook),
            str(timeout),
            str(where),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        cwd=where,
        timeout=timeout * 4 + 600,
    )
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert p.returncode == 0 and lines, f"{notebook.name}: runner failed\n{p.stderr[-3000:]}"
    return json.loads(lines[-1])


def problems(res: dict, timeout: int, want_python: str) -> list[str]:
    """Stalled cells, errors and a kernel on the wrong interpreter, each naming the cell."""
    out = []
    if res["error"]:
        out.append(f"{res['notebook']}: {res['error']}")
    if res["kernel_python"] != want_python:
        out.append(f"{res['notebook']}: kernel ran Python {res['kernel_python']!r}, not {want_python}")
    for c in res["cells"]:
        if c["seconds"] >= STALL_FRACTION * timeout:
            out.append(
                f"{res['notebook']} cell {c['index']} (id {c['id']}, "
                f"'{c['first_line']}'): {c['seconds']:.0f} s of a {timeout} s timeout"
            )
    return out


def run_all(python: str, notebooks: list[Path], timeout: int, want_python: str) -> list[dict]:
    """Execute the notebooks two at a time; fail naming every stalled or failed cell."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda nb: execute(python, nb, timeout), notebooks))
    bad = [p for r in results for p in problems(r, timeout, want_python)]
    slow = sorted(
        ((c["seconds"], r["notebook"], c["index"]) for r in results for c in r["cells"]), reverse=True
    )[:5]
    print(f"{python}: slowest cells {slow}")
    assert not bad, "\n".join(bad)
    return results


def test_book_timeout_is_short():
    """A stall must cost at most a couple of minutes per cell, not the 600 s default."""
    assert 30 <= book_timeout() <= 180, book_timeout()


def test_no_widget_draws_into_an_output_area():
    """Every gpulab widget shows figures as images (gpulab.widgets.figure): an ipywidgets.Output
    that receives output makes nbclient send on the shell socket it polls, the stall above."""
    import re

    bad = [
        f"{p.name}:{i}"
        for p in sorted((ROOT / "gpulab" / "widgets").glob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\b(W|widgets|ipywidgets)\.Output\(|interactive_output|@interact\b", line)
    ]
    assert not bad, f"widgets with an Output area: {bad}; use gpulab.widgets.figure instead"


def test_stall_detector_names_the_cell():
    """A cell that sat for the whole timeout is reported with its index, id and first line."""
    res = {
        "notebook": "x.ipynb",
        "error": None,
        "kernel_python": "3 12",
        "cells": [
            {"index": 3, "id": "ab12", "seconds": 59.9, "first_line": "explorer ="},
            {"index": 4, "id": "cd34", "seconds": 1.0, "first_line": "check()"},
        ],
    }
    assert problems(res, 60, "3 12") == ["x.ipynb cell 3 (id ab12, 'explorer ='): 60 s of a 60 s timeout"]
    assert problems(res, 60, "3 11")[0].endswith("not 3 11")


def widget_cells_notebook(path: Path, out: Path) -> Path:
    """A copy of chapter 08 with only its set-up cells, the explorer cell and its check cell."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    at = next(i for i, c in enumerate(code) if "ww.explorer(" in c.source)
    nb.cells = code[:3] + code[at : at + 2]
    nbformat.write(nb, out)
    return out


WIDGET_TIMEOUT = 30  # the widget cells take a few seconds; a stall waits for the whole limit


def test_chapter08_repeated_py311(tmp_path):
    nb = widget_cells_notebook(CH08, tmp_path / "ch08_widgets.ipynb")
    here = f"{sys.version_info[0]} {sys.version_info[1]}"
    run_all(sys.executable, [nb] * 12, WIDGET_TIMEOUT, here)
    run_all(sys.executable, [CH08] * 2, book_timeout(), f"{sys.version_info[0]} {sys.version_info[1]}")


def test_every_chapter_py312(tmp_path):
    from needs import missing

    py, why = python312()
    if py is None:
        missing(why)
    run_all(py, [widget_cells_notebook(CH08, tmp_path / "ch08_widgets.ipynb")] * 12, WIDGET_TIMEOUT, "3 12")
    run_all(py, CHAPTERS + [CH08] * 2, book_timeout(), "3 12")


if __name__ == "__main__":
    print(json.dumps(run_notebook(sys.argv[1], int(sys.argv[2]), *sys.argv[3:4])))
