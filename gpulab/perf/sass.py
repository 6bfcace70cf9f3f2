"""The machine code a kernel will run, from this CPU: numba-cuda's PTX -> ptxas -> nvdisasm.

``compile_sass(fn, argtypes, arch="sm_90")`` returns the registers per thread ptxas allots (for the
PTX the GPU runs: without line info unless the kernel asks for it) and every SASS instruction tagged with its Python source line (``nvdisasm -g``): what the model
needs to count instructions exactly instead of guessing them from the source. It needs the
CUDA 13 compiler wheels (``pip install gpulab[sass]``: nvidia-cuda-nvcc, nvidia-nvvm,
nvidia-cuda-nvrtc, nvidia-cuda-nvdisasm; numba-cuda 0.30 emits PTX 9.0, which ptxas 12.x
refuses). Without them ``available()`` says why and the model falls back to its source-based
estimates (and its report says so).
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

ARCHS = {"sm_90": (9, 0), "sm_80": (8, 0), "sm_75": (7, 5)}
MIN_PTXAS = (13, 0)  # numba-cuda 0.30.4 writes `.version 9.0`
# Registers a launch is given when ptxas asks for fewer: on the H200 every one of 19 recorded
# kernels that ptxas compiles to 8-15 registers ran with launch__registers_per_thread = 16, and
# all 40 that ptxas gives >= 16 ran with exactly ptxas's count (benchmarks/perf_sass_check.py
# registers, against perf_model.json and perf_blind.json). Not measured on other GPUs.
MIN_LAUNCH_REGISTERS = {"sm_90": 16}

# pipe classes of SASS opcodes (the base opcode, before the first '.'); anything else: "alu"
PIPES = {
    "fp32": {
        "FFMA",
        "FADD",
        "FMUL",
        "FMNMX",
        "FSEL",
        "FSET",
        "FSETP",
        "FCHK",
        "FSWZADD",
        "HFMA2",
        "HADD2",
        "HMUL2",
    },
    "fp64": {"DFMA", "DADD", "DMUL", "DSETP", "DMNMX", "DSET"},
    "mufu": {"MUFU"},
    "conv": {"F2F", "F2I", "I2F", "F2IP", "I2FP", "FRND"},  # conversions: the XU/quarter-rate path
    "int_mad": {"IMAD", "IMADSP", "IMUL", "IDP", "IMNMX"},
    "lsu_global": {"LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "LDGSTS", "LDGDEPBAR", "CCTL"},
    "lsu_shared": {"LDS", "STS", "ATOMS", "LDSM"},
    "lsu_local": {"LDL", "STL"},
    "const": {"LDC", "ULDC"},
    "branch": {
        "BRA",
        "BRX",
        "JMP",
        "JMX",
        "CALL",
        "RET",
        "EXIT",
        "BSSY",
        "BSYNC",
        "WARPSYNC",
        "BREAK",
        "BMOV",
    },
    "barrier": {"BAR", "MEMBAR", "DEPBAR", "ERRBAR", "WARPGROUP"},
    "shuffle": {"SHFL", "VOTE", "VOTEU", "MATCH", "REDUX"},
    "tensor": {"HMMA", "IMMA", "DMMA", "HGMMA", "BMMA"},
    "uniform": {
        "UMOV",
        "UIADD3",
        "ULOP3",
        "USHF",
        "UIMAD",
        "USEL",
        "UISETP",
        "UFLO",
        "UPOPC",
        "S2UR",
        "R2UR",
    },
}
PIPE_OF = {op: pipe for pipe, ops in PIPES.items() for op in ops}

_INSN = re.compile(
    r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)\s*([^;]*);"
)
_LINE = re.compile(r'//## File "([^"]*)", line (\d+)')
_TARGET = re.compile(r"`\(\.L_x_(\d+)\)")
_LABEL = re.compile(r"^\.L_x_(\d+):")
_FUNC = re.compile(r"^\$?[A-Za-z_$][\w$.]*:$")  # a function's own label (a subroutine after the kernel)
_CALLEE = re.compile(r"`\((\$?[^)`]+)\)")
_SLOW_ROUTINE = re.compile(r"__cuda_sm\d+_|slowpath|mediumpath", re.I)
_WIDE_DIVISION = re.compile(r"__cuda_sm\d+_(div|rem)_[su]64")
_REGS = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


class SassUnavailable(RuntimeError):
    """The compiler wheels are missing or refuse the kernel: the model uses its estimates."""


@dataclass
class Insn:
    addr: int
    line: int  # Python source line in the kernel's file (0: none seen yet)
    op: str  # base opcode, e.g. "FFMA"
    mods: str  # ".WIDE.U32" etc.
    pred: str  # "@P0 " or ""
    operands: str
    target: int | None = None  # branch target address
    sub: bool = False  # inside a called subroutine (e.g. __internal ... div_s64), not the kernel body
    func: str = ""  # the subroutine's label ("" in the kernel body)
    callee: str = ""  # a CALL's target subroutine label

    @property
    def slow_call(self):
        """A CALL into a routine that runs only for rare operands: the 64-bit integer division and
        remainder, correctly rounded division and square root (__cuda_sm20_div_s64,
        __cuda_sm20_div_rn_f64_full, ...), the slow paths of argument reduction (names with
        slowpath or mediumpath). Any other routine (__internal_lgamma_pos, __internal_accurate_pow)
        is the function's main path, run on every call."""
        return bool(_SLOW_ROUTINE.search(self.callee))

    @property
    def wide_division(self):
        """A CALL into the 64-bit integer division or remainder routine: ptxas runs a 32-bit fast
        path and calls it for the lanes whose operands do not fit in 32 bits (the simulator knows
        which: sample.Recorder.wide_division)."""
        return bool(_WIDE_DIVISION.search(self.callee))

    @property
    def pipe(self):
        if self.op in ("IADD3", "IADD", "VIADD") and ".X" in self.mods:
            return "int64"  # the carry half of a 64-bit add
        if self.op == "IMAD" and (".WIDE" in self.mods or ".HI" in self.mods or ".X" in self.mods):
            return "int64"  # wide multiplies and the carry of 64-bit arithmetic
        return PIPE_OF.get(self.op, "alu")


