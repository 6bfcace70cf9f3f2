from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = [1]

@test_case(points=None, hidden=False)
def test_q7_form(copy_kernel, copy_grid):
    assert hasattr(copy_kernel, 'py_func'), 'copy_kernel should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    from gpulab.checks.answers import as_int
    g = as_int(copy_grid(1024))
    assert g is not None and g >= 1, f'copy_grid(1024) returned {copy_grid(1024)!r}; a grid size is a positive int'
    a = np.arange(1024, dtype=np.float32)
    out = np.zeros_like(a)
    gpulab.launch(copy_kernel, int(g), 256, out, a)
    np.testing.assert_array_equal(out, a)

