from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [1]

@test_case(points=None, hidden=False)
def test_q2_form(warp_reduce):
    assert hasattr(warp_reduce, 'py_func'), 'warp_reduce should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    x = np.ones(64, dtype=np.float32)
    out = np.zeros(2, dtype=np.float32)
    gpulab.launch(warp_reduce, 1, 64, x, out)
    np.testing.assert_allclose(out, [32.0, 32.0])

