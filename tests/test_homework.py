"""The homework in exercises/: every master goes through ``otter assign``; the solution, the
untouched student notebook, prepared wrong submissions and hostile ones are graded with
``otter run`` (through gpulab.grading, which adds the time limits) and must score what they
should. Everything is generated once per session in a temporary folder and graded in one
parallel batch, so the whole file takes about a minute or two on 2 cores."""

from __future__ import annotations

import copy
import csv
import filecmp
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("otter", reason="otter-grader is not installed (pip install 'gpulab[grading]')")
import nbformat  # noqa: E402

from gpulab import grading, homework  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXERCISES = os.path.join(ROOT, "exercises")
MASTERS = sorted(
    p
    for p in glob.glob(os.path.join(EXERCISES, "*", "*.ipynb"))
    if os.path.basename(os.path.dirname(p)) == os.path.splitext(os.path.basename(p))[0]
)
HWS = [os.path.basename(os.path.dirname(p)) for p in MASTERS]
ENV = {"PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
CELL_TIMEOUT = 20  # seconds a cell may run while grading here (an endless loop costs this); hw05 q7's
# gpulab.predict, now compiling the kernel with ptxas, ran past 6 s in a quiet run (12 failures)
JOBS = max(3, min(4, (os.cpu_count() or 2) + 1))  # kernels start partly waiting on I/O


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


HOSTILE = _load(os.path.join(EXERCISES, "hostile.py"), "hw_hostile")


# ---- building submissions -------------------------------------------------------------------


def _find(nb, text):
    hits = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and text in c.source]
    assert hits, f"no code cell contains {text!r}"
    return hits[0]


def _edit(solution, spec):
    nb = copy.deepcopy(solution)
    if spec.get("kernelspec"):  # saved from a Jupyter environment with another kernel name
        nb.metadata["kernelspec"] = {
            "name": spec["kernelspec"],
            "display_name": spec["kernelspec"],
            "language": "python",
        }
    for text, src in spec.get("replace", {}).items():
        nb.cells[_find(nb, text)].source = src.strip("\n")
    for text, src in spec.get("add", []):
        i = _find(nb, text)
        nb.cells.insert(i + 1, nbformat.v4.new_code_cell(src))
    return nb


def _with_cells(solution, sources, after="grader = otter.Notebook"):
    nb = copy.deepcopy(solution)
    i = _find(nb, after)
    for k, src in enumerate(sources):
        nb.cells.insert(i + 1 + k, nbformat.v4.new_code_cell(src))
    return nb


