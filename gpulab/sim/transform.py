"""Rewrite a kernel's Python source into warp-lockstep, vectorised form.

Every variable becomes a value per lane (a numpy array over all lanes of the launch, or a
plain scalar while it is the same in every lane). Control flow becomes masked execution:
``if`` narrows the active mask and runs both sides one after the other; loops run while any
lane is still looping; ``break``/``continue``/``return`` take lanes out of the mask until the
construct they leave ends. All of that is done by calls into the runtime context ``__ctx``,
whose method names are the constants of :mod:`gpulab.sim.protocol` (the one list of them).
``show_transformed(kernel)`` prints the rewritten code.
"""

import ast
import inspect
import textwrap

from ..errors import UnsupportedFeature
from .jitted import python_function
from .protocol import CTX, ESCAPES, FRAME, RESULT_UNUSED, TEMP_PREFIX, UNDEF, Runtime


def _call(name, *args):
    """``__ctx.<name>(*args)``: a call into the runtime (``name`` from ``protocol.Runtime``)."""
    return ast.Call(
        func=ast.Attribute(value=ast.Name(CTX, ast.Load()), attr=name, ctx=ast.Load()),
        args=list(args),
        keywords=[],
    )


def _expr_stmt(name, *args):
    """The runtime call ``__ctx.<name>(*args)`` as a statement."""
    return ast.Expr(_call(name, *args))


def _lambda(body):
    """``lambda: body``: defers an operand so the runtime evaluates it under a narrowed mask."""
    return ast.Lambda(
        args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
        ),
        body=body,
    )


def _assigned_names(fn):
    """Local names a function assigns (so they can start as UNDEF)."""
    names = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    params = {a.arg for a in fn.args.args}
    return sorted(names - params)


