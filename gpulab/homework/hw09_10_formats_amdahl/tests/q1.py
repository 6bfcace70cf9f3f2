from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [1]

@test_case(points=None, hidden=False)
def test_q1_form(speedup):
    from gpulab.grading import timed
    s = timed(speedup, 10)(0.5, 2)
    assert s is not None, 'speedup returned None: not solved yet'
    assert isinstance(s, float) or hasattr(s, '__float__'), f'speedup(0.5, 2) returned {s!r}, not a number'
    assert 1.0 <= float(s) <= 2.0, f"speedup(0.5, 2) = {s}: between 1 and 2 processors' worth"

