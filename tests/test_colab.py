"""Colab as it is (issue 21): the book's chapters in Google Colab's runtime, rebuilt from its own
published package list (tests/colab/, googlecolab/backend-info, August 2026; see tests/colabenv.py).

CPU runtime: Python 3.13 with Colab's numpy 2.1.3, numba 0.61.2, matplotlib 3.10.0, pandas 2.2.3,
ipywidgets 7.7.1, widgetsnbextension 3.6.10, ipykernel 6.17.1, ipython 7.34.0, jupyter_client
7.4.9 and the rest of the stack at Colab's versions. The chapters' install cell runs as written, in
a kernel that looks like Colab's, with the repository URL replaced by a wheel of this checkout; it
must change none of the packages Colab's frontend and kernel rely on. Then every chapter runs in an
empty folder (Colab's /content has no repository) with no network, its install cell included, as
a reader runs it: 11 of 11 must pass.

GPU runtime, as far as a CPU can tell: Colab's GPU image adds numba-cuda 0.22.2, cuda-bindings
12.9.7 and the CUDA 12.8 toolkit wheels. pip's own resolution report of the install cell there must
keep that toolkit and the protected packages, the result must import and compile a kernel for the
T4 (sm_75), and `gpulab doctor` must say what it found.

The environments are built once and cached (tests/colabenv.py); with them cached this file takes
a few minutes, almost all of it the chapters (two at a time).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import colabenv as ce
from test_chapter_stalls import book_timeout, execute

CHAPTERS = sorted((ce.ROOT / "chapters").glob("*.ipynb"))


def _need_python313():
    if ce.pyenv_python(ce.COLAB_PYTHON) is None:
        ce.missing(f"no Python {ce.COLAB_PYTHON} from pyenv (pyenv install {ce.COLAB_PYTHON})")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return ce.build_wheel(tmp_path_factory.mktemp("wheel"))


def _run_install_cell(python: str, cell: str, folder: Path) -> dict:
    """Run the (URL-substituted) install cell in a Colab-like kernel of ``python``, in ``folder``."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(ce.FAKE_COLAB), nbformat.v4.new_code_cell(cell)]
    path = folder / "install.ipynb"
    nbformat.write(nb, path)
    res = execute(python, path, 900, cwd=folder)
    assert res["error"] is None, f"the install cell failed:\n{res['error']}"
    return res


@pytest.fixture(scope="module")
def colab_cpu(wheel, tmp_path_factory):
    """(python, before, after): a copy of Colab's CPU runtime after the install cell ran in it,
    with the versions of the protected packages before and after."""
    _need_python313()
    base = ce.base_env("cpu")
    py = ce.copy_env(base, tmp_path_factory.mktemp("colab") / "venv")
    names = ce.PROTECTED + ["numpy", "numba", "matplotlib", "pandas", "numba-cuda", "cuda-bindings", "gpulab"]
    before = ce.versions(py, names)
    cell = ce.install_from(ce.first_code_cell(CHAPTERS[0]), wheel)
    _run_install_cell(py, cell, ce.scratch("colab-install-"))
    after = ce.versions(py, names)
    print(
        "Colab CPU, before -> after the install cell:", json.dumps({n: [before[n], after[n]] for n in names})
    )
    return py, before, after


def test_the_lists_are_colabs_published_versions():
    """The committed lists hold what the issue and DESIGN.md §4 quote from Colab's image."""
    cpu, gpu = ce.pins(ce.CPU_LIST), ce.pins(ce.GPU_LIST)
    want = {
        "numpy": "2.1.3",
        "numba": "0.61.2",
        "ipywidgets": "7.7.1",
        "widgetsnbextension": "3.6.10",
        "ipykernel": "6.17.1",
        "ipython": "7.34.0",
        "jupyter-client": "7.4.9",
        "matplotlib": "3.10.0",
    }
    assert {k: cpu.get(k) for k in want} == want
    assert {k: gpu.get(k) for k in ("numba-cuda", "cuda-bindings", "nvidia-cuda-nvcc-cu12")} == {
        "numba-cuda": "0.22.2",
        "cuda-bindings": "12.9.7",
        "nvidia-cuda-nvcc-cu12": "12.8.93",
    }
    assert "numba-cuda" not in cpu and "myst-nb" not in cpu and "jupyter-book" not in cpu