class _Rewriter(ast.NodeTransformer):
    """Turns one kernel's AST into masked form, statement by statement."""

    def __init__(self, filename, lines, kernel=None):
        self.filename, self.lines, self.kernel = filename, lines, kernel
        self.tmp = 0
        self.loop_depth = 0

    def _new(self, base):
        self.tmp += 1
        return f"{TEMP_PREFIX}{base}{self.tmp}"

    def _unsupported(self, node, what):
        line = getattr(node, "lineno", None)
        src = self.lines.get(line, "")
        raise UnsupportedFeature(
            f"{what} is not supported by gpulab's simulator.",
            kernel=self.kernel,
            filename=self.filename,
            line=line,
            source=src,
            hint="rewrite it with if/for/while, arrays and scalars "
            "(the subset of Python that numba.cuda compiles).",
        )

    # -- expressions -------------------------------------------------------------------
    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = Runtime.LAND if isinstance(node.op, ast.And) else Runtime.LOR
        expr = node.values[0]
        for value in node.values[1:]:
            expr = _call(name, expr, _lambda(value))
        return ast.copy_location(expr, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call(Runtime.LNOT, node.operand), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(
            _call(Runtime.IFEXP, node.test, _lambda(node.body), _lambda(node.orelse)), node
        )

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        # a < b < c  ->  land(a < b, lambda: b < c)  (b evaluated twice: kernels keep it pure)
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(ast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        expr = parts[0]
        for p in parts[1:]:
            expr = _call(Runtime.LAND, expr, _lambda(p))
        return ast.copy_location(expr, node)

    def visit_Constant(self, node):
        # numba types int literals as int64 and float literals as float64
        if type(node.value) is float:
            return ast.copy_location(_call(Runtime.F64, node), node)
        return node

    def visit_Call(self, node):
        self._check_array_shape(node)  # before the children are rewritten (64 + 4 stays literal)
        self.generic_visit(node)
        return node

    def _check_array_shape(self, node):
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "array"
            and isinstance(f.value, ast.Attribute)
            and f.value.attr in ("shared", "local")
        ):
            shape = (
                node.args[0]
                if node.args
                else next((k.value for k in node.keywords if k.arg == "shape"), None)
            )
            if shape is not None and not _is_constant_shape(shape):
                line = getattr(node, "lineno", None)
                raise UnsupportedFeature(
                    f"the shape of cuda.{f.value.attr}.array must be a compile-time constant for "
                    f"numba: an int literal, a global constant, or a tuple of those.",
                    kernel=self.kernel,
                    filename=self.filename,
                    line=line,
                    source=self.lines.get(line),
                    hint="compute it at module level, e.g. TILE_PAD = TILE + 1, and use (TILE, TILE_PAD).",
                )

    def visit_Subscript(self, node):
        """``a[-1]``: a literal negative index counts from the end, as numba compiles it."""
        self.generic_visit(node)
        idx = node.slice
        if isinstance(idx, ast.Tuple):
            idx.elts = [_from_end(e) for e in idx.elts]
        else:
            node.slice = _from_end(idx)
        if isinstance(node.ctx, ast.Load) and isinstance(node.slice, (ast.Name, ast.BinOp, ast.Call)):
            # t[i] of a tuple with a per-thread i (numba indexes homogeneous tuples at run time)
            return ast.copy_location(_call(Runtime.GETITEM, node.value, node.slice), node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        return ast.copy_location(_binop(node.left, node.op, node.right), node)

    def visit_List(self, node):
        if isinstance(node.ctx, ast.Load):
            self._containers(node, "a list")
        return self.generic_visit(node)

    def visit_Set(self, node):
        self._containers(node, "a set")

    def visit_Dict(self, node):
        self._containers(node, "a dict")

    def _containers(self, node, what):
        line = getattr(node, "lineno", None)
        raise UnsupportedFeature(
            f"building {what} inside a kernel is not supported by gpulab's simulator; numba.cuda's "
            f"documented Python subset for kernels has tuples and arrays, not lists, sets or dicts.",
            kernel=self.kernel,
            filename=self.filename,
            line=line,
            source=self.lines.get(line),
            hint="use a tuple for a few constants, e.g. (1, 2, 3), or cuda.local.array(n, dtype) "
            "for a per-thread buffer.",
        )

    def visit_Lambda(self, node):
        self._unsupported(node, "a lambda inside a kernel")

    def visit_ListComp(self, node):
        self._unsupported(node, "a list comprehension inside a kernel")

    visit_GeneratorExp = visit_SetComp = visit_DictComp = visit_ListComp

    # -- statements ----------------------------------------------------------------------
    def _stmts(self, body):
        out = []
        for stmt in body:
            res = self.visit(stmt)
            if isinstance(res, list):
                out.extend(res)
            elif res is not None:
                out.append(res)
        return out or [ast.Pass()]

    def _mark(self, node):
        return ast.copy_location(_expr_stmt(Runtime.STMT, ast.Constant(node.lineno)), node)

    def _assign_target(self, target, value_expr, out):
        if isinstance(target, ast.Name):
            out.append(
                ast.Assign(
                    targets=[ast.Name(target.id, ast.Store())],
                    value=_call(Runtime.SEL, value_expr, ast.Name(target.id, ast.Load())),
                )
            )
        elif isinstance(target, (ast.Tuple, ast.List)):
            tmp = self._new("t")
            out.append(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=value_expr))
            for k, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self._unsupported(elt, "starred assignment")
                self._assign_target(
                    elt,
                    ast.Subscript(value=ast.Name(tmp, ast.Load()), slice=ast.Constant(k), ctx=ast.Load()),
                    out,
                )
        elif isinstance(target, ast.Subscript):
            out.append(ast.Assign(targets=[target], value=value_expr))
        elif isinstance(target, ast.Attribute):  # a record's field (numba types the rest out)
            target.value = self.visit(target.value)
            out.append(ast.Assign(targets=[target], value=value_expr))
        else:
            self._unsupported(target, "this assignment target")

    def visit_Assign(self, node):
        node.value = self.visit(node.value)
        targets = [self.visit(t) if isinstance(t, ast.Subscript) else t for t in node.targets]
        out = [self._mark(node)]
        if len(targets) == 1:
            self._assign_target(targets[0], node.value, out)
        else:
            tmp = self._new("m")
            out.append(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=node.value))
            for t in targets:
                self._assign_target(t, ast.Name(tmp, ast.Load()), out)
        return [ast.copy_location(s, node) for s in out]

    def visit_AnnAssign(self, node):
        if node.value is None:
            return None
        return self.visit_Assign(ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node))

    def visit_AugAssign(self, node):
        node.value = self.visit(node.value)
        out = [self._mark(node)]
        target = node.target
        if isinstance(target, ast.Name):
            new = _binop(ast.Name(target.id, ast.Load()), node.op, node.value)
            self._assign_target(target, new, out)
        elif isinstance(target, ast.Subscript):
            target = self.visit(target)
            arr, idx = self._new("a"), self._new("i")
            out.append(ast.Assign(targets=[ast.Name(arr, ast.Store())], value=target.value))
            out.append(ast.Assign(targets=[ast.Name(idx, ast.Store())], value=target.slice))
            load = ast.Subscript(
                value=ast.Name(arr, ast.Load()), slice=ast.Name(idx, ast.Load()), ctx=ast.Load()
            )
            store = ast.Subscript(
                value=ast.Name(arr, ast.Load()), slice=ast.Name(idx, ast.Load()), ctx=ast.Store()
            )
            out.append(ast.Assign(targets=[store], value=_binop(load, node.op, node.value)))
        elif isinstance(target, ast.Attribute):  # a record's field: rec.n += 1
            obj = self._new("a")
            out.append(ast.Assign(targets=[ast.Name(obj, ast.Store())], value=self.visit(target.value)))
            load = ast.Attribute(value=ast.Name(obj, ast.Load()), attr=target.attr, ctx=ast.Load())
            store = ast.Attribute(value=ast.Name(obj, ast.Load()), attr=target.attr, ctx=ast.Store())
            out.append(ast.Assign(targets=[store], value=_binop(load, node.op, node.value)))
        else:
            self._unsupported(target, "this augmented assignment target")
        return [ast.copy_location(s, node) for s in out]

    def visit_Expr(self, node):
        node.value = self.visit(node.value)
        if isinstance(node.value, ast.Constant):  # docstrings and bare constants
            return None
        if _is_atomic_call(node.value):  # old value discarded: may compile to RED
            node.value.keywords.append(ast.keyword(arg=RESULT_UNUSED, value=ast.Constant(True)))
        return [self._mark(node), node]

    def visit_Pass(self, node):
        return None

    def visit_If(self, node):
        test = self.visit(node.test)
        body = self._stmts(node.body)
        orelse = self._stmts(node.orelse) if node.orelse else None
        out = [
            self._mark(node),
            ast.copy_location(_expr_stmt(Runtime.IF, test), node),
            ast.copy_location(ast.If(test=_call(Runtime.THEN), body=body, orelse=[]), node),
        ]
        if orelse is not None:
            out.append(ast.copy_location(ast.If(test=_call(Runtime.ELSE), body=orelse, orelse=[]), node))
        out.append(ast.copy_location(_expr_stmt(Runtime.ENDIF), node))
        return out

    def _loop_else(self, node):
        """A loop's ``else``: an ``if`` on the lanes that left it without ``break``."""
        if not node.orelse:
            return []
        return [
            ast.copy_location(_expr_stmt(Runtime.IF, _call(Runtime.NO_BREAK)), node),
            ast.copy_location(
                ast.If(test=_call(Runtime.THEN), body=self._stmts(node.orelse), orelse=[]), node
            ),
            ast.copy_location(_expr_stmt(Runtime.ENDIF), node),
        ]

    def visit_While(self, node):
        test = self.visit(node.test)
        self.loop_depth += 1
        body = self._stmts(node.body)
        self.loop_depth -= 1
        return [
            self._mark(node),
            ast.copy_location(_expr_stmt(Runtime.LOOP_ENTER), node),
            ast.copy_location(
                ast.While(test=_call(Runtime.LOOP_TEST, _lambda(test)), body=body, orelse=[]), node
            ),
            ast.copy_location(_expr_stmt(Runtime.LOOP_EXIT), node),
        ] + self._loop_else(node)

    def visit_For(self, node):
        it = self.visit(node.iter)
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and not it.keywords
        ):
            source = _call(Runtime.RANGE, *it.args)
        else:
            source = _call(Runtime.ITER, it)
        state = self._new("it")
        self.loop_depth += 1
        body = self._stmts(node.body)
        self.loop_depth -= 1
        assign = []
        self._assign_target(
            node.target,
            ast.Attribute(value=ast.Name(state, ast.Load()), attr="value", ctx=ast.Load()),
            assign,
        )
        return [
            self._mark(node),
            ast.copy_location(_expr_stmt(Runtime.LOOP_ENTER), node),
            ast.copy_location(ast.Assign(targets=[ast.Name(state, ast.Store())], value=source), node),
            ast.copy_location(
                ast.While(
                    test=_call(Runtime.LOOP_NEXT, ast.Name(state, ast.Load())), body=assign + body, orelse=[]
                ),
                node,
            ),
            ast.copy_location(_expr_stmt(Runtime.LOOP_EXIT), node),
        ] + self._loop_else(node)

    def _escape(self, node, which, jump, *args):
        """Take the active lanes out (``brk``/``cont``/``ret``), then leave the Python construct
        once no lane is left in it (``brk_done``/``cont_done``/``ret_done``)."""
        leave, done = ESCAPES[which]
        guard = ast.If(test=_call(done), body=[jump], orelse=[])
        return [
            self._mark(node),
            ast.copy_location(_expr_stmt(leave, *args), node),
            ast.copy_location(guard, node),
        ]

    def visit_Break(self, node):
        return self._escape(node, "break", ast.Break())

    def visit_Continue(self, node):
        return self._escape(node, "continue", ast.Continue())

    def visit_Return(self, node):
        value = self.visit(node.value) if node.value is not None else ast.Constant(None)
        return self._escape(node, "return", _fn_exit(), value)

    def visit_Assert(self, node):
        test = self.visit(node.test)
        return [self._mark(node), ast.copy_location(_expr_stmt(Runtime.ASSERT, test), node)]

    def visit_Raise(self, node):
        return [self._mark(node), ast.copy_location(_expr_stmt(Runtime.RAISE), node)]

    def _no(what):
        def visit(self, node):
            self._unsupported(node, what)

        return visit

    visit_With = _no("a with statement")
    visit_Try = _no("try/except")
    visit_Global = _no("global")
    visit_Nonlocal = _no("nonlocal")
    visit_ClassDef = _no("a class definition")
    visit_Import = _no("an import inside a kernel")
    visit_ImportFrom = visit_Import
    visit_Delete = _no("del")
    visit_Yield = _no("yield")
    visit_YieldFrom = visit_Yield
    visit_Await = _no("await")

    def visit_FunctionDef(self, node):
        self._unsupported(node, "a function defined inside a kernel")