@pytest.fixture(scope="session")
def assigned(tmp_path_factory):
    """otter assign for every master (in parallel): {hw: {"rc", "log", "dir", "zip", "seconds"}}."""
    base = tmp_path_factory.mktemp("hw_dist")

    def run(master):
        hw = os.path.basename(os.path.dirname(master))
        out = base / hw
        t0 = time.monotonic()
        p = subprocess.run(
            [sys.executable, "-m", "gpulab.grading", "otter", "assign", "-v", master, str(out)],
            cwd=os.path.dirname(master),
            env=dict(os.environ, **ENV, GPULAB_QUIET="1", GPULAB_CELL_TIMEOUT=str(CELL_TIMEOUT)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        zips = glob.glob(str(out / "autograder" / "*.zip"))
        return hw, {
            "rc": p.returncode,
            "log": (p.stdout + p.stderr)[-4000:],
            "dir": str(out),
            "zip": zips[0] if zips else None,
            "seconds": time.monotonic() - t0,
        }

    before = set(glob.glob(os.path.join(EXERCISES, "*", ".OTTER_LOG")))
    with ThreadPoolExecutor(JOBS) as pool:
        out = dict(pool.map(run, MASTERS))
    for log in set(glob.glob(os.path.join(EXERCISES, "*", ".OTTER_LOG"))) - before:
        os.remove(log)  # otter assign's run of the master leaves its log beside it
    return out


@pytest.fixture(scope="session")
def graded(assigned, tmp_path_factory):
    """Every prepared submission of every homework, graded in one batch:
    {(hw, name): row} with row as gpulab.grading.grade_one returns it, plus the spec."""
    base = tmp_path_factory.mktemp("hw_subs")
    jobs = []  # (hw, name, path, zip, spec)
    out_alias = {}
    for hw in HWS:
        a = assigned[hw]
        if a["rc"] != 0 or not a["zip"]:
            continue
        sol = nbformat.read(os.path.join(a["dir"], "autograder", f"{hw}.ipynb"), as_version=4)
        d = base / hw
        d.mkdir()

        def put(name, nb, spec):
            path = d / name / f"{hw}.ipynb"
            path.parent.mkdir()
            nbformat.write(nb, str(path))
            jobs.append((hw, name, str(path), a["zip"], spec))

        put("solution", sol, {})
        shutil.copytree(os.path.join(a["dir"], "student"), d / "student")
        jobs.append((hw, "student", str(d / "student" / f"{hw}.ipynb"), a["zip"], {}))
        spec_file = os.path.join(EXERCISES, hw, "submissions.py")
        subs = _load(spec_file, f"subs_{hw}").SUBMISSIONS if os.path.exists(spec_file) else {}
        groups = {"chaos": []}  # wrong answers to different questions share one notebook;
        for name, spec in subs.items():  # correct styles ride in the chaos notebook
            groups.setdefault(spec.get("group", name), []).append(name)
        for gname, names in groups.items():
            merged = {"replace": {}, "add": [], "scores": {}, "members": names}
            for name in names:
                merged["replace"].update(subs[name].get("replace", {}))
                merged["add"] += subs[name].get("add", [])
                merged["scores"].update(subs[name].get("scores", {}))
                merged["kernelspec"] = merged.get("kernelspec") or subs[name].get("kernelspec")
            nb = _edit(sol, merged)
            if gname == "chaos":
                assert not merged["scores"], f"{hw}: a spec in group 'chaos' must keep full marks"
                nb = _with_cells(nb, HOSTILE.CHAOS if hw == HWS[0] else HOSTILE.CHAOS_SHORT)
            put(gname, nb, merged)
            for name in names:
                if name != gname:
                    out_alias[(hw, name)] = (hw, gname)
        if hw == HWS[0]:
            put("delete_tests", _with_cells(sol, [HOSTILE.DELETE_TESTS]), {"below_full": True})
    slow = ("chaos", "loop", "never")  # start the ones that wait on time limits first
    jobs.sort(key=lambda j: not any(w in j[1] for w in slow))
    t0 = time.monotonic()
    csv_path = str(base / "grades.csv")
    rows = grading.grade_folder(
        [j[2] for j in jobs],
        [j[3] for j in jobs],
        csv_path,
        jobs=JOBS,
        timeout=240,
        cell_timeout=CELL_TIMEOUT,
        env=ENV,
    )
    # A whole submission that ran out of time is graded once more, alone: on a loaded 2-core
    # machine nbclient has lost a cell's reply (exercises/README.md); a real hang times out again.
    again = [i for i, r in enumerate(rows) if r["status"] == "timeout"]
    if again:
        print(f"re-grading after a whole-submission timeout: {[jobs[i][1] for i in again]}")
        redo = grading.grade_folder(
            [jobs[i][2] for i in again],
            [jobs[i][3] for i in again],
            csv_path + ".retry.csv",
            jobs=1,
            timeout=240,
            cell_timeout=CELL_TIMEOUT,
            env=ENV,
        )
        for i, r in zip(again, redo):
            rows[i] = r
    out = {(j[0], j[1]): dict(r, spec=j[4]) for j, r in zip(jobs, rows)}
    for alias, target in out_alias.items():
        out[alias] = out[target]
    out["_csv"] = csv_path
    out["_seconds"] = time.monotonic() - t0
    return out


# ---- otter assign -------------------------------------------------------------------------


def test_there_are_six_homeworks():
    assert len(MASTERS) >= 6, f"expected at least 6 masters in exercises/, found {HWS}"
    assert "hw11_sgemm" in HWS and "hw11_sgemm" in homework.assignments()


# the kernels each chapter is about, graded by the chapter's own check in the matching homework
# (issue 14 item 18, issue 17 item 5): {hw: {question: check called by its hidden test}}
CHAPTER_KERNELS = {
    "hw05_06_memory": {"q5": "tiling.check_tiled_matmul", "q6": "tiling.check_padded_transpose"},
    "hw07_08_reduction": {"q5": "tree_reduction.check_tree_reduce"},
    "hw09_10_formats_amdahl": {
        "q4": "precision.check_native_format_choice",
        "q6": "mma_fragments.check_fragment_load",
    },
    "hw11_sgemm": {"q1": "sgemm.check_register_blocking", "q2": "sgemm_ladder.check_ladder_reading"},
}


@pytest.mark.parametrize("hw", sorted(CHAPTER_KERNELS))
def test_hidden_tests_call_the_chapter_checks(assigned, hw):
    """Each of these questions' hidden test calls the chapter's check under timed() after
    assert_untampered(), and the question has a public (form) test as well, except widget q4."""
    tests = os.path.join(assigned[hw]["dir"], "autograder", "tests")
    for q, check in CHAPTER_KERNELS[hw].items():
        text = open(os.path.join(tests, f"{q}.py")).read()
        assert f"g.timed({check}, " in text and "g.assert_untampered()" in text, (hw, q, text)
        assert "hidden=True" in text
        if q != "q4":
            assert "hidden=False" in text, (hw, q)


@pytest.mark.parametrize("hw", HWS)
def test_assign_succeeds(assigned, hw):
    a = assigned[hw]
    assert a["rc"] == 0, a["log"]
    assert "All autograder tests passed" in a["log"], a["log"]
    assert a["zip"], "no autograder zip"
    stu = os.path.join(a["dir"], "student", f"{hw}.ipynb")
    nb = nbformat.read(stu, as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "BEGIN SOLUTION" not in text and "# HIDDEN" not in text
    assert f'homework.public_tests("{hw}")' in text


@pytest.mark.parametrize("hw", HWS)
def test_public_tests_shipped_in_gpulab_match_assign(assigned, hw):
    """gpulab/homework/<hw>/tests is what otter assign writes for students (refresh with the
    command in exercises/README.md when a master changes), and holds no hidden test."""
    gen = os.path.join(assigned[hw]["dir"], "student", "tests")
    shipped = homework.public_tests(hw)
    names = sorted(os.listdir(gen))
    assert sorted(f for f in os.listdir(shipped) if f.endswith(".py")) == names
    for n in names:
        assert filecmp.cmp(os.path.join(gen, n), os.path.join(shipped, n), shallow=False), (
            f"gpulab/homework/{hw}/tests/{n} is stale"
        )
        assert "hidden=True" not in open(os.path.join(shipped, n)).read()


def test_student_checks_use_the_tests_shipped_in_gpulab(assigned, tmp_path):
    """What a student does on Colab: run the notebook (here the solution) in a folder with no
    tests/ next to it, outside Otter's grading mode; every grader.check finds gpulab's copy of the
    public tests and passes."""
    from nbclient import NotebookClient

    hw = HWS[0]
    nb = nbformat.read(os.path.join(assigned[hw]["dir"], "autograder", f"{hw}.ipynb"), as_version=4)
    NotebookClient(
        nb, timeout=120, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    ).execute(env=dict(os.environ, **ENV, GPULAB_QUIET="1"))  # the kernel imports this checkout
    assert not os.path.exists(tmp_path / "tests")
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("grader.check(")]
    assert len(checks) >= 3
    for c in checks:
        text = " ".join(
            str(o.get("data", {}).get("text/plain", "")) + o.get("text", "") + o.get("ename", "")
            for o in c.outputs
        )
        assert "All test cases passed" in text, (c.source, text)


@pytest.mark.parametrize("hw", HWS)
def test_masters_have_no_outputs(hw):
    nb = nbformat.read(os.path.join(EXERCISES, hw, f"{hw}.ipynb"), as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            assert not c.outputs and c.execution_count is None


# ---- grading -------------------------------------------------------------------------------


def _row(graded, hw, name):
    row = graded.get((hw, name))
    assert row is not None, f"{hw}/{name} was not graded (did otter assign fail?)"
    return row


def _cases(row):
    return "\n".join(
        f"{q}: " + "; ".join(f"{'ok' if p else 'FAIL'} {m[:300]}" for _, p, m in cs)
        for q, cs in row["cases"].items()
    )


@pytest.mark.parametrize("hw", HWS)
def test_solution_scores_full_marks(graded, hw):
    row = _row(graded, hw, "solution")
    assert row["status"] == "ok", row["error"]
    assert row["possible"] and row["total"] == row["possible"], _cases(row)


@pytest.mark.parametrize("hw", HWS)
def test_untouched_student_notebook_scores_under_half(graded, hw):
    row = _row(graded, hw, "student")
    assert row["status"] == "ok", row["error"]
    assert row["total"] < row["possible"] / 2, _cases(row)


def _spec_items():
    out = []
    for hw in HWS:
        f = os.path.join(EXERCISES, hw, "submissions.py")
        if os.path.exists(f):
            out += [(hw, name) for name in _load(f, f"subs_{hw}").SUBMISSIONS]
    return out


@pytest.mark.parametrize("hw,name", _spec_items())
def test_prepared_submission_loses_what_it_should(graded, hw, name):
    """Each spec's questions score what it says; questions no spec of its notebook names (specs
    with the same ``group`` share one notebook) keep full marks. A notebook the plugin scored as
    hostile (it changed the grader: issue 26) scores 0 throughout instead; one with no flag at
    all never is; a spec with ``hostile`` must be."""
    row = _row(graded, hw, name)
    spec = _load(os.path.join(EXERCISES, hw, "submissions.py"), f"subs_{hw}").SUBMISSIONS[name]
    others = row["spec"].get("scores", {})
    full = _row(graded, hw, "solution")["scores"]
    assert row["status"] == "ok", row["error"]
    hostile = [f for f in row["flags"] if f.startswith("hostile:")]
    review = [f for f in row["flags"] if not f.startswith("hostile:")]
    if spec.get("hostile"):
        assert hostile, f"not scored as hostile: {row['flags']}\n" + _cases(row)
    if not review:  # nothing in the code suggests an attack: never scored as hostile
        assert not hostile, hostile
    if hostile:  # issue 26: a submission that changed the grader scores 0 on every question
        assert row["total"] == 0, _cases(row)
    for q, (score, possible) in row["scores"].items():
        if hostile:
            break
        if q in others and q not in spec.get("scores", {}):
            continue  # another spec's question in this notebook
        want = spec.get("scores", {}).get(q, None if spec.get("below_full") else full[q][0])
        if want is not None:
            assert score == want, f"{q}: scored {score} of {possible}, expected {want}\n" + _cases(row)
    if spec.get("below_full"):
        assert row["total"] < row["possible"], _cases(row)
    if spec.get("message"):
        assert any(spec["message"] in m for cs in row["cases"].values() for _, p, m in cs if not p), _cases(
            row
        )
    for flag in spec.get("flags", []):  # shown to the instructor in the CSV
        assert flag in row["flags"], row["flags"]


@pytest.mark.parametrize("hw", HWS)
def test_hostile_cells_are_survived(graded, hw):
    """A raising cell, sys.exit(), megabytes of output, reading the tests and two endless loops
    (one that swallows Exception) do not stop grading: the solution around them keeps full marks."""
    row = _row(graded, hw, "chaos")
    assert row["status"] == "ok", row["error"]
    assert row["total"] == row["possible"], _cases(row)
    assert CELL_TIMEOUT <= row["seconds"] < 120  # an endless loop ran until the cell limit
    assert "test file paths" in row["flags"]


def test_deleting_the_tests_earns_nothing_and_does_not_hang(graded):
    row = _row(graded, HWS[0], "delete_tests")
    assert row["total"] < _row(graded, HWS[0], "solution")["total"]
    assert row["status"] in ("ok", "error")


def test_tampering_is_flagged_in_the_csv(graded):
    with open(graded["_csv"], newline="") as f:
        rows = list(csv.DictReader(f))
    assert {"file", "status", "total", "possible", "q1", "flags", "error"} <= set(rows[0])
    flagged = [r for r in rows if "assigns to numpy" in r["flags"]]
    assert flagged, "the numpy.testing patch was not flagged"
    assert all(float(r["total"]) < float(r["possible"]) for r in flagged)
    print(
        f"graded {len(rows)} submissions in {graded['_seconds']:.0f} s:",
        ", ".join(f"{k[0][:4]}/{k[1]} {r['seconds']} s" for k, r in graded.items() if isinstance(k, tuple)),
    )


def test_a_submission_past_its_time_limit_is_stopped(assigned, tmp_path):
    """The whole-submission limit of python -m gpulab.grading: a run that is too slow is killed
    (kernel included) and reported as 'timeout' with no score, instead of blocking the batch."""
    hw = HWS[0]
    sol = os.path.join(assigned[hw]["dir"], "autograder", f"{hw}.ipynb")
    t0 = time.monotonic()
    row = grading.grade_one(sol, assigned[hw]["zip"], timeout=2, env=ENV)
    assert row["status"] == "timeout" and row["total"] == 0
    assert time.monotonic() - t0 < 15


# ---- gpulab.grading on its own --------------------------------------------------------------


def test_timed_stops_an_endless_function():
    def spin():
        while True:
            pass

    t0 = time.monotonic()
    with pytest.raises(grading.TimeLimit):
        grading.timed(spin, 0.3)()
    assert time.monotonic() - t0 < 3
    assert grading.timed(lambda x: x + 1, 1)(1) == 2


def test_tamper_findings_sees_a_replaced_check(monkeypatch):
    from gpulab.checks import vector

    for name, value in (("_SNAPSHOT", None), ("_SEALED", False), ("_SNAPSHOT_ID", 0), ("_SNAPSHOT_SIZE", 0)):
        monkeypatch.setattr(grading.tamper, name, value)
    grading.snapshot()
    assert grading.tamper_findings() == []
    monkeypatch.setattr(vector, "check_saxpy", lambda *a, **k: True)
    found = grading.tamper_findings()
    assert any("gpulab.checks.vector.check_saxpy" in f for f in found), found
    with pytest.raises(AssertionError):
        grading.assert_untampered()
    monkeypatch.undo()


def test_suspicious_patterns(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("import numpy as np\nnp.testing.assert_allclose = print"),
            nbformat.v4.new_code_cell("import sys\nsys.modules['gpulab.checks'] = None"),
            nbformat.v4.new_code_cell("x = np.isclose(1, 1)"),
        ]
    )
    p = tmp_path / "s.ipynb"
    nbformat.write(nb, str(p))
    flags = grading.suspicious(str(p))
    assert "assigns to numpy" in flags and "sys.modules" in flags
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("y = np.isclose(1, 1)")]), str(p)
    )
    assert grading.suspicious(str(p)) == []