@dataclass
class KernelSASS:
    """One kernel compiled for one architecture."""

    arch: str
    registers: int
    spill_bytes: int
    insns: list  # executable instructions (trailing padding dropped)
    filename: str
    ptxas_log: str = ""
    registers_lineinfo: int = 0  # ptxas's count for the PTX with line info (the tagged SASS's)
    loops: list = field(default_factory=list)  # (start addr, end addr) of each back-edge loop

    @property
    def launch_registers(self):
        """Registers per thread the launch gets (ptxas's count, raised to the GPU's floor)."""
        return max(self.registers, MIN_LAUNCH_REGISTERS.get(self.arch, 0))

    def by_line(self):
        """{line: {pipe: static count}}."""
        out = {}
        for i in self.insns:
            d = out.setdefault(i.line, {})
            d[i.pipe] = d.get(i.pipe, 0) + 1
        return out

    def opcode_counts(self):
        out = {}
        for i in self.insns:
            out[i.op] = out.get(i.op, 0) + 1
        return out


def _version(exe):
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


@functools.lru_cache(maxsize=1)
def tools():
    """(ptxas, nvdisasm) paths, or raise SassUnavailable saying what is missing."""
    cands = {"ptxas": [], "nvdisasm": []}
    env = os.environ.get("GPULAB_CUDA_BIN")
    try:
        import nvidia  # the namespace package of NVIDIA's wheels

        roots = list(nvidia.__path__)
    except ImportError:
        roots = []
    for name in cands:
        if env:
            cands[name].append(os.path.join(env, name))
        for r in roots:
            cands[name] += sorted(glob.glob(os.path.join(r, "cu1*", "bin", name)), reverse=True)
            cands[name] += glob.glob(os.path.join(r, "cuda_nvcc", "bin", name))
            cands[name] += glob.glob(os.path.join(r, "cuda_nvdisasm", "bin", name))
        w = shutil.which(name)
        if w:
            cands[name].append(w)
    found, seen = {}, {}
    for name, paths in cands.items():
        for p in paths:
            if os.path.isfile(p) and os.access(p, os.X_OK):
                v = _version(p)
                seen.setdefault(name, []).append(f"{p} ({'.'.join(map(str, v)) if v else '?'})")
                if name == "nvdisasm" or (v and v >= MIN_PTXAS):
                    found[name] = p
                    break
    missing = [n for n in cands if n not in found]
    if missing:
        raise SassUnavailable(
            f"no usable {' or '.join(missing)} (need ptxas >= {MIN_PTXAS[0]}.{MIN_PTXAS[1]} for numba-cuda's "
            f"PTX 9.0; seen: {seen or 'none'}). Install the compiler wheels: pip install 'gpulab[sass]'"
        )
    return found["ptxas"], found["nvdisasm"]