def test_every_chapter_has_the_same_install_cell_and_it_installs_from_the_repository():
    cells = {nb.name: ce.first_code_cell(nb) for nb in CHAPTERS}
    assert len(cells) == 11
    assert len(set(cells.values())) == 1, cells
    from gpulab.show import install_line

    assert install_line() in next(iter(cells.values()))


def test_the_base_environment_is_colabs(colab_cpu):
    """Before the install cell the environment holds exactly Colab's versions."""
    py, before, _ = colab_cpu
    pins = ce.pins(ce.CPU_LIST)
    for name in ce.PROTECTED + ["numpy", "numba", "matplotlib", "pandas"]:
        assert before[name] == pins[ce.canonical(name)], (name, before[name])
    assert before["gpulab"] is None and before["numba-cuda"] is None


def test_the_install_cell_changes_none_of_colabs_frontend_packages(colab_cpu):
    py, before, after = colab_cpu
    changed = {n: (before[n], after[n]) for n in ce.PROTECTED if before[n] != after[n]}
    assert not changed, f"the install cell changed Colab's own packages: {changed}"
    assert after["gpulab"] == "0.1.0"
    # what gpulab needs and Colab lacks came from its dependencies, Colab's numpy and numba kept
    assert after["numba-cuda"] and after["numba-cuda"].startswith("0.30.")
    assert (after["numpy"], after["numba"]) == (before["numpy"], before["numba"])


def test_every_chapter_runs_on_colab_offline_in_an_empty_folder(colab_cpu, wheel, tmp_path):
    """11/11 chapters, each with its install cell, in a kernel that looks like Colab's, from an
    empty folder, with the network cut (unshare -n, else a socket guard: the test says which)."""
    py, _, _ = colab_cpu
    prefix, env, how = ce.offline_prefix(tmp_path)
    net = ce.network_reachable(prefix, env, py)
    print(f"network cut by: {how}; looking up pypi.org: {net}")
    assert net.startswith("blocked"), f"{how} left the network open: {net}"
    nbs = [ce.colab_notebook(ch, wheel, tmp_path / ch.name) for ch in CHAPTERS]

    def one(nb):
        return execute(py, nb, book_timeout(), cwd=ce.scratch("content-"), prefix=tuple(prefix), env=env)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, nbs))
    failed = [f"{r['notebook']}: {r['error']}" for r in results if r["error"]]
    print("chapters on Colab:", {r["notebook"]: r["seconds"] for r in results})
    assert not failed, f"{len(results) - len(failed)}/11 chapters ran on Colab:\n" + "\n\n".join(failed)
    assert {r["kernel_python"] for r in results} == {"3 13"}
    # running the chapters (their install cells offline included) changed nothing either
    assert ce.versions(py, ce.PROTECTED) == {n: colab_cpu[2][n] for n in ce.PROTECTED}


#: the widget tests of the suite: each draws an explorer, moves its controls and checks the answer
#: variable it writes (run here under Colab's ipywidgets 7.7.1; the suite runs them under 8)
WIDGET_TESTS = [
    "tests/test_amdahl.py::test_widgets_write_their_answer",
    "tests/test_divergence.py::test_explorer_and_uniform_split_check",
    "tests/test_divergence.py::test_explorers_draw_without_error",
    "tests/test_formats.py::test_widget_writes_choice",
    "tests/test_latency_model.py::test_widget_writes_answer_and_follows_sliders",
    "tests/test_launch_shapes.py::test_explorer_and_block_shape_check",
    "tests/test_occupancy_tools.py::test_budget_check_follows_the_widget",
    "tests/test_occupancy_tools.py::test_explorer_reports_limits_and_non_fitting_blocks",
    "tests/test_warp_kernels.py::test_widget_writes_answer_and_checks_it",
    "tests/test_warp_kernels.py::test_widget_draws_into_an_image_not_an_output_area",
    "tests/test_one_home.py::test_amdahl_widgets_draw_through_the_figure_helper",
]


