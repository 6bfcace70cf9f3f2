from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [1]

@test_case(points=None, hidden=False)
def test_q1_form(block_sum):
    assert hasattr(block_sum, 'py_func'), 'block_sum should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    x = np.ones(256, dtype=np.float32)
    out = np.zeros(2, dtype=np.float32)
    gpulab.launch(block_sum, 2, 128, x, out)
    np.testing.assert_allclose(out, [128.0, 128.0])

