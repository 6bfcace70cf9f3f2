"""Where and with what a benchmark ran: one record for every results JSON written by the
scripts of this folder (GPU, driver, CUDA, numba, numba-cuda, numpy, torch, CPU, date, command),
and the one test of whether there is a GPU to measure.

Every field is read at run time; a field that cannot be read is None, never guessed.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
import time


def _smi(query: str, index: int = 0) -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader", "-i", str(index)],
            capture_output=True,
            text=True,
            timeout=20,
        )
        return out.stdout.strip() or None
    except Exception:  # noqa: BLE001 - no nvidia-smi
        return None


def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001
        return None


def gpu_present() -> bool:
    """True when numba sees at least one CUDA GPU (False without a driver or numba-cuda)."""
    try:
        from numba import cuda

        return cuda.is_available() and len(cuda.gpus) > 0
    except Exception:  # noqa: BLE001 - no driver at all
        return False


def command() -> str:
    """The command line that ran this script, as it can be re-typed from the repository root."""
    return "python " + " ".join(shlex.quote(a) for a in sys.argv)


def environment(device_index: int = 0, numba: bool = True) -> dict:
    """GPU name, driver, CUDA versions, package versions, UTC date and the exact command."""
    env = {
        "gpu": None,
        "compute_capability": None,
        "sm_count": None,
        "driver": _smi("driver_version", device_index),
        "nvidia_smi": _smi(
            "driver_version,name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,memory.total", device_index
        ),
        "cuda_driver_api": None,
        "cuda_runtime": None,
        "numba": _version("numba"),
        "numba_cuda": _version("numba-cuda"),
        "numpy": _version("numpy"),
        "torch": _version("torch"),
        "cupy": None,
        "python": platform.python_version(),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": command(),
    }
    try:
        import cupy

        env["cupy"] = cupy.__version__
    except Exception:  # noqa: BLE001
        pass
    if numba:
        try:
            from numba import cuda

            dev = cuda.get_current_device()
            name = dev.name
            env["gpu"] = name.decode() if isinstance(name, bytes) else str(name)
            env["compute_capability"] = list(dev.compute_capability)
            env["sm_count"] = dev.MULTIPROCESSOR_COUNT
            env["max_sm_clock_kHz"] = dev.CLOCK_RATE
            env["l2_bytes"] = dev.L2_CACHE_SIZE
            env["cuda_driver_api"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
            env["cuda_runtime"] = ".".join(map(str, cuda.runtime.get_version()))
        except Exception as e:  # noqa: BLE001
            env["numba_error"] = repr(e)[:200]
    if env["gpu"] is None:
        try:
            import torch

            env["gpu"] = torch.cuda.get_device_name(device_index)
            env["compute_capability"] = list(torch.cuda.get_device_capability(device_index))
            env["cuda_runtime"] = torch.version.cuda
        except Exception:  # noqa: BLE001
            pass
    return env
