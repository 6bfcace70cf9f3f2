from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [1]

@test_case(points=None, hidden=False)
def test_q1_form(scale):
    assert hasattr(scale, 'py_func'), 'scale should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = np.zeros_like(a)
    gpulab.launch(scale, (2, 8), (32, 8), out, a, np.float32(3.0))
    np.testing.assert_allclose(out, 3 * a)

