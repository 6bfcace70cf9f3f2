"""A virtual GPU: predict a kernel's time on a named GPU from a simulation on the CPU.

``gpulab.predict(kernel, grid, block, *args, gpu="H200")`` simulates a sample of the launch's
blocks, scales the counts to the whole launch and returns a :class:`Prediction`: the time,
what limits it, each bound as in Nsight Compute's speed-of-light section, and per-line costs.
GPUs are data (:mod:`gpulab.perf.gpus`); the H200 is calibrated and validated against Nsight
Compute (``benchmarks/perf_model.py``), the others carry datasheet figures only.
"""

from .gpus import GPU, GPUS, get as get_gpu  # noqa: F401
from .engine import from_report, predict  # noqa: F401
from .prediction import Prediction  # noqa: F401
