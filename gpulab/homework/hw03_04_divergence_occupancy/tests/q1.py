from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [1]

@test_case(points=None, hidden=False)
def test_q1_form(parity_scale):
    assert hasattr(parity_scale, 'py_func'), 'parity_scale should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, dtype=np.float32)
    gpulab.launch(parity_scale, 1, 128, out, x)
    want = np.where(np.arange(64) % 2 == 0, 2 * x, x + 1)
    np.testing.assert_allclose(out, want)

