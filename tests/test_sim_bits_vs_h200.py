"""Bit intrinsics and vote/match results on the simulator equal what an H200 returned for the same
kernel (benchmarks/probes/bits_probe.py, recorded in benchmarks/raw/bits_probe_h200.json):
popc/clz/ffs/brev at the width of their argument's type, ballot and match_any as signed int32."""

import json
import sys
from pathlib import Path

import numpy as np

import gpulab

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "probes"))
import bits_probe  # noqa: E402


def test_bit_intrinsics_match_the_h200():
    want = json.loads((ROOT / "benchmarks/raw/bits_probe_h200.json").read_text())["gpu"]
    o32, o64 = np.zeros((32, 3), np.int64), np.zeros((32, 9), np.int64)
    gpulab.launch(bits_probe.bits, 1, 32, o32, o64, bits_probe.x32, bits_probe.x64, backend="sim")
    assert o32[:8].tolist() == want["o32"]
    assert o64[:8].tolist() == want["o64"]


def test_a_narrow_variable_keeps_its_width_through_a_divergent_assignment():
    from numba import cuda, int32

    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        v = int32(1)
        if i % 2 == 0:
            v = x[i]  # int32 on both paths: v is int32, clz counts 32 bits
        out[i] = cuda.clz(v)

    out = np.zeros(32, np.int64)
    gpulab.launch(k, 1, 32, out, np.full(32, 8, np.int32), backend="sim")
    assert out[0] == 28 and out[1] == 31
