"""`gpulab doctor` (also `python -m gpulab`): what this environment runs on, and what to fix.

Prints package versions, the backend `gpulab.launch(..., backend="auto")` would use, the GPU if
any, and every known-bad combination it finds with the fix. Each check is a small function of
plain facts so it can be tested without the hardware it is about. Exit status 1 when a check
found an error, else 0.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import importlib.util
import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = [
    "gpulab",
    "numpy",
    "numba",
    "numba-cuda",
    "llvmlite",
    "cuda-bindings",
    "nvidia-nvjitlink-cu12",
    "nvidia-nvjitlink",
    "pynvjitlink-cu12",
    "cuda-core",
    "cuda-toolkit",
    "nvidia-cuda-nvcc-cu12",
    "nvidia-cuda-runtime-cu12",
    "matplotlib",
    "pandas",
    "ipywidgets",
    "widgetsnbextension",
    "ml_dtypes",
    "jupyter-book",
    "otter-grader",
]

PTX_SOURCES = (
    "NVIDIA/numba-cuda#120; googlecolab/colabtools#5081; "
    "NVIDIA/numba-cuda#263 (use nvJitLink whenever it is installed); "
    "NVIDIA/accelerated-computing-hub#66"
)
PTX_FIX = (
    'pip install "numba-cuda[cu12]" — installs nvJitLink, which numba-cuda (>= 0.14) '
    "then uses to link: it compiles the PTX itself, so the driver never sees a PTX version "
    "newer than it knows. With an older numba-cuda: pip install pynvjitlink-cu12 and set "
    "NUMBA_CUDA_ENABLE_PYNVJITLINK=1 before importing numba. Restart the runtime afterwards. "
    "Or upgrade the NVIDIA driver to one that supports the toolkit's CUDA version."
)


@dataclass
class Finding:
    """One known problem: how bad, what, why, how to fix it, and where that is documented."""

    level: str  # "error" or "warning"
    title: str
    detail: str
    fix: str
    source: str = ""

    def render(self) -> str:
        s = f"[{self.level.upper()}] {self.title}\n    why: {self.detail}\n    fix: {self.fix}"
        return s + (f"\n    see: {self.source}" if self.source else "")


@dataclass
class Facts:
    """What the checks look at; collected by `collect()` or written by hand in tests."""

    python: str = platform.python_version()
    versions: dict = field(default_factory=dict)  # distribution name -> version or None
    numpy_has_row_stack: bool = True
    numba_cuda_uses_row_stack: bool = False
    on_colab: bool = False
    gpu: str | None = None  # device name, None without a usable GPU
    compute_capability: tuple | None = None
    driver_cuda: tuple | None = None  # CUDA version the driver supports, e.g. (12, 4)
    toolkit_cuda: tuple | None = None  # NVVM / toolkit version numba compiles with
    have_nvjitlink: bool | None = None
    backend: str = "sim"
    smoke_error: str | None = None  # message of a failed test kernel on the GPU
    describe: str | None = None  # gpulab.describe(): what `import gpulab` says


def _version(tup: str | None) -> tuple:
    out = []
    for part in (tup or "").split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


# ---- checks: each is a function of Facts returning a list of Findings ---------------------


def check_numpy_row_stack(f: Facts) -> list[Finding]:
    """numpy 2.5 removed np.row_stack; numba-cuda 0.30 registers an overload for it, so the
    first kernel compile dies with AttributeError (measured on the GPU machine)."""
    if f.numba_cuda_uses_row_stack and not f.numpy_has_row_stack:
        return [
            Finding(
                "error",
                f"numpy {f.versions.get('numpy')} with numba-cuda {f.versions.get('numba-cuda')}",
                "this numpy has no np.row_stack (removed in numpy 2.5) but numba-cuda refers to it: "
                "the first @cuda.jit compile fails with AttributeError: module 'numpy' has no "
                "attribute 'row_stack'",
                'pip install "numpy<2.5" (then restart the kernel)',
                "measured with numba-cuda 0.30.4 on an H200; gpulab DESIGN.md §4",
            )
        ]
    return []


def check_ptx_version(f: Facts) -> list[Finding]:
    """A toolkit newer than the driver emits PTX the driver cannot JIT-link
    (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), unless nvJitLink does the linking."""
    if f.gpu is None or not f.driver_cuda or not f.toolkit_cuda:
        return []
    if tuple(f.toolkit_cuda[:2]) > tuple(f.driver_cuda[:2]) and not f.have_nvjitlink:
        drv = ".".join(map(str, f.driver_cuda[:2]))
        tk = ".".join(map(str, f.toolkit_cuda[:2]))
        return [
            Finding(
                "error",
                f"CUDA toolkit {tk} is newer than the driver (supports CUDA {drv}) and nvJitLink is missing",
                "numba compiles kernels to PTX with the toolkit's NVVM, and the driver refuses PTX "
                "from a newer toolkit: the first launch fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION "
                "(this has happened on Colab's T4 runtime)",
                PTX_FIX,
                PTX_SOURCES,
            )
        ]
    return []


def check_smoke_error(f: Facts) -> list[Finding]:
    """Explain a failed test kernel by the error text it produced."""
    msg = f.smoke_error
    if not msg:
        return []
    if "UNSUPPORTED_PTX_VERSION" in msg or "Unsupported .version" in msg:
        return [
            Finding(
                "error",
                "a test kernel failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                "the driver is older than the CUDA toolkit numba compiled with",
                PTX_FIX,
                PTX_SOURCES,
            )
        ]
    if "row_stack" in msg:
        return [
            Finding(
                "error",
                "a test kernel failed: numpy has no attribute 'row_stack'",
                "numpy >= 2.5 with numba-cuda 0.30",
                'pip install "numpy<2.5"',
                "gpulab DESIGN.md §4",
            )
        ]
    return [
        Finding(
            "error",
            "a test kernel failed on the GPU",
            msg.strip().splitlines()[-1][:300],
            "gpulab falls back to the CPU simulator with backend='sim'; report this error "
            "with the output of `gpulab doctor`",
        )
    ]


def check_jupyter_book(f: Facts) -> list[Finding]:
    """Jupyter Book 2.x ignores _config.yml and builds nothing for this book."""
    v = _version(f.versions.get("jupyter-book"))
    if v and v[0] >= 2:
        return [
            Finding(
                "warning",
                f"jupyter-book {f.versions['jupyter-book']}",
                "Jupyter Book 2.x does not read _config.yml/_toc.yml; it exits 0 having "
                "built nothing of this book",
                'pip install "jupyter-book>=1.0.4.post1,<2"',
                "gpulab DESIGN.md §4",
            )
        ]
    return []


def check_tested_versions(f: Facts) -> list[Finding]:
    """Versions outside the ranges gpulab was tested with (a warning, not an error)."""
    out = []
    for name, lo, hi in [("numba", (0, 61), (0, 69)), ("numba-cuda", (0, 30), (0, 31))]:
        v = _version(f.versions.get(name))
        if v and not (lo <= v[:2] < hi):
            out.append(
                Finding(
                    "warning",
                    f"{name} {f.versions[name]} is outside the tested range",
                    f"gpulab is tested with {name} >= {'.'.join(map(str, lo))}, < {'.'.join(map(str, hi))}",
                    "pip install -r requirements.txt (from the gpulab repository)",
                )
            )
    return out


def check_bindings_vs_driver(f: Facts) -> list[Finding]:
    """cuda-bindings 13.x is built for CUDA 13 drivers; with a CUDA 12 driver numba-cuda's
    `cu12` extra (cuda-bindings 12.x) is the matching set."""
    b = _version(f.versions.get("cuda-bindings"))
    if f.gpu is None or not f.driver_cuda or not b or b[0] <= f.driver_cuda[0]:
        return []
    return [
        Finding(
            "warning",
            f"cuda-bindings {f.versions['cuda-bindings']} with a CUDA "
            f"{f.driver_cuda[0]}.{f.driver_cuda[1]} driver",
            f"cuda-bindings {b[0]}.x targets CUDA {b[0]} drivers; numba-cuda's "
            f"cu{f.driver_cuda[0]} extra pins the matching cuda-bindings",
            f'pip install "numba-cuda[cu{f.driver_cuda[0]}]" (then restart the runtime)',
            "numba-cuda package metadata (extras cu12 / cu13)",
        )
    ]


def check_colab_widgets(f: Facts) -> list[Finding]:
    """Colab's frontend draws ipywidgets 7 only: with 8 installed every explorer shows nothing."""
    v = _version(f.versions.get("ipywidgets"))
    if not f.on_colab or not v or v[0] < 8:
        return []
    return [
        Finding(
            "error",
            f"ipywidgets {f.versions['ipywidgets']} on Colab",
            "Colab's frontend does not draw ipywidgets 8 widgets: every explorer in the book shows "
            "nothing (Colab ships 7.7.1; gpulab works with 7.7 and 8)",
            'pip install "ipywidgets==7.7.1" "widgetsnbextension==3.6.10", then Runtime > Restart session',
            "googlecolab/colabtools#3020, #4525",
        )
    ]


