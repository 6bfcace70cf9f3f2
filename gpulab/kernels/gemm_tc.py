"""Chapter 11's tensor-core GEMM: C (fp32) = A (fp16) x B (fp16), a numba kernel that calls CUDA C++.

The numba kernel (written out by :func:`gemm_tc_source`, one per tile shape) does the data movement
a reader can follow: it copies A and B tiles from global memory into shared memory, 2 or 4 halves
per load (the fp16 arrays are passed viewed as uint32 or uint64), loading tile k+1 into registers
before the tensor-core work of tile k (double buffering through registers, two shared stages, one
barrier per k-tile; shared rows padded, or unpadded with a XOR swizzle), and writes C. The fragment work - ``ldmatrix`` from shared memory and
``mma.sync.m16n8k16`` - is the CUDA C++ device function in ``gemm_tc.cu``, called once per warp
and k-tile. NVRTC compiles that file to LTO-IR and nvJitLink links it with the kernel, so the call
is inlined and the accumulators (a ``cuda.local.array`` whose address the kernel passes) stay in
registers.

GPU only (sm_80+, nvJitLink): the simulators emulate fragments as chapter 09 does
(``gpulab.models.mma``); :func:`gemm_tc` on any other backend raises :class:`BackendUnavailable`.
Size contract: M, N, K multiples of the block tile (:func:`check_shapes`).
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass

import numpy as np

from gpulab.errors import BackendUnavailable, LaunchConfigError

CU_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gemm_tc.cu")
PAD = 8  # halves added to each shared row: 16 bytes, so ldmatrix's 8 row addresses hit 8 bank groups


@dataclass(frozen=True)
class Variant:
    """One tile shape: block tile bm x bn x bk, warp tile wm x wn, global loads of ``word`` bits."""

    bm: int = 128
    bn: int = 128
    bk: int = 32
    wm: int = 64
    wn: int = 32
    word: int = 32  # 32: fp16 pairs as uint32; 64: four halves as uint64
    stages: int = 2  # shared buffers: 2 = one barrier per k-tile; 1 = two (fits 48 KB for big tiles)
    group: int = 0  # > 0: a 1-D grid walked `group` block-rows at a time (neighbours share tiles in L2)
    carveout: int | None = None  # % of the L1/shared array given to shared memory (None: the driver's choice)
    lto: bool = True  # False: linked as PTX, the call stays a call and acc lives in local memory
    swizzle: bool = False  # True: unpadded shared rows, 16-byte chunks XOR-permuted (gemm_tc.cu, SWZ)

    def __post_init__(self):
        if self.swizzle and (self.bk not in (32, 64) or self.bn % 64):
            raise ValueError("swizzle needs bk 32 or 64 and bn a multiple of 64")
        if self.stages not in (1, 2):
            raise ValueError(f"stages must be 1 or 2, got {self.stages}")
        if self.shared_bytes > 48 * 1024:
            raise ValueError(f"{self.shared_bytes} bytes of static shared memory (limit 48 KB): use stages=1")
        if self.word not in (32, 64):
            raise ValueError(f"word must be 32 or 64 bits, got {self.word}")
        if self.wm % 16 or self.wn % 16 or self.bk % 16:
            raise ValueError(f"warp tile {self.wm}x{self.wn} and bk={self.bk} must be multiples of 16")
        if self.bm % self.wm or self.bn % self.wn:
            raise ValueError(
                f"block tile {self.bm}x{self.bn} is not a whole number of {self.wm}x{self.wn} warps"
            )
        t, h = self.threads, self.halves
        if self.threads > 1024:
            raise ValueError(f"{self.threads} threads per block (limit 1024)")
        for what, rows, cols in (("A", self.bm, self.bk), ("B", self.bk, self.bn)):
            words = cols // h
            if cols % h or t % words or rows % (t // words):
                raise ValueError(
                    f"{t} threads cannot copy the {rows}x{cols} {what} tile in {self.word}-bit words"
                )

        if self.swizzle:
            ra, rb = self.threads // (self.bk // self.halves), self.threads // (self.bn // self.halves)
            if ra % 8 or (rb % 8 and 8 % rb):
                raise ValueError(
                    f"swizzle: the copy's row passes ({ra} for A, {rb} for B) do not keep the key"
                )

    @property
    def name(self):
        return (
            f"{self.bm}x{self.bn}x{self.bk}_w{self.wm}x{self.wn}_u{self.word}"
            + ("_s1" if self.stages == 1 else "")
            + (f"_g{self.group}" if self.group else "")
            + (f"_c{self.carveout}" if self.carveout is not None else "")
            + ("" if self.lto else "_nolto")
            + ("_swz" if self.swizzle else "")
        )

    @property
    def warps(self):
        return (self.bm // self.wm) * (self.bn // self.wn)

    @property
    def threads(self):
        return 32 * self.warps

    @property
    def halves(self):
        """fp16 values per global load."""
        return self.word // 16

    @property
    def lda(self):
        """Row stride of the shared A tile, in halves (bk + PAD; bk when swizzled)."""
        return self.bk if self.swizzle else self.bk + PAD

    @property
    def ldb(self):
        """Row stride of the shared B tile, in halves (bn + PAD; bn when swizzled)."""
        return self.bn if self.swizzle else self.bn + PAD

    @property
    def shared_bytes(self):
        """Every stage of both tiles."""
        return self.stages * 2 * (self.bm * self.lda + self.bk * self.ldb)

    @property
    def device_function(self):
        """The extern "C" instance of warp_mma_ktile this variant calls."""
        return f"tc_ktile_{self.wm}x{self.wn}_k{self.bk}_{self.lda}_{self.ldb}" + (
            "_swz" if self.swizzle else ""
        )


#: every variant the factory offers by name (benchmarks/sgemm_tc.py's RECORDED list says which it times)
VARIANTS = {
    v.name: v
    for v in (
        Variant(),
        Variant(word=64),
        Variant(wm=32, wn=64, word=64),
        Variant(wn=64, word=64),  # 4 warps of 64 x 64
        Variant(bk=64, word=64, stages=1),
        Variant(bn=256, wn=64, word=64, stages=1),
        Variant(bm=256, wm=64, wn=64, word=64, stages=1),
        Variant(word=64, group=8),
        Variant(word=64, carveout=100),
        Variant(word=64, lto=False),  # the lesson: without LTO the accumulators go through local memory
        Variant(word=64, swizzle=True),
        Variant(word=64, swizzle=True, group=8),
        Variant(wn=64, word=64, swizzle=True),
        Variant(bn=256, wn=64, word=64, stages=1, swizzle=True),
        Variant(bn=256, wn=64, word=64, swizzle=True),  # two stages fit 48 KB without padding
        Variant(bn=256, wn=64, word=64, swizzle=True, group=8),
        Variant(bm=256, wm=64, wn=64, word=64, swizzle=True),
    )
}
DEFAULT = Variant(word=64).name


def fastest_recorded(size: int = 8192) -> str | None:
    """Name of the variant that was fastest at ``size`` in the recorded GPU run (sgemm.json's
    ``tensor_core``), or None when no run is recorded."""
    from gpulab import results

    doc = results.load("sgemm") or {}
    best = doc.get("tensor_core", {}).get("sizes", {}).get(str(size), {}).get("best")
    return best["variant"] if best else None


def cu_source(v: Variant) -> str:
    """gemm_tc.cu plus the one extern "C" instance ``v`` links against."""
    with open(CU_FILE) as f:
        src = f.read()
    swz = "true" if v.swizzle else "false"
    return src + f"\nTC_INSTANCE({v.device_function}, {v.wm}, {v.wn}, {v.bk}, {v.lda}, {v.ldb}, {swz})\n"


def gemm_tc_source(v: Variant) -> str:
    """The numba kernel for ``v`` as Python source: copies, barrier and epilogue written out in full
    (numba has no #pragma unroll), the MMA a call of ``tc_ktile`` per k-tile. Index arithmetic is
    uint32 (``U(...)``): no negative-index fix-ups, 32-bit adds (chapter 11's unroll_u32 step)."""
    h, t = v.halves, v.threads
    wa, wb = v.bk // h, v.bn // h  # words per row of the A and B tiles
    pa, pb = v.bm // (t // wa), v.bk // (t // wb)  # loads per thread per tile
    ra, rb = t // wa, t // wb  # rows one pass of the block covers
    lda_w, ldb_w = v.lda // h, v.ldb // h  # shared row strides in words
    sa_stage, sb_stage = v.bm * lda_w, v.bk * ldb_w
    mt, nt = v.wm // 16, v.wn // 8

    def k(x):  # a uint32 constant
        return f"U({x})"

    L = []
    w = L.append
    w(f"def gemm_tc_{v.name}(c, a, b):")
    w(
        f'    """C = A B: a is (M, K) fp16 viewed as uint{v.word} (M, K/{h}), b (K, N) as (K, N/{h}), c fp32 (M, N).'
    )
    w(f'    Block {t} threads = {v.warps} warps, tile {v.bm}x{v.bn}x{v.bk}, warp tile {v.wm}x{v.wn}."""')
    st = v.stages
    w(f"    sa = cuda.shared.array({st * sa_stage}, WORD, alignment=16)  # {st} x [{v.bm}][{v.lda}] halves")
    w(f"    sb = cuda.shared.array({st * sb_stage}, WORD, alignment=16)  # {st} x [{v.bk}][{v.ldb}] halves")
    w(f"    acc = cuda.local.array({mt * nt * 4}, float32)  # the warp tile's C fragments: registers")
    w("    t = U(cuda.threadIdx.x)")
    w(f"    lane = t % {k(32)}")
    w(f"    warp = t // {k(32)}")
    w(f"    wrow = (warp // {k(v.bn // v.wn)}) * {k(v.wm)}  # the warp's sub-tile in the block tile")
    w(f"    wcol = (warp % {k(v.bn // v.wn)}) * {k(v.wn)}")
    if v.group:
        w(
            f"    # block tile (by, bx): blocks go {v.group} block-rows at a time, down each column of the group,"
        )
        w("    # so the blocks running together share A and B tiles in L2")
        w("    pid = U(cuda.blockIdx.x)")
        w(f"    per_group = U({v.group}) * (U(c.shape[1]) // {k(v.bn)})")
        w(f"    first = (pid // per_group) * U({v.group})")
        w(f"    rows = min(U(c.shape[0]) // {k(v.bm)} - first, U({v.group}))")
        w("    by = first + (pid % per_group) % rows")
        w("    bx = (pid % per_group) // rows")
    else:
        w("    by = U(cuda.blockIdx.y)  # block tile (by, bx) of C")
        w("    bx = U(cuda.blockIdx.x)")
    w(f"    ar = by * {k(v.bm)} + t // {k(wa)}  # this thread copies rows ar + {ra} p of A")
    w(f"    ac = t % {k(wa)}  # ... at word ac of the k-tile")
    w(f"    br = t // {k(wb)}  # and rows br + {rb} p of the B tile")
    w(f"    bc = bx * {k(wb)} + t % {k(wb)}  # ... at word bc")
    if not v.swizzle:
        w(f"    sta = (t // {k(wa)}) * {k(lda_w)} + ac  # where they go in shared memory")
        w(f"    stb = br * {k(ldb_w)} + t % {k(wb)}")
    else:  # 16-byte chunk c of row r goes to chunk c ^ key(r) (gemm_tc.cu explains the key)
        wpc = 16 * 8 // v.word  # words per 16-byte chunk
        akey = f"((t // {k(wa)}) >> {k(1)}) & {k(3)}" if v.bk == 32 else f"(t // {k(wa)}) & {k(7)}"
        w(f"    sta = (t // {k(wa)}) * {k(lda_w)} + ((ac // {k(wpc)}) ^ ({akey})) * {k(wpc)} + ac % {k(wpc)}")
        w(f"    cb = ((t % {k(wb)}) // {k(wpc)}) ^ (br & {k(7)})  # swizzled chunk of the B row")
        w(f"    stb = br * {k(ldb_w)} + cb * {k(wpc)} + t % {k(wpc)}")
    w(f"    nk = U(a.shape[1]) // {k(wa)}  # k-tiles")
    w("    z = float32(0.0)")
    for i in range(0, mt * nt * 4, 8):  # written out: a loop would index acc at run time (local memory)
        w("    " + "; ".join(f"acc[{j}] = z" for j in range(i, i + 8)))
    w("    # tile 0: global -> registers")
    for p in range(pa):
        w(f"    xa{p} = a[ar + {k(p * ra)}, ac]")
    for p in range(pb):
        w(f"    xb{p} = b[br + {k(p * rb)}, bc]")
    w("    for kt in range(nk):")
    if st == 2:
        w(f"        s = kt & {k(1)}  # shared stage of this k-tile")
    else:
        w(f"        s = {k(0)}  # one shared stage: wait until every warp is done reading it")
        w("        cuda.syncthreads()")
    w("        # registers -> shared")
    for p in range(pa):
        w(f"        sa[s * {k(sa_stage)} + sta + {k(p * ra * lda_w)}] = xa{p}")
    for p in range(pb):
        delta = (p * rb) % 8 if v.swizzle else 0  # key(br + p rb) = key(br) ^ delta
        if delta:
            w(
                f"        sb[s * {k(sb_stage)} + (br + {k(p * rb)}) * {k(ldb_w)} + (cb ^ {k(delta)}) * {k(wpc)}"
                f" + t % {k(wpc)}] = xb{p}"
            )
        else:
            w(f"        sb[s * {k(sb_stage)} + stb + {k(p * rb * ldb_w)}] = xb{p}")
    w("        cuda.syncthreads()")
    w(f"        if kt + {k(1)} < nk:  # tile k+1: global -> registers, in flight during the MMAs below")
    w(f"            ka = (kt + {k(1)}) * {k(wa)} + ac")
    w(f"            kb = (kt + {k(1)}) * {k(v.bk)} + br")
    for p in range(pa):
        w(f"            xa{p} = a[ar + {k(p * ra)}, ka]")
    for p in range(pb):
        w(f"            xb{p} = b[kb + {k(p * rb)}, bc]")
    w(
        f"        tc_ktile(addr(acc, 0), addr(sa, s * {k(sa_stage)}), addr(sb, s * {k(sb_stage)}), wrow, wcol, lane)"
    )
    w("    # C fragments -> global: lane holds rows g, g + 8 and columns 2q, 2q + 1 of each 16 x 8 tile")
    w(f"    r = by * {k(v.bm)} + wrow + lane // {k(4)}")
    w(f"    q = bx * {k(v.bn)} + wcol + {k(2)} * (lane % {k(4)})")
    for mi in range(mt):
        for ni in range(nt):
            i = (mi * nt + ni) * 4
            st = []
            for half in range(2):
                rr = f"r + {k(mi * 16 + 8 * half)}"
                st.append(f"c[{rr}, q + {k(ni * 8)}] = acc[{i + 2 * half}]")
                st.append(f"c[{rr}, q + {k(ni * 8 + 1)}] = acc[{i + 2 * half + 1}]")
            w("    " + "; ".join(st))
    return "\n".join(L) + "\n"


GPU_ONLY = (
    "the tensor-core GEMM (gpulab.kernels.gemm_tc) runs on a GPU only: its MMA is CUDA C++ "
    "(ldmatrix + mma.sync) that the simulators cannot run; on the CPU use gpulab.models.mma's "
    "fragment emulation (chapter 09)"
)


def _addr_intrinsic():
    """``addr(arr, i)``: the address of element i of a 1-D array, as a C pointer (numba has no
    ``&arr[i]``; this replaces cffi's ``ffi.from_buffer``, which the GPU image lacks)."""
    from llvmlite import ir
    from numba.core import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def addr(typingctx, arr, i):
        if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(i, types.Integer):
            return None
        sig = types.CPointer(arr.dtype)(arr, i)

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            return builder.gep(
                ary.data, [builder.sext(args[1], ir.IntType(64)) if args[1].type.width < 64 else args[1]]
            )

        return sig, codegen

    class GpuOnly(type(addr)):
        """Called as plain Python (a simulator running the kernel): say why that cannot work."""

        def __call__(self, *args, **kwargs):
            raise BackendUnavailable(GPU_ONLY)

    addr.__class__ = GpuOnly
    return addr


_CACHE: dict = {}


def make_gemm_tc(v: Variant | str = DEFAULT, jit: bool = True, lineinfo: bool = False):
    """The kernel for variant ``v`` (a :class:`Variant` or a name in :data:`VARIANTS`), compiled
    lazily by numba at its first launch (``jit=False``: the plain Python function, for reading).
    Launch: ``kernel[grid, v.threads](c, a.view(uint32 or uint64), b.view(...))``; see :func:`gemm_tc`."""
    if isinstance(v, str):
        if v not in VARIANTS:
            raise ValueError(f"unknown tensor-core variant {v!r}; known: {sorted(VARIANTS)}")
        v = VARIANTS[v]
    key = (v, jit, lineinfo)
    if key in _CACHE:
        return _CACHE[key]
    from numba import cuda, float32, uint32, uint64

    src = gemm_tc_source(v)
    name = f"gemm_tc_{v.name}"
    fname = f"<gpulab.kernels.gemm_tc:{name}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    scope = {"cuda": cuda, "float32": float32, "U": uint32, "WORD": uint32 if v.word == 32 else uint64}
    if jit:
        scope["addr"] = _addr_intrinsic()
        scope["tc_ktile"] = cuda.declare_device(
            v.device_function,
            "int32(CPointer(float32), CPointer(uint32), CPointer(uint32), uint32, uint32, uint32)"
            if v.word == 32
            else "int32(CPointer(float32), CPointer(uint64), CPointer(uint64), uint32, uint32, uint32)",
            link=[cuda.CUSource(cu_source(v))],
        )
    exec(compile(src, fname, "exec"), scope)
    fn = scope[name]
    if jit:
        opts = {} if v.carveout is None else {"shared_memory_carveout": v.carveout}
        fn = cuda.jit(fn, lto=v.lto, lineinfo=lineinfo, **opts)
    fn.variant = v
    _CACHE[key] = fn
    return fn


def check_shapes(v: Variant, m: int, n: int, k: int):
    """Raise LaunchConfigError unless M, N, K fit the variant's tiles (no edge handling)."""
    bad = [
        f"{d}={x} is not a multiple of {t}"
        for d, x, t in (("M", m, v.bm), ("N", n, v.bn), ("K", k, v.bk))
        if x % t
    ]
    if bad:
        raise LaunchConfigError(f"tensor-core GEMM {v.name}: " + "; ".join(bad) + " (pad the matrices)")


def launch_config(v: Variant, m: int, n: int):
    """(grid, block) for an M x N product."""
    if v.group:
        return ((n // v.bn) * (m // v.bm), 1), v.threads
    return (n // v.bn, m // v.bm), v.threads


def gemm_tc(a, b, c=None, variant: Variant | str = DEFAULT, backend: str = "auto"):
    """C = A B on the tensor cores: a (M, K) and b (K, N) float16, C-contiguous (numpy arrays, or GPU
    arrays: numba's, torch's, anything with ``__cuda_array_interface__``), c (M, N) float32 or None.
    Returns C: a numpy array for numpy inputs, else a numba device array (on c's memory if given).
    GPU only: ``backend`` other than "gpu"/"auto", or no GPU, raises BackendUnavailable."""
    v = VARIANTS[variant] if isinstance(variant, str) else variant
    if backend not in ("auto", "gpu"):
        raise BackendUnavailable(f"backend={backend!r}: {GPU_ONLY}")
    from numba import cuda

    if not cuda.is_available():
        raise BackendUnavailable(f"no NVIDIA GPU is visible here (it needs sm_80+): {GPU_ONLY}")
    a, b = (x if isinstance(x, np.ndarray) else cuda.as_cuda_array(x) for x in (a, b))
    if c is not None and not isinstance(c, np.ndarray):
        c = cuda.as_cuda_array(c)
    if a.dtype != np.float16 or b.dtype != np.float16:
        raise TypeError(f"a and b must be float16, got {a.dtype} and {b.dtype}")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"shapes {a.shape} x {b.shape} do not multiply")
    m, k = a.shape
    n = b.shape[1]
    check_shapes(v, m, n, k)
    word = np.uint32 if v.word == 32 else np.uint64
    on_host = isinstance(a, np.ndarray)
    da = cuda.to_device(np.ascontiguousarray(a)) if on_host else a
    db = cuda.to_device(np.ascontiguousarray(b)) if isinstance(b, np.ndarray) else b
    if c is None:
        dc = cuda.device_array((m, n), np.float32)
    else:
        dc = cuda.to_device(c) if isinstance(c, np.ndarray) else c
    grid, block = launch_config(v, m, n)
    make_gemm_tc(v)[grid, block](dc, da.view(word), db.view(word))
    if on_host:
        out = dc.copy_to_host()
        if c is not None:
            c[...] = out
            return c
        return out
    return dc


class SassUnavailable(RuntimeError):
    """The local compiler wheels (NVRTC, NVVM, nvJitLink, ptxas, nvdisasm) cannot link the kernel here."""


def linked_sass(v: Variant | str = DEFAULT, arch: str = "sm_90") -> dict:
    """Link variant ``v`` as the GPU does - the kernel's LTO-IR (NVVM) and gemm_tc.cu's (NVRTC) through
    nvJitLink - on this CPU, then ptxas -v and nvdisasm: {"registers", "spill_bytes", "opcodes",
    "sass"}. Raises SassUnavailable when a tool is missing (nvJitLink: the nvidia-nvjitlink wheel)."""
    import re
    import subprocess
    import tempfile

    from gpulab.perf import sass as S

    v = VARIANTS[v] if isinstance(v, str) else v
    if not v.lto:
        raise ValueError(f"{v.name} is linked without LTO on the GPU; linked_sass links with LTO")
    try:
        ptxas, nvdisasm = S.tools()
        from cuda.core import Linker, LinkerOptions, ObjectCode
        from numba.cuda.compiler import compile_all
        from numba.cuda.cudadrv.driver import _have_nvjitlink
    except (S.SassUnavailable, ImportError) as e:
        raise SassUnavailable(str(e)) from e
    if not _have_nvjitlink():
        raise SassUnavailable("nvJitLink not found (pip install nvidia-nvjitlink): LTO linking needs it")
    cc = S.ARCHS[arch]
    w = "uint32" if v.word == 32 else "uint64"
    codes, _ = compile_all(
        make_gemm_tc(v).py_func,
        f"void(float32[:, ::1], {w}[:, ::1], {w}[:, ::1])",
        device=False,
        cc=cc,
        output="ltoir",
        abi="numba",
    )
    objs = [c if isinstance(c, ObjectCode) else ObjectCode.from_ltoir(c) for c in codes]
    opts = LinkerOptions(arch=arch, link_time_optimization=True, ptx=True)
    ptx = Linker(*objs, options=opts).link("ptx").code
    ptx = (ptx.decode() if isinstance(ptx, bytes) else ptx).rstrip("\x00")
    with tempfile.TemporaryDirectory(prefix="gpulab_tc_") as d:
        p, c = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run([ptxas, f"-arch={arch}", "-v", p, "-o", c], capture_output=True, text=True)
        if r.returncode:
            raise SassUnavailable(f"ptxas failed: {r.stderr[:400]}")
        sass = subprocess.run([nvdisasm, "-c", c], capture_output=True, text=True, check=True).stdout
    log = r.stdout + r.stderr
    regs = re.search(r"Used (\d+) registers", log)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    ops: dict = {}
    for op in re.findall(r"^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", sass, re.M):
        ops[op] = ops.get(op, 0) + 1
    return {
        "registers": int(regs.group(1)) if regs else None,
        "spill_bytes": int(spill.group(1)) + int(spill.group(2)) if spill else 0,
        "opcodes": ops,
        "sass": sass,
        "ptxas_log": log,
    }
