"""A package that stands alone (issue 21): gpulab's wheel, installed in a fresh virtual environment
outside the repository, runs `gpulab doctor`, a chapter and a homework's assign + grade from an
empty folder, with nothing of the checkout on its path.

The wheel is built by the helper the Gradescope zip uses (gpulab.grading.gradescope.build_wheel:
a PEP 517 build of a copy of the package). The environment gets the wheel with its `grading`
extra and Jupyter's kernel and client, with requirements.txt as constraints (the tested set; pip's
cache makes it about a minute). What the homework needs besides the wheel is what an instructor
has: the master notebook and the image's requirements file, copied into the empty folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from colabenv import build_wheel, scratch
from test_chapter_stalls import execute

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "02_simt.ipynb"
HOMEWORK = "hw02_simt"


def run(cmd, cwd, timeout=900, env=None) -> subprocess.CompletedProcess:
    """Run ``cmd`` in ``cwd`` with the checkout off every path (no PYTHONPATH, not the cwd)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**clean, **(env or {})}
    )


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """(python, folder): a fresh venv with only the wheel installed, and an empty folder."""
    where = scratch("gpulab-wheel-")  # outside the repository (tmp_path may be anywhere)
    wheel = build_wheel(where / "dist")
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = str(venv / "bin" / "python")
    p = run(
        [
            py,
            "-m",
            "pip",
            "install",
            "-q",
            "-c",
            str(ROOT / "requirements.txt"),
            f"gpulab[grading] @ {wheel.as_uri()}",
            "nbclient",
            "ipykernel",
        ],
        where,
        timeout=1500,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    empty = where / "work"
    empty.mkdir()
    yield py, empty
    shutil.rmtree(where, ignore_errors=True)


def test_gpulab_comes_from_the_wheel_not_the_checkout(standalone):
    py, empty = standalone
    p = run([py, "-c", "import gpulab, json; print(json.dumps(gpulab.__file__))"], empty)
    assert p.returncode == 0, p.stderr
    where = Path(json.loads(p.stdout.strip().splitlines()[-1]))
    assert "site-packages" in where.parts and ROOT not in where.parents, where


def test_doctor_runs_from_the_wheel(standalone):
    py, empty = standalone
    exe = Path(py).parent / "gpulab"
    p = run([str(exe), "doctor", "--no-smoke"], empty)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "gpulab doctor" in p.stdout and "backend" in p.stdout
    assert "no known problems found" in p.stdout, p.stdout


def test_recorded_results_ship_inside_the_wheel(standalone):
    """What the chapters read (gpulab.results) is package data: found without the repository."""
    py, empty = standalone
    code = (
        "from gpulab import results; import json\n"
        "print(json.dumps({'dir': str(results.RESULTS_DIR), 'latency': results.load('latency') is not None,"
        " 'n': len(results.glob('*.json'))}))"
    )
    p = run([py, "-c", code], empty)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    shipped = len(list((ROOT / "gpulab" / "data" / "results").glob("*.json")))
    assert got["latency"] and got["n"] == shipped and "site-packages" in got["dir"], got


def test_a_chapter_runs_from_the_wheel_in_an_empty_folder(standalone):
    py, empty = standalone
    nb = empty.parent / CHAPTER.name  # the notebook alone, outside the repository
    shutil.copy(CHAPTER, nb)
    res = execute(py, nb, 120, cwd=empty, env={"PYTHONPATH": ""})
    assert res["error"] is None, res["error"]
    assert len(res["cells"]) > 10


def test_a_homework_is_assigned_and_graded_from_the_wheel(standalone):
    """`otter assign` through gpulab's grading command line (its cell limits), then
    `python -m gpulab.grading grade` of the autograder's own solution notebook: full marks."""
    py, empty = standalone
    hw = empty / "course" / HOMEWORK
    hw.mkdir(parents=True)
    shutil.copy(ROOT / "exercises" / HOMEWORK / f"{HOMEWORK}.ipynb", hw)
    shutil.copy(ROOT / "exercises" / "requirements-gradescope.txt", hw.parent)
    dist = empty / "dist"
    p = run([py, "-m", "gpulab.grading", "otter", "assign", f"{HOMEWORK}.ipynb", str(dist)], hw, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    zips = sorted((dist / "autograder").glob("*.zip"))
    solution = dist / "autograder" / f"{HOMEWORK}.ipynb"
    assert zips and solution.exists(), sorted(x.name for x in dist.rglob("*"))[:40]
    grades = empty / "grades.csv"
    p = run(
        [py, "-m", "gpulab.grading", "grade", str(zips[-1]), str(solution), "--csv", str(grades)],
        empty,
        timeout=900,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    import csv

    rows = list(csv.DictReader(grades.open()))
    assert len(rows) == 1, rows
    row = rows[0]
    assert row.get("status") == "ok" and float(row["total"]) == float(row["possible"]) > 0, row


def test_the_recorded_gpu_run_was_every_chapter_from_the_wheel():
    """The GPU path (README): benchmarks/chapters_from_wheel.py on an NVIDIA H200 ran every chapter
    of this book from the installed wheel, each in an empty folder (CI has no GPU to rerun it)."""
    from gpulab import results

    rec = results.load("chapters_from_wheel_gpu")
    assert rec is not None, "gpulab/data/results/chapters_from_wheel_gpu.json is missing"
    assert rec["backend"] == "gpu" and "H200" in (rec["environment"]["gpu"] or "")
    assert sorted(r["notebook"] for r in rec["runs"]) == sorted(p.name for p in ROOT.glob("chapters/*.ipynb"))
    assert rec["passed"] == rec["total"] == len(rec["runs"]) and all(r["ok"] for r in rec["runs"])
    # an install target (site-packages, a --target folder), never a checkout: chapters_from_wheel.py
    # refuses to run when gpulab is imported from one, and the record names where it came from
    where = rec["gpulab_imported_from"]
    assert where.endswith("/gpulab") and not where.startswith(str(ROOT)), where
    assert "site" in where.rsplit("/", 2)[-2], f"gpulab came from {where}, not an install target"
    assert all(r["files_left_in_folder"] == [] for r in rec["runs"])
