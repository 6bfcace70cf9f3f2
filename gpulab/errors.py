"""Exceptions raised when a kernel or a launch is wrong.

Every kernel bug the simulator catches ends in a subclass of :class:`KernelError` whose
message names the kernel's source line and the thread(s) involved, so a reader can go
straight to the mistake. The Python session stays usable afterwards.
"""


class GpulabError(Exception):
    """Base class of everything gpulab raises on purpose."""


class LaunchConfigError(GpulabError, ValueError):
    """A launch the hardware would refuse (block too large, grid dims beyond the limits, ...)."""


class BackendUnavailable(GpulabError, RuntimeError):
    """The requested backend cannot run here (e.g. ``backend="gpu"`` without a GPU)."""


class KernelError(GpulabError):
    """A bug found while running a kernel; ``line`` and ``threads`` say where and who."""

    def __init__(self, message, *, kernel=None, filename=None, line=None, source=None, threads=(), hint=None):
        self.kernel, self.filename, self.line = kernel, filename, line
        self.source, self.threads, self.hint = source, list(threads), hint
        self.detail = message
        super().__init__(self._format())

    def _format(self):
        parts = []
        where = f"kernel `{self.kernel}`" if self.kernel else "kernel"
        if self.line is not None:
            where += f", line {self.line}"
            if self.filename:
                from .show import package_path  # relative to gpulab, never the machine's path

                where += f" of {package_path(self.filename)}"
        parts.append(f"{type(self).__name__} in {where}")
        if self.source:
            parts.append(f"    {self.source.strip()}")
        parts.append(self.detail)
        if self.hint:
            parts.append(f"What to do: {self.hint}")
        return "\n".join(parts)


class OutOfBounds(KernelError, IndexError):
    """An array index outside the array (negative indices included: numba would wrap them)."""


class BarrierDivergence(KernelError):
    """``syncthreads`` reached by only part of a block: a hang or undefined behaviour on a GPU."""


class SharedMemoryRace(KernelError):
    """Two warps touch the same shared-memory element, one of them writing, with no barrier between."""


class WarpLevelRace(SharedMemoryRace):
    """Two lanes of one warp exchange data through shared memory with no ``syncwarp`` between
    (compute-sanitizer racecheck: "(Warp Level Programming) Potential RAW/WAR hazard")."""


class BlockGlobalRace(KernelError):
    """Two threads of one block touch a global element, one storing, with no barrier between."""


class GlobalMemoryRace(KernelError):
    """Two blocks of one launch touch a global element in an order-dependent way (globalrace.py)."""


class UninitializedRead(KernelError):
    """A read of shared memory no thread of the block has written (compute-sanitizer initcheck)."""


class WarpMaskError(KernelError):
    """A warp intrinsic whose member mask names lanes that are inactive or have exited."""


class StepBudgetExceeded(KernelError):
    """The kernel ran more statements than the step budget: most likely an infinite loop."""


class UnsupportedFeature(KernelError):
    """The kernel uses Python or numba.cuda that gpulab's simulator does not implement."""


class KernelPythonError(KernelError):
    """An ordinary Python error raised while running the kernel (type error, bad call, ...)."""


class NotCompilable(KernelError):
    """Code numba.cuda would refuse to compile (found by numba's own type inference)."""
