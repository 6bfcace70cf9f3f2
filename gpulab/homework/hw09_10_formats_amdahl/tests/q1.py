from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [1]

@test_case(points=None, hidden=False)
def test_q1_form(speedup):
    from gpulab.grading import timed
    s = timed(speedup, 10)(0.5, 2)
    assert s is not None, 'speedup returned None: not solved yet'
    from gpulab.checks.answers import as_float
    v = as_float(s)
    assert v is not None, f'speedup(0.5, 2) returned {s!r}, not a number'
    assert 1.0 <= v <= 2.0, f"speedup(0.5, 2) = {v}: between 1 and 2 processors' worth"

