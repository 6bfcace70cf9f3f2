"""How many SASS instructions each source line is worth, and how much of its latency a warp
waits for: a static look at the kernel's Python source (no GPU compiler needed).

The simulator counts one instruction per executed statement; real code executes several per
statement (address arithmetic, loop counters, constants, branches). Each line gets a feature
vector (arithmetic operations with multiply-add fused, divisions, comparisons, memory accesses,
index dimensions, intrinsic calls, float literals, a branch), and a weight per feature turns it
into instructions. The weights in ``WEIGHTS`` were fitted (non-negative least squares) to
Nsight Compute's ``smsp__inst_executed.sum`` on the H200 for the "calibrate" kernels of
``benchmarks/perf_model.py``; the held-out kernels check them.

The latency side: inside one straight run of statements, a statement waits only for the
statements whose results it reads, so independent statements overlap (instruction-level
parallelism). Each line gets ``dep_factor`` = critical path / sum of latencies of its run.
"""

from __future__ import annotations

import ast
import linecache

import numpy as np

FEATURES = ("ops", "divmod", "cmp", "gmem", "smem", "index", "call", "const", "branch", "iter", "warp")

# Fitted by benchmarks/perf_model.py predict (perf_model.json["calibration"]["weights"]).
WEIGHTS = {
    "ops": 1.033,
    "divmod": 13.906,
    "cmp": 1.486,
    "gmem": 8.579,
    "smem": 2.489,
    "index": 1.414,
    "call": 0.756,
    "const": 0.236,
    "branch": 1.106,
    "iter": 5.019,
    "warp": 11.144,
}


# Warp instructions one call of a math function costs on the H200 (libdevice code, fast path),
# by precision: measured by benchmarks/instruction_costs.py (results/instruction_costs.json,
# "math_warp_instructions_per_call"; a test checks the two agree). The simulator charges them to
# the calling line when it runs the call (gpulab/perf/sample.py).
MATH_CALL_INSTRUCTIONS = {
    "sin": {"float32": 27.5, "float64": 41.2},
    "cos": {"float32": 28.5, "float64": 42.2},
    "tan": {"float32": 25.5, "float64": 72.4},
    "asin": {"float32": 22.8, "float64": 21.1},
    "acos": {"float32": 23.8, "float64": 70.9},
    "atan": {"float32": 18.2, "float64": 42.1},
    "sinh": {"float32": 23.6, "float64": 30.3},
    "cosh": {"float32": 15.3, "float64": 59.1},
    "tanh": {"float32": 15.5, "float64": 43.2},
    "exp": {"float32": 8.5, "float64": 27.6},
    "expm1": {"float32": 28.3, "float64": 63.0},
    "log": {"float32": 25.5, "float64": 81.2},
    "log1p": {"float32": 24.5, "float64": 52.8},
    "log2": {"float32": 27.2, "float64": 85.2},
    "log10": {"float32": 26.2, "float64": 85.2},
    "sqrt": {"float32": 10.0, "float64": 18.0},
    "fabs": {"float32": 0.0, "float64": 0.0},
    "erf": {"float32": 22.7, "float64": 101.3},
    "pow": {"float32": 75.6, "float64": 185.5},
    "atan2": {"float32": 34.1, "float64": 103.5},
    "hypot": {"float32": 24.0, "float64": 41.1},
    "fmod": {"float32": 27.7, "float64": 74.4},
    "copysign": {"float32": 1.0, "float64": 1.0},
}

_CAST_NAMES = {
    "float32",
    "float64",
    "int32",
    "int64",
    "uint32",
    "uint8",
    "float16",
    "int8",
    "float",
    "int",
    "bool",
}


class LineInfo:
    """Static facts about one source line: feature counts, loop body start, dependency factor."""

    def __init__(self, line, features, body_line=None, barrier=False):
        self.line = line
        self.features = features  # dict feature -> count (per execution)
        self.body_line = body_line  # first line of the loop body, for loop headers
        self.barrier = barrier
        self.dep_factor = 1.0
        self.unroll_trip = 1  # > 1 inside a loop the compiler unrolls
        self.load_depth = 1  # loads that wait for one another (x[idx[i]]: 2); 0 without any
        self.loop_header = None  # header line of the innermost loop holding this line

    def omega(self, weights=None):
        """SASS instructions per execution of this line from its source alone (memory
        instructions and loop iterations are added from the simulator's counts)."""
        w = WEIGHTS if weights is None else weights
        return sum(w[k] * v for k, v in self.features.items() if k in w)


