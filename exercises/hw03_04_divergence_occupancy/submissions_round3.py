"""Round 3 (issue 26): unseen submissions for hw03_04_divergence_occupancy, written from the
questions' text (format: exercises/hw02_simt/submissions_round3.py)."""

EQ_EIGHT = """
class Whole(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

def register_blocks(threads, registers):
    return Whole(1)
"""

# ignores the 4 sub-partitions: divides the whole file by the rounded per-warp allocation
NO_SUBPARTITIONS = """
def register_blocks(threads, registers):
    warps = (threads + 31) // 32
    per_warp = ((32 * registers + 255) // 256) * 256
    return (65536 // per_warp) // warps
"""

# asks the library instead of writing the rule
ORACLE = """
from gpulab.models import occupancy as _occ

def register_blocks(threads, registers):
    return int(_occ.occupancy(threads, registers, 0, arch="sm_90").limits["registers"])
"""

# correct: a lookup by division written with divmod and numpy integers
DIVMOD_STYLE = """
def register_blocks(threads, registers):
    warps, rest = divmod(int(threads), 32)
    warps += rest > 0
    units, part = divmod(32 * int(registers), 256)
    per_warp = (units + (part > 0)) * 256
    return int(np.int32(16384 // per_warp) * 4 // warps)
"""

# correct: select by multiplication with a boolean turned into float
BOOL_SELECT = """
@cuda.jit
def parity_scale(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        odd = (i % 2) == 1
        v = x[i]
        out[i] = v + v * (1.0 - odd) + odd * 1.0
"""

# wrong: computes both cases but still branches on parity to store
BRANCHY_STORE = """
@cuda.jit
def parity_scale(out, x):
    i = cuda.grid(1)
    if i < out.shape[0]:
        a = 2 * x[i]
        b = x[i] + 1
        if i & 1:
            out[i] = b
        else:
            out[i] = a
"""

ROUND3 = {
    "count_equal_to_anything": {
        "kind": "hostile",
        "what": "register_blocks returns an int subclass equal to everything (value 1)",
        "replace": {"def register_blocks": EQ_EIGHT},
        "questions": ["q2"],
    },
    "registers_without_subpartitions": {
        "kind": "wrong",
        "what": "65536 // rounded per-warp registers, ignoring that a warp's registers come from one quarter",
        "replace": {"def register_blocks": NO_SUBPARTITIONS},
        "questions": ["q2"],
    },
    "registers_by_the_library": {
        "kind": "hostile",
        "what": "register_blocks answered by gpulab.models.occupancy (an oracle the question does not allow)",
        "replace": {"def register_blocks": ORACLE},
        "questions": ["q2"],
    },
    "registers_divmod_style": {
        "kind": "correct",
        "what": "divmod and numpy integers",
        "replace": {"def register_blocks": DIVMOD_STYLE},
        "questions": ["q2"],
    },
    "parity_bool_arithmetic": {
        "kind": "correct",
        "what": "select by arithmetic on a bool",
        "replace": {"def parity_scale": BOOL_SELECT},
        "questions": ["q1"],
    },
    "parity_branch_on_store": {
        "kind": "wrong",
        "what": "both values computed, but the store still branches on i & 1",
        "replace": {"def parity_scale": BRANCHY_STORE},
        "questions": ["q1"],
    },
    "budget_not_rounded": {
        "kind": "wrong",
        "what": "registers 42 = floor(65536 / (48 warps * 32)), the allocation unit forgotten",
        "replace": {
            "budget_answer =": 'budget_answer = {"arch": "sm_90", "threads": 256, "shared": 0, "registers": 42}'
        },
        "questions": ["q3"],
    },
    "efficiency_as_percentage": {
        "kind": "wrong",
        "what": "efficiency = 50 where the question asks for a fraction",
        "replace": {"time_ratio =": "time_ratio = 2.0\nefficiency = 50"},
        "questions": ["q4"],
    },
}
