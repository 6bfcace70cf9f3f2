"""Bit intrinsics and vote/match results on the simulator equal what an H200 returned for the same
kernel (benchmarks/probes/bits_probe.py, recorded in benchmarks/results/raw/bits_probe_h200.json):
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
    want = json.loads((ROOT / "benchmarks/results/raw/bits_probe_h200.json").read_text())["gpu"]
    o32, o64 = np.zeros((32, 3), np.int64), np.zeros((32, 9), np.int64)
    gpulab.launch(bits_probe.bits, 1, 32, o32, o64, bits_probe.x32, bits_probe.x64, backend="sim")
    assert o32[:8].tolist() == want["o32"]
    assert o64[:8].tolist() == want["o64"]