# ---- the homework's own checks (gpulab.checks.vector / divergence / reduction), directly ------

from numba import cuda, float32  # noqa: E402


@cuda.jit
def _saxpy_ok(out, a, x, y):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit
def _saxpy_off_by_one(out, a, x, y):
    i = cuda.grid(1)
    if i <= out.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit
def _parity_branchy(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        if i % 2 == 0:
            out[i] = 2 * x[i]
        else:
            out[i] = x[i] + 1


@cuda.jit
def _parity_ok(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        p = i & 1
        out[i] = x[i] * (2 - p) + p


@cuda.jit
def _block_sum_tree(x, out):
    s = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def _block_sum_shuffles(x, out):
    sums = cuda.shared.array(32, float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    v = x[i] if i < x.shape[0] else float32(0.0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if lane == 0:
        sums[warp] = v
    cuda.syncthreads()
    if warp == 0:
        v = sums[lane] if lane < cuda.blockDim.x // 32 else float32(0.0)
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
            off //= 2
        if lane == 0:
            out[cuda.blockIdx.x] = v


def test_check_blocks_for():
    from gpulab.checks import vector

    assert vector.check_blocks_for(lambda n, b: -(-n // b))
    floor = vector.check_blocks_for(lambda n, b: n // b, seed=1)
    assert not floor and "round up" in floor.message
    assert not vector.check_blocks_for(lambda n, b: (n + b - 1) / b)  # a float
    assert not vector.check_blocks_for(lambda n, b: None)


def test_check_saxpy_catches_the_off_by_one_guard():
    from gpulab.checks import vector

    assert vector.edge_sizes(128, seed=0)[:5] == [1, 127, 128, 129, 391]
    assert vector.check_saxpy(_saxpy_ok, seed=3)
    bad = vector.check_saxpy(_saxpy_off_by_one, seed=3)
    assert not bad and "out-of-bounds" in bad.message


def test_check_parity_scale_grades_divergence_by_warp_efficiency():
    from gpulab.checks import divergence

    assert divergence.check_parity_scale(_parity_ok, seed=4)
    bad = divergence.check_parity_scale(_parity_branchy, seed=4)
    assert not bad and "efficiency is 0.8" in bad.message


def test_check_block_sum_counts_barriers():
    from gpulab.checks import reduction

    ok = reduction.check_block_sum(_block_sum_shuffles, seed=5)
    assert ok and "at most 1 syncthreads" in ok.message
    tree = reduction.check_block_sum(_block_sum_tree, seed=5)
    assert not tree and "syncthreads per block" in tree.message
    relaxed = reduction.check_block_sum(_block_sum_tree, seed=5, max_barriers=11)
    # with barriers to spare the tree still fails: the question asks for a shuffle tree per warp
    assert not relaxed and "shuffles" in relaxed.message


def test_grading_command_line_writes_a_csv(assigned, tmp_path):
    hw = HWS[0]
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(os.path.join(assigned[hw]["dir"], "student", f"{hw}.ipynb"), subs / "bob.ipynb")
    assert (
        grading.main(
            [
                "grade",
                assigned[hw]["zip"],
                str(subs),
                "--csv",
                str(tmp_path / "g.csv"),
                "--cell-timeout",
                "30",
            ]
        )
        == 0
    )
    with open(tmp_path / "g.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["file"] for r in rows] == ["bob.ipynb"] and rows[0]["status"] == "ok"
    assert float(rows[0]["total"]) == 0 and float(rows[0]["possible"]) > 0
