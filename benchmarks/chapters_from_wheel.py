"""Every chapter executed from an installed gpulab (a wheel, no repository), each in an empty folder,
as a reader outside the repository runs them (issue 21). On a GPU machine the chapters take the
GPU backend (backend="auto").

    python benchmarks/chapters_from_wheel.py --jobs 4 --out results.json chapters/*.ipynb

The notebooks are copied into a scratch folder first and each kernel starts in its own empty
folder, so nothing of the checkout is on any path; the record says where gpulab was imported
from, what `gpulab doctor` said, and each chapter's time and error. Exit status 1 when a chapter
failed. The JSON goes to ``--out`` (default: ``gpulab.results.RESULTS_DIR/chapters_from_wheel_<backend>.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchenv import environment  # noqa: E402


def run_one(src: Path, scratch: Path, timeout: int, keep: Path | None = None) -> dict:
    """Execute a copy of ``src`` with its kernel in an empty folder; time, error, first line.
    With ``keep``, the executed notebook (outputs included) is written there for reading."""
    import nbformat
    from nbclient import NotebookClient

    work = Path(tempfile.mkdtemp(prefix="content-", dir=scratch))
    nb = nbformat.read(shutil.copy(src, scratch / src.name), as_version=4)
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    )
    t0, error = time.perf_counter(), None
    try:
        client.execute()
    except Exception as exc:  # recorded, judged by the exit status
        error = "".join(traceback.format_exception_only(type(exc), exc))[-2000:]
    banner = next(
        (
            o["text"].strip().splitlines()[0]
            for c in nb.cells
            for o in c.get("outputs", [])
            if o.get("name") == "stdout" and o.get("text", "").startswith("gpulab")
        ),
        "",
    )
    left = sorted(p.name for p in work.iterdir())
    if keep is not None:
        nbformat.write(nb, keep / src.name)
    return {
        "notebook": src.name,
        "ok": error is None,
        "seconds": round(time.perf_counter() - t0, 1),
        "error": error,
        "import_gpulab_said": banner,
        "files_left_in_folder": left,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep", default=None, help="folder for the executed notebooks (outputs kept)")
    opts = ap.parse_args()
    os.environ.setdefault("GPULAB_QUIET", "1")
    import gpulab
    from gpulab.results import RESULTS_DIR

    where = Path(gpulab.__file__).resolve()
    if any((p / "pyproject.toml").is_file() and (p / "chapters").is_dir() for p in where.parents):
        print(f"gpulab is imported from the checkout ({where}); install the wheel first", file=sys.stderr)
        return 2
    doctor = subprocess.run(
        [sys.executable, "-m", "gpulab", "doctor"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tempfile.gettempdir(),
    )
    print(doctor.stdout, flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="gpulab-chapters-"))
    paths = [Path(p).resolve() for p in opts.notebooks]
    keep = Path(opts.keep).resolve() if opts.keep else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        runs = list(pool.map(lambda p: run_one(p, scratch, opts.timeout, keep), paths))
    for r in runs:
        print(
            f"{'ok ' if r['ok'] else 'ERR'} {r['seconds']:7.1f} s  {r['notebook']}  {r['import_gpulab_said']}"
        )
        if r["error"]:
            print("    " + r["error"].strip().replace("\n", "\n    ")[-1500:])
    record = {
        "what": "every chapter executed from an installed gpulab wheel, each in an empty folder (no repository)",
        "backend": gpulab.BACKEND,
        "describe": gpulab.describe(),
        "gpulab_imported_from": str(where.parent),
        "doctor": doctor.stdout,
        "doctor_exit_status": doctor.returncode,
        "passed": sum(r["ok"] for r in runs),
        "total": len(runs),
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "jobs": opts.jobs,
        "environment": environment(numba=gpulab.BACKEND == "gpu"),
        "runs": runs,
    }
    out = Path(opts.out) if opts.out else RESULTS_DIR / f"chapters_from_wheel_{gpulab.BACKEND}.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record['passed']}/{record['total']} chapters passed; wrote {out}")
    return 0 if record["passed"] == record["total"] else 1


if __name__ == "__main__":
    sys.exit(main())
