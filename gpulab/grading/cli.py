"""Grading outside a notebook: ``python -m gpulab.grading grade`` (a folder of submissions into
a CSV, one ``otter run`` subprocess each with a whole-submission time limit), ``assign`` (every
master through ``otter assign``, into self-contained Gradescope zips), ``flags`` (run by those
zips on Gradescope) and ``otter`` (Otter's own command line with nbclient limits)."""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from .gradescope import AUTOGRADER_DIR, SOURCES, add_flags, flags_for
from .limits import DEFAULT_CELL_TIMEOUT, patch_nbclient

__all__ = ["grade_one", "grade_folder", "assign_all", "main", "DEFAULT_SUBMISSION_TIMEOUT"]

#: seconds a whole submission may take in ``grade_folder`` (override: --timeout)
DEFAULT_SUBMISSION_TIMEOUT = 900


def grade_one(
    submission: str,
    autograder: str,
    timeout: float = DEFAULT_SUBMISSION_TIMEOUT,
    cell_timeout: float | None = None,
    python: str = sys.executable,
    env: dict | None = None,
) -> dict:
    """Grade one submission with ``otter run`` in a subprocess killed after ``timeout`` seconds.
    Returns {'file', 'status', 'total', 'possible', 'scores', 'seconds', 'error', 'flags'}."""
    out = tempfile.mkdtemp(prefix="gpulab-grade-")
    env = dict(os.environ, **(env or {}), GPULAB_QUIET="1")
    if cell_timeout:
        env["GPULAB_CELL_TIMEOUT"] = str(cell_timeout)
    row = {
        "file": submission,
        "status": "ok",
        "total": 0.0,
        "possible": None,
        "scores": {},
        "cases": {},
        "seconds": 0.0,
        "error": "",
        "flags": flags_for(submission),
    }
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            [
                python,
                "-m",
                "gpulab.grading.run_one",
                os.path.abspath(submission),
                os.path.abspath(autograder),
                out,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            log, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # otter run, its kernel and anything they started
            proc.communicate()
            row.update(status="timeout", error=f"grading took longer than {timeout:g} s and was stopped")
            return row
        path = os.path.join(out, "scores.json")
        if proc.returncode != 0 or not os.path.exists(path):
            tail = log.decode("utf-8", "replace")[-2000:]
            row.update(
                status="error",
                error=tail.strip().splitlines()[-1]
                if tail.strip()
                else f"otter run exited with {proc.returncode}",
            )
            return row
        with open(path) as f:
            res = json.load(f)
        row.update(total=res["total"], possible=res["possible"], scores=res["scores"], cases=res["cases"])
        row["flags"] = flags_for(submission, res.get("hostile", []))  # why it scored 0 first
        if res["error"]:
            row.update(status="error", error=f"Otter could not grade the notebook: {res['error']}"[:500])
        return row
    finally:
        row["seconds"] = round(time.monotonic() - t0, 1)
        subprocess.run(["rm", "-rf", out], check=False)


def grade_folder(
    submissions,
    autograder,
    csv_path: str,
    jobs: int = 1,
    timeout: float = DEFAULT_SUBMISSION_TIMEOUT,
    cell_timeout: float | None = None,
    env: dict | None = None,
):
    """Grade every submission (paths) and write one CSV row each: file, status, total, possible,
    one column per question, seconds, flags, error. ``autograder`` is one zip for all, or a list
    (one per submission). Returns the rows."""
    from concurrent.futures import ThreadPoolExecutor

    zips = [autograder] * len(submissions) if isinstance(autograder, str) else list(autograder)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(
            pool.map(
                lambda sz: grade_one(sz[0], sz[1], timeout, cell_timeout, env=env), zip(submissions, zips)
            )
        )
    questions = sorted(
        {q for r in rows for q in r["scores"]},
        key=lambda q: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", q)],
    )
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["file", "status", "total", "possible", *questions, "seconds", "flags", "error"])
        for r in rows:
            w.writerow(
                [
                    os.path.basename(r["file"]),
                    r["status"],
                    r["total"],
                    r["possible"],
                    *[r["scores"].get(q, [0.0])[0] for q in questions],
                    r["seconds"],
                    "; ".join(r["flags"]),
                    r["error"],
                ]
            )
    return rows


