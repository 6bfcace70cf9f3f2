from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = [1]

@test_case(points=None, hidden=False)
def test_q4_form(block_answer):
    assert isinstance(block_answer, dict), "block_answer should be a dict like the explorer's"
    for key in ('width', 'height', 'block'):
        assert key in block_answer, f'block_answer needs the key {key!r}'
    from gpulab.checks.answers import as_whole
    size = (as_whole(block_answer['width']), as_whole(block_answer['height']))
    assert size == (100, 60), 'use a 100 x 60 image'
    block = tuple((as_whole(b) for b in block_answer['block']))
    assert len(block) == 2 and None not in block, 'block should be (bx, by), two whole numbers'

