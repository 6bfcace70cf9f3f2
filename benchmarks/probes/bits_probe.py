"""popc/clz/ffs/brev widths and ballot/match result types: GPU vs gpulab's simulator.

    python benchmarks/probes/bits_probe.py gpu sim   # prints each backend's results as JSON

The H200's answer is recorded in benchmarks/raw/bits_probe_h200.json (2026-12-01);
tests/test_sim_bits_vs_h200.py holds the simulator to it."""

import sys
import json
import numpy as np
from numba import cuda, uint32, uint64
import gpulab


@cuda.jit
def bits(out32, out64, x32, x64):
    i = cuda.threadIdx.x
    a = x32[i]
    b = x64[i]
    out32[i, 0] = cuda.popc(a)
    out32[i, 1] = cuda.clz(a)
    out32[i, 2] = cuda.ffs(a)
    out64[i, 0] = cuda.popc(b)
    out64[i, 1] = cuda.clz(b)
    out64[i, 2] = cuda.ffs(b)
    out64[i, 3] = cuda.brev(uint32(a))
    out64[i, 4] = cuda.ballot_sync(0xFFFFFFFF, i % 3 != 0)
    out64[i, 5] = cuda.popc(cuda.ballot_sync(0xFFFFFFFF, i % 3 != 0))
    out64[i, 6] = cuda.match_any_sync(0xFFFFFFFF, x32[i] & 7)
    out64[i, 7] = cuda.activemask()
    out64[i, 8] = cuda.brev(uint64(b))


x32 = np.array([1, -1, 0, 8, 2**31 - 1, -(2**31), 12, 255] * 4, np.int32)
x64 = np.array([1, -1, 0, 8, 2**40, -(2**40), 12, 255] * 4, np.int64)
if __name__ == "__main__":
    res = {}
    for be in sys.argv[1:]:
        o32 = np.zeros((32, 3), np.int64)
        o64 = np.zeros((32, 9), np.int64)
        gpulab.launch(bits, 1, 32, o32, o64, x32, x64, backend=be)
        res[be] = {"o32": o32[:8].tolist(), "o64": o64[:8].tolist()}
    print(json.dumps(res))
