"""The 14 GPU-Puzzles (srush/GPU-Puzzles) in their harness's style, on gpulab's simulator.

The puzzles' kernels are closures over ``cuda``: ``fn(cuda)`` returns ``call``, which the harness
compiles with ``numba.cuda.jit`` and launches as ``jit_fn[blocks, threads](out, *inputs, *args)``
on numpy arrays, then compares ``out`` with a numpy spec. The harness and the solutions here are
our own (issue 22); they run unchanged through ``kernel[grid, block]`` after ``import gpulab``.
Two accepted solutions of puzzle 14 in the wild miss the barrier after the products; the last
test checks that the simulator reports that race.
"""

from dataclasses import dataclass, field

import numba
import numpy as np
import pytest

import gpulab  # noqa: F401  (routes numba.cuda's launches to the simulator without a GPU)
from gpulab import errors

pytestmark = pytest.mark.skipif(gpulab.gpu_available(), reason="checks the simulator; a GPU is present")


@dataclass
class Puzzle:
    """One puzzle: the kernel factory, inputs, output, extra scalar args, launch shape, spec."""

    name: str
    fn: object
    inputs: list
    out: np.ndarray
    args: tuple = ()
    blocks: tuple = (1, 1)
    threads: tuple = (1, 1)
    spec: object = None
    report: object = field(default=None, repr=False)

    def run(self):
        kernel = numba.cuda.jit(self.fn(numba.cuda))
        kernel[self.blocks, self.threads](self.out, *self.inputs, *self.args)
        self.report = gpulab.last_report()
        return self.out

    def check(self):
        np.testing.assert_allclose(self.run(), self.spec(*self.inputs))


TPB = 8
TPB_MM = 3
MAX_CONV = 4
TPB_MAX_CONV = TPB + MAX_CONV


def map_kernel(cuda):
    def call(out, a):
        t = cuda.threadIdx.x
        out[t] = a[t] + 10

    return call


def zip_kernel(cuda):
    def call(out, a, b):
        t = cuda.threadIdx.x
        out[t] = a[t] + b[t]

    return call


def guard_kernel(cuda):
    def call(out, a, size):
        t = cuda.threadIdx.x
        if t < size:
            out[t] = a[t] + 10

    return call


def map2d_kernel(cuda):
    def call(out, a, size):
        r, c = cuda.threadIdx.x, cuda.threadIdx.y
        if r < size and c < size:
            out[r, c] = a[r, c] + 10

    return call


def broadcast_kernel(cuda):
    def call(out, a, b, size):
        r, c = cuda.threadIdx.x, cuda.threadIdx.y
        if r < size and c < size:
            out[r, c] = a[r, 0] + b[0, c]

    return call


def blocks_kernel(cuda):
    def call(out, a, size):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < size:
            out[i] = a[i] + 10

    return call


def blocks2d_kernel(cuda):
    def call(out, a, size):
        r = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        c = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if r < size and c < size:
            out[r, c] = a[r, c] + 10

    return call


