"""Register-pressure kernels: ``k`` float32 accumulators kept live across a loop.

Compiled on a GPU, their register count grows with ``k`` until a ``max_registers`` cap forces
the compiler to spill to local memory; used by chapter 04 and benchmarks/occupancy_vs_driver.py.
"""

from __future__ import annotations


def source(k: int, shared_floats: int = 0) -> str:
    """Python source of ``kern(out, x, n)`` with ``k`` live accumulators (and a static shared
    array of ``shared_floats`` float32 if > 0)."""
    if k < 1:
        raise ValueError("k must be >= 1")
    lines = ["def kern(out, x, n):", "    i = cuda.grid(1)", "    v = x[i % n]"]
    lines += [f"    a{j} = v * {1.0 + j / 97:.6f}" for j in range(k)]
    lines += ["    for it in range(n):"]
    lines += [f"        a{j} = a{j} * v + a{(j + 1) % k}" for j in range(k)]
    if shared_floats:
        s = shared_floats
        lines += [
            f"    s = cuda.shared.array({s}, float32)",
            f"    s[cuda.threadIdx.x % {s}] = a0",
            "    cuda.syncthreads()",
            f"    a0 += s[(cuda.threadIdx.x + 1) % {s}]",
        ]
    lines += ["    out[i % n] = " + " + ".join(f"a{j}" for j in range(k))]
    return "\n".join(lines) + "\n"


def python_function(k: int, shared_floats: int = 0):
    """The plain Python function (not yet jitted) built from :func:`source`."""
    from numba import cuda, float32

    ns = {"cuda": cuda, "float32": float32}
    exec(compile(source(k, shared_floats), f"<pressure_k{k}_s{shared_floats}>", "exec"), ns)
    return ns["kern"]


def compile_on_gpu(k: int, max_registers: int | None = None, shared_floats: int = 0):
    """Compile for the current GPU; return the driver function object (``.attrs.regs``,
    ``.attrs.local`` = spilled bytes per thread, ``.attrs.shared``)."""
    from numba import cuda

    opts = {"max_registers": max_registers} if max_registers else {}
    disp = cuda.jit("void(float32[:], float32[:], int32)", **opts)(python_function(k, shared_floats))
    kern = next(iter(disp.overloads.values()))
    return kern._codelibrary.get_cufunc()
