"""Round 3 (issue 26): unseen submissions for hw09_10_formats_amdahl, written from the questions'
text (format: exercises/hw02_simt/submissions_round3.py)."""

# every answer produced by gpulab: the models for q1, q2 and q5, the checkers as oracles for q3
# and q4 (try each candidate until the grader's own check says yes)
ORACLES = """
from gpulab.models import amdahl as _A, mma as _M
from gpulab.checks import amdahl as _CA, precision as _CP

speedup = _A.speedup

def estimate_f(p1, t1, p2, t2):
    fit = _A.fit_times([p1, p2], [t1, t2])
    return fit.parallel_s / (fit.serial_s + fit.parallel_s)

p_answer = next(p for p in (2 ** k for k in range(12)) if _CA.check_worth_buying(p))
_names = ["fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8"]
choice = next({"x": x, "w": w} for x in _names for w in _names
              if _CP.check_native_format_choice({"x": x, "w": w}))

_lane_of, _idx_of = _M.owner_map("C")
def c_owner(row, col):
    return int(_lane_of[row, col]), int(_idx_of[row, col])
"""

FLOOR_DIVISION = """
def speedup(f, p):
    return 1 / ((1 - f) + f // p)          # // where / was meant
"""

SERIAL_FROM_P2 = """
def estimate_f(p1, t1, p2, t2):
    parallel = (t1 - t2) / (1.0 / p1 - 1.0 / p2)
    serial = t1 - parallel / p2            # mixes the two runs
    return parallel / (serial + parallel)
"""

# a number that is close to anything it is compared with
SLIPPERY_FLOAT = """
class Slippery(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
    def __sub__(self, other):
        return 0.0
    def __rsub__(self, other):
        return 0.0
    def __abs__(self):
        return 0.0
    def __lt__(self, other):
        return True
    def __le__(self, other):
        return True
    def __gt__(self, other):
        return True
    def __ge__(self, other):
        return True

def speedup(f, p):
    return Slippery(1.5)
"""

TUPLE_EQ = """
class Pair(tuple):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = tuple.__hash__

def c_owner(row, col):
    return Pair((0, 0))
"""

SWAPPED_I = """
def c_owner(row, col):
    lane = 4 * (row % 8) + col // 2
    i = 2 * (col % 2) + (1 if row >= 8 else 0)      # the two bits of i swapped
    return lane, i
"""

LOAD_A_AXES = """
@cuda.jit
def load_a(frag, a):
    lane = cuda.threadIdx.x
    g, t = lane // 4, lane % 4
    r0, c0 = 16 * cuda.blockIdx.x, 16 * cuda.blockIdx.y      # block x taken as the tile row
    for i in range(8):
        row = g + 8 * ((i // 2) % 2)
        col = 2 * t + i % 2 + 8 * (i // 4)
        frag[cuda.blockIdx.y, cuda.blockIdx.x, lane, i] = a[r0 + row, c0 + col]
"""

LOAD_A_UNROLLED = """
@cuda.jit
def load_a(frag, a):
    lane = cuda.laneid
    by, bx = cuda.blockIdx.y, cuda.blockIdx.x
    r = 16 * by + (lane >> 2)
    c = 16 * bx + 2 * (lane & 3)
    frag[by, bx, lane, 0] = a[r, c]
    frag[by, bx, lane, 1] = a[r, c + 1]
    frag[by, bx, lane, 2] = a[r + 8, c]
    frag[by, bx, lane, 3] = a[r + 8, c + 1]
    frag[by, bx, lane, 4] = a[r, c + 8]
    frag[by, bx, lane, 5] = a[r, c + 9]
    frag[by, bx, lane, 6] = a[r + 8, c + 8]
    frag[by, bx, lane, 7] = a[r + 8, c + 9]
"""

# builtins.__import__ replaced (name from pieces): the hidden test's import of the checks gets a
# stand-in whose check passes
IMPORT_HOOK = """
def c_owner(row, col):
    return 0, 0

import builtins as _b, types as _ty
_orig = _b.__import__
class _Ok:
    message = ""
    def __bool__(self):
        return True
_fake = _ty.SimpleNamespace(check_c_owner=lambda *a, **k: _Ok())
def _hook(name, globals=None, locals=None, fromlist=(), level=0):
    mod = _orig(name, globals, locals, fromlist, level)
    if name == "gpulab.checks" and fromlist and "formats" in fromlist:
        return _ty.SimpleNamespace(formats=_fake)
    return mod
setattr(_b, "__imp" + "ort__", _hook)
"""

ROUND3 = {
    "answers_from_models_and_checkers": {
        "kind": "hostile",
        "what": "speedup/estimate_f/c_owner from gpulab.models; p_answer and choice searched with gpulab.checks",
        # the other answers' cells emptied first: the new cell holds their names too
        "replace": {
            "def estimate_f": "",
            "p_answer =": "",
            "choice =": "",
            "def c_owner": "",
            "def speedup": ORACLES,
        },
        "questions": ["q1", "q2", "q3", "q4", "q5"],
    },
    "speedup_floor_division": {
        "kind": "wrong",
        "what": "f // p",
        "replace": {"def speedup": FLOOR_DIVISION},
        "questions": ["q1"],
    },
    "estimate_f_mixed_runs": {
        "kind": "wrong",
        "what": "serial taken from t1 with p2's share",
        "replace": {"def estimate_f": SERIAL_FROM_P2},
        "questions": ["q2"],
    },
    "speedup_slippery_float": {
        "kind": "hostile",
        "what": "a float subclass equal to, within any tolerance of, and ordered both ways against anything",
        "replace": {"def speedup": SLIPPERY_FLOAT},
        "questions": ["q1"],
    },
    "p_not_a_power_of_two": {
        "kind": "wrong",
        "what": "p_answer = 20 (efficiency 0.51, but not a power of two)",
        "replace": {"p_answer =": "p_answer = 20"},
        "questions": ["q3"],
    },
    "fp8_times_fp16": {
        "kind": "wrong",
        "what": "x in FP8 E4M3, w in FP16: no instruction multiplies that pair",
        "replace": {"choice =": 'choice = {"x": "fp8_e4m3", "w": "fp16"}'},
        "questions": ["q4"],
    },
    "c_owner_index_bits_swapped": {
        "kind": "wrong",
        "what": "i = 2 * (col % 2) + (row >= 8)",
        "replace": {"def c_owner": SWAPPED_I},
        "questions": ["q5"],
    },
    "c_owner_tuple_equal_to_anything": {
        "kind": "hostile",
        "what": "c_owner returns a tuple subclass equal to everything",
        "replace": {"def c_owner": TUPLE_EQ},
        "questions": ["q5"],
    },
    "load_a_tile_axes_swapped": {
        "kind": "wrong",
        "what": "blockIdx.x taken as the tile row (right only for square tile grids)",
        "replace": {"def load_a": LOAD_A_AXES},
        "questions": ["q6"],
    },
    "load_a_unrolled": {
        "kind": "correct",
        "what": "eight unrolled loads with shifts and masks, cuda.laneid",
        "replace": {"def load_a": LOAD_A_UNROLLED},
        "questions": ["q6"],
    },
    "builtins_import_hook": {
        "kind": "hostile",
        "what": "builtins.__import__ replaced so the hidden test's `from gpulab.checks import formats` gets a stand-in",
        "replace": {"def c_owner": IMPORT_HOOK},
        "questions": ["q5"],
    },
}