def available():
    """(True, "") when kernels can be compiled to SASS here, else (False, why not)."""
    try:
        tools()
        import numba.cuda  # noqa: F401
    except (SassUnavailable, ImportError) as e:
        return False, str(e)
    return True, ""


def argtypes_of(args):
    """numba types of launch arguments, as the dispatcher types them (numpy arrays: C layout)."""
    from numba import typeof

    out = []
    for a in args:
        try:
            out.append(typeof(a))
        except ValueError as e:
            raise SassUnavailable(f"cannot type launch argument {type(a).__name__}: {e}") from e
    return tuple(out)


def parse(text, filename):
    """Instructions of nvdisasm -g -c output, each tagged with its line in ``filename``."""
    insns, labels = [], {}
    line = 0
    in_sub, func = False, ""
    base = os.path.basename(filename)
    for raw in text.splitlines():
        m = _LINE.search(raw)
        if m:
            f = m.group(1)
            if f == filename or os.path.basename(f) == base:
                line = int(m.group(2))
            continue  # another file (numba's own helpers): keep the kernel's last line
        lm = _LABEL.match(raw.strip())
        if lm:
            labels[int(lm.group(1))] = len(insns)
            continue
        if insns and _FUNC.match(raw.strip()) and not raw.strip().startswith(".text"):
            in_sub, line, func = True, 0, raw.strip()[:-1]
            continue
        m = _INSN.search(raw)
        if not m:
            continue
        addr, pred, op, mods, operands = m.groups()
        t = _TARGET.search(operands)
        insns.append(
            Insn(
                int(addr, 16),
                line,
                op,
                mods or "",
                (pred or ""),
                operands.strip(),
                int(t.group(1)) if t else None,
                in_sub,
                func if in_sub else "",
                (_CALLEE.search(operands).group(1) if op == "CALL" and _CALLEE.search(operands) else ""),
            )
        )
    # label numbers -> addresses of the instruction that follows the label
    lab_addr = {k: insns[i].addr for k, i in labels.items() if i < len(insns)}
    for i in insns:
        if i.target is not None:
            i.target = lab_addr.get(i.target)
    # drop the self-branches and NOP padding after each function's last EXIT or RET
    keep = []
    for i in insns:
        if i.op == "NOP":
            continue
        if i.op == "BRA" and i.target == i.addr:
            continue
        keep.append(i)
    insns = keep
    return insns


_REG = re.compile(r"\bR(\d+)\b")
_NO_DEST = PIPES["branch"] | PIPES["barrier"] | {"ST", "STG", "STS", "STL", "RED", "ISETP", "FSETP", "DSETP"}


def load_waits(insns, start, end):
    """Times one pass over the SASS from ``start`` to ``end`` (a loop's body) stops to wait for
    global loads: loads issue back to back until an instruction reads a register one of them is
    still filling; then the warp waits once for all of that group. gemv_columns_coalesced's loop,
    unrolled 4 times, loads two rows, uses them, then loads the next two: two waits per trip,
    not one (blind_r4: 232 ns per row on the H200, where one wait per 4 rows gives 88 ns)."""
    pending, waits = set(), 0
    for i in insns:
        if not start <= i.addr <= end:
            continue
        ops = i.operands.split(",")
        srcs = ops if i.op in _NO_DEST else ops[1:]
        if pending and any(int(r) in pending for o in srcs for r in _REG.findall(o)):
            waits += 1
            pending.clear()
        if i.op in ("LDG", "LD") and ops:
            m = _REG.search(ops[0])
            if m:
                w = 4 if ".128" in i.mods else 2 if ".64" in i.mods else 1
                pending.update(range(int(m.group(1)), int(m.group(1)) + w))
        elif i.op not in _NO_DEST and ops:  # a register written by other code is no longer a load's
            m = _REG.search(ops[0])
            if m:
                pending.discard(int(m.group(1)))
    return waits + (1 if pending else 0)


