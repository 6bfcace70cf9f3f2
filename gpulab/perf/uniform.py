"""Which global atomics a warp sends to L2 as one operation: a static look at the kernel.

Measured on the H200 (``benchmarks/instruction_costs.py``, results/instruction_costs.json): an
integer ``atomic.add`` whose address the compiler can prove is the same for every lane costs
one L2 operation per warp instruction, for 1 or 32 active lanes and for a constant, a
``blockIdx``-derived or a loaded-from-a-uniform-address index alike: the compiler combines the
warp's values first (warp-aggregated atomics, done automatically by NVIDIA's compiler since
CUDA 9 {cite}`nvidia-warp-aggregated-atomics`). When the lanes' addresses are equal only at run
time (a histogram of equal values), every lane is its own operation, and float adds are never
combined (it would change the order of the sum). Only ``add`` was measured; the other integer
reductions PTX ``red`` offers (min, max, and, or, xor) are assumed to behave alike.

The analysis here: an expression is *uniform* when it is built from literals, the kernel's
parameters, module globals, ``blockIdx``/``blockDim``/``gridDim``, array shapes, loads at
uniform indices and local variables every assignment of which is uniform and not under a
lane-dependent branch. Anything else (``threadIdx``, ``cuda.grid``, ``laneid``, a value loaded
per lane) is not.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

AGGREGATED_OPS = frozenset({"add", "sub", "max", "min", "and_", "or_", "xor"})
_UNIFORM_DIMS = frozenset({"blockIdx", "blockDim", "gridDim"})
_UNIFORM_ATTRS = frozenset({"shape", "size", "ndim", "warpsize"})
_PURE_CALLS = frozenset(
    {"range", "min", "max", "abs", "int", "float", "int32", "int64", "uint32", "float32", "float64"}
)


def _atomic_op(call):
    """'add' for ``cuda.atomic.add(...)`` / ``atomic.add(...)``, else None."""
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Attribute, ast.Name)):
        owner = f.value.attr if isinstance(f.value, ast.Attribute) else f.value.id
        if owner == "atomic":
            return f.attr
    return None


class _Uniformity:
    def __init__(self, fn_node):
        self.params = {a.arg for a in fn_node.args.args}
        self.assigns = {}  # local name -> [(value, guards: the branch conditions around it)]
        self._collect(fn_node.body, ())
        self.local_uniform = dict.fromkeys(self.assigns, True)
        changed = True
        while changed:  # optimistic start, then drop names until nothing changes
            changed = False
            for name, uses in self.assigns.items():
                u = all(self.expr(v) and all(self.expr(g) for g in guards) for v, guards in uses)
                if u != self.local_uniform[name]:
                    self.local_uniform[name] = u
                    changed = True

    def _targets(self, target, value, guards):
        if isinstance(target, ast.Name):
            self.assigns.setdefault(target.id, []).append((value, guards))
        elif isinstance(target, ast.Tuple):
            for t in target.elts:  # unpacking: uniform only if the whole value is
                self._targets(t, value, guards)

    def _collect(self, body, guards):
        for st in body:
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    self._targets(t, st.value, guards)
            elif isinstance(st, ast.AugAssign):
                self._targets(st.target, ast.BinOp(left=st.target, op=ast.Add(), right=st.value), guards)
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                self._targets(st.target, st.value, guards)
            elif isinstance(st, ast.For):
                self._targets(st.target, st.iter, guards)
                self._collect(st.body + st.orelse, guards)
            elif isinstance(st, (ast.If, ast.While)):
                self._collect(st.body + st.orelse, guards + (st.test,))
            elif isinstance(st, ast.With):
                self._collect(st.body, guards)

    def expr(self, e) -> bool:
        if isinstance(e, ast.Constant):
            return True
        if isinstance(e, ast.Name):
            if e.id in self.params:
                return True
            if e.id in self.assigns:
                return self.local_uniform.get(e.id, True)
            return True  # a module global: the same for every thread
        if isinstance(e, ast.Attribute):
            if e.attr in _UNIFORM_ATTRS:
                return True
            if isinstance(e.value, ast.Attribute) and e.value.attr in _UNIFORM_DIMS:
                return True
            return False  # threadIdx.x, laneid, ...
        if isinstance(e, ast.Subscript):
            return self.expr(e.value) and self.expr(e.slice)
        if isinstance(e, (ast.Tuple, ast.List)):
            return all(self.expr(x) for x in e.elts)
        if isinstance(e, ast.BinOp):
            return self.expr(e.left) and self.expr(e.right)
        if isinstance(e, ast.UnaryOp):
            return self.expr(e.operand)
        if isinstance(e, ast.BoolOp):
            return all(self.expr(v) for v in e.values)
        if isinstance(e, ast.Compare):
            return self.expr(e.left) and all(self.expr(c) for c in e.comparators)
        if isinstance(e, ast.IfExp):
            return self.expr(e.test) and self.expr(e.body) and self.expr(e.orelse)
        if isinstance(e, ast.Call):
            name = e.func.attr if isinstance(e.func, ast.Attribute) else getattr(e.func, "id", "")
            return name in _PURE_CALLS and all(self.expr(a) for a in e.args)
        return False


def aggregated_atomic_lines(fn) -> frozenset:
    """Absolute source lines of ``fn`` holding an integer-aggregatable atomic (AGGREGATED_OPS)
    whose index is warp-uniform at compile time (the dtype is checked when it runs)."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if node is None:
        return frozenset()
    first = fn.__code__.co_firstlineno - 1
    u = _Uniformity(node)
    lines = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and _atomic_op(n) in AGGREGATED_OPS and len(n.args) >= 2:
            if u.expr(n.args[1]):
                lines.add(first + n.lineno)
    return frozenset(lines)
