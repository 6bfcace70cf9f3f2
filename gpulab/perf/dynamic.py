"""Dynamic SASS counts: how many times each machine instruction runs, from the simulator's
per-line execution counts and the compiled code's structure.

The simulator counts, per Python line, warp executions E and thread executions T. ptxas and
LLVM reshape loops: a runtime-trip loop is unrolled u times plus a remainder loop, a constant
trip loop disappears into straight code. Each instruction runs as often as the SASS region it
sits in: the body of a back-edge loop runs (Python iterations / u) times, straight code once per
entry of the enclosing Python loop. Those region counts come from the simulator's E of the
loop's header (entries) and of its body (iterations), so the result is the executed count of
every instruction, and of each pipe, with the lanes the simulator saw active.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from dataclasses import dataclass

from .sass import load_waits

PAYLOAD = ("fp32", "fp64", "mufu", "lsu_global", "lsu_shared", "lsu_local")


@dataclass
class PyLoop:
    line: int  # header line
    end: int  # last line of the body
    body: int  # first line of the body
    parent: "PyLoop | None" = None
    const_trip: bool = False  # for ... in range(constants): the compiler may unroll it exactly
    is_for: bool = False  # a counted loop (a while loop's trip count is not known on entry)


def python_loops(fn):
    """The for/while loops of a kernel, with absolute line numbers."""
    return structure(fn)[0]


def structure(fn):
    """(loops, {line: line of the statement that holds it}, def line) of a kernel and of the
    device functions it calls from the same file (their lines are tagged in its SASS too)."""
    from .sass import device_functions

    loops, stmt_of, dl = _structure_one(fn)
    fname = getattr(fn, "py_func", fn).__code__.co_filename
    for d in device_functions(fn):
        if d.py_func.__code__.co_filename == fname:
            lp, so, _ = _structure_one(d.py_func)
            loops += lp
            for k, v in so.items():
                stmt_of.setdefault(k, v)
    return loops, stmt_of, dl


def _structure_one(fn):
    fn = getattr(fn, "py_func", fn)
    try:
        src, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return [], {}, None
    tree = ast.parse(textwrap.dedent("".join(src)))
    off = start - 1
    out = []
    stmt_of = {}
    fdef = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    for n in ast.walk(tree):
        if isinstance(n, ast.stmt) and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # a compound statement owns only its header lines; a simple one all of its lines
            last = n.body[0].lineno - 1 if hasattr(n, "body") and n.body else n.end_lineno
            for k in range(n.lineno, last + 1):
                stmt_of.setdefault(k + off, n.lineno + off)

    def walk(node, parent):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.For, ast.While)) and child.body:
                lp = PyLoop(child.lineno + off, child.end_lineno + off, child.body[0].lineno + off, parent)
                lp.const_trip = _const_range(child, fn.__globals__)
                lp.is_for = isinstance(child, ast.For)
                out.append(lp)
                walk(child, lp)
            else:
                walk(child, parent)

    walk(tree, None)
    return out, stmt_of, (fdef.lineno + off if fdef else None)


def _const_range(node, glb):
    """True for ``for x in range(a, b, c)`` whose arguments are literals or module-level ints."""
    it = getattr(node, "iter", None)
    if not (isinstance(it, ast.Call) and getattr(it.func, "id", getattr(it.func, "attr", "")) == "range"):
        return False

    def const(a):
        if isinstance(a, ast.Constant):
            return isinstance(a.value, int)
        if isinstance(a, ast.Name):
            return isinstance(glb.get(a.id), int)
        if isinstance(a, ast.BinOp):
            return const(a.left) and const(a.right)
        if isinstance(a, ast.UnaryOp):
            return const(a.operand)
        return False

    return all(const(a) for a in it.args)


def _call_blocks(insns):
    """{address: its slow CALL} of the instructions in basic blocks that call a slow-path
    subroutine (sass.Insn.slow_call: a 64-bit division or modulo, taken only when an operand
    does not fit in 32 bits; the slow paths of float division and math functions)."""
    lead = {insns[0].addr} if insns else set()
    for k, i in enumerate(insns):
        if i.target is not None:
            lead.add(i.target)
        if i.op in ("BRA", "BRX", "JMP", "EXIT", "RET", "CALL") and k + 1 < len(insns):
            lead.add(insns[k + 1].addr)
    out, block = {}, []

    def close(block):
        call = next((b for b in block if b.op == "CALL" and _slow(b)), None)
        if call is not None:
            out.update((b.addr, call) for b in block)

    for i in insns:
        if i.addr in lead and block:
            close(block)
            block = []
        block.append(i)
    close(block)
    return out


def _slow(i):
    # a pickled Insn of an older model has no callee: every call was a slow path then
    return getattr(i, "slow_call", True) if getattr(i, "callee", "") else True


def _chain(line, loops):
    """Loops whose body holds ``line``, innermost first (a header is in its parent's body)."""
    inside = [lp for lp in loops if lp.line < line <= lp.end]
    return sorted(inside, key=lambda lp: lp.end - lp.line)


def _innermost_region(addr, regions):
    best = None
    for r in regions:
        if r[0] <= addr <= r[1] and (best is None or r[1] - r[0] < best[1] - best[0]):
            best = r
    return best


@dataclass
class Dynamic:
    inst: float  # smsp__inst_executed.sum
    thread_inst: float  # smsp__thread_inst_executed.sum
    per_line: dict  # line -> warp instructions
    per_pipe: dict  # pipe -> warp instructions
    per_op: dict  # opcode -> warp instructions
    per_line_pipe: dict  # line -> {pipe: warp instructions}
    unroll: dict  # loop header line -> [unroll factor of each SASS loop mapped to it]
    load_waits: dict = None  # loop header line -> waits for global loads per trip of its main SASS loop
    cas_lines: frozenset = frozenset()  # lines whose atomics are compare-and-swap loops (ATOMS.CAS*)

    @property
    def threads_per_inst(self):
        return self.thread_inst / self.inst if self.inst else 0.0


def count(ks, E, T, nwarps, fn_structure, lanes_per_warp=32.0, wide_division=None):
    """Executed instructions of ``ks`` (sass.KernelSASS) given per-line warp executions ``E``
    and thread executions ``T`` (dicts line -> count, whole launch), ``nwarps`` warps and the
    kernel's ``structure(fn)``. Instructions of the def line run once per warp; those of a line
    the simulator never reached, never. ``wide_division`` (line -> warp operations whose 64-bit
    // or % has operands beyond 32 bits, from the simulator) says how often the calls into the
    64-bit division routine run, its body included; other slow-path calls count as not taken."""
    loops, stmt_of, _ = fn_structure
    L = {i.addr: stmt_of.get(i.line, i.line) for i in ks.insns}  # each instruction's statement
    regions = ks.loops
    region_of = {i.addr: _innermost_region(i.addr, regions) for i in ks.insns}
    chains = {}

    def chain(line):
        if line not in chains:
            chains[line] = _chain(line, loops)
        return chains[line]

    def e(line):
        return float(E.get(line, 0.0))

    # which Python loop each SASS loop belongs to: the innermost Python loop of most of its lines
    votes = {}
    for i in ks.insns:
        r = region_of[i.addr]
        if r is None:
            continue
        hdr = next((lp for lp in loops if lp.line == L[i.addr]), None)
        lp = hdr or (chain(L[i.addr])[0] if chain(L[i.addr]) else None)
        if lp is not None:
            v = votes.setdefault(r, {})
            v[lp.line] = v.get(lp.line, 0) + 1
    loop_of = {r: max(v, key=v.get) for r, v in votes.items()}
    # the back edge itself names its loop when it carries a loop header's line (code of an inner
    # loop peeled into an outer SASS loop would otherwise outvote the outer loop's own lines)
    headers = {lp.line for lp in loops}
    at = {i.addr: L[i.addr] for i in ks.insns}
    for r in regions:
        if at.get(r[1]) in headers:
            loop_of[r] = at[r[1]]
    by_loop = {}
    for r, ln in loop_of.items():
        by_loop.setdefault(ln, []).append(r)

    def trips(lp):
        entries = e(lp.line)
        return e(lp.body) / entries if entries else 0.0

    # unroll factor and executions of each SASS loop
    iters, unroll, remfrac, waits = {}, {}, {}, {}
    for ln, regs in by_loop.items():
        lp = next(p for p in loops if p.line == ln)

        def own(line):
            # a line of this loop's body, or of an inner loop the compiler unrolled away (no
            # SASS loop of its own): blur_naive's 9 taps of dx sit in the dy loop's SASS 4 rows
            # at a time, so they say how far the dy loop was unrolled
            ch = chain(line)
            if lp not in ch:
                return False
            return all(d.line not in by_loop for d in ch[: ch.index(lp)])

        body_lines = {L[i.addr] for i in ks.insns if L[i.addr] != ln and own(L[i.addr])}
        cnt = {r: {} for r in regs}  # per region: (line, opcode) -> static count
        for i in ks.insns:
            r = region_of[i.addr]
            if r in cnt and L[i.addr] in body_lines and i.pipe in PAYLOAD:
                key = (L[i.addr], i.op)
                cnt[r][key] = cnt[r].get(key, 0) + 1
        for r in cnt:  # an unrolled-away inner loop holds its trip count of copies per body copy
            for key in list(cnt[r]):
                ch = chain(key[0])
                inner = math.prod(trips(d) or 1.0 for d in ch[: ch.index(lp)])
                if inner > 1:
                    v = cnt[r][key] / inner
                    if abs(v - round(v)) < 1e-6 and round(v) >= 1:
                        cnt[r][key] = round(v)
                    else:
                        del cnt[r][key]
        t = trips(lp)
        u = {}
        if len(regs) > 1:
            lines = set.intersection(*(set(c) for c in cnt.values())) if cnt else set()
            for r in regs:
                ratios = sorted(cnt[r][l] / min(cnt[q][l] for q in regs) for l in lines)
                u[r] = max(1, round(ratios[len(ratios) // 2])) if ratios else 1
        else:
            # one SASS loop: a counted loop unrolled u times (its remainder as straight code
            # before it, or none for a constant trip) has every (line, opcode) u times; a while
            # loop is not unrolled (its trip count is unknown on entry)
            g = 0
            for v in (v for c in cnt.values() for v in c.values()):
                g = math.gcd(g, v)
            u[regs[0]] = g if lp.is_for and g > 1 and t >= g else 1
        main = max(regs, key=lambda r: u[r])
        entries = e(lp.line)
        iterations = e(lp.body)
        # an unrolled loop and its remainder split each entry's trips; copies of one loop (an
        # outer loop unrolled around it) share them evenly: the same code, once per copy
        mains = [r for r in regs if u[r] == u[main]]
        rest = [r for r in regs if u[r] != u[main]]
        if rest and entries:
            full = math.floor(t / u[main])
            for r in mains:
                iters[r] = entries * full / len(mains)
            left = entries * (t - full * u[main])
            for r in rest:
                iters[r] = left / max(1, u[r]) / len(rest)
        elif len(regs) == 1 and u[main] > 1 and entries:
            # runtime unrolling with the remainder as straight code before the loop: the loop
            # runs floor(t / u) times per entry, the u - 1 peeled copies t mod u times between them
            full = math.floor(t / u[main])
            iters[main] = entries * full
            # a constant trip count peels exactly its t mod u remaining copies, each run once
            remfrac[lp.line] = 1.0 if lp.const_trip else (t - full * u[main]) / (u[main] - 1)
        else:
            for r in regs:
                iters[r] = iterations / u[r] / len(regs)
        unroll[ln] = sorted(u.values(), reverse=True)
        waits[ln] = load_waits(ks.insns, *main)

    trip = {lp.line: trips(lp) for lp in loops}
    slow = _call_blocks(ks.insns)
    wide_division = wide_division or {}
    # each line's calls into the 64-bit division routine share its wide operations evenly
    wide_sites = {}
    for i in ks.insns:
        if i.op == "CALL" and not i.sub and getattr(i, "wide_division", False):
            wide_sites[L[i.addr]] = wide_sites.get(L[i.addr], 0) + 1
    per_call = {}  # address -> executions, of the kernel body's instructions
    inst = thr = 0.0
    per_line, per_pipe, per_op, per_line_pipe = {}, {}, {}, {}
    for i in ks.insns:
        ln = L[i.addr]
        r = region_of[i.addr]
        lp_r = next((p for p in loops if p.line == loop_of.get(r)), None) if r is not None else None
        lanes = T.get(ln, 0) / e(ln) if e(ln) else lanes_per_warp
        if i.sub:
            continue  # a called routine: counted below, as often as its main-path calls run
        if i.addr in slow:
            # a slow-path call and its block: taken by the warps the simulator saw need it (a
            # 64-bit division with wide operands), else as not entered
            c = slow[i.addr]
            w = L[c.addr]
            n = wide_division.get(w, 0.0) / wide_sites[w] if getattr(c, "wide_division", False) else 0.0
        elif ln not in E and ln not in stmt_of:
            n = float(nwarps)  # the def line and code the simulator does not see: once per warp
        elif lp_r is not None and r in iters:
            if ln == lp_r.line:  # loop control: once per trip around the SASS loop
                n = iters[r]
                lanes = T.get(lp_r.body, 0) / e(lp_r.body) if e(lp_r.body) else lanes
            elif lp_r in chain(ln):
                deeper = chain(ln)[: chain(ln).index(lp_r)]
                f = e(ln) / e(lp_r.body) if e(lp_r.body) else 0.0
                for d in deeper:
                    f = f / (trip[d.line] or 1.0) * remfrac.get(d.line, 1.0)
                n = iters[r] * f
            else:
                hdr = e(lp_r.line)
                n = iters[r] * (min(1.0, e(ln) / hdr) if hdr else 0.0)
        else:
            n = e(ln)
            for d in chain(ln):
                n = n / (trip[d.line] or 1.0) * remfrac.get(d.line, 1.0)
        per_call[i.addr] = n
        inst += n
        thr += n * lanes
        per_line[ln] = per_line.get(ln, 0.0) + n
        per_pipe[i.pipe] = per_pipe.get(i.pipe, 0.0) + n
        per_op[i.op] = per_op.get(i.op, 0.0) + n
        lp_ = per_line_pipe.setdefault(ln, {})
        lp_[i.pipe] = lp_.get(i.pipe, 0.0) + n
    # a main-path subroutine (libdevice's __internal_lgamma_pos) runs each of its instructions
    # once per call, charged to the calling line at its lanes: every instruction of its body is
    # counted, branches it skips included (an overcount where the body branches by argument range)
    # (only calls from the kernel body: a routine's own calls are not followed)
    ran = {}  # routine -> [(executions, line, lanes)] of each call
    for i in ks.insns:
        main = not _slow(i) and i.addr not in slow
        if (
            i.op == "CALL"
            and not i.sub
            and getattr(i, "callee", "")
            and (main or getattr(i, "wide_division", False))
        ):
            ln = L[i.addr]
            lanes = T.get(ln, 0) / e(ln) if e(ln) else lanes_per_warp
            ran.setdefault(i.callee, []).append((per_call.get(i.addr, 0.0), ln, lanes))
    for i in ks.insns:
        if not i.sub or i.func not in ran:
            continue
        for n, ln, lanes in ran[i.func]:
            inst += n
            thr += n * lanes
            per_line[ln] = per_line.get(ln, 0.0) + n
            per_pipe[i.pipe] = per_pipe.get(i.pipe, 0.0) + n
            per_op[i.op] = per_op.get(i.op, 0.0) + n
            lp_ = per_line_pipe.setdefault(ln, {})
            lp_[i.pipe] = lp_.get(i.pipe, 0.0) + n
    return Dynamic(
        inst,
        thr,
        per_line,
        per_pipe,
        per_op,
        per_line_pipe=per_line_pipe,
        unroll=unroll,
        load_waits=waits,
        cas_lines=cas_lines(ks.insns, L),
    )


def cas_lines(insns, stmt=None):
    """Statements whose shared-memory atomic is a compare-and-swap loop (ATOMS.CAS, ATOMS.CAST.SPIN):
    sm_90 has no shared float add, so ptxas loops LDS, FADD, CAS until the lane's swap succeeds;
    lanes of one address succeed one at a time."""
    stmt = stmt or {}
    return frozenset(stmt.get(i.addr, i.line) for i in insns if i.op == "ATOMS" and ".CAS" in i.mods)