def cuda_wheels(f: Facts) -> list[str]:
    """What the CUDA toolkit wheels installed here mean for compiling and loading kernels, in
    words; found without a GPU (the Colab GPU image's set can be read on any machine)."""
    nvcc = f.versions.get("nvidia-cuda-nvcc-cu12") or f.versions.get("nvidia-cuda-nvcc")
    # CUDA 12's wheel names end in -cu12, CUDA 13's have no suffix; on a GPU numba's own answer counts too
    link = f.versions.get("nvidia-nvjitlink-cu12") or f.versions.get("nvidia-nvjitlink")
    nc = _version(f.versions.get("numba-cuda"))
    out = []
    if nvcc:
        out.append(f"toolkit     CUDA {'.'.join(map(str, _version(nvcc)[:2]))} from pip wheels (NVVM {nvcc})")
    if (link or f.have_nvjitlink) and nc and nc[:2] >= (0, 14):
        which = f"nvJitLink {link}" if link else "nvJitLink"
        out.append(
            f"linking     {which}: numba-cuda links kernels itself and hands the driver "
            "machine code, so a driver older than the toolkit cannot refuse its PTX version"
        )
    elif nc:
        out.append(
            "linking     by the driver (no nvJitLink): PTX from a toolkit newer than the driver "
            'fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION; pip install "numba-cuda[cu12]"'
        )
    return out


