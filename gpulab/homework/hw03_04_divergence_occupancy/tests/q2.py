from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [1]

@test_case(points=None, hidden=False)
def test_q2_form(register_blocks):
    from gpulab.grading import timed
    r = timed(register_blocks, 10)(256, 32)
    assert r is not None, 'register_blocks returned None: not solved yet'
    from gpulab.checks.answers import as_whole
    v = as_whole(r)
    assert v is not None, f'register_blocks(256, 32) returned {r!r}, not a whole number'
    assert v == 8, f'register_blocks(256, 32) should be 8, got {v}'

