"""Backends other than gpulab's simulator: numba.cuda on a GPU, Numba's own simulator."""
