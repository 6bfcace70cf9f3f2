"""gpulab's SIMT simulator: numba.cuda kernels on a CPU, warps in lockstep, with counters.

``transform`` rewrites the kernel source into masked, vectorised form, calling the runtime
methods listed in ``protocol``; ``context`` holds the active mask and control-flow frames (the
runtime); ``memory`` the arrays and their counters; ``intrinsics`` the ``cuda`` module a kernel
sees, with ``atomics`` (the op table), ``shuffle_rule`` (which lane a shuffle reads) and ``fp16``
(``cuda.fp16``);
``trace`` the typed records of the traced warp; ``runner`` ties them together for one launch.
``typecheck`` first runs numba-cuda's own type inference on the kernel, so only code numba
compiles is simulated; ``eager`` lets ``@cuda.jit("signature")`` work without a GPU;
``globalrace`` finds order-dependent accesses to global memory between blocks, ``blockrace``
between the threads of one block; ``numba_api`` and ``devicearray`` run ordinary numba.cuda
programs (``kernel[grid, block]``, ``cuda.to_device``, ...) through ``gpulab.launch``.
``show_transformed(kernel)`` prints the rewritten code. CONTRIBUTING.md, "Extending the
simulator", walks through adding an intrinsic.
"""

from .layout import WARP, Layout  # noqa: F401
from .protocol import Runtime  # noqa: F401
from .runner import run  # noqa: F401
from .transform import show_transformed, transformed_source  # noqa: F401