CHECKS = [
    check_numpy_row_stack,
    check_colab_widgets,
    check_ptx_version,
    check_bindings_vs_driver,
    check_smoke_error,
    check_jupyter_book,
    check_tested_versions,
]


def diagnose(f: Facts) -> list[Finding]:
    """Run every check."""
    return [x for check in CHECKS for x in check(f)]


# ---- collecting facts from this environment -----------------------------------------------


def _dist_version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _numba_cuda_uses_row_stack() -> bool:
    spec = importlib.util.find_spec("numba_cuda")
    if spec is None or not spec.submodule_search_locations:
        return False
    p = Path(list(spec.submodule_search_locations)[0]) / "numba" / "cuda" / "np" / "arrayobj.py"
    try:
        return "np.row_stack" in p.read_text(errors="replace")
    except OSError:
        return False


def collect(smoke: bool = True) -> Facts:
    """Look at this environment. Never raises: what cannot be found stays None."""
    f = Facts(versions={n: _dist_version(n) for n in PACKAGES})
    try:
        import numpy as np

        f.numpy_has_row_stack = hasattr(np, "row_stack")
    except Exception:
        pass
    f.numba_cuda_uses_row_stack = _numba_cuda_uses_row_stack()
    f.on_colab = "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ
    try:
        from numba import cuda

        if cuda.is_available():
            dev = cuda.get_current_device()
            name = dev.name
            f.gpu = name.decode() if isinstance(name, bytes) else str(name)
            f.compute_capability = tuple(dev.compute_capability)
            f.backend = "gpu"
            try:
                from numba.cuda.cudadrv import driver as drv

                f.driver_cuda = tuple(drv.driver.get_version())
                f.have_nvjitlink = bool(drv._have_nvjitlink())
            except Exception:
                pass
            try:
                # the CUDA runtime numba links against is the toolkit whose PTX version matters;
                # (NVVM's own version, e.g. 2.0, is not a CUDA version: seen on the H200 run)
                f.toolkit_cuda = tuple(cuda.runtime.get_version())
            except Exception:
                pass
            if smoke:
                f.smoke_error = _smoke_kernel()
    except Exception:
        pass
    try:  # gpulab.BACKEND is the authority when it exists
        os.environ.setdefault("GPULAB_QUIET", "1")  # the report prints describe() itself
        import gpulab

        f.backend = getattr(gpulab, "BACKEND", f.backend)
        if hasattr(gpulab, "describe"):
            f.describe = gpulab.describe()
    except Exception as e:
        f.describe = f"import gpulab failed: {type(e).__name__}: {e}"
    return f


