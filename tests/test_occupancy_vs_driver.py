"""benchmarks/occupancy_vs_driver.py asks the driver only for device attributes that exist: a
misspelled name (MAX_THREADS_PER_MULTI_PROCESSOR was one) fails the run instead of being
recorded as a limit the driver does not report. Runs without a GPU."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("numba.cuda.cudadrv.driver")

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "occupancy_vs_driver.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("occupancy_vs_driver_script", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_recorded_limit_is_a_driver_attribute(script):
    script.check_attribute_names(script.DEVICE_LIMITS)  # raises on any unknown name
    assert "MAX_THREADS_PER_MULTIPROCESSOR" in script.DEVICE_LIMITS


def test_every_compared_limit_is_a_gpulab_field(script):
    from gpulab.models.occupancy import ARCHS

    for field in filter(None, script.DEVICE_LIMITS.values()):
        assert isinstance(getattr(ARCHS["sm_90"], field), int), field


def test_a_misspelled_attribute_fails_loudly(script):
    class Device:  # a stand-in: the name check comes before any driver call
        def __getattr__(self, name):
            raise AssertionError("the driver was asked for " + name)

    with pytest.raises(ValueError, match="CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTI_PROCESSOR"):
        script.device_attribute(Device(), "MAX_THREADS_PER_MULTI_PROCESSOR")
    with pytest.raises(ValueError, match="MAX_THREADS_PER_MULTI_PROCESSOR"):
        script.check_attribute_names(["MULTIPROCESSOR_COUNT", "MAX_THREADS_PER_MULTI_PROCESSOR"])


def test_a_known_attribute_is_read_from_the_device(script):
    class Device:
        MAX_THREADS_PER_MULTIPROCESSOR = 2048

    assert script.device_attribute(Device(), "MAX_THREADS_PER_MULTIPROCESSOR") == 2048


def test_an_uncompared_limit_says_why():
    from gpulab.models import occupancy as occ

    data = {
        "environment": {"gpu": "GPU Y", "date_utc": "2026-12-02T06:40:00Z"},
        "arch": "sm_90",
        "summary": {"default": {"configurations": 2, "match": 2, "distinct_register_counts": 1}},
        "device_limits_vs_gpulab": {
            "MAX_THREADS_PER_MULTI_PROCESSOR": [None, 2048],  # the old script's misspelling
            "MAX_BLOCKS_PER_MULTIPROCESSOR": [None, 32],  # a driver that refused
            "MAX_THREADS_PER_MULTIPROCESSOR": [2048, 2048],
            "MAX_REGISTERS_PER_BLOCK": [1, 2],
        },
        "kernels": [],
    }
    lines = occ.describe_driver_check(data).splitlines()
    assert lines[0].startswith("GPU Y (sm_90)")
    (misspelt,) = [x for x in lines if "MULTI_PROCESSOR" in x]
    assert "misspelled attribute name" in misspelt and "not reported" not in misspelt
    (refused,) = [x for x in lines if "MAX_BLOCKS" in x]
    assert refused.endswith("(not reported by this driver)")
    (equal,) = [x for x in lines if "MAX_THREADS_PER_MULTIPROCESSOR" in x]
    assert equal.endswith("2048") and "(" not in equal
    assert sum("<-- differs" in x for x in lines) == 1