def _loops(insns):
    """Back edges: (target address, branch address) for every branch that jumps backwards."""
    return sorted(
        {
            (i.target, i.addr)
            for i in insns
            if i.op in ("BRA", "JMP") and i.target is not None and i.target <= i.addr
        }
    )


def device_functions(fn):
    """The numba.cuda device functions ``fn`` calls by a global name (one level and deeper)."""
    out, todo = [], [getattr(fn, "py_func", fn)]
    while todo:
        f = todo.pop()
        for name in f.__code__.co_names:
            d = f.__globals__.get(name)
            if d is not None and type(d).__name__ == "CUDADispatcher" and d.targetoptions.get("device"):
                if all(d is not o for o in out):
                    out.append(d)
                    todo.append(d.py_func)
    return out


class _NoDriverCC:
    """numba-cuda compiles a called device function for the *current device*'s compute
    capability (dispatcher.compile_device), which needs a driver; on a CPU the target's is used,
    and device functions get line info like the kernel. Everything is put back afterwards."""

    def __init__(self, fn, cc):
        self.devs, self.cc = device_functions(fn), cc

    def __enter__(self):
        from numba.cuda import dispatcher

        self.saved = [(d, d.targetoptions.get("lineinfo"), dict(d.overloads)) for d in self.devs]
        for d in self.devs:
            d.targetoptions["lineinfo"] = True
            d.overloads.clear()
        self.get = dispatcher.get_current_device
        cc = self.cc
        dispatcher.get_current_device = lambda: type("CPUTarget", (), {"compute_capability": cc})()
        return self

    def __exit__(self, *exc):
        from numba.cuda import dispatcher

        dispatcher.get_current_device = self.get
        for d, li, ov in self.saved:
            d.targetoptions["lineinfo"] = li
            d.overloads.clear()
            d.overloads.update(ov)
        return False


_EXTERN = re.compile(r"^\.extern \.func", re.M)


def _ptx(fn, argtypes, arch, fastmath, lineinfo):
    from numba import cuda

    try:
        with _NoDriverCC(fn, ARCHS[arch]):
            ptx, _ = cuda.compile_ptx(fn, argtypes, cc=ARCHS[arch], lineinfo=lineinfo, fastmath=fastmath)
            if _EXTERN.search(ptx):  # calls into linked C++ (float16 operators): link as the GPU does
                ptx = _linked_ptx(fn, argtypes, arch, fastmath, lineinfo)
    except SassUnavailable:
        raise
    except Exception as e:  # noqa: BLE001 - numba's typing/lowering errors, or NVVM missing
        raise SassUnavailable(f"numba-cuda could not compile {fn.__name__} to PTX: {str(e)[:400]}") from e
    return ptx


