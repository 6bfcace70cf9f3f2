from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [1]

@test_case(points=None, hidden=False)
def test_q3_form(warp_scan):
    assert hasattr(warp_scan, 'py_func'), 'warp_scan should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    x = np.ones(32, dtype=np.float32)
    out = np.zeros(32, dtype=np.float32)
    gpulab.launch(warp_scan, 1, 32, x, out)
    np.testing.assert_allclose(out, np.arange(1, 33))

