from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [1]

@test_case(points=None, hidden=False)
def test_q1_form(sgemm_1d):
    assert hasattr(sgemm_1d, 'py_func'), 'sgemm_1d should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    a = (np.arange(64 * 16).reshape(64, 16) % 7).astype(np.float32)
    b = (np.arange(16 * 64).reshape(16, 64) % 5).astype(np.float32)
    c = np.zeros((64, 64), dtype=np.float32)
    gpulab.launch(sgemm_1d, (1, 1), (64, 8), c, a, b)
    np.testing.assert_allclose(c, a @ b)