def _linked_ptx(fn, argtypes, arch, fastmath, lineinfo):
    """The PTX of a kernel that calls code numba links in (the float16 operators of
    numba.cuda._internal.cuda_fp16, CUDA C++ compiled by NVRTC), linked with it by nvJitLink
    with link-time optimisation, which inlines the calls. The H200 ran blind_r5's half_axpby
    with 15 registers (driver) / 16 (ncu): the kernel alone, its calls left as calls, is 28
    (ptxas -c, nvlink); pasted into one module with the callee, 20; linked this way, 15.
    nvJitLink refuses numba's line-info IR, so the line-tagged PTX (``lineinfo``) is the kernel's
    with the callees' PTX pasted in ahead of it: its calls stay calls (the registers come from
    the linked PTX without line info)."""
    from numba.cuda import compiler

    cc = ARCHS[arch]
    lib, _ = compiler._compile_pyfunc_with_fixup(
        fn, argtypes, device=False, cc=cc, abi="numba", lto=not lineinfo, lineinfo=lineinfo, fastmath=fastmath
    )
    srcs = _linked_sources(fn, lib)
    if lineinfo:
        ptx = lib.get_asm_str(cc=cc)
        body = "".join(
            re.sub(
                r"^\s*\.(version|target|address_size)[^\n]*\n", "", _nvrtc(fn, src, arch, False), flags=re.M
            )
            for src in srcs
        )
        defined = set(re.findall(r"\.func\s+(?:\([^)]*\)\s*)?(\w+)\s*\(", body))
        ptx = re.sub(
            r"\.extern \.func\s+(?:\([^)]*\)\s*)?(\w+)\s*\([^;]*\)\s*;",
            lambda m: "" if m.group(1) in defined else m.group(0),
            ptx,
            flags=re.S,
        )
        m = re.search(r"\.address_size[^\n]*\n", ptx)
        return ptx[: m.end()] + body + ptx[m.end() :]
    from cuda.bindings import nvjitlink

    irs = [lib.get_ltoir(cc=cc)] + [_nvrtc(fn, src, arch, True) for src in srcs]
    opts = [f"-arch={arch}", "-lto", "-ptx"]
    h = nvjitlink.create(len(opts), opts)
    try:
        for k, ir in enumerate(irs):
            nvjitlink.add_data(h, nvjitlink.InputType.LTOIR, ir, len(ir), f"part{k}")
        nvjitlink.complete(h)
        out = bytearray(nvjitlink.get_linked_ptx_size(h))
        nvjitlink.get_linked_ptx(h, out)
    finally:
        nvjitlink.destroy(h)
    return LINKED_MARK + out.decode().rstrip("\x00")


LINKED_MARK = "// gpulab: linked with the code it calls by nvJitLink (link-time optimisation)\n"


