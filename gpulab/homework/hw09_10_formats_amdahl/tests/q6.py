from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = [1]

@test_case(points=None, hidden=False)
def test_q6_form(load_a):
    assert hasattr(load_a, 'py_func'), 'load_a should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    frag = np.zeros((1, 1, 32, 8), dtype=np.float32)
    gpulab.launch(load_a, (1, 1), 32, frag, a)
    np.testing.assert_array_equal(frag[0, 0, 0], [0, 1, 128, 129, 8, 9, 136, 137])

