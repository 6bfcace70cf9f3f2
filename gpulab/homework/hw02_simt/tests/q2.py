from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [1]

@test_case(points=None, hidden=False)
def test_q2_form(saxpy):
    assert hasattr(saxpy, 'py_func'), 'saxpy should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    x = np.arange(128, dtype=np.float32)
    y = np.ones(128, dtype=np.float32)
    out = np.zeros(128, dtype=np.float32)
    gpulab.launch(saxpy, 1, 128, out, np.float32(2.0), x, y)
    np.testing.assert_allclose(out, 2 * x + 1)