def _own_expr(stmt):
    """The expressions a compound statement evaluates itself (not its body)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, ast.For):
        return [stmt.iter, stmt.target]
    if isinstance(stmt, (ast.FunctionDef, ast.With)):
        return []
    return [stmt]


def _features(stmt):
    f = dict.fromkeys(FEATURES, 0)
    barrier = False
    for expr in _own_expr(stmt):
        for node in ast.walk(expr):
            if isinstance(node, ast.BinOp):
                if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)) and not _pow2(node.right):
                    f["divmod"] += 1
                elif isinstance(node.op, (ast.Add, ast.Sub)) and any(
                    isinstance(s, ast.BinOp) and isinstance(s.op, ast.Mult) for s in (node.left, node.right)
                ):
                    pass  # fused into the multiply's FMA
                else:
                    f["ops"] += 1
            elif isinstance(node, ast.AugAssign):
                if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and not _pow2(node.value):
                    f["divmod"] += 1
                elif not (
                    isinstance(node.op, (ast.Add, ast.Sub))
                    and isinstance(node.value, ast.BinOp)
                    and isinstance(node.value.op, ast.Mult)
                ):
                    f["ops"] += 1  # acc += a * b is one FMA: the multiply counts it
            elif isinstance(node, ast.Compare):
                f["cmp"] += len(node.ops)
            elif isinstance(node, ast.BoolOp):
                f["cmp"] += len(node.values) - 1
            elif isinstance(node, ast.IfExp):
                f["cmp"] += 1
            elif isinstance(node, ast.Subscript):
                sl = node.slice
                dims = len(sl.elts) if isinstance(sl, ast.Tuple) else 1
                if not (isinstance(node.value, ast.Attribute) and node.value.attr == "shape"):
                    f["index"] += dims  # memory instructions themselves: from the counters
            elif isinstance(node, ast.Call):
                name = (
                    node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                )
                if name in ("syncthreads", "syncwarp"):
                    barrier = name == "syncthreads"
                    f["call"] += 1
                elif name not in _CAST_NAMES and name not in ("range", "grid", "gridsize"):
                    f["call"] += 1
                elif name in ("grid", "gridsize"):
                    f["ops"] += 2
            elif isinstance(node, ast.Constant) and isinstance(node.value, float):
                f["const"] += 1
    if isinstance(stmt, (ast.If, ast.While, ast.For)):
        f["branch"] += 1
    return f, barrier


def _load_depth(stmt):
    """The longest chain of subscripts whose index holds another subscript (``x[idx[i]]``: 2;
    ``a * x[i] + y[i]``: 1, the two loads are in flight together)."""

    def depth(n):
        if isinstance(n, ast.Subscript):
            if isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
                return 0
            return 1 + depth(n.slice)
        return max((depth(c) for c in ast.iter_child_nodes(n)), default=0)

    return max((depth(e) for e in _own_expr(stmt)), default=0)


def _pow2(node):
    """A literal power of two (x // 2, i % 32 compile to shifts and masks, not divisions)."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and node.value > 0
        and node.value & (node.value - 1) == 0
    )


def _names(expr_nodes, ctx_type):
    out = set()
    for e in expr_nodes:
        for n in ast.walk(e):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ctx_type):
                out.add(n.id)
    return out


def _reads_writes(stmt):
    if isinstance(stmt, (ast.If, ast.While, ast.For)):
        reads = _names([stmt], ast.Load)  # its body reads them too
        reads |= {
            n.target.id
            for n in ast.walk(stmt)
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
        }
        writes = set()
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                writes.add(n.id)
        return reads, writes
    reads = _names([stmt], ast.Load)
    writes = _names([stmt], ast.Store)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        reads.add(stmt.target.id)
    return reads, writes


