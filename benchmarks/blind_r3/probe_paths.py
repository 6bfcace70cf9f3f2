"""tests/test_perf_model.py's 32-path kernel (one FMA per iteration, 64-bit loop counters) on a
GPU, for Nsight Compute's threads per instruction: python benchmarks/blind_r3/probe_paths.py"""

import numpy as np
from numba import cuda, float32


@cuda.jit
def paths(out, sel, iters):
    i = cuda.grid(1)
    v = float32(i)
    p = sel[i]
    for q in range(32):
        if p == q:
            for k in range(iters):
                v = v * float32(0.5) + float32(0.25)
    out[i] = v


if __name__ == "__main__":
    n = 2048
    sel = cuda.to_device((np.arange(n) % 32).astype(np.int32))
    out = cuda.device_array(n, np.float32)
    for _ in range(2):
        paths[n // 256, 256](out, sel, 64)
    cuda.synchronize()
