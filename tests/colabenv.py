"""Google Colab's runtime, rebuilt from its published package list (tests/colab/*.txt), for
tests/test_colab.py and the Colab run of tests/test_browser.py.

A base environment is Python 3.13 from pyenv with Colab's versions of every package a chapter
imports and of the Jupyter stack that runs it (the ``BASE`` names, installed with the list as pip
constraints, so their dependencies get Colab's versions too). It is built once per list and kept
in ``$GPULAB_CACHE`` (default ``~/.cache/gpulab``); each test copies it, so the install cell
always starts from Colab's state. Building takes a few minutes with an empty pip cache; a copy
takes seconds.

Network isolation for the chapter runs: ``unshare -n`` (a network namespace with only loopback,
as root); where that is not allowed, a ``sitecustomize`` socket guard that refuses every
non-loopback connection (``offline_prefix`` says which one it used).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from needs import missing, pyenv_python  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
LISTS = ROOT / "tests" / "colab"
CPU_LIST = LISTS / "colab-cpu-2026-08.txt"
GPU_LIST = LISTS / "colab-gpu-2026-08.txt"
COLAB_PYTHON = "3.13.0"  # Colab's is 3.13.15; pyenv on these machines has 3.13.0
COLAB_PIP = "24.1.2"  # Colab's pip (the install cell's %pip runs it)

#: what a chapter imports on Colab (numpy, numba, matplotlib, pandas, ipywidgets, IPython,
#: ml_dtypes) and the Jupyter stack that runs it there, installed at Colab's versions
BASE = [
    "numpy",
    "numba",
    "matplotlib",
    "pandas",
    "ml_dtypes",
    "ipywidgets",
    "widgetsnbextension",
    "jupyterlab_widgets",
    "ipykernel",
    "ipython",
    "jupyter_client",
    "tornado",
    "traitlets",
    "pyzmq",
    "nbclient",
    "nbformat",
    "notebook",
    "docutils",
]
#: what Colab's GPU image has on top (its CUDA 12.8 toolkit wheels and numba-cuda 0.22.2)
GPU_EXTRA = [
    "numba-cuda",
    "cuda-bindings",
    "cuda-core",
    "cuda-pathfinder",
    "cuda-python",
    "cuda-toolkit",
    "nvidia-cuda-nvcc-cu12",
    "nvidia-cuda-nvrtc-cu12",
    "nvidia-cuda-runtime-cu12",
    "nvidia-cuda-cccl-cu12",
    "nvidia-nvjitlink-cu12",
]
#: the packages Colab's frontend and kernel depend on: the install cell must change none of them
PROTECTED = [
    "ipywidgets",
    "widgetsnbextension",
    "ipykernel",
    "ipython",
    "jupyter_client",
    "tornado",
    "traitlets",
    "pyzmq",
]


def pins(list_path: Path) -> dict[str, str]:
    """{canonical name: version} of a ``name==version`` list (comments skipped)."""
    out = {}
    for line in list_path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            out[canonical(name)] = version
    return out


def canonical(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def cache_root() -> Path:
    return Path(os.environ.get("GPULAB_CACHE", Path.home() / ".cache" / "gpulab"))


def pip(python: str, *args: str, timeout: int = 1500) -> subprocess.CompletedProcess:
    """``python -m pip ARGS``; raises with pip's own output when it fails."""
    p = subprocess.run(
        [python, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tempfile.gettempdir(),  # not a checkout: its gpulab.egg-info would count as installed
    )
    if p.returncode:
        raise RuntimeError(f"pip {' '.join(args)} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def base_env(kind: str = "cpu") -> Path:
    """The cached Colab environment of ``kind`` ("cpu" or "gpu"), built on first use; its
    folder name carries a hash of everything that decides its contents."""
    python = pyenv_python(COLAB_PYTHON)
    if python is None:
        raise FileNotFoundError(f"Python {COLAB_PYTHON} from pyenv (pyenv install {COLAB_PYTHON})")
    lst = CPU_LIST if kind == "cpu" else GPU_LIST
    names = BASE + (GPU_EXTRA if kind == "gpu" else [])
    key = hashlib.sha256(json.dumps([lst.read_text(), names, COLAB_PIP, python, 1]).encode()).hexdigest()[:12]
    env = cache_root() / f"colab-{kind}-{key}"
    cache_root().mkdir(parents=True, exist_ok=True)
    with open(cache_root() / f"colab-{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two tests (or two runs) build it once
        if (env / "complete").exists():
            return env
        shutil.rmtree(env, ignore_errors=True)
        subprocess.run([python, "-m", "venv", str(env)], check=True, timeout=300)
        py = str(env / "bin" / "python")
        pip(py, "install", "-q", f"pip=={COLAB_PIP}")
        pip(py, "install", "-q", "-c", str(lst), *names)
        (env / "complete").write_text(json.dumps(versions(py, names), indent=1))
    return env


def copy_env(base: Path, dest: Path) -> str:
    """A private copy of a base environment (the install cell changes it); its python. Files are
    hard links (``cp -al``: seconds instead of minutes for a gigabyte): pip and Python replace a
    file by writing a new one, never in place, so the cached base is left as it was."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if subprocess.run(["cp", "-al", str(base), str(dest)], capture_output=True).returncode:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(base, dest, symlinks=True)  # another file system: a real copy
    return str(dest / "bin" / "python")


def versions(python: str, names: list[str]) -> dict[str, str | None]:
    """{name: installed version or None} in the environment of ``python``."""
    code = (
        "import json, sys, importlib.metadata as md\n"
        "def v(n):\n"
        "    try:\n        return md.version(n)\n"
        "    except md.PackageNotFoundError:\n        return None\n"
        "print(json.dumps({n: v(n) for n in sys.argv[1:]}))"
    )
    # -I: not the working directory (a checkout's gpulab.egg-info would count as installed)
    p = subprocess.run(
        [python, "-I", "-c", code, *names], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(p.stdout)


def build_wheel(dest: Path) -> Path:
    """gpulab's wheel from this checkout (the helper the Gradescope zip uses too)."""
    from gpulab.grading.gradescope import build_wheel as _build

    return Path(_build(str(dest), ROOT))


def first_code_cell(nb_path: Path) -> str:
    """A chapter's first code cell: the Colab install cell."""
    nb = json.loads(nb_path.read_text())
    return next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def install_from(cell: str, wheel: Path) -> str:
    """The install cell with the repository URL it installs from replaced by ``wheel``, so it
    installs this checkout (``gpulab[colab] @ file:///.../gpulab-*.whl``), pip for the rest."""
    from gpulab.show import repository_url

    src = f"git+{repository_url()}"
    if src not in cell:
        raise AssertionError(f"the install cell does not install from {src}:\n{cell}")
    return cell.replace(src, wheel.resolve().as_uri())


#: run as the notebook's first cell: what Colab's kernel has (the install cell tests for it)
FAKE_COLAB = (
    "import sys, types, os\n"
    'sys.modules.setdefault("google.colab", types.ModuleType("google.colab"))\n'
    'os.environ.setdefault("COLAB_RELEASE_TAG", "gpulab-test")'
)


def colab_notebook(chapter: Path, wheel: Path, out: Path) -> Path:
    """``chapter`` as Colab runs it: a first cell making the kernel look like Colab's, then the
    chapter with its install cell pointed at ``wheel``; written to ``out``."""
    import nbformat

    nb = nbformat.read(chapter, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    code[0].source = install_from(code[0].source, wheel)
    nb.cells.insert(0, nbformat.v4.new_code_cell(FAKE_COLAB))
    nbformat.write(nb, out)
    return out


_GUARD = '''"""gpulab test socket guard: no connection leaves this machine."""
import ipaddress, socket
_connect = socket.socket.connect
def _guarded(self, address):
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            local = ipaddress.ip_address(host).is_loopback
        except ValueError:
            local = host == "localhost"
        if not local:
            raise OSError(101, f"network blocked by the gpulab test guard: {address!r}")
    return _connect(self, address)
socket.socket.connect = _guarded
_gai = socket.getaddrinfo
def _getaddrinfo(host, *a, **k):
    if host not in (None, "localhost", "127.0.0.1", "::1", "0.0.0.0", ""):
        raise socket.gaierror(-3, f"name resolution blocked by the gpulab test guard: {host}")
    return _gai(host, *a, **k)
socket.getaddrinfo = _getaddrinfo
'''


def offline_prefix(workdir: Path) -> tuple[list[str], dict, str]:
    """(command prefix, extra environment, description) that cut a child process off the
    network: ``unshare -n`` with loopback up when allowed, else the socket guard."""
    probe = (
        subprocess.run(
            ["unshare", "-n", "sh", "-c", "ip link set lo up && true"], capture_output=True, timeout=30
        )
        if shutil.which("unshare") and shutil.which("ip")
        else None
    )
    if probe is not None and probe.returncode == 0:
        return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"], {}, "unshare -n"
    guard = workdir / "netguard"
    guard.mkdir(parents=True, exist_ok=True)
    (guard / "sitecustomize.py").write_text(_GUARD)
    env = {
        "PYTHONPATH": str(guard),
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "no_proxy": "",
    }
    return [], env, "socket guard (sitecustomize) and proxies pointing nowhere"


def network_reachable(prefix: list[str], extra_env: dict, python: str) -> str:
    """What looking up the package index's host does under ``prefix`` (what the install cell's
    pip does first): 'blocked: <error>' or 'open'."""
    code = (
        "import socket\n"
        "try:\n"
        "    socket.getaddrinfo('pypi.org', 443); print('open')\n"
        "except OSError as e:\n"
        "    print('blocked:', e)"
    )
    p = subprocess.run(
        [*prefix, python, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **extra_env},
    )
    return (p.stdout.strip() or p.stderr.strip() or "no output").splitlines()[-1]


def scratch(prefix: str) -> Path:
    """An empty folder outside the repository (like Colab's /content)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


if __name__ == "__main__":  # build (or find) the cached environments: python tests/colabenv.py
    sys.path.insert(0, str(ROOT))
    for k in sys.argv[1:] or ["cpu", "gpu"]:
        print(k, base_env(k))
