"""The book's textbook kernels as importable ``@cuda.jit`` functions.

Chapters, benchmarks, the fidelity validation and the homework import them from here so
that a kernel shown in the book is the same object that is measured on a GPU.
"""

from gpulab.kernels import histogram, image, matmul, memory, reduce, transpose

__all__ = ["histogram", "image", "matmul", "memory", "reduce", "transpose"]
