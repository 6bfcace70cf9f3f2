from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [1]

@test_case(points=None, hidden=False)
def test_q2_form(row_sums):
    assert hasattr(row_sums, 'py_func'), 'row_sums should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    a = np.ones((32, 32), dtype=np.float32)
    out = np.zeros(32, dtype=np.float32)
    gpulab.launch(row_sums, (1,), (32, 32), out, a)
    np.testing.assert_allclose(out, 32.0)

