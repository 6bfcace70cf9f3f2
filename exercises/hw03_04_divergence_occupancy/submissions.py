"""Prepared wrong submissions for this homework, built from the solution notebook by
tests/test_homework.py (format: see exercises/hw02_simt/submissions.py)."""

DIVERGENT = '''
@cuda.jit
def parity_scale(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        if i % 2 == 0:
            out[i] = 2 * x[i]
        else:
            out[i] = x[i] + 1
'''

NO_ROUNDING = '''
def register_blocks(threads, registers):
    warps = -(-threads // 32)
    return (65536 // (32 * registers)) // warps     # forgets the 256-register allocation unit
'''

SUBMISSIONS = {
    # right values, but half of each warp idles on each side: public passes, hidden fails
    "divergent_branch": {"group": "wrong_answers", "replace": {"def parity_scale": DIVERGENT}, "scores": {"q1": 1}},
    "registers_not_rounded": {"group": "wrong_answers", "replace": {"def register_blocks": NO_ROUNDING}, "scores": {"q2": 1}},
    "divergence_guess": {"group": "wrong_answers", "replace": {"time_ratio =": "time_ratio = 32.0\nefficiency = 1 / 32"},
                         "scores": {"q4": 0}},
}