def _const_int(node, glb):
    """True when ``node`` is an integer known at compile time (literal or module constant)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    if isinstance(node, ast.Name):
        v = glb.get(node.id)
        return isinstance(v, int) and not isinstance(v, bool)
    if isinstance(node, ast.UnaryOp):
        return _const_int(node.operand, glb)
    if isinstance(node, ast.BinOp):
        return _const_int(node.left, glb) and _const_int(node.right, glb)
    return False


def _unrolled(stmt, glb):
    """A ``for ... in range(constants)`` loop: the compiler unrolls it (no counter, no branch)."""
    it = stmt.iter
    return (
        isinstance(it, ast.Call)
        and getattr(it.func, "id", getattr(it.func, "attr", "")) == "range"
        and all(_const_int(a, glb) for a in it.args)
    )


def _trip(stmt, glb):
    """Trip count of an unrolled ``for ... in range(constants)`` loop (1 if it cannot tell)."""
    try:
        args = [
            eval(compile(ast.Expression(a), "<trip>", "eval"), {"__builtins__": {}}, dict(glb))
            for a in stmt.iter.args
        ]
        return max(1, len(range(*args)))
    except Exception:  # noqa: BLE001 - any doubt: no overlap assumed
        return 1


def analyse(filename: str, glb: dict | None = None) -> dict:
    """{absolute line: LineInfo} for every statement of the file holding the kernel's lines;
    ``glb``: the kernel's globals (to see loops over module constants, which are unrolled)."""
    glb = glb or {}
    src = "".join(linecache.getlines(filename))
    if not src:
        return {}
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return {}
    infos = {}

    def visit_body(body, unrolled=0, header=None):
        for stmt in body:
            f, barrier = _features(stmt)
            if unrolled:
                f["index"] = 0  # unrolled: addresses become immediate offsets
            body_line = None
            if isinstance(stmt, (ast.For, ast.While)) and stmt.body:
                body_line = stmt.body[0].lineno
                if isinstance(stmt, ast.For) and _unrolled(stmt, glb):
                    body_line = None
                    f["branch"] = 0
            if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                infos[stmt.lineno] = LineInfo(stmt.lineno, f, body_line, barrier)
                infos[stmt.lineno].unroll_trip = max(unrolled, 1)
                infos[stmt.lineno].load_depth = _load_depth(stmt)
                infos[stmt.lineno].loop_header = header
            inner = unrolled
            if isinstance(stmt, ast.For) and _unrolled(stmt, glb):
                inner = max(unrolled, _trip(stmt, glb))
            for field in ("body", "orelse"):
                sub = getattr(stmt, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    loop = isinstance(stmt, (ast.For, ast.While)) and field == "body"
                    visit_body(sub, inner, stmt.lineno if loop else header)

    visit_body(tree.body)
    return infos


def dependency_factors(filename: str, infos: dict, latency: dict) -> None:
    """Set each LineInfo.dep_factor from the critical path of its straight run of statements;
    ``latency`` maps line -> latency of one execution (seconds or cycles, any unit)."""
    src = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return

    def run(body):
        finish, ready, total = {}, {}, 0.0
        crit = 0.0
        for stmt in body:
            lat = latency.get(stmt.lineno, 0.0)
            reads, writes = _reads_writes(stmt)
            start = max([ready.get(n, 0.0) for n in reads] + [0.0])
            end = start + lat
            for n in writes:
                ready[n] = end
            finish[stmt.lineno] = end
            crit = max(crit, end)
            total += lat
        factor = crit / total if total > 0 else 1.0
        for stmt in body:
            if stmt.lineno in infos:
                infos[stmt.lineno].dep_factor = factor
        for stmt in body:
            for field in ("body", "orelse"):
                sub = getattr(stmt, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    run(sub)

    run(tree.body)


PRIOR = {
    "ops": 1.0,
    "divmod": 10.0,
    "cmp": 1.5,
    "gmem": 4.0,
    "smem": 2.0,
    "index": 1.0,
    "call": 2.0,
    "const": 0.5,
    "branch": 1.5,
    "iter": 4.0,
    "warp": 10.0,
}


def fit(A, b, prior=PRIOR, strength=0.2):
    """Non-negative weights with A w close to b and w close to ``prior`` (ridge toward a
    hand-counted prior, so features the data cannot tell apart keep plausible weights)."""
    w0 = np.array([prior[k] for k in FEATURES])
    lam = np.sqrt(strength) * np.eye(len(FEATURES)) / np.maximum(w0, 1e-9)
    return nnls(np.vstack([A, lam]), np.concatenate([b, lam @ w0]))


def nnls(A, b, iters=200):
    """Non-negative least squares min |Ax - b|, x >= 0 (active-set by repeated lstsq)."""
    A, b = np.asarray(A, float), np.asarray(b, float)
    free = np.ones(A.shape[1], dtype=bool)
    x = np.zeros(A.shape[1])
    for _ in range(iters):
        if not free.any():
            break
        sol, *_ = np.linalg.lstsq(A[:, free], b, rcond=None)
        if (sol >= 0).all():
            x[:] = 0
            x[free] = sol
            break
        idx = np.flatnonzero(free)
        free[idx[np.argmin(sol)]] = False
    return x
