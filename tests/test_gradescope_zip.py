"""The parts of the self-contained Gradescope zip (gpulab.grading.gradescope), without Otter's run:
pins, the gpulab requirement line and its one switch, the staged master, the flags in results.json.
tests/test_gradescope.py builds a real zip and grades with it as Gradescope would."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from gpulab.grading import gradescope

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import book_tools  # noqa: E402


def test_pins_cover_the_dependencies_at_requirements_txt_versions():
    pins = gradescope.pinned_requirements(
        ["numpy<2.5,>=1.24", "numba-cuda<0.31,>=0.30", 'pytest>=8; extra == "test"'],
        ["otter-grader"],
        ROOT / "requirements.txt",
    )
    tested = dict(
        ln.split("==")
        for ln in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in ln and not ln.startswith("#")
    )
    names = {p.split("==")[0] for p in pins}
    assert all(tested[p.split("==")[0]] == p.split("==")[1] for p in pins)
    # numba-cuda's own dependencies, Otter's (jupytext, pandas), and not the extra that is not asked for
    assert {"numpy", "numba-cuda", "numba", "llvmlite", "cuda-bindings", "otter-grader", "pandas"} <= names
    assert "pytest" not in names and "gpulab" not in names


def test_a_needed_package_requirements_txt_does_not_pin_is_named(tmp_path):
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("numpy==2.4.6\n")
    with pytest.raises(RuntimeError, match=r"does not pin: llvmlite \(needed by numba\)"):
        gradescope.pinned_requirements(["numba"], [], reqs)
    reqs.write_text("numpy>=2\n")
    with pytest.raises(ValueError, match="not pinned"):
        gradescope.pinned_requirements([], [], reqs)


def test_the_gradescope_roots_file_is_names_only():
    roots = gradescope.image_roots(str(ROOT / "exercises" / "requirements-gradescope.txt"))
    assert "otter-grader" in roots and "ipykernel" in roots
    assert not any(c in r for r in roots for c in "=<>@"), roots  # versions come from requirements.txt


def test_one_setting_switches_gpulab_to_the_public_repository():
    wheel = gradescope.gpulab_requirement("wheel", "gpulab-0.1.0-py3-none-any.whl")
    assert wheel == "gpulab @ file:///autograder/source/files/gpulab-0.1.0-py3-none-any.whl"
    repo = gradescope.gpulab_requirement("repository")
    assert repo == f"gpulab @ git+{book_tools.repository_url()}"  # _config.yml's repository.url
    with pytest.raises(ValueError, match="expected one of wheel, repository"):
        gradescope.gpulab_requirement("pypi")
    with pytest.raises(ValueError, match="wheel's file name"):
        gradescope.gpulab_requirement("wheel")


def test_the_wheel_requirements_are_read_from_its_metadata(tmp_path):
    whl = tmp_path / "gpulab-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr(
            "gpulab-0.1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: gpulab\nVersion: 0.1.0\nRequires-Dist: numpy<2.5\n"
            'Requires-Dist: otter-grader==7.0.0; extra == "grading"\n',
        )
    assert gradescope.wheel_requires(str(whl)) == ["numpy<2.5", 'otter-grader==7.0.0; extra == "grading"']


def test_stage_master_points_a_copy_at_the_pins_and_the_wheel(tmp_path):
    master_dir = tmp_path / "exercises" / "hw00"
    master_dir.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_raw_cell(
            "# ASSIGNMENT CONFIG\nname: hw00\nrequirements: ../requirements-gradescope.txt"
        ),
        nbformat.v4.new_code_cell("x = 1"),
    ]
    nbformat.write(nb, str(master_dir / "hw00.ipynb"))
    before = (master_dir / "hw00.ipynb").read_text()
    wheel = tmp_path / "gpulab-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    staged = gradescope.stage_master(
        str(master_dir / "hw00.ipynb"), str(tmp_path / "stage"), ["a==1"], str(wheel)
    )
    cfg = nbformat.read(staged, as_version=4).cells[0].source
    assert cfg.startswith("# ASSIGNMENT CONFIG\n")
    cfg = yaml.safe_load(cfg)
    assert cfg == {
        "name": "hw00",
        "requirements": "requirements-gradescope.txt",
        "overwrite_requirements": True,
        "autograder_files": [wheel.name],
    }
    staged_dir = Path(staged).parent
    assert (staged_dir / "requirements-gradescope.txt").read_text() == "a==1\n"
    assert (staged_dir / wheel.name).read_bytes() == b"wheel"
    assert (master_dir / "hw00.ipynb").read_text() == before  # the master is not changed
    again = gradescope.stage_master(str(master_dir / "hw00.ipynb"), str(tmp_path / "stage2"), ["a==1"], None)
    assert "autograder_files" not in yaml.safe_load(nbformat.read(again, as_version=4).cells[0].source)


def _autograder(tmp_path, cells, results=True):
    ag = tmp_path / "autograder"
    (ag / "submission").mkdir(parents=True)
    (ag / "results").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, str(ag / "submission" / "hw.ipynb"))
    if results:
        (ag / "results" / "results.json").write_text(json.dumps({"tests": [{"name": "q1", "score": 1}]}))
    return ag


def test_flags_go_into_results_json_hidden_and_unscored(tmp_path):
    ag = _autograder(tmp_path, ["import sys\nf = sys._getframe(1)"])
    assert gradescope.add_flags(str(ag)) == ["frame inspection"]
    tests = json.loads((ag / "results" / "results.json").read_text())["tests"]
    assert tests[0] == {"name": "q1", "score": 1}
    assert tests[1]["name"] == gradescope.FLAGS_TEST and tests[1]["visibility"] == "hidden"
    assert "score" not in tests[1] and "frame inspection" in tests[1]["output"]


class _Results:  # what the flags step reads from Otter's results.pkl: the plugin's data
    def __init__(self, data):
        self.data = data

    def get_plugin_data(self, name, default=None):
        return self.data.get(name, default)


def test_flags_name_why_the_plugin_scored_a_submission_0_first(tmp_path):
    import dill

    from gpulab.grading.plugin import PLUGIN_NAME

    ag = _autograder(tmp_path, ["gpulab.checks.vector.check_saxpy.__defaults__ = (1,)"])
    with open(ag / "results" / "results.pkl", "wb") as f:
        dill.dump(_Results({PLUGIN_NAME: {"hostile": ["q2: changed in place"]}}), f)
    flags = gradescope.add_flags(str(ag))
    assert flags[0] == "hostile: q2: changed in place" and "code objects" in flags[1:]
    assert flags == gradescope.flags_for(str(ag / "submission" / "hw.ipynb"), ["q2: changed in place"])
    out = json.loads((ag / "results" / "results.json").read_text())["tests"][-1]["output"]
    assert out.endswith("hostile: q2: changed in place; " + "; ".join(flags[1:]))


def test_flags_leave_a_missing_results_json_alone(tmp_path):
    ag = _autograder(tmp_path, ["x = 1"], results=False)
    assert gradescope.add_flags(str(ag)) == []
    assert not (ag / "results" / "results.json").exists()


def test_add_flags_step_appends_one_line_to_run_autograder(tmp_path):
    z = tmp_path / "ag.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("run_autograder", "#!/bin/bash\npython /autograder/source/run_otter.py\n")
        zf.writestr("environment.yml", "name: otter-env\n")
    gradescope.add_flags_step(str(z))
    gradescope.add_flags_step(str(z))  # once only
    with zipfile.ZipFile(z) as zf:
        assert zf.read("run_autograder").decode().splitlines()[-2:] == [
            "python /autograder/source/run_otter.py",
            gradescope.FLAGS_STEP,
        ]
        assert zf.read("environment.yml") == b"name: otter-env\n"
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("x", "y")
    with pytest.raises(RuntimeError, match="no run_autograder"):
        gradescope.add_flags_step(str(bad))
