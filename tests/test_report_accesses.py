"""Report.accesses_of: the traced warp's memory instructions filtered by array, space and op."""

import numpy as np
import pytest

import gpulab
from gpulab.kernels import memory as km


def _strided(stride=2, n=1024):
    a = np.arange(stride * n, dtype=np.float32)
    return gpulab.launch(km.copy_strided, n // 256, 256, np.zeros(n, np.float32), a, stride, backend="sim")


def test_filters_by_op_and_keeps_order():
    rep = _strided()
    loads = rep.accesses_of(op="ld")
    stores = rep.accesses_of(op="st")
    assert loads and stores
    assert all(a["op"] == "ld" for a in loads) and all(a["op"] == "st" for a in stores)
    assert len(loads) + len(stores) == len(rep.accesses)
    assert loads == [a for a in rep.accesses if a["op"] == "ld"]
    # stride 2: the traced warp's load touches 8 sectors, its store 4
    assert loads[0]["sectors"] == 8 and stores[0]["sectors"] == 4


def test_filters_by_array_and_space():
    rep = _strided()
    (ld,) = rep.accesses_of(array="a")
    assert ld["op"] == "ld" and ld["space"] == "global"
    assert rep.accesses_of(space="shared") == []
    assert rep.accesses_of(array="no_such_array") == []
    assert rep.accesses_of() == list(rep.accesses)


def test_bad_space_or_op_is_named():
    rep = _strided()
    with pytest.raises(ValueError, match="space='local'"):
        rep.accesses_of(space="local")
    with pytest.raises(ValueError, match="op='load'"):
        rep.accesses_of(op="load")
