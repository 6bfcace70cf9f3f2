from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = [0]

@test_case(points=None, hidden=False)
def test_q4_form(time_ratio, efficiency):
    from gpulab.checks.answers import as_float
    r, e = (as_float(time_ratio), as_float(efficiency))
    assert r is not None and e is not None, 'set time_ratio and efficiency to numbers'
    assert 0 <= e <= 1, f'efficiency = {e:g}: give it as a fraction between 0 and 1 (50 % is 0.5)'

