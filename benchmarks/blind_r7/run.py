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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from blind_runner import BlindRound, kernels_of  # noqa: E402

# data-dependent loops: the register pass launches the real data
ROUND = BlindRound("blind_r7", kernels_of("blind_r7"), regs_args="real")
NCU_COMMAND = ROUND.ncu_command

if __name__ == "__main__":
    ROUND.main()
