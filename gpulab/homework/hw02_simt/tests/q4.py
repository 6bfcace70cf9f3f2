from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = [1]

@test_case(points=None, hidden=False)
def test_q4_form(block_answer):
    assert isinstance(block_answer, dict), "block_answer should be a dict like the explorer's"
    for key in ('width', 'height', 'block'):
        assert key in block_answer, f'block_answer needs the key {key!r}'
    assert (block_answer['width'], block_answer['height']) == (100, 60), 'use a 100 x 60 image'
    assert len(tuple(block_answer['block'])) == 2, 'block should be (bx, by)'