def _binop(left, op, right):
    """``left <op> right`` as ``arith(left, "<Op>", right)``: numpy's rules for mixing uint64
    and int64 differ from numba's (``protocol.Runtime.ARITH``)."""
    return _call(Runtime.ARITH, left, ast.Constant(type(op).__name__), right)


def _from_end(node):
    """Wrap a literal negative int (``-1``) in ``from_end``; leave any other index alone."""
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return ast.copy_location(_call(Runtime.FROM_END, node), node)
    return node


def _fn_exit():
    """``return __ctx.fn_exit(__frame)``: leave the function with its per-lane value."""
    return ast.Return(value=_call(Runtime.FN_EXIT, ast.Name(FRAME, ast.Load())))


def _is_atomic_call(node):
    """True for a call written ``<something>.atomic.<op>(...)`` (``cuda.atomic.add(...)``)."""
    f = node.func if isinstance(node, ast.Call) else None
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and f.value.attr == "atomic"


def _is_constant_shape(node):
    """What numba accepts as a shared/local array shape: literals and global names."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == Runtime.F64:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.Tuple):
        return all(_is_constant_shape(e) for e in node.elts)
    return _literal_int(node)


def _literal_int(node):
    """Arithmetic on int literals only (``64 + 4``): CPython folds it to a constant before numba
    reads the bytecode, so numba accepts it; ``TILE + 1`` reads a name and is refused."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _literal_int(node.operand)
    if isinstance(node, ast.BinOp):
        return _literal_int(node.left) and _literal_int(node.right)
    return False


