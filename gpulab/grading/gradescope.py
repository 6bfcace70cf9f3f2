"""The Gradescope autograder zip, self-contained: :func:`build_wheel` (gpulab's wheel from this
checkout, carried in the zip), :func:`pinned_requirements` (every package the image installs, at
requirements.txt's version), :func:`stage_master` (a master's copy whose Otter config carries
both) and :func:`add_flags` (gpulab's grading flags in results.json, for the instructor only).
:func:`gpulab.grading.cli.assign_all` puts them together."""

from __future__ import annotations

import email.parser
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from .tamper import suspicious

__all__ = [
    "AUTOGRADER_DIR",
    "SOURCES",
    "FLAGS_TEST",
    "checkout_root",
    "build_wheel",
    "image_roots",
    "wheel_requires",
    "pinned_requirements",
    "gpulab_requirement",
    "stage_master",
    "add_flags_step",
    "flags_for",
    "add_flags",
]

#: where Gradescope unpacks the zip (``/autograder/source``) and grades: Otter's default, which the
#: zip's run_autograder, run_otter.py and the wheel's requirement line all name
AUTOGRADER_DIR = "/autograder"
#: where the image's gpulab comes from: the wheel in the zip, or the public repository
SOURCES = ("wheel", "repository")
#: the results.json test that lists the flags (visibility "hidden": instructors see it, students never)
FLAGS_TEST = "gpulab grading flags (instructors only)"
#: the line the zip's run_autograder runs after Otter has written results.json
FLAGS_STEP = f"python -m gpulab.grading flags {AUTOGRADER_DIR}"
CONFIG_HEADER = "# ASSIGNMENT CONFIG"


def checkout_root() -> Path:
    """The checkout gpulab is imported from (``pip install -e .``): the wheel is built from it and
    requirements.txt there pins the image. A clear error for an installed (non-editable) gpulab."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file() or 'name = "gpulab"' not in pyproject.read_text(encoding="utf-8"):
        raise RuntimeError(
            f"gpulab is imported from {root}, which is not a gpulab checkout: the autograder zip "
            "carries a wheel built from a checkout, so install it with pip install -e <checkout>"
        )
    return root


def build_wheel(dest: str, root: Path | None = None) -> str:
    """Build gpulab's wheel from the checkout at ``root`` into ``dest``; returns its path. The
    package files are copied to a scratch folder first, so concurrent builds never share a
    ``build/`` folder and the checkout is left as it was."""
    root = root or checkout_root()
    os.makedirs(dest, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpulab-wheel-") as src:
        for name in ("pyproject.toml", "README.md", "setup.py", "setup.cfg", "MANIFEST.in", "LICENSE"):
            if (root / name).is_file():
                shutil.copy2(root / name, src)
        shutil.copytree(
            root / "gpulab",
            os.path.join(src, "gpulab"),
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"),
        )
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dest, src],
            capture_output=True,
            text=True,
        )
    wheels = glob.glob(os.path.join(dest, "gpulab-*.whl"))
    if proc.returncode != 0 or len(wheels) != 1:
        raise RuntimeError(f"building gpulab's wheel from {root} failed:\n{proc.stdout}{proc.stderr}")
    return wheels[0]


def _canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def _pins(requirements_txt: Path) -> dict:
    """{canonical name: (name as written, version)} from a ``name==version`` file."""
    pins = {}
    for line in requirements_txt.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep:
            raise ValueError(f"{requirements_txt}: {line!r} is not pinned (name==version)")
        pins[_canonical(name)] = (name.strip(), version.strip())
    return pins


def image_roots(path: str) -> list[str]:
    """The requirement lines of exercises/requirements-gradescope.txt (the image's packages besides
    gpulab, by name; comments and blanks skipped)."""
    with open(path, encoding="utf-8") as f:
        lines = [ln.split("#", 1)[0].strip() for ln in f]
    return [ln for ln in lines if ln]


def wheel_requires(wheel: str) -> list[str]:
    """The ``Requires-Dist`` lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(zf.read(name).decode("utf-8"))
    return meta.get_all("Requires-Dist") or []


