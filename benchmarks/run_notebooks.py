"""Execute every chapter notebook top to bottom and record how long each took.

On a GPU machine this is the check that every chapter runs with backend="auto" on the GPU;
on a CPU it times the simulator path. Writes gpulab/data/results/notebooks_<gpu|cpu>.json.

    python benchmarks/run_notebooks.py [--timeout 600] [chapters/05_memory.ipynb ...]
"""

from gpulab.results import RESULTS_DIR
import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from benchenv import environment  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("notebooks", nargs="*")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", default=None)
    opts = ap.parse_args()
    os.environ.setdefault("GPULAB_QUIET", "0")
    import gpulab

    # absolute paths: a notebook named relative to the working directory is reported relative to
    # the repository when it lies inside it, and by its full path otherwise
    paths = [Path(p).resolve() for p in opts.notebooks] or sorted((ROOT / "chapters").glob("*.ipynb"))
    runs = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            timeout=opts.timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        )
        t0 = time.perf_counter()
        error = None
        try:
            client.execute()
        except Exception as exc:
            error = "".join(traceback.format_exception_only(type(exc), exc))[-2000:]
        dt = time.perf_counter() - t0
        banner = ""
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                if out.get("name") == "stdout" and "gpulab" in out.get("text", ""):
                    banner = out["text"].strip().splitlines()[0]
                    break
            if banner:
                break
        name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
        runs.append(
            {
                "notebook": name,
                "seconds": round(dt, 2),
                "ok": error is None,
                "error": error,
                "import_gpulab_said": banner,
            }
        )
        print(f"{'ok ' if error is None else 'ERR'} {dt:7.1f} s  {path.name}  {banner}", flush=True)
    which = gpulab.BACKEND
    out = Path(opts.out) if opts.out else RESULTS_DIR / f"notebooks_{which}.json"
    out.write_text(
        json.dumps(
            {
                "backend": which,
                "describe": gpulab.describe(),
                "environment": environment(numba=which == "gpu"),
                "runs": runs,
            },
            indent=1,
        )
        + "\n"
    )
    raise SystemExit(0 if all(r["ok"] for r in runs) else 1)


if __name__ == "__main__":
    main()