def _has_loops(fn):
    """True when the kernel's source has a for or while loop."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return True
    return any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(tree))


def _linked_sources(fn, lib):
    """The CUDA C++ sources numba links into ``lib`` (bytes each)."""
    from numba.cuda.cudadrv.linkable_code import LinkableCode

    out = []
    for f in lib._linking_files:
        obj = LinkableCode.from_path_or_obj(f)
        if obj.kind != "cu":
            raise SassUnavailable(f"{fn.__name__} links {obj.kind} code the model cannot link on a CPU")
        out.append(obj.data if isinstance(obj.data, bytes) else obj.data.encode())
    return out


def _nvrtc(fn, src, arch, ltoir, lineinfo=False):
    """NVRTC's PTX (str) or LTO-IR (bytes) of linked CUDA C++, with numba's include paths."""
    import numba.cuda
    from cuda.bindings import nvrtc
    from numba.cuda.cuda_paths import get_cuda_paths

    inc = [
        os.path.join(os.path.dirname(numba.cuda.__file__), "include", "13"),
        get_cuda_paths()["include_dir"].info,
    ]
    _, prog = nvrtc.nvrtcCreateProgram(src, b"linked.cu", 0, [], [])
    opts = [f"--gpu-architecture={arch}".encode(), b"-rdc=true"] + ([b"-dlto"] if ltoir else [])
    opts += [b"-lineinfo"] if lineinfo else []
    opts += [b"-I" + i.encode() for i in inc if i]
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise SassUnavailable(f"NVRTC could not compile the code {fn.__name__} links: {err}")
    get_size, get = (
        (nvrtc.nvrtcGetLTOIRSize, nvrtc.nvrtcGetLTOIR)
        if ltoir
        else (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
    )
    _, n = get_size(prog)
    buf = b" " * n
    get(prog, buf)
    nvrtc.nvrtcDestroyProgram(prog)
    return buf if ltoir else buf.decode().rstrip("\x00")


def _ptxas_registers(ptx, arch, name):
    """(registers, spill bytes) ptxas gives one PTX text."""
    ptxas, _ = tools()
    with tempfile.TemporaryDirectory(prefix="gpulab_sass_") as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run([ptxas, f"-arch={arch}", "-v", p, "-o", os.path.join(d, "k.cubin")], **_RUN)
    if r.returncode:
        raise SassUnavailable(f"ptxas failed for {name} ({arch}): {r.stderr.strip()[:400]}")
    log = r.stdout + r.stderr
    m, sp = _REGS.search(log), _SPILL.search(log)
    return (int(m.group(1)) if m else 0), (int(sp.group(1)) + int(sp.group(2)) if sp else 0)


_RUN = dict(capture_output=True, text=True)


@functools.lru_cache(maxsize=64)
def _compile_cached(fn, argtypes, arch, fastmath, lineinfo=False):
    """The SASS tagged with source lines comes from PTX with line info; the registers and spills
    from the PTX the GPU runs, compiled as the kernel is declared (``lineinfo`` off by default).
    NVVM emits different PTX with line info: layernorm_row_block (blind_r4) is 39 registers with
    it and 44 without, and the H200 ran it with 44."""
    ptxas, nvdisasm = tools()
    # the PTX without line info first: numba caches the float16 operators' callers as first
    # compiled, and nvJitLink refuses them once they were compiled with line info (_linked_ptx)
    run_ptx = None if lineinfo else _ptx(fn, argtypes, arch, fastmath, False)
    regs_run = None if lineinfo else _ptxas_registers(run_ptx, arch, fn.__name__)
    if run_ptx is not None and run_ptx.startswith(LINKED_MARK) and not _has_loops(fn):
        # the calls inlined as on the GPU (half_axpby: 45 instructions, where the line-tagged
        # module with its calls runs 98); no line tags, but a kernel without loops runs each
        # instruction once per warp, which is how untagged instructions are counted
        ptx = run_ptx
    else:
        ptx = _ptx(fn, argtypes, arch, fastmath, True)
    with tempfile.TemporaryDirectory(prefix="gpulab_sass_") as d:
        p, c = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run(
            [ptxas, f"-arch={arch}", "-lineinfo", "-v", p, "-o", c], capture_output=True, text=True
        )
        if r.returncode:
            raise SassUnavailable(f"ptxas failed for {fn.__name__} ({arch}): {r.stderr.strip()[:400]}")
        log = r.stdout + r.stderr
        s = subprocess.run([nvdisasm, "-g", "-c", c], capture_output=True, text=True)
        if s.returncode:
            raise SassUnavailable(f"nvdisasm failed for {fn.__name__}: {s.stderr.strip()[:400]}")
    m = _REGS.search(log)
    regs_li = int(m.group(1)) if m else 0
    regs, spill = regs_run if regs_run is not None else (regs_li, 0)
    if lineinfo:
        sp = _SPILL.search(log)
        spill = int(sp.group(1)) + int(sp.group(2)) if sp else 0
    filename = fn.__code__.co_filename
    insns = parse(s.stdout, filename)
    return KernelSASS(
        arch=arch,
        registers=regs,
        registers_lineinfo=regs_li,
        spill_bytes=spill,
        insns=insns,
        filename=filename,
        ptxas_log=log,
        loops=_loops(insns),
    )


def compile_sass(fn, argtypes, arch="sm_90", fastmath=False) -> KernelSASS:
    """The SASS of ``fn`` (a Python function or numba.cuda kernel) for ``argtypes`` (numba types,
    a signature string, or launch arguments) on ``arch`` ("sm_90", "sm_80", "sm_75")."""
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r}; known: {sorted(ARCHS)}")
    lineinfo = bool(getattr(fn, "targetoptions", {}).get("lineinfo", False))
    fastmath = fastmath or bool(getattr(fn, "targetoptions", {}).get("fastmath", False))
    fn = getattr(fn, "py_func", fn)
    if isinstance(argtypes, str):
        from numba.core.sigutils import normalize_signature

        argtypes = tuple(normalize_signature(argtypes)[0])
    elif argtypes and not all(hasattr(t, "key") or type(t).__module__.startswith("numba") for t in argtypes):
        argtypes = argtypes_of(argtypes)
    return _compile_cached(fn, tuple(argtypes), arch, fastmath, lineinfo)
