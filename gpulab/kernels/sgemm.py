"""Chapter 11's fp32 matrix multiply C = A B, one optimisation per kernel (after siboehm's worklog).

All take ``(c, a, b)``: float32, row-major, A of shape (M, K), B (K, N), C (M, N). Steps 1-2 are
chapter 06's kernels. From step 3 on, the size contract is M and N multiples of the block tile
and K a multiple of BK (:func:`launch_config` checks it and gives grid and block); a production
library adds a guarded kernel for the edges.
"""

import itertools
import linecache

from numba import cuda, float32, uint32

from gpulab.kernels.matmul import TILE, matmul_naive, matmul_tiled  # noqa: F401 (steps 1, 2)

# --------------------------------------------------------------- step 3: 1-D register blocking
BM1, BN1, BK1, TM1 = 64, 64, 8, 8  # block tile 64 x 64, K step 8, 8 rows per thread


@cuda.jit(fastmath=True)
def sgemm_1d(c, a, b):
    """Block (64, 8): each thread keeps TM1 = 8 outputs of one column of C
    in registers, so one value of B read from shared memory feeds 8
    multiply-adds."""
    sa = cuda.shared.array((BM1, BK1), float32)
    sb = cuda.shared.array((BK1, BN1), float32)
    tx = cuda.threadIdx.x  # column of the tile, 0..63
    ty = cuda.threadIdx.y  # which group of 8 rows, 0..7
    t = ty * BN1 + tx
    row0 = cuda.blockIdx.y * BM1
    col0 = cuda.blockIdx.x * BN1
    acc = cuda.local.array(TM1, float32)
    for i in range(TM1):
        acc[i] = float32(0.0)
    for k0 in range(0, a.shape[1], BK1):
        sa[t // BK1, t % BK1] = a[row0 + t // BK1, k0 + t % BK1]  # 512 threads, 64 x 8 tile
        sb[ty, tx] = b[k0 + ty, col0 + tx]  # 8 x 64 tile
        cuda.syncthreads()
        for kk in range(BK1):
            bv = sb[kk, tx]
            for i in range(TM1):
                acc[i] += sa[ty * TM1 + i, kk] * bv
        cuda.syncthreads()
    for i in range(TM1):
        c[row0 + ty * TM1 + i, col0 + tx] = acc[i]


# --------------------------------------------------------------- step 4: 2-D register blocking
BM, BN, BK, TM, TN = 128, 128, 8, 8, 8  # block tile 128 x 128, 8 x 8 outputs per thread
LOADS = BM * BK // 256  # elements of each tile a thread copies (block of 256)


@cuda.jit(fastmath=True)
def sgemm_2d(c, a, b):
    """Block (16, 16): each thread keeps an 8 x 8 block of C in registers,
    rows ty*8.., columns tx*8..; per k it reads 8 values of A and 8 of B
    from shared memory for 64 multiply-adds."""
    sa = cuda.shared.array((BM, BK), float32)
    sb = cuda.shared.array((BK, BN), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * 16 + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    acc = cuda.local.array((TM, TN), float32)
    am = cuda.local.array(TM, float32)
    bn = cuda.local.array(TN, float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = float32(0.0)
    for k0 in range(0, a.shape[1], BK):
        for r in range(LOADS):
            e = t + 256 * r
            sa[e // BK, e % BK] = a[row0 + e // BK, k0 + e % BK]
            sb[e // BN, e % BN] = b[k0 + e // BN, col0 + e % BN]
        cuda.syncthreads()
        for kk in range(BK):
            for i in range(TM):
                am[i] = sa[ty * TM + i, kk]
            for j in range(TN):
                bn[j] = sb[kk, tx * TN + j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += am[i] * bn[j]
        cuda.syncthreads()
    for i in range(TM):
        for j in range(TN):
            c[row0 + ty * TM + i, col0 + tx * TN + j] = acc[i, j]


# ------------------------------------- step 5: A transposed in shared, 4-wide groups, swizzled
def make_sgemm_vec(pad: int = 0, swizzle: bool = True):
    """Step 5's kernel with the shared tile of A stored k-major
    (``sat[k, m]``), padded by ``pad`` floats per row and/or with its
    4-float chunks XOR-swizzled by k.

    Each thread owns rows ``ty*4 + 64*ii + r`` and columns
    ``tx*4 + 64*jj + s`` (ii, jj < 2; r, s < 4): per k it reads four runs of
    4 consecutive floats, which the compiler can turn into 16-byte shared
    loads when it can prove them 16-byte aligned."""
    width = BM + pad
    swz = 4 if swizzle else 0  # chunk (4 floats) index XOR k: bits 2-4 of m flip

    @cuda.jit(fastmath=True)
    def sgemm_vec(c, a, b):
        sat = cuda.shared.array((BK, width), float32, alignment=16)
        sb = cuda.shared.array((BK, BN), float32, alignment=16)
        tx = cuda.threadIdx.x & 15  # & 15 changes nothing for a (16, 16) block but tells
        ty = cuda.threadIdx.y & 15  # the compiler the index is >= 0 (see the text)
        t = ty * 16 + tx
        row0 = cuda.blockIdx.y * BM
        col0 = cuda.blockIdx.x * BN
        acc = cuda.local.array((8, 8), float32)
        am = cuda.local.array(8, float32)
        bn = cuda.local.array(8, float32)
        for i in range(8):
            for j in range(8):
                acc[i, j] = float32(0.0)
        for k0 in range(0, a.shape[1], BK):
            for r in range(LOADS):
                e = t + 256 * r
                m = e // BK
                kk = e % BK
                sat[kk, m ^ ((kk & 7) * swz)] = a[row0 + m, k0 + kk]
                sb[e // BN, e % BN] = b[k0 + e // BN, col0 + e % BN]
            cuda.syncthreads()
            for kk in range(BK):
                for ii in range(2):
                    base = (ty * 4 + 64 * ii) ^ ((kk & 7) * swz)
                    for r in range(4):
                        am[ii * 4 + r] = sat[kk, base + r]
                for jj in range(2):
                    for s in range(4):
                        bn[jj * 4 + s] = sb[kk, tx * 4 + 64 * jj + s]
                for i in range(8):
                    for j in range(8):
                        acc[i, j] += am[i] * bn[j]
            cuda.syncthreads()
        for ii in range(2):
            for r in range(4):
                for jj in range(2):
                    for s in range(4):
                        c[row0 + ty * 4 + 64 * ii + r, col0 + tx * 4 + 64 * jj + s] = acc[
                            ii * 4 + r, jj * 4 + s
                        ]

    return sgemm_vec


sgemm_vec = make_sgemm_vec(pad=4, swizzle=False)


# ------------------------------------------- step 6: double buffering with a register prefetch
def make_sgemm_prefetch(bk: int = 8, max_registers=None):
    """Step 5 (A k-major, rows padded by 4) with two shared buffers and a K
    step of ``bk``: the next tiles are loaded from global memory into
    registers before the current ones are used and stored into the other
    buffer after, so one barrier per K step suffices and the loads' latency
    overlaps the multiply-adds. ``max_registers`` caps the compiler's
    register use."""
    width = BM + 4
    loads = BM * bk // 256  # elements of each tile a thread copies per K step
    opts = {} if max_registers is None else {"max_registers": max_registers}

    @cuda.jit(fastmath=True, **opts)
    def sgemm_prefetch(c, a, b):
        sat = cuda.shared.array((2, bk, width), float32, alignment=16)
        sb = cuda.shared.array((2, bk, BN), float32, alignment=16)
        tx = cuda.threadIdx.x & 15
        ty = cuda.threadIdx.y & 15
        t = ty * 16 + tx
        row0 = cuda.blockIdx.y * BM
        col0 = cuda.blockIdx.x * BN
        acc = cuda.local.array((8, 8), float32)
        am = cuda.local.array(8, float32)
        bn = cuda.local.array(8, float32)
        pa = cuda.local.array(loads, float32)
        pb = cuda.local.array(loads, float32)
        for i in range(8):
            for j in range(8):
                acc[i, j] = float32(0.0)
        for r in range(loads):  # first tiles into buffer 0
            e = t + 256 * r
            sat[0, e % bk, e // bk] = a[row0 + e // bk, e % bk]
            sb[0, e // BN, e % BN] = b[e // BN, col0 + e % BN]
        cuda.syncthreads()
        steps = a.shape[1] // bk
        for step in range(steps):
            cur = step & 1  # & : known >= 0 (see step 5)
            more = step + 1 < steps
            if more:  # next tiles: global -> registers
                k1 = (step + 1) * bk
                for r in range(loads):
                    e = t + 256 * r
                    pa[r] = a[row0 + e // bk, k1 + e % bk]
                    pb[r] = b[k1 + e // BN, col0 + e % BN]
            for kk in range(bk):
                for ii in range(2):
                    for r in range(4):
                        am[ii * 4 + r] = sat[cur, kk, ty * 4 + 64 * ii + r]
                for jj in range(2):
                    for s in range(4):
                        bn[jj * 4 + s] = sb[cur, kk, tx * 4 + 64 * jj + s]
                for i in range(8):
                    for j in range(8):
                        acc[i, j] += am[i] * bn[j]
            if more:  # registers -> the other buffer
                for r in range(loads):
                    e = t + 256 * r
                    sat[cur ^ 1, e % bk, e // bk] = pa[r]
                    sb[cur ^ 1, e // BN, e % BN] = pb[r]
            cuda.syncthreads()
        for ii in range(2):
            for r in range(4):
                for jj in range(2):
                    for s in range(4):
                        c[row0 + ty * 4 + 64 * ii + r, col0 + tx * 4 + 64 * jj + s] = acc[
                            ii * 4 + r, jj * 4 + s
                        ]

    return sgemm_prefetch


sgemm_prefetch = make_sgemm_prefetch(bk=8)


# --------------------------------------------------------------------------- launching
STEPS = {  # name: (kernel, block tile (rows, cols), K step, block)
    "naive": (matmul_naive, (TILE, TILE), 1, (TILE, TILE)),
    "shared": (matmul_tiled, (TILE, TILE), 1, (TILE, TILE)),
    "reg1d": (sgemm_1d, (BM1, BN1), BK1, (BN1, BM1 // TM1)),
    "reg2d": (sgemm_2d, (BM, BN), BK, (16, 16)),
    "vec": (sgemm_vec, (BM, BN), BK, (16, 16)),
    "prefetch": (sgemm_prefetch, (BM, BN), BK, (16, 16)),
}


def launch_config(step: str, m: int, k: int, n: int, tile=None, bk=None, block=None):
    """(grid, block) for ``STEPS[step]`` and C of shape (m, n); raises ValueError when the sizes
    break the kernel's contract (steps 3 on: m, n multiples of the block tile, k of its K step)."""
    if step not in STEPS and tile is None:
        raise ValueError(f"unknown step {step!r}; one of {', '.join(STEPS)}")
    _, (tm, tn), kstep, blk = STEPS.get(step, (None, tile, bk, block))
    tm, tn = tile if tile is not None else (tm, tn)
    kstep = bk if bk is not None else kstep
    blk = block if block is not None else blk
    if step not in ("naive", "shared") and (m % tm or n % tn or k % kstep):
        raise ValueError(
            f"step {step!r} needs M and N multiples of its block tile {tm} x {tn} and "
            f"K a multiple of {kstep}; got M={m}, K={k}, N={n}. Pad the matrices with "
            f"zeros up to those multiples"
        )
    return ((n + tn - 1) // tn, (m + tm - 1) // tm), blk


# ------------------------------------ steps 7-9: a kernel factory that writes the unrolled source
def sgemm_unrolled_source(
    bm=128, bn=128, bk=8, tm=8, tn=8, unsigned=False, warp=None, name="sgemm_unrolled"
) -> str:
    """Python source of step 6 (double-buffered, A k-major padded by 4) written out in full:
    every k of the tile, every shared load and every one of the tm*tn multiply-adds is its own
    statement on scalar variables, since numba has no ``#pragma unroll``. ``unsigned`` does the
    index arithmetic in uint32 (no negative-index fix-ups, 32-bit adds); ``warp`` = (rows, cols)
    of the thread grid one warp covers (None: a warp is two rows of 16 threads, as in step 6)."""
    nty, ntx = bm // tm, bn // tn
    nt = nty * ntx
    if tm % 4 or tn % 4 or nt % 32 or (bm * bk) % nt or (bk * bn) % nt or nt % bk or nt % bn and bn % nt:
        raise ValueError(f"tile {bm}x{bn}x{bk} with {tm}x{tn} per thread does not fit the loader")
    if warp is not None and (warp[0] * warp[1] != 32 or nty % warp[0] or ntx % warp[1]):
        raise ValueError(f"warp shape {warp} must have 32 threads and divide the {nty}x{ntx} thread grid")
    width = bm + 4  # A k-major, rows padded by 4 floats (step 5)
    la, lb = bm * bk // nt, bk * bn // nt  # elements of each tile one thread copies per K step
    sa_size, sb_size = bk * width, bk * bn

    def k(v):  # an integer constant of the index type
        return f"uint32({v})" if unsigned else str(v)

    src = []
    e = src.append
    e(f"def {name}(c, a, b):")
    e(f"    sat = cuda.shared.array({2 * sa_size}, float32, alignment=16)")
    e(f"    sb = cuda.shared.array({2 * sb_size}, float32, alignment=16)")
    e("    t = uint32(cuda.threadIdx.x)" if unsigned else f"    t = cuda.threadIdx.x & {nt - 1}")
    if warp is None:
        e(f"    tx = t % {k(ntx)}")
        e(f"    ty = t // {k(ntx)}")
    else:
        wy, wx = warp
        e(f"    lane = t % {k(32)}")
        e(f"    wid = t // {k(32)}")
        e(f"    tx = (wid % {k(ntx // wx)}) * {k(wx)} + lane % {k(wx)}")
        e(f"    ty = (wid // {k(ntx // wx)}) * {k(wy)} + lane // {k(wx)}")
    cast = "uint32" if unsigned else ""
    e(f"    row0 = {cast}(cuda.blockIdx.y) * {k(bm)}")
    e(f"    col0 = {cast}(cuda.blockIdx.x) * {k(bn)}")
    e(f"    am = t // {k(bk)}")  # element t + nt*r of the A tile: row am + r*nt/bk, column ak
    e(f"    ak = t % {k(bk)}")
    e(f"    bkr = t // {k(bn)}")  # of the B tile: row bkr + r*nt/bn, column bn0
    e(f"    bn0 = t % {k(bn)}")
    e("    arow = row0 + am")
    e("    bcol = col0 + bn0")
    e(f"    sta = ak * {k(width)} + am")
    e(f"    stb = bkr * {k(bn)} + bn0")
    ra, rb = nt // bk, nt // bn
    for i in range(tm):
        e("    " + " = ".join(f"c{i}_{j}" for j in range(tn)) + " = float32(0.0)")
    for r in range(la):
        e(f"    sat[sta + {k(r * ra)}] = a[arow + {k(r * ra)}, ak]")
    for r in range(lb):
        e(f"    sb[stb + {k(r * rb * bn)}] = b[bkr + {k(r * rb)}, bcol]")
    e("    cuda.syncthreads()")
    e(f"    steps = {cast}(a.shape[1]) // {k(bk)}")
    e(f"    abase = ty * {k(4)}")
    e(f"    bbase = tx * {k(4)}")
    e(f"    for step in range({k(1)}, steps + {k(1)}):")
    e("        more = step < steps")
    e("        if more:  # next tiles: global -> registers")
    e(f"            k1 = step * {k(bk)}")
    for r in range(la):
        e(f"            pa{r} = a[arow + {k(r * ra)}, k1 + ak]")
    for r in range(lb):
        e(f"            pb{r} = b[k1 + bkr + {k(r * rb)}, bcol]")
    e(f"        cur = (step - {k(1)}) & {k(1)}  # buffer in use: the & proves it >= 0 and small")
    e(f"        oa = cur * {k(sa_size)} + abase  # a multiple of 4: 16-byte loads")
    e(f"        ob = cur * {k(sb_size)} + bbase")
    for kk in range(bk):
        for ii in range(tm // 4):
            for q in range(4):
                e(f"        a{ii * 4 + q} = sat[oa + {k(kk * width + ii * nty * 4 + q)}]")
        for jj in range(tn // 4):
            for q in range(4):
                e(f"        b{jj * 4 + q} = sb[ob + {k(kk * bn + jj * ntx * 4 + q)}]")
        for i in range(tm):
            for j in range(tn):
                e(f"        c{i}_{j} += a{i} * b{j}")
    e("        if more:  # registers -> the other buffer")
    e(f"            nxt = cur ^ {k(1)}")
    for r in range(la):
        e(f"            sat[nxt * {k(sa_size)} + sta + {k(r * ra)}] = pa{r}")
    for r in range(lb):
        e(f"            sb[nxt * {k(sb_size)} + stb + {k(r * rb * bn)}] = pb{r}")
    e("        cuda.syncthreads()")
    for i in range(tm):
        row = f"row0 + ty * {k(4)} + {k((i // 4) * nty * 4 + i % 4)}"
        for j in range(tn):
            e(f"    c[{row}, col0 + tx * {k(4)} + {k((j // 4) * ntx * 4 + j % 4)}] = c{i}_{j}")
    return "\n".join(src) + "\n"


_generated = itertools.count()


def make_sgemm_unrolled(
    bm=128, bn=128, bk=8, tm=8, tn=8, unsigned=False, warp=None, max_registers=None, jit=True
):
    """The kernel :func:`sgemm_unrolled_source` writes, compiled (``jit=False``: the plain Python
    function, for the simulator). Its source is registered with ``linecache`` so tracebacks, the
    simulator and the SASS line table can show it. Block: (bm/tm * bn/tn,) threads, 1-D."""
    name = f"sgemm_unrolled_{bm}x{bn}x{bk}_{tm}x{tn}{'_u32' if unsigned else ''}" + (
        f"_w{warp[0]}x{warp[1]}" if warp else ""
    )
    src = sgemm_unrolled_source(bm, bn, bk, tm, tn, unsigned, warp, name=name)
    fname = f"<gpulab.kernels.sgemm generated {name} #{next(_generated)}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    scope = {"cuda": cuda, "float32": float32, "uint32": uint32}
    exec(compile(src, fname, "exec"), scope)
    fn = scope[name]
    if not jit:
        return fn
    opts = {} if max_registers is None else {"max_registers": max_registers}
    return cuda.jit(fastmath=True, **opts)(fn)
