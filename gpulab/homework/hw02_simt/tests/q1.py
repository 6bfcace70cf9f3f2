from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [1]

@test_case(points=None, hidden=False)
def test_q1_form(blocks_for):
    from gpulab.grading import timed
    assert callable(blocks_for), 'define a function blocks_for(n, block)'
    r = timed(blocks_for, 10)(256, 128)
    assert r is not None, 'blocks_for returned None: not solved yet'
    from gpulab.checks.answers import as_int
    v = as_int(r)
    assert v is not None, f'blocks_for(256, 128) returned {r!r}; a grid size is an int'
    assert v == 2, f'blocks_for(256, 128) should be 2, got {v}'