def assign_all(
    exercises: str,
    out: str,
    sync_public_tests: bool = False,
    gpulab: str = "wheel",
    only: list[str] | None = None,
) -> dict:
    """Run ``otter assign`` on every master ``exercises/<hw>/<hw>.ipynb`` (or those named in
    ``only``) into ``out/<hw>``. Each autograder zip is self-contained: it carries gpulab's wheel
    built from this checkout (``gpulab="repository"``: installs from the public repository
    instead), pins every package of the image to requirements.txt, and its run_autograder lists
    the submission's flags for the instructor (:mod:`.gradescope`). With ``sync_public_tests``,
    copy each student ``tests/`` folder into gpulab/homework/<hw>/tests (what Colab notebooks
    use). Returns {hw: autograder zip path}."""
    import shutil

    from . import gradescope

    if gpulab not in gradescope.SOURCES:
        raise ValueError(f"gpulab source {gpulab!r}: expected one of {', '.join(gradescope.SOURCES)}")
    masters = [
        m
        for m in sorted(glob.glob(os.path.join(exercises, "*", "*.ipynb")))
        if os.path.basename(os.path.dirname(m)) == os.path.splitext(os.path.basename(m))[0]
    ]
    names = [os.path.splitext(os.path.basename(m))[0] for m in masters]
    unknown = sorted(set(only or []) - set(names))
    if unknown:
        raise ValueError(f"no master for {', '.join(unknown)} in {exercises} (there are: {', '.join(names)})")
    masters = [m for m, hw in zip(masters, names) if not only or hw in only]
    root = gradescope.checkout_root()
    zips = {}
    with tempfile.TemporaryDirectory(prefix="gpulab-assign-") as stage:
        built = gradescope.build_wheel(os.path.join(stage, "wheel"), root)  # its pins either way
        requirements = gradescope.pinned_requirements(
            gradescope.wheel_requires(built),
            gradescope.image_roots(os.path.join(exercises, "requirements-gradescope.txt")),
            root / "requirements.txt",
        ) + [gradescope.gpulab_requirement(gpulab, os.path.basename(built))]
        wheel = built if gpulab == "wheel" else None
        for master in masters:
            hw = os.path.splitext(os.path.basename(master))[0]
            staged = gradescope.stage_master(master, stage, requirements, wheel)
            dest = os.path.abspath(os.path.join(out, hw))
            shutil.rmtree(dest, ignore_errors=True)
            subprocess.run(
                [sys.executable, "-m", "gpulab.grading", "otter", "assign", "-v", staged, dest],
                check=True,
                cwd=os.path.dirname(staged),
            )
            zips[hw] = sorted(glob.glob(os.path.join(dest, "autograder", "*.zip")))[-1]
            gradescope.add_flags_step(zips[hw])
            if sync_public_tests:
                target = os.path.join(
                    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "homework", hw, "tests"
                )
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(os.path.join(dest, "student", "tests"), target)
            print(f"{hw}: {zips[hw]}")
    return zips


def main(argv=None):
    """``python -m gpulab.grading grade AUTOGRADER.zip SUBMISSION_OR_FOLDER... --csv grades.csv``;
    ``python -m gpulab.grading otter ARGS...``: Otter's own command line with :func:`patch_nbclient`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["otter"]:
        patch_nbclient()
        from otter.cli import cli

        return cli.main(args=argv[1:], prog_name="otter", standalone_mode=True)
    ap = argparse.ArgumentParser(
        prog="python -m gpulab.grading", description="Grade Otter submissions locally (no Docker) into a CSV."
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("otter", help="run Otter's command line (otter assign/run ...) with cell time limits")
    g = sub.add_parser("grade", help="grade .ipynb submissions with otter run, one subprocess each")
    g.add_argument("autograder", help="the autograder zip otter assign wrote (dist/<hw>/autograder/*.zip)")
    g.add_argument("submissions", nargs="+", help=".ipynb files or folders holding them")
    g.add_argument("--csv", default="grades.csv", help="where to write the CSV (default grades.csv)")
    g.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default 1)")
    g.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_SUBMISSION_TIMEOUT,
        help=f"seconds per submission before it is stopped (default {DEFAULT_SUBMISSION_TIMEOUT})",
    )
    g.add_argument(
        "--cell-timeout",
        type=float,
        default=None,
        help=f"seconds per notebook cell (default {DEFAULT_CELL_TIMEOUT})",
    )
    s = sub.add_parser("assign", help="otter assign every master in exercises/ (student + autograder)")
    s.add_argument("homework", nargs="*", help="only these masters (e.g. hw02_simt; default all)")
    s.add_argument("--exercises", default="exercises", help="folder of masters (default exercises)")
    s.add_argument("--out", default="dist", help="output folder (default dist)")
    s.add_argument(
        "--gpulab",
        choices=SOURCES,
        default="wheel",
        help="where the Gradescope image gets gpulab: the wheel built from this checkout, carried "
        "in the zip (default), or the public repository (gpulab.show.repository_url())",
    )
    s.add_argument(
        "--sync-public-tests",
        action="store_true",
        help="also copy the public tests into gpulab/homework (maintainers)",
    )
    f = sub.add_parser(
        "flags", help="(run by the zip on Gradescope) list the submission's flags in results.json"
    )
    f.add_argument("autograder_dir", nargs="?", default=AUTOGRADER_DIR, help="default /autograder")
    a = ap.parse_args(argv)
    if a.cmd == "assign":
        assign_all(a.exercises, a.out, a.sync_public_tests, a.gpulab, a.homework or None)
        return 0
    if a.cmd == "flags":
        flags = add_flags(a.autograder_dir)
        print(f"gpulab grading flags: {'; '.join(flags) if flags else 'none'}")
        return 0
    files = []
    for s in a.submissions:
        files += sorted(glob.glob(os.path.join(s, "*.ipynb"))) if os.path.isdir(s) else [s]
    if not files:
        ap.error("no .ipynb submissions found")
    rows = grade_folder(files, a.autograder, a.csv, a.jobs, a.timeout, a.cell_timeout)
    for r in rows:
        print(
            f"{os.path.basename(r['file'])}: {r['status']} {r['total']:g}/{r['possible']} "
            f"({r['seconds']} s){'  flags: ' + ', '.join(r['flags']) if r['flags'] else ''}"
        )
    print(f"wrote {a.csv} ({len(rows)} submissions)")
    return 0