def source_of(fn):
    """Source text, file name and first line of a Python function."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise UnsupportedFeature(
            f"gpulab cannot read the source of `{getattr(fn, '__name__', fn)}` ({exc}).",
            hint="define the kernel in a file or a notebook cell, not with exec().",
        ) from None
    return textwrap.dedent("".join(lines)), inspect.getsourcefile(fn) or "<kernel>", first


def rewrite(fn):
    """The rewritten module AST of ``fn``, its file name and its source lines by number."""
    src, filename, first = source_of(fn)
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise UnsupportedFeature(f"`{fn.__name__}` is not a plain function definition.")
    ast.increment_lineno(tree, first - 1)
    lines = {first + k: text for k, text in enumerate(src.splitlines())}
    fdef.decorator_list = []
    args = fdef.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise UnsupportedFeature(
            f"`{fn.__name__}` has *args/**kwargs/keyword-only parameters.",
            filename=filename,
            line=fdef.lineno,
            source=lines.get(fdef.lineno),
        )
    rw = _Rewriter(filename, lines, fn.__name__)
    locals_ = _assigned_names(fdef)
    body = rw._stmts(fdef.body)
    prologue = [ast.Assign(targets=[ast.Name(FRAME, ast.Store())], value=_call(Runtime.FN_ENTER))]
    for name in locals_:
        prologue.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Name(UNDEF, ast.Load())))
    epilogue = [_fn_exit()]
    for stmt in prologue + epilogue:
        ast.copy_location(stmt, fdef)
    fdef.body = prologue + body + epilogue
    fdef.returns = None
    for a in args.args:
        a.annotation = None
    ast.fix_missing_locations(tree)
    return tree, filename, lines


def transform(fn):
    """Return (code object defining the vectorised function, its name, source lines by number)."""
    tree, filename, lines = rewrite(fn)
    code = compile(tree, filename, "exec")
    return code, tree.body[0].name, lines


def transformed_source(kernel):
    """The rewritten Python source of a kernel or device function, as the simulator runs it."""
    fn = python_function(kernel)
    if fn is None:
        raise UnsupportedFeature(f"{kernel!r} is not a numba.cuda kernel or a Python function.")
    tree, _, _ = rewrite(fn)
    return ast.unparse(tree)


def show_transformed(kernel):
    """Print the rewritten source of ``kernel``: what the simulator executes, call by call."""
    print(transformed_source(kernel))
