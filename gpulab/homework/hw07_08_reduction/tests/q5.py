from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = [1]

@test_case(points=None, hidden=False)
def test_q5_form(tree_sum):
    assert hasattr(tree_sum, 'py_func'), 'tree_sum should be a kernel: decorate it with @cuda.jit'
    import numpy as np, gpulab
    values = np.arange(512, dtype=np.float32)
    partial = np.zeros(2, dtype=np.float32)
    gpulab.launch(tree_sum, 2, 256, partial, values)
    np.testing.assert_allclose(partial, [values[:256].sum(), values[256:].sum()])