def shared_kernel(cuda):
    def call(out, a, size):
        tile = cuda.shared.array(4, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        t = cuda.threadIdx.x
        if i < size:
            tile[t] = a[i]
        cuda.syncthreads()
        if i < size:
            out[i] = tile[t] + 10

    return call


def pool_kernel(cuda):
    def call(out, a, size):
        tile = cuda.shared.array(TPB, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        t = cuda.threadIdx.x
        if i < size:
            tile[t] = a[i]
        cuda.syncthreads()
        if i < size:
            acc = tile[t]
            if t >= 1:
                acc += tile[t - 1]
            if t >= 2:
                acc += tile[t - 2]
            out[i] = acc

    return call


def dot_kernel(cuda):
    def call(out, a, b, size):
        part = cuda.shared.array(TPB, numba.float32)
        t = cuda.threadIdx.x
        part[t] = a[t] * b[t] if t < size else 0
        cuda.syncthreads()
        step = TPB // 2
        while step > 0:
            if t < step:
                part[t] += part[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[0] = part[0]

    return call


def conv_kernel(cuda):
    def call(out, a, b, a_size, b_size):
        window = cuda.shared.array(TPB_MAX_CONV, numba.float32)
        weights = cuda.shared.array(MAX_CONV, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        t = cuda.threadIdx.x
        window[t] = a[i] if i < a_size else 0
        if t < MAX_CONV:
            j = i + TPB
            window[t + TPB] = a[j] if j < a_size else 0
            weights[t] = b[t] if t < b_size else 0
        cuda.syncthreads()
        if i < a_size:
            acc = 0.0
            for k in range(b_size):
                acc += window[t + k] * weights[k]
            out[i] = acc

    return call


def sum_kernel(cuda):
    def call(out, a, size):
        part = cuda.shared.array(TPB, numba.float32)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        t = cuda.threadIdx.x
        part[t] = a[i] if i < size else 0
        cuda.syncthreads()
        step = 1
        while step < TPB:
            if t % (2 * step) == 0:
                part[t] += part[t + step]
            cuda.syncthreads()
            step *= 2
        if t == 0:
            out[cuda.blockIdx.x] = part[0]

    return call


def axis_sum_kernel(cuda):
    def call(out, a, size):
        part = cuda.shared.array(TPB, numba.float32)
        t = cuda.threadIdx.x
        row = cuda.blockIdx.y
        i = cuda.blockIdx.x * cuda.blockDim.x + t
        part[t] = a[row, i] if i < size else 0
        cuda.syncthreads()
        step = TPB // 2
        while step > 0:
            if t < step:
                part[t] += part[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[row, cuda.blockIdx.x] = part[0]

    return call


def matmul_kernel(cuda):
    def call(out, a, b, size):
        a_tile = cuda.shared.array((TPB_MM, TPB_MM), numba.float32)
        b_tile = cuda.shared.array((TPB_MM, TPB_MM), numba.float32)
        r = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        c = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        tr, tc = cuda.threadIdx.x, cuda.threadIdx.y
        acc = 0.0
        for base in range(0, size, TPB_MM):
            a_tile[tr, tc] = a[r, base + tc] if r < size and base + tc < size else 0
            b_tile[tr, tc] = b[base + tr, c] if c < size and base + tr < size else 0
            cuda.syncthreads()
            for k in range(TPB_MM):
                acc += a_tile[tr, k] * b_tile[k, tc]
            cuda.syncthreads()
        if r < size and c < size:
            out[r, c] = acc

    return call


def matmul_missing_barrier_kernel(cuda):
    """Puzzle 14 as two accepted solutions wrote it: no barrier after the products."""

    def call(out, a, b, size):
        a_tile = cuda.shared.array((TPB_MM, TPB_MM), numba.float32)
        b_tile = cuda.shared.array((TPB_MM, TPB_MM), numba.float32)
        r = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        c = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        tr, tc = cuda.threadIdx.x, cuda.threadIdx.y
        acc = 0.0
        for base in range(0, size, TPB_MM):
            a_tile[tr, tc] = a[r, base + tc] if r < size and base + tc < size else 0
            b_tile[tr, tc] = b[base + tr, c] if c < size and base + tr < size else 0
            cuda.syncthreads()
            for k in range(TPB_MM):
                acc += a_tile[tr, k] * b_tile[k, tc]
        if r < size and c < size:
            out[r, c] = acc

    return call


def pool_spec(a):
    return np.array([a[max(i - 2, 0) : i + 1].sum() for i in range(a.shape[0])], dtype=float)


def conv_spec(a, b):
    n = a.shape[0]
    return np.array([sum(a[i + j] * b[j] for j in range(b.shape[0]) if i + j < n) for i in range(n)], float)


def block_sum_spec(a):
    return np.array([a[i : i + TPB].sum() for i in range(0, a.shape[-1], TPB)], float)


def axis_sum_spec(a):
    return np.stack([a[:, i : i + TPB].sum(-1) for i in range(0, a.shape[-1], TPB)], axis=-1).astype(float)


def _square(n):
    return np.arange(n * n).reshape(n, n)


PUZZLES = [
    Puzzle("1 map", map_kernel, [np.arange(4)], np.zeros(4), threads=(4, 1), spec=lambda a: a + 10),
    Puzzle("2 zip", zip_kernel, [np.arange(4), np.arange(4)], np.zeros(4), threads=(4, 1), spec=np.add),
    Puzzle("3 guard", guard_kernel, [np.arange(4)], np.zeros(4), (4,), threads=(8, 1), spec=lambda a: a + 10),
    Puzzle(
        "4 map 2D", map2d_kernel, [_square(2)], np.zeros((2, 2)), (2,), threads=(3, 3), spec=lambda a: a + 10
    ),
    Puzzle(
        "5 broadcast",
        broadcast_kernel,
        [np.arange(2).reshape(2, 1), np.arange(2).reshape(1, 2)],
        np.zeros((2, 2)),
        (2,),
        threads=(3, 3),
        spec=np.add,
    ),
    Puzzle("6 blocks", blocks_kernel, [np.arange(9)], np.zeros(9), (9,), (3, 1), (4, 1), lambda a: a + 10),
    Puzzle(
        "7 blocks 2D",
        blocks2d_kernel,
        [np.ones((5, 5))],
        np.zeros((5, 5)),
        (5,),
        (2, 2),
        (3, 3),
        lambda a: a + 10,
    ),
    Puzzle("8 shared", shared_kernel, [np.ones(8)], np.zeros(8), (8,), (2, 1), (4, 1), lambda a: a + 10),
    Puzzle("9 pooling", pool_kernel, [np.arange(8)], np.zeros(8), (8,), (1, 1), (TPB, 1), pool_spec),
    Puzzle("10 dot", dot_kernel, [np.arange(8), np.arange(8)], np.zeros(1), (8,), (1, 1), (8, 1), np.dot),
    Puzzle(
        "11 conv simple",
        conv_kernel,
        [np.arange(6), np.arange(3)],
        np.zeros(6),
        (6, 3),
        (1, 1),
        (TPB, 1),
        conv_spec,
    ),
    Puzzle(
        "11 conv full",
        conv_kernel,
        [np.arange(15), np.arange(4)],
        np.zeros(15),
        (15, 4),
        (2, 1),
        (TPB, 1),
        conv_spec,
    ),
    Puzzle("12 sum simple", sum_kernel, [np.arange(8)], np.zeros(1), (8,), (1, 1), (TPB, 1), block_sum_spec),
    Puzzle("12 sum full", sum_kernel, [np.arange(15)], np.zeros(2), (15,), (2, 1), (TPB, 1), block_sum_spec),
    Puzzle(
        "13 axis sum",
        axis_sum_kernel,
        [_square(6)[:4]],
        np.zeros((4, 1)),
        (6,),
        (1, 4),
        (TPB, 1),
        axis_sum_spec,
    ),
    Puzzle(
        "14 matmul simple",
        matmul_kernel,
        [_square(2), _square(2).T],
        np.zeros((2, 2)),
        (2,),
        (1, 1),
        (TPB_MM, TPB_MM),
        np.matmul,
    ),
    Puzzle(
        "14 matmul full",
        matmul_kernel,
        [_square(8), _square(8).T],
        np.zeros((8, 8)),
        (8,),
        (3, 3),
        (TPB_MM, TPB_MM),
        np.matmul,
    ),
]


@pytest.mark.parametrize("puzzle", PUZZLES, ids=[p.name for p in PUZZLES])
def test_puzzle(puzzle):
    puzzle.check()
    assert puzzle.report.backend == "sim"  # it ran on gpulab's simulator, with its checks


def test_fourteen_puzzles():
    assert len({p.name.split()[0] for p in PUZZLES}) == 14


def test_matmul_missing_the_barrier_after_its_products_is_reported():
    p = Puzzle(
        "14 matmul full, no barrier",
        matmul_missing_barrier_kernel,
        [_square(8), _square(8).T],
        np.zeros((8, 8)),
        (8,),
        (3, 3),
        (TPB_MM, TPB_MM),
        np.matmul,
    )
    with pytest.raises(errors.WarpLevelRace, match="Warp Level Programming"):
        p.check()


def test_a_wrong_answer_fails_the_harness():
    """The harness compares: a kernel that forgets the guard's +10 fails it."""

    def wrong(cuda):
        def call(out, a, size):
            t = cuda.threadIdx.x
            if t < size:
                out[t] = a[t]

        return call

    with pytest.raises(AssertionError):
        Puzzle(
            "wrong", wrong, [np.arange(4)], np.zeros(4), (4,), threads=(8, 1), spec=lambda a: a + 10
        ).check()


def test_a_missing_guard_is_reported_out_of_bounds():
    def unguarded(cuda):
        def call(out, a, size):
            t = cuda.threadIdx.x
            out[t] = a[t] + 10

        return call

    with pytest.raises(errors.OutOfBounds):
        Puzzle(
            "3 unguarded", unguarded, [np.arange(4)], np.zeros(4), (4,), threads=(8, 1), spec=lambda a: a + 10
        ).run()
