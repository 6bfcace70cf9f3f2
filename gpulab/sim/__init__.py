"""gpulab's SIMT simulator: numba.cuda kernels on a CPU, warps in lockstep, with counters.

``transform`` rewrites the kernel source into masked, vectorised form; ``context`` holds the
active mask and control-flow frames; ``memory`` the arrays and their counters; ``intrinsics``
the ``cuda`` module a kernel sees; ``runner`` ties them together for one launch.
``typecheck`` first runs numba-cuda's own type inference on the kernel, so only code numba
compiles is simulated; ``eager`` lets ``@cuda.jit("signature")`` work without a GPU;
``globalrace`` finds order-dependent accesses to global memory between blocks.
"""
from .layout import WARP, Layout  # noqa: F401
from .runner import run  # noqa: F401
