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


# -- the SM clock during a measurement -------------------------------------------------------------
# NVML's clock event reasons (nvml.h, nvmlClocksEventReason*): why the clock is below its maximum.
CLOCK_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def _nvml_reader(device_index: int):
    """A function returning (SM MHz, reasons bitmask) through NVML, or None without pynvml/NVML."""
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons"
        )
        pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
        return lambda: (float(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)), int(reasons(h)))
    except Exception:  # noqa: BLE001 - no NVML: fall back to nvidia-smi
        return None


def _smi_reader(device_index: int):
    def read():
        s = _smi("clocks.sm", device_index)
        return (float(s.split()[0]), None) if s else None

    return read


def clock_summary(samples_mhz, source: str, reasons: dict | None = None) -> dict:
    """The record every GPU result carries: min/median/max SM clock (MHz) over `samples_mhz`,
    how many samples, and where they came from. Raises on no samples: a clock is never guessed."""
    xs = sorted(float(x) for x in samples_mhz)
    if not xs:
        raise ValueError(f"no SM clock samples from {source}: nothing to record")
    n = len(xs)
    med = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    out = {"source": source, "samples": n, "min_MHz": xs[0], "median_MHz": med, "max_MHz": xs[-1]}
    if reasons:
        out["clock_reasons_seen"] = reasons
    return out


class ClockSampler:
    """Samples the SM clock every `period_s` in a background thread, only inside ``timed()``
    regions, so a result records the clock its timed kernels ran at (not the idle clock between).

        with ClockSampler() as clk:
            with clk.timed():
                ...  # the timed launches
            rec["sm_clock"] = clk.take()  # min/median/max since the last take()

    Reads NVML's current SM clock (nvidia-ml-py) when it loads, else ``nvidia-smi clocks.sm``."""

    def __init__(self, device_index: int = 0, period_s: float = 0.005):
        import threading

        self.period_s = period_s
        self._read = _nvml_reader(device_index)
        self.source = (
            f"NVML current SM clock (nvmlDeviceGetClockInfo) sampled every {period_s * 1e3:g} ms "
            "during the timed region"
        )
        if self._read is None:
            self._read = _smi_reader(device_index)
            self.source = "nvidia-smi clocks.sm sampled back to back during the timed region"
        self._samples, self._reasons = [], {}
        self.all_samples = []  # every sample since the start (MHz), for a whole-run summary
        self._active = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            if not self._active.wait(0.05):
                continue
            self._add(self._read())
            time.sleep(self.period_s)

    def _add(self, r):
        """Keep one reading (MHz, reasons bitmask or None); a failed read (None) is skipped."""
        if not r:
            return
        with self._lock:
            self._samples.append(r[0])
            self.all_samples.append(r[0])
            for bit, name in CLOCK_REASONS.items():
                if r[1] is not None and r[1] & bit:
                    self._reasons[name] = self._reasons.get(name, 0) + 1

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._active.clear()
        self._stop.set()
        self._thread.join(timeout=2)

    def timed(self):
        """Context manager marking a timed region: samples are taken only inside it. A region
        shorter than one sample period still gets one sample, read at its end."""
        import contextlib

        @contextlib.contextmanager
        def region():
            with self._lock:
                before = len(self._samples)
            self._active.set()
            try:
                yield
            finally:
                self._active.clear()
                with self._lock:
                    empty = len(self._samples) == before
                if empty:
                    self._add(self._read())

        return region()

    def sample_now(self) -> None:
        """One sample read in the calling thread, counted like a timed region's. For host-timed
        loops: take one just before and one just after, outside the timed interval, so no other
        thread runs beside the timed Python code (launch_overhead.py's sampler_check measured the
        sampling thread's effect on numba's launches: within 1%)."""
        self._add(self._read())

    def take(self) -> dict | None:
        """:func:`clock_summary` of the samples since the last take (None if there were none)."""
        with self._lock:
            xs, reasons = self._samples, self._reasons
            self._samples, self._reasons = [], {}
        return clock_summary(xs, self.source, reasons) if xs else None

    def whole_run(self) -> dict | None:
        """:func:`clock_summary` of every sample since the start (every timed region of the run),
        the record a result carries at its top level; None if no region was sampled."""
        with self._lock:
            xs = list(self.all_samples)
        return clock_summary(xs, self.source) if xs else None


def timed(clock: ClockSampler | None):
    """``clock.timed()``, or a no-op region without a sampler (the CPU path of a script)."""
    import contextlib

    return clock.timed() if clock is not None else contextlib.nullcontext()


def sample_now(clock: ClockSampler | None) -> None:
    """``clock.sample_now()``, or nothing without a sampler."""
    if clock is not None:
        clock.sample_now()


def take(clock: ClockSampler | None) -> dict | None:
    """``clock.take()``, or None without a sampler."""
    return clock.take() if clock is not None else None


def out_path(default: str) -> str:
    """Where a script writes its result: $GPULAB_BENCH_OUT when set (a device run that sends its
    files back from elsewhere), else ``default`` (gpulab/data/results/<name>.json)."""
    return os.environ.get("GPULAB_BENCH_OUT") or default


def ncu_clock(per_second_values, metric: str = "sm__cycles_elapsed.avg.per_second") -> dict:
    """The clock record from Nsight Compute's `metric` (cycles per second, one value per launch)."""
    return clock_summary([v / 1e6 for v in per_second_values], f"Nsight Compute {metric} (per launch)")