def test_widgets_draw_and_answer_under_colabs_ipywidgets_7(colab_cpu):
    """Every explorer draws and writes its answer under ipywidgets 7.7.1 (Colab's), and its
    displayed view carries the starting state the book checks (gpulab.show's hook for 7)."""
    py, _, after = colab_cpu
    assert after["ipywidgets"] == "7.7.1"
    ce.pip(py, "install", "-q", "pytest", "hypothesis")  # the test runner, not part of Colab's image
    assert ce.versions(py, ce.PROTECTED) == {n: after[n] for n in ce.PROTECTED}
    p = subprocess.run(
        [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *WIDGET_TESTS],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ce.ROOT,
    )
    print(p.stdout[-2000:])
    assert p.returncode == 0, p.stdout[-5000:] + p.stderr[-2000:]
    assert f"{len(WIDGET_TESTS)} passed" in p.stdout
    code = (
        "import ipywidgets, gpulab.show as s\n"
        "from unittest import mock\n"
        "shown = []\n"
        "assert s.record_widget_starts()\n"
        "w = ipywidgets.IntSlider(value=7)\n"
        "with mock.patch('IPython.display.display', lambda d, raw=False: shown.append(d)):\n"
        "    w._ipython_display_()\n"
        "print(ipywidgets.__version__, shown[0][s.WIDGET_VIEW][s.START_KEY][w.model_id])"
    )
    q = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=300, cwd=ce.scratch("w7-"))
    assert q.returncode == 0, q.stderr[-3000:]
    assert q.stdout.strip().splitlines()[-1].startswith("7.7.1 {'value': 7"), q.stdout


_EXPORT = """
import json, sys, nbformat, nbclient
from nbconvert import HTMLExporter
nb = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", store_widget_state=True,
                        resources={"metadata": {"path": sys.argv[3]}}).execute()
html, _ = HTMLExporter(widget_renderer_url=sys.argv[4], require_js_url=sys.argv[5]).from_notebook_node(nb)
open(sys.argv[2], "w").write(html)
"""

_WIDGETS_ON_PAGE = """
const state = document.querySelector('script[type="application/vnd.jupyter.widget-state+json"]');
const views = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
return [state ? state.textContent : null, views.map(v => JSON.parse(v.textContent).model_id)];
"""


def test_a_chapters_widgets_are_drawn_in_the_browser_under_colabs_ipywidgets_7(colab_cpu, wheel, tmp_path):
    """The browser half under ipywidgets 7.7.1 (test_browser.py does it for the book, built with 8):
    chapter 01 run in Colab's runtime with its widget state stored, exported to HTML by Colab's own
    nbconvert, opened in headless Chromium: every widget view on the page names a model whose state
    is embedded, that state is ipywidgets 7's (@jupyter-widgets/controls 1.5.0), and 7's renderer
    (html-manager 0.20.9, served from the site instead of the blocked CDN: tests/widget_renderers.py)
    draws every view, the explorer's starting answer included, with no error from the page. The
    answering itself (moving a control runs Python) is the kernel-side test above."""
    import chromium
    import widget_renderers as wr

    chromium.require()
    py = colab_cpu[0]
    nb = ce.colab_notebook(CHAPTERS[0], wheel, tmp_path / CHAPTERS[0].name)
    page = tmp_path / "site" / "chapter01.html"
    page.parent.mkdir()
    embed, require, _ = wr.install(page.parent, 7)
    folder = ce.scratch("content-")
    p = subprocess.run(
        [py, "-c", _EXPORT, str(nb), str(page), str(folder), embed, require],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=folder,
    )
    assert p.returncode == 0, p.stderr[-4000:]
    with chromium.session(page.parent, log_browser=True) as (drv, base):
        drv.get(f"{base}/{page.name}")
        state_text, views = drv.execute_script(_WIDGETS_ON_PAGE)
        drawn = wr.drawn_views(drv)
        errors = [
            e["message"]
            for e in drv.get_log("browser")
            if e["level"] == "SEVERE" and e["message"].startswith(base) and "/favicon.ico" not in e["message"]
        ]
    assert state_text, "no widget state embedded in the page"
    state = json.loads(state_text)["state"]
    assert views, "no widget view on the page"
    missing = [v for v in views if v not in state]
    assert not missing, f"{len(missing)} of {len(views)} widget views have no embedded state"
    controls = {
        m["model_module_version"] for m in state.values() if m["model_module"] == "@jupyter-widgets/controls"
    }
    assert controls == {"1.5.0"}, f"controls state versions {controls}: not ipywidgets 7's"
    not_drawn = [m for m, d, _ in drawn if not d]
    assert len(drawn) == len(views) and not not_drawn, f"{len(not_drawn)} of {len(drawn)} views not drawn"
    assert not errors, errors
    from gpulab import results
    from gpulab.models import latency as lat
    from gpulab.widgets import latency as latwidgets

    ns = round(lat.ladder_levels(results.load("latency"))["DRAM"]["ns"])
    want = latwidgets.explorer({}, latency_ns=ns).compute()["warps_per_sm"]
    shown = " ".join(text for _, _, text in drawn)
    assert f"answer = {want}" in shown, shown[:2000]


