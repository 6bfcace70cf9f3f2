"""The chapter 05-06 GPU benchmarks skip cleanly without a GPU and leave the results alone."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _gpu():
    try:
        from numba import cuda
        return cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(_gpu(), reason="a GPU is present: the scripts would measure, not skip")
@pytest.mark.parametrize("script,result", [("bandwidth.py", "bandwidth.json"), ("latency.py", "latency.json")])
def test_skips_without_gpu(script, result, tmp_path):
    out = tmp_path / result
    env = dict(os.environ, GPULAB_BENCH_OUT=str(out), GPULAB_QUIET="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("SKIP"), proc.stdout
    assert not out.exists()