def pinned_requirements(gpulab_requires: list[str], roots: list[str], requirements_txt: Path) -> list[str]:
    """``name==version`` for every package the image needs: gpulab's dependencies, the ``roots``
    (Otter and its kernel) and everything they depend on, as installed here (markers for this
    interpreter), each at requirements.txt's version, the set the test suite runs. A needed
    package that requirements.txt does not pin is an error naming it and what needs it."""
    from packaging.requirements import Requirement

    pins = _pins(requirements_txt)
    todo = [(Requirement(r), "gpulab") for r in gpulab_requires] + [
        (Requirement(r), "the image") for r in roots
    ]
    seen, needed = set(), {}
    while todo:
        req, parent = todo.pop()
        extras = sorted(req.extras) or [""]
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue  # gpulab's extras (colab, test, grading) are not installed in the image
        name = _canonical(req.name)
        needed.setdefault(name, parent)
        for extra in extras:
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            try:
                requires = metadata.requires(name) or []
            except metadata.PackageNotFoundError:
                raise RuntimeError(
                    f"{req.name} (needed by {parent}) is not installed here: the zip's pins are read "
                    "from the environment requirements.txt makes (pip install -r requirements.txt -e .)"
                ) from None
            for line in requires:
                dep = Requirement(line)
                if dep.marker is None or dep.marker.evaluate({"extra": extra}):
                    dep.marker = None
                    todo.append((dep, req.name))
    missing = sorted(f"{n} (needed by {p})" for n, p in needed.items() if n not in pins and n != "gpulab")
    if missing:
        raise RuntimeError(f"{requirements_txt} does not pin: {', '.join(missing)}")
    return sorted(f"{pins[n][0]}=={pins[n][1]}" for n in needed if n != "gpulab")


def gpulab_requirement(source: str, wheel_name: str | None = None) -> str:
    """The requirement line that installs gpulab in the image: the wheel the zip carries (Otter
    unpacks the zip's ``files/`` under /autograder/source) or, with ``source="repository"``, the
    public repository (:func:`gpulab.show.repository_url`, the one place the URL is set)."""
    if source == "wheel":
        if not wheel_name:
            raise ValueError("source 'wheel' needs the wheel's file name")
        return f"gpulab @ file://{AUTOGRADER_DIR}/source/files/{wheel_name}"
    if source == "repository":
        from ..show import repository_url

        return f"gpulab @ git+{repository_url()}"
    raise ValueError(f"gpulab source {source!r}: expected one of {', '.join(SOURCES)}")


def _config_cell(nb):
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.lstrip().startswith(CONFIG_HEADER):
            return cell
    raise ValueError("no raw cell starting with '# ASSIGNMENT CONFIG'")