# --- the GPU runtime, as far as a CPU can tell ----------------------------------------------------


@pytest.fixture(scope="module")
def colab_gpu(tmp_path_factory):
    _need_python313()
    base = ce.base_env("gpu")
    return ce.copy_env(base, tmp_path_factory.mktemp("colab-gpu") / "venv")


def test_gpu_image_resolution_keeps_colabs_toolkit_and_frontend(colab_gpu, wheel, tmp_path):
    """pip's report of what the install cell would do on Colab's GPU image: numba-cuda moves to
    0.30 with cuda-bindings 12.x (the cu12 extra), the CUDA 12.8 toolkit wheels stay, and none of
    the protected packages changes."""
    py = colab_gpu
    report = tmp_path / "report.json"
    spec = f"gpulab[colab] @ {wheel.resolve().as_uri()}"
    ce.pip(py, "install", "-q", "--dry-run", "--report", str(report), spec)
    plan = {
        ce.canonical(i["metadata"]["name"]): i["metadata"]["version"]
        for i in json.loads(report.read_text())["install"]
    }
    print("Colab GPU: the install cell would install", plan)
    assert plan.get("gpulab") == "0.1.0"
    assert plan.get("numba-cuda", "").startswith("0.30."), plan
    touched = sorted(set(plan) & {ce.canonical(n) for n in ce.PROTECTED})
    assert not touched, f"the install cell would change {touched} on Colab's GPU image"
    kept = [
        "numpy",
        "numba",
        "cuda-bindings",
        "cuda-toolkit",
        "nvidia-cuda-nvcc-cu12",
        "nvidia-nvjitlink-cu12",
    ]
    assert not set(plan) & set(kept), {k: plan[k] for k in set(plan) & set(kept)}


def test_gpu_image_after_the_install_cell_imports_compiles_for_a_t4_and_doctor_explains(colab_gpu, wheel):
    py = colab_gpu
    before = ce.versions(py, ce.PROTECTED + ["numba-cuda", "nvidia-cuda-nvcc-cu12", "cuda-bindings"])
    _run_install_cell(py, ce.install_from(ce.first_code_cell(CHAPTERS[0]), wheel), ce.scratch("colab-gpu-"))
    after = ce.versions(py, ce.PROTECTED + ["numba-cuda", "nvidia-cuda-nvcc-cu12", "cuda-bindings"])
    assert {n: after[n] for n in ce.PROTECTED} == {n: before[n] for n in ce.PROTECTED}
    assert after["nvidia-cuda-nvcc-cu12"] == before["nvidia-cuda-nvcc-cu12"] == "12.8.93"
    assert after["numba-cuda"].startswith("0.30.") and after["cuda-bindings"].startswith("12.")
    code = (
        "import gpulab\n"
        "from numba import cuda\n"
        "def add(out, a, b):\n"
        "    i = cuda.grid(1)\n"
        "    if i < out.shape[0]:\n"
        "        out[i] = a[i] + b[i]\n"
        "ptx, _ = cuda.compile_ptx(add, 'void(float32[:], float32[:], float32[:])', cc=(7, 5))\n"
        "print([ln.strip() for ln in ptx.splitlines() if ln.startswith(('.version', '.target'))])"
    )
    p = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=300, cwd=ce.scratch("t4-"))
    assert p.returncode == 0, p.stderr[-3000:]
    assert ".target sm_75" in p.stdout, p.stdout
    print("PTX for a T4 with Colab's CUDA 12.8:", p.stdout.strip().splitlines()[-1])
    doc = subprocess.run(
        [py, "-m", "gpulab", "doctor", "--no-smoke"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ce.scratch("doctor-"),
        env={**os.environ, "COLAB_RELEASE_TAG": "gpulab-test"},
    )
    print(doc.stdout)
    assert doc.returncode == 0, doc.stdout + doc.stderr
    assert "colab       yes" in doc.stdout
    assert "toolkit     CUDA 12.8 from pip wheels" in doc.stdout
    assert "nvJitLink" in doc.stdout and re.search(
        rf"numba-cuda\s+{re.escape(after['numba-cuda'])}", doc.stdout
    )
    assert "no known problems found" in doc.stdout