def _smoke_kernel() -> str | None:
    """Compile and run a one-line kernel on the GPU; the error text if it fails."""
    try:
        import numpy as np
        from numba import cuda

        @cuda.jit
        def _inc(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] += 1

        a = np.zeros(32, dtype=np.float32)
        _inc[1, 32](a)
        return None if float(a.sum()) == 32.0 else "test kernel returned a wrong result"
    except Exception as e:  # report, don't crash
        return f"{type(e).__name__}: {e}"


def report(f: Facts, findings: list[Finding]) -> str:
    """The text `gpulab doctor` prints."""
    lines = ["gpulab doctor", "", f"python      {f.python} ({platform.platform()})"]
    for name in PACKAGES:
        lines.append(
            f"{name:<12}{f.versions.get(name) or '-'}"
            if len(name) < 12
            else f"{name} {f.versions.get(name) or '-'}"
        )
    lines.append("")
    lines.append(f"colab       {'yes' if f.on_colab else 'no'}")
    lines += cuda_wheels(f)
    if f.gpu:
        cc = ".".join(map(str, f.compute_capability or ()))
        lines.append(f"gpu         {f.gpu} (compute capability {cc})")
        if f.driver_cuda:
            lines.append(f"driver      supports CUDA {'.'.join(map(str, f.driver_cuda))}")
        if f.toolkit_cuda:
            lines.append(f"toolkit     CUDA runtime {'.'.join(map(str, f.toolkit_cuda))}")
        lines.append(f"nvjitlink   {'yes' if f.have_nvjitlink else 'no'}")
        lines.append(f"test kernel {'ok' if not f.smoke_error else 'FAILED'}")
    else:
        lines.append("gpu         none usable by numba.cuda")
    where = "numba.cuda on the GPU" if f.backend == "gpu" else "CPU: gpulab simulator"
    lines.append(f"backend     {f.backend} ({where}) for backend='auto'")
    if f.describe:
        lines.append(f"import      {f.describe}")
    lines.append("")
    if findings:
        lines += [x.render() for x in findings]
    else:
        lines.append("no known problems found")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `gpulab` console script and of `python -m gpulab`."""
    p = argparse.ArgumentParser(prog="gpulab", description="gpulab tools")
    p.add_argument(
        "command",
        nargs="?",
        default="doctor",
        choices=["doctor"],
        help="doctor: versions, backend, GPU and known-bad combinations (default)",
    )
    p.add_argument("--no-smoke", action="store_true", help="do not run a test kernel on the GPU")
    args = p.parse_args(argv)
    f = collect(smoke=not args.no_smoke)
    findings = diagnose(f)
    print(report(f, findings))
    return 1 if any(x.level == "error" for x in findings) else 0
