"""Round 7 blind test of gpulab.predict (protocol: benchmarks/blind_r7/README.md), run by
benchmarks/blind_runner.py:

    python benchmarks/blind_r7/run.py predict        # CPU: gpulab.predict(..., gpu="H200") -> blind_r7.json
    python benchmarks/blind_r7/run.py gpu OUT_DIR    # H200: CUDA-event times, SM clock, driver registers
    python benchmarks/blind_r7/run.py regs           # H200, under ncu (NCU_COMMAND): each case once
    python benchmarks/blind_r7/run.py merge OUT_DIR  # the device's figures beside the committed predictions
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import kernels  # noqa: E402
from blind_runner import BlindRound  # noqa: E402

cases, make_args = kernels.cases, kernels.make_args
NAME = "blind_r7"
ROUND = BlindRound(NAME, kernels, regs_args="real")  # data-dependent loops: launch the real data
NCU_COMMAND = ROUND.ncu_command


def _out():
    return ROUND.out()


def predict_main(only=None):
    ROUND.predict(only, path=_out())


def merge(out_dir):
    ROUND.merge(out_dir, path=_out())


if __name__ == "__main__":
    ROUND.main()
