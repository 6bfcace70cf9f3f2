from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = [1]

@test_case(points=None, hidden=False)
def test_q5_form(matmul_tiled):
    assert hasattr(matmul_tiled, 'py_func'), 'matmul_tiled should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    a = (np.arange(256).reshape(16, 16) % 7).astype(np.float32)
    b = (np.arange(256).reshape(16, 16) % 5).astype(np.float32)
    c = np.zeros((16, 16), dtype=np.float32)
    gpulab.launch(matmul_tiled, (1, 1), (16, 16), c, a, b)
    np.testing.assert_allclose(c, a @ b)

