"""Prepared wrong submissions for this homework, built from the solution notebook by
tests/test_homework.py (format: see exercises/hw02_simt/submissions.py)."""

DIVERGENT = """
@cuda.jit
def parity_scale(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        if i % 2 == 0:
            out[i] = 2 * x[i]
        else:
            out[i] = x[i] + 1
"""

NO_ROUNDING = """
def register_blocks(threads, registers):
    warps = -(-threads // 32)
    return (65536 // (32 * registers)) // warps     # forgets the 256-register allocation unit
"""

SUBMISSIONS = {
    # right values, but half of each warp idles on each side: public passes, hidden fails
    "divergent_branch": {
        "group": "wrong_answers",
        "replace": {"def parity_scale": DIVERGENT},
        "scores": {"q1": 1},
    },
    "registers_not_rounded": {
        "group": "wrong_answers",
        "replace": {"def register_blocks": NO_ROUNDING},
        "scores": {"q2": 1},
    },
    "divergence_guess": {
        "group": "wrong_answers",
        "replace": {"time_ratio =": "time_ratio = 32.0\nefficiency = 1 / 32"},
        "scores": {"q4": 0},
    },
}


# ---- written as a class would (issue 14) -----------------------------------------------------

# an eagerly compiled kernel calling an eagerly compiled device function that selects by
# arithmetic; numpy integers; a float32 fraction
STYLE_PARITY = """
from numba import float32      # before the kernel: an explicit signature compiles at once

@cuda.jit("float32(float32, int64)", device=True)
def parity_value(v, i):
    odd = float32(i % 2)
    return (float32(1.0) - odd) * (float32(2.0) * v) + odd * (v + float32(1.0))

@cuda.jit("void(float32[:], float32[:])")
def parity_scale(out, x):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < out.shape[0]:
        out[i] = parity_value(x[i], i)
"""

STYLE_REGISTERS = """
def register_blocks(threads, registers):
    warps = int(np.ceil(threads / 32))
    per_warp = int(np.ceil(32 * registers / 256)) * 256
    return np.int64((65536 // 4 // per_warp) * 4 // warps)      # a numpy integer
"""

SUBMISSIONS.update(
    {
        "correct_styles": {
            "group": "chaos",
            "replace": {
                "def parity_scale": STYLE_PARITY,
                "def register_blocks": STYLE_REGISTERS,
                "budget_answer =": 'budget_answer = {"arch": "sm_90", "threads": np.int64(256), '
                '"shared": 0, "registers": np.int64(40)}',
                "time_ratio =": "time_ratio = np.float32(2.0)\nefficiency = np.float32(0.5)",
            },
            "scores": {},
        },
    }
)

# an integer that claims to equal everything: the public test and the hidden checks both compare
# the plain int it holds (gpulab.checks.answers, issue 26 point 5), so it earns nothing; the budget
# answer holds 99 registers behind the same trick
ALWAYS_EQUAL = """
class Blocks(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__

def register_blocks(threads, registers):
    return Blocks(0)
"""

SUBMISSIONS.update(
    {
        "always_equal": {
            "group": "hostile",
            "replace": {"def register_blocks": ALWAYS_EQUAL},
            "scores": {"q2": 0},
        },
        "always_equal_budget": {
            "group": "hostile",
            "replace": {
                "budget_answer =": 'budget_answer = {"arch": "sm_90", "threads": 256, '
                '"shared": 0, "registers": Blocks(99)}'
            },
            "scores": {"q3": 0},
        },
    }
)
