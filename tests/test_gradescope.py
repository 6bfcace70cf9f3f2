"""Gradescope, emulated (issue 28): the instructor's steps in exercises/README.md, run as they are
written on one homework, up to the results.json Gradescope reads.

1. ``python -m gpulab.grading assign`` builds the zip (with the gpulab wheel from this checkout);
2. the zip is unpacked into a folder laid out like Gradescope's ``/autograder`` (``source/``,
   ``submission/``, ``results/``, ``submission_metadata.json``) and the environment its
   ``environment.yml`` describes is created in a fresh venv with the Python it names: its whole
   pip list, installed with no index but a wheelhouse of exactly the pinned files, so the build
   fails if a pin is missing or the list needs the network for anything but those files;
3. the zip's own ``run_autograder`` lines run, in ``/autograder`` as Gradescope runs them, on a
   correct, a wrong and a hostile submission, and the results.json they write is checked:
   scores per question, hidden tests hidden, the grading flags visible to the instructor only;
4. ``python -m gpulab.grading grade`` grades the same submissions with the same zip: same scores,
   same flags (run in the image's environment: tests/test_homework.py grades the same prepared
   submissions with it in the checkout's).

What is not emulated, because it needs conda, apt or Gradescope itself: setup.sh's apt-get
packages and Miniforge; the conda packages of environment.yml (``python`` is the venv's own
interpreter, ``pip`` ensurepip's, ``jupyter_server`` is left out: grading does not use it), Otter's
``nb_conda_kernels`` and ``playwright install`` (PDFs only; ``pdf: false``); ``mamba activate``
(the venv's ``bin`` goes first on PATH instead); and the path itself: the zip names
``/autograder`` (run_autograder, run_otter.py, the wheel's requirement line), which is mapped to
the temporary folder, as ``otter run`` does. The wheelhouse (``GPULAB_WHEELHOUSE``, default
``~/.cache/gpulab/wheelhouse``) is filled from the package index the first time.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("otter", reason="otter-grader is not installed (pip install 'gpulab[grading]')")
import nbformat  # noqa: E402
import yaml  # noqa: E402
from needs import missing, pyenv_python  # noqa: E402

from gpulab.grading import gradescope  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HW = "hw02_simt"  # the quickest to grade; every homework's zip is built the same way
AG = gradescope.AUTOGRADER_DIR
WHEELHOUSE = Path(os.environ.get("GPULAB_WHEELHOUSE") or Path.home() / ".cache" / "gpulab" / "wheelhouse")
QUIET = dict(os.environ, GPULAB_QUIET="1")


def _load_submissions():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gs_subs", ROOT / "exercises" / HW / "submissions.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SUBMISSIONS


def _edit(solution, names, subs):
    """The solution with the cells of the prepared submissions ``names`` replaced."""
    nb = nbformat.from_dict(json.loads(json.dumps(solution)))
    for name in names:
        for text, src in subs[name].get("replace", {}).items():
            hits = [c for c in nb.cells if c.cell_type == "code" and text in c.source]
            assert hits, f"{name}: no code cell contains {text!r}"
            hits[0].source = src.strip("\n")
    return nb


def _python(version: str) -> str:
    """The interpreter environment.yml names: this one when it is that version, else pyenv's (not
    the ``pythonX.Y`` shim on the PATH, which fails unless pyenv selects it); missing, a skip with
    the reason, or a failure under CI (tests/needs.py)."""
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        return sys.executable
    found = pyenv_python(version)
    if not found:
        missing(f"environment.yml asks for Python {version}: none from pyenv (pyenv install {version})")
    return found


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """Step 1: the zip, built as exercises/README.md says."""
    out = tmp_path_factory.mktemp("hw-dist")
    p = subprocess.run(
        [sys.executable, "-m", "gpulab.grading", "assign", "--out", str(out), HW],
        cwd=ROOT,
        env=QUIET,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    zips = list((out / HW / "autograder").glob("*.zip"))
    assert len(zips) == 1
    return {
        "zip": zips[0],
        "solution": out / HW / "autograder" / f"{HW}.ipynb",
        "student": out / HW / "student",
    }


@pytest.fixture(scope="module")
def image(dist, tmp_path_factory):
    """Step 2: Gradescope's image: the zip in source/, the environment in a fresh venv."""
    base = tmp_path_factory.mktemp("gradescope")
    source = base / "source"
    with zipfile.ZipFile(dist["zip"]) as zf:
        zf.extractall(source)
    env = yaml.safe_load((source / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip_lines = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    python = [d.split("=", 1)[1] for d in conda if d.startswith("python=")]
    assert python == ["3.11"], conda
    assert set(conda) == {"python=3.11", "pip", "jupyter_server"}, "a conda package this test does not know"
    venv = base / "env"
    subprocess.run([_python(python[0]), "-m", "venv", str(venv)], check=True, timeout=300)
    reqs = base / "requirements.txt"  # what mamba hands pip: the pip list, one a line
    reqs.write_text(
        "\n".join(line.replace(f"file://{AG}/", f"file://{base}/autograder/") for line in pip_lines)
    )
    # the image reads /autograder/source; the zip is unpacked there once more before each run
    (base / "autograder").mkdir()
    shutil.copytree(source, base / "autograder" / "source")
    pinned = [ln for ln in pip_lines if not ln.startswith("gpulab @")]
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
    install = [*pip, "--no-index", "--find-links", str(WHEELHOUSE), "-r", str(reqs)]
    p = subprocess.run(install, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:  # first run on this machine: fetch exactly the pinned files, once
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        pins = base / "pinned.txt"
        pins.write_text("\n".join(pinned))
        d = subprocess.run(
            [
                *pip[:3],
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                str(WHEELHOUSE),
                "-r",
                str(pins),
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert d.returncode == 0, d.stderr[-3000:]
        p = subprocess.run(install, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, "the zip's environment did not install:\n" + (p.stdout + p.stderr)[-3000:]
    return {"base": base, "venv": venv, "pip": pip_lines}


def _gradescope_run(image, dist, name, nb) -> dict:
    """Step 3 for one submission: a fresh /autograder (as Gradescope gives each submission a fresh
    container), the zip's run_autograder with mamba's activation replaced by the venv's PATH."""
    ag = image["base"] / "runs" / name / "autograder"
    shutil.copytree(image["base"] / "autograder" / "source", ag / "source")
    (ag / "submission").mkdir()
    (ag / "results").mkdir()
    nbformat.write(nb, str(ag / "submission" / f"{HW}.ipynb"))
    (ag / "submission_metadata.json").write_text(
        json.dumps({"id": 1, "assignment": {"title": HW}, "users": [{"name": "A Student"}]})
    )
    run_otter = ag / "source" / "run_otter.py"
    assert f'run_autograder("{AG}")' in run_otter.read_text()
    run_otter.write_text(run_otter.read_text().replace(f'"{AG}"', f'"{ag}"'))
    lines = (ag / "source" / "run_autograder").read_text().splitlines()
    kept = [ln for ln in lines if "mamba" not in ln and not ln.startswith("export PATH=/root/miniforge3")]
    assert len(lines) - len(kept) == 3, lines  # PATH to miniforge, mamba's hook, mamba activate
    script = "\n".join([kept[0], f'export PATH="{image["venv"]}/bin:$PATH"', *kept[1:]])
    (ag.parent / "run_autograder").write_text(script.replace(AG, str(ag)) + "\n")
    p = subprocess.run(
        ["bash", str(ag.parent / "run_autograder")],
        cwd=ag,  # Gradescope runs it in /autograder; nothing of this checkout is on the path
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    results = ag / "results" / "results.json"
    assert results.exists(), (p.stdout + p.stderr)[-4000:]
    return {"results": json.loads(results.read_text()), "stdout": p.stdout + p.stderr, "path": ag}


@pytest.fixture(scope="module")
def submissions(dist, tmp_path_factory):
    """The solution, and hw02's prepared wrong and hostile notebooks (exercises/hw02_simt/submissions.py)."""
    subs = _load_submissions()
    sol = nbformat.read(str(dist["solution"]), as_version=4)
    groups = {"correct": [], "wrong": [], "hostile": []}
    for name, spec in subs.items():
        if spec.get("group") == "wrong_answers":
            groups["wrong"].append(name)
        elif spec.get("group") == "hostile":
            groups["hostile"].append(name)
    assert groups["wrong"] and groups["hostile"]
    out = {}
    for kind, names in groups.items():
        scores = {}
        for n in names:
            scores.update(subs[n].get("scores", {}))
        flags = sorted({f for n in names for f in subs[n].get("flags", [])})
        out[kind] = {"nb": _edit(sol, names, subs), "scores": scores, "flags": flags}
    return out


@pytest.fixture(scope="module")
def gradescope_results(image, dist, submissions):
    with ThreadPoolExecutor(2) as pool:
        runs = dict(
            zip(
                submissions,
                pool.map(lambda k: _gradescope_run(image, dist, k, submissions[k]["nb"]), submissions),
            )
        )
    return runs


# ---- step 1: the zip --------------------------------------------------------------------------


def test_the_zip_carries_the_wheel_of_this_checkout_and_names_no_repository(dist):
    with zipfile.ZipFile(dist["zip"]) as zf:
        names = zf.namelist()
        env = zf.read("environment.yml").decode()
        wheels = [n for n in names if n.startswith("files/gpulab-") and n.endswith(".whl")]
        assert len(wheels) == 1, names
        with zipfile.ZipFile(zf.open(wheels[0])) as whl:
            for rel in ("gpulab/grading/cli.py", "gpulab/checks/vector.py", "gpulab/grading/tamper.py"):
                assert whl.read(rel) == (ROOT / rel).read_bytes(), f"{rel} differs from the checkout"
    assert "git+" not in env and "http" not in env
    assert f"gpulab @ file://{AG}/source/files/{os.path.basename(wheels[0])}" in env


def test_every_package_of_the_image_is_pinned_to_requirements_txt(dist):
    with zipfile.ZipFile(dist["zip"]) as zf:
        env = yaml.safe_load(zf.read("environment.yml"))
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    tested = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            tested[name.lower().replace("_", "-")] = version
    pins = [ln for ln in pip if not ln.startswith("gpulab @")]
    assert len(pins) == len(pip) - 1
    for ln in pins:
        name, sep, version = ln.partition("==")
        assert sep and tested.get(name.lower().replace("_", "-")) == version, ln
    for must in ("otter-grader", "numpy", "numba", "numba-cuda", "ipykernel", "nbclient"):
        assert any(ln.lower().startswith(must + "==") for ln in pins), must


def test_the_run_autograder_lists_flags_after_otter(dist):
    with zipfile.ZipFile(dist["zip"]) as zf:
        lines = zf.read("run_autograder").decode().splitlines()
    assert lines[-2] == f"python {AG}/source/run_otter.py"
    assert lines[-1] == gradescope.FLAGS_STEP


def test_one_setting_switches_the_image_to_the_public_repository(dist, tmp_path):
    """Step 8: ``--gpulab repository``: the same pins, gpulab from _config.yml's URL, no wheel."""
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpulab.grading",
            "assign",
            "--out",
            str(tmp_path),
            "--gpulab",
            "repository",
            HW,
        ],
        cwd=ROOT,
        env=QUIET,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    (z,) = (tmp_path / HW / "autograder").glob("*.zip")

    def pip(path):
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            env = yaml.safe_load(zf.read("environment.yml"))
        return names, next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))

    names, repo = pip(z)
    _, wheel = pip(dist["zip"])
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import book_tools

    assert repo[-1] == f"gpulab @ git+{book_tools.repository_url()}"
    assert repo[:-1] == wheel[:-1]
    assert not [n for n in names if n.endswith(".whl")]


# ---- step 2-3: Gradescope, emulated ------------------------------------------------------------


def _questions(results):
    return {t["name"]: t for t in results["tests"] if "max_score" in t}


def test_the_image_builds_from_the_zip_alone(image):
    py = image["venv"] / "bin" / "python"
    out = subprocess.run(
        [str(py), "-c", "import gpulab, otter, numba; print(gpulab.__file__, otter.__version__)"],
        capture_output=True,
        text=True,
        env=QUIET,
        cwd=image["base"],
    )
    assert out.returncode == 0, out.stderr
    assert str(image["venv"]) in out.stdout and "7.0.0" in out.stdout  # the wheel, not the checkout


def test_a_correct_submission_scores_full_marks_on_gradescope(gradescope_results):
    res = gradescope_results["correct"]["results"]
    qs = _questions(res)
    assert sorted(qs) == ["q1", "q2", "q3", "q4"], res
    assert all(t["score"] == t["max_score"] > 0 for t in qs.values()), qs
    assert sum(t["max_score"] for t in qs.values()) == 14
    flags = [t for t in res["tests"] if t["name"] == gradescope.FLAGS_TEST]
    assert len(flags) == 1 and flags[0]["status"] == "passed" and flags[0]["output"].endswith("no flags")


def test_a_wrong_submission_loses_what_its_spec_says(gradescope_results, submissions):
    qs = _questions(gradescope_results["wrong"]["results"])
    full = _questions(gradescope_results["correct"]["results"])
    want = submissions["wrong"]["scores"]
    assert want
    for q, t in qs.items():
        assert t["score"] == want.get(q, full[q]["max_score"]), (q, t)


def test_a_hostile_submission_scores_0_and_the_instructor_sees_why(gradescope_results, submissions):
    """It changed a check in place: the plugin scores it 0 on every question (issue 26)."""
    res = gradescope_results["hostile"]["results"]
    qs = _questions(res)
    assert qs and all(t["score"] == 0 for t in qs.values()), qs
    flags = [t for t in res["tests"] if t["name"] == gradescope.FLAGS_TEST]
    assert len(flags) == 1 and flags[0]["status"] == "failed"
    assert "hostile: " in flags[0]["output"] and "changed in place" in flags[0]["output"]
    for f in submissions["hostile"]["flags"]:
        assert f in flags[0]["output"], flags[0]


def _hidden_case_names(source: Path) -> list[str]:
    names = []
    for path in sorted((source / "tests").glob("q*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef):
                for dec in node.decorator_list:
                    kw = {k.arg: k.value for k in getattr(dec, "keywords", [])}
                    if isinstance(kw.get("hidden"), ast.Constant) and kw["hidden"].value is True:
                        names.append(node.name)
    return names


def test_students_see_only_public_tests_and_instructors_see_the_rest(gradescope_results, image):
    hidden_cases = _hidden_case_names(image["base"] / "source")
    assert hidden_cases, "the zip has no hidden tests"
    for kind, run in gradescope_results.items():
        res = run["results"]
        assert res.get("stdout_visibility", "hidden") == "hidden"  # the grading log: instructors only
        visible = [t for t in res["tests"] if t.get("visibility") not in ("hidden",)]
        assert [t["name"] for t in visible] == ["Public Tests"], (kind, visible)
        shown = json.dumps(visible) + res.get("output", "")
        for case in hidden_cases:
            assert case not in shown, (kind, case)
        for t in _questions(res).values():  # per-question scores and hidden outputs: instructors
            assert t["visibility"] == "hidden"
        assert "frame inspection" not in shown and gradescope.FLAGS_TEST not in shown


# ---- step 4: the same zip, graded locally ------------------------------------------------------


def test_python_m_gpulab_grading_grade_gives_the_same_scores_and_flags(
    dist, image, gradescope_results, tmp_path
):
    paths = {}
    for kind, run in gradescope_results.items():
        d = tmp_path / kind
        d.mkdir()
        paths[kind] = d / f"{HW}.ipynb"
        shutil.copy(run["path"] / "submission" / f"{HW}.ipynb", paths[kind])
    csv_path = tmp_path / "grades.csv"
    # in the image's environment: the checkout's files, which the grading plugin hashes, may be
    # edited while this runs (a shared checkout) and would score everything 0 as hostile
    python = str(image["venv"] / "bin" / "python")
    p = subprocess.run(
        [python, "-m", "gpulab.grading", "grade", str(dist["zip"]), *map(str, paths.values())]
        + ["--csv", str(csv_path), "--jobs", "2"],
        cwd=tmp_path,
        env={k: v for k, v in QUIET.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3
    for kind, row in zip(paths, rows):
        assert row["status"] == "ok", row
        qs = _questions(gradescope_results[kind]["results"])
        assert {q: float(row[q]) for q in qs} == {q: float(t["score"]) for q, t in qs.items()}, kind
        flags = next(
            t for t in gradescope_results[kind]["results"]["tests"] if t["name"] == gradescope.FLAGS_TEST
        )
        local = [f for f in row["flags"].split("; ") if f]
        assert flags["output"].endswith("; ".join(local) if local else "no flags"), (kind, row["flags"])