def stage_master(master: str, stage: str, requirements: list[str], wheel: str | None) -> str:
    """Copy a master's folder into ``stage`` and point its Otter config at what the image needs:
    ``requirements`` written beside it (instead of Otter's own unpinned list:
    ``overwrite_requirements``) and the wheel as an ``autograder_files`` entry (Otter puts it in
    the zip's ``files/``). The master itself is not changed. Returns the staged master's path."""
    import nbformat
    import yaml

    hw_dir = os.path.dirname(os.path.abspath(master))
    dest = os.path.join(stage, os.path.basename(hw_dir))
    shutil.copytree(hw_dir, dest, ignore=shutil.ignore_patterns("__pycache__", ".OTTER_LOG", "*.pyc"))
    staged = os.path.join(dest, os.path.basename(master))
    nb = nbformat.read(staged, as_version=4)
    cell = _config_cell(nb)
    body = cell.source.lstrip().split("\n", 1)[1] if "\n" in cell.source.strip() else ""
    config = yaml.safe_load(body) or {}
    with open(os.path.join(dest, "requirements-gradescope.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(requirements) + "\n")
    config["requirements"] = "requirements-gradescope.txt"
    config["overwrite_requirements"] = True
    if wheel:
        shutil.copy2(wheel, dest)
        config["autograder_files"] = [*config.get("autograder_files", []), os.path.basename(wheel)]
    cell.source = CONFIG_HEADER + "\n" + yaml.safe_dump(config, sort_keys=False).rstrip("\n")
    nbformat.write(nb, staged)
    return staged


def add_flags_step(zip_path: str) -> None:
    """Rewrite the zip with one more line in ``run_autograder``: after Otter has graded, list the
    submission's flags in results.json (:func:`add_flags`)."""
    with zipfile.ZipFile(zip_path) as zf:
        entries = [(info, zf.read(info.filename)) for info in zf.infolist()]
    names = [info.filename for info, _ in entries]
    if "run_autograder" not in names:
        raise RuntimeError(f"{zip_path} has no run_autograder: not an Otter autograder zip")
    tmp = zip_path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for info, data in entries:
            if info.filename == "run_autograder":
                text = data.decode("utf-8")
                if FLAGS_STEP not in text:
                    text = text.rstrip("\n") + "\n" + FLAGS_STEP + "\n"
                data = text.encode("utf-8")
            out.writestr(info, data)
    os.replace(tmp, zip_path)


def flags_for(submission: str, hostile=()) -> list[str]:
    """The flags an instructor reads for one graded submission, the same in the CSV of
    ``python -m gpulab.grading grade`` and in results.json on Gradescope: why the grading plugin
    scored it 0 (``hostile: ...``, :func:`gpulab.grading.plugin.hostile_reasons`), then the patterns
    in its code that suggest an attempt on the grader (:func:`gpulab.grading.tamper.suspicious`)."""
    return [f"hostile: {r}" for r in hostile] + suspicious(submission)


def _hostile_reasons(results_pkl: str) -> list[str]:
    """The plugin's reasons for scoring 0, from the results Otter pickled after grading."""
    if not os.path.isfile(results_pkl):
        return []
    import dill

    from .plugin import PLUGIN_NAME

    try:
        with open(results_pkl, "rb") as f:
            results = dill.load(f)
        return list((results.get_plugin_data(PLUGIN_NAME) or {}).get("hostile", []))
    except Exception as e:
        return [f"Otter's results.pkl could not be read ({type(e).__name__}: {e})"]


def add_flags(autograder_dir: str = AUTOGRADER_DIR) -> list[str]:
    """Append :data:`FLAGS_TEST` to ``results/results.json``: the submission's flags
    (:func:`flags_for`, the CSV's flags column), with visibility ``hidden`` and no score, so
    Gradescope shows it to instructors only and the grade is unchanged. Returns the flags."""
    results = os.path.join(autograder_dir, "results", "results.json")
    if not os.path.isfile(results):
        return []  # Otter wrote nothing (its own error is in the output): nothing to add to
    notebooks = sorted(glob.glob(os.path.join(autograder_dir, "submission", "*.ipynb")))
    if len(notebooks) == 1:
        flags = flags_for(
            notebooks[0], _hostile_reasons(os.path.join(autograder_dir, "results", "results.pkl"))
        )
        text = "; ".join(flags) if flags else "no flags"
    else:
        flags = [f"{len(notebooks)} notebooks in the submission"]
        text = flags[0]
    with open(results, encoding="utf-8") as f:
        data = json.load(f)
    data.setdefault("tests", []).append(
        {
            "name": FLAGS_TEST,
            "visibility": "hidden",
            "status": "failed" if flags else "passed",
            "output": "Why the grader scored this submission 0 (hostile: ...) and patterns in its code "
            "that suggest an attempt on the grader (those change no score; read the notebook): " + text,
        }
    )
    with open(results, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=4)
    return flags
