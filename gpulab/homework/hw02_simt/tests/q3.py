from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [1]

@test_case(points=None, hidden=False)
def test_q3_form(invert):
    assert hasattr(invert, 'py_func'), 'invert should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    img = np.full((8, 8, 4), 0.25, dtype=np.float32)
    out = np.zeros_like(img)
    gpulab.launch(invert, (1, 1), (8, 8), out, img, np.float32(1.0))
    np.testing.assert_allclose(out[..., :3], 0.75, atol=1e-06)
    np.testing.assert_allclose(out[..., 3], 0.25, atol=1e-06)

