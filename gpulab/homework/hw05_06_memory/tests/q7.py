from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = [1]

@test_case(points=None, hidden=False)
def test_q7_form(copy_kernel, copy_grid):
    assert hasattr(copy_kernel, 'py_func'), 'copy_kernel should be a kernel: decorate it with @cuda.jit'
    import numbers
    import numpy as np, gpulab
    g = copy_grid(1024)
    assert isinstance(g, numbers.Integral) and (not isinstance(g, bool)) and (g >= 1), f'copy_grid(1024) returned {g!r}; a grid size is a positive int'
    a = np.arange(1024, dtype=np.float32)
    out = np.zeros_like(a)
    gpulab.launch(copy_kernel, int(g), 256, out, a)
    np.testing.assert_array_equal(out, a)

