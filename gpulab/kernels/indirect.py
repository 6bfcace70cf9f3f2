"""Indirect dispatch (seed 002): a GPU pass decides how much work the next pass does.

In Direct3D, a compute pass writes the thread-group counts into a buffer and
``DispatchIndirect``/``ExecuteIndirect`` launches with them, with no trip to the CPU. numba-cuda
cannot launch a kernel from the device, so the CUDA pattern here is the other common one: the
first kernel appends work items and counts them in device memory (``count[0]``), the second is
launched with a fixed grid and each thread loops grid-stride up to the count it reads there.
"""

from numba import cuda


@cuda.jit
def cull(count, survivors, values, threshold):
    """Pass 1: append the index of every value above ``threshold`` to ``survivors``;
    ``count[0]`` (zero before the launch) ends as their number, in any order."""
    i = cuda.grid(1)
    if i < values.shape[0] and values[i] > threshold:
        slot = cuda.atomic.add(count, 0, 1)
        survivors[slot] = i


@cuda.jit
def shade_survivors(out, survivors, count, values):
    """Pass 2, any fixed grid: a grid-stride loop over the count pass 1 left in device
    memory."""
    n = count[0]
    for k in range(cuda.grid(1), n, cuda.gridsize(1)):
        i = survivors[k]
        out[i] = 2.0 * values[i]


@cuda.jit
def shade_all(out, values, threshold):
    """The same result without pass 1: every element launched, most threads test and
    idle."""
    i = cuda.grid(1)
    if i < values.shape[0] and values[i] > threshold:
        out[i] = 2.0 * values[i]
