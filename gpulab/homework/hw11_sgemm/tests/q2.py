from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [1]

@test_case(points=None, hidden=False)
def test_q2_form(ladder):
    from gpulab.checks.answers import as_number, as_text, as_whole
    steps = {'prefetch', 'unroll', 'unroll_u32'}
    factors = ('occupancy', 'instruction overhead', 'bank conflicts')
    assert isinstance(ladder, dict), 'ladder should be a dict (see the question)'
    for key in ('ffma_share', 'blocks_per_sm'):
        assert isinstance(ladder.get(key), dict) and set(ladder[key]) == steps, f'ladder[{key!r}] should map each of {sorted(steps)} to a number'
    shares = [as_number(v) for v in ladder['ffma_share'].values()]
    assert all((s is not None and 0 < s <= 1 for s in shares)), 'FFMA shares are fractions between 0 and 1 (57% is 0.57)'
    assert all((as_whole(v) is not None for v in ladder['blocks_per_sm'].values())), 'blocks_per_sm counts whole blocks'
    assert as_text(ladder.get('unroll_alone')) in factors, f'unroll_alone: one of {factors}'
    assert isinstance(ladder.get('uint32_fixed'), (list, tuple, set)) and all((as_text(f) in factors for f in ladder['uint32_fixed'])), f'uint32_fixed: a list of factors from {factors}'

