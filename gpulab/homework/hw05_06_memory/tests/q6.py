from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = [1]

@test_case(points=None, hidden=False)
def test_q6_form(transpose):
    assert hasattr(transpose, 'py_func'), 'transpose should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros((32, 32), dtype=np.float32)
    gpulab.launch(transpose, (1, 1), (32, 8), out, a)
    np.testing.assert_array_equal(out, a.T)

