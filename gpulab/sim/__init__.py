"""gpulab's SIMT simulator: numba.cuda kernels on a CPU, warps in lockstep, with counters.

``transform`` rewrites the kernel source into masked, vectorised form; ``context`` holds the
active mask and control-flow frames; ``memory`` the arrays and their counters; ``intrinsics``
the ``cuda`` module a kernel sees; ``runner`` ties them together for one launch.
"""
from .layout import WARP, Layout  # noqa: F401
from .runner import run  # noqa: F401
