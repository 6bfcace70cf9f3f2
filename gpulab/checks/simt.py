"""Self-checks for chapter 02 (SIMT, launch shapes), shared with the homework's tests."""

from __future__ import annotations

import numpy as np

from gpulab.checks.answers import as_whole
from gpulab.checks.kernels import Case, CheckResult, run_cases
from gpulab.models import launch as lm
from gpulab.checks.result import untouched


def invert_reference(img: np.ndarray, contrast: float) -> np.ndarray:
    """Seed 002's invert with contrast on an RGBA float image: rgb -> (1 - c - 0.5) k + 0.5."""
    out = img.copy()
    out[..., :3] = (1.0 - img[..., :3] - 0.5) * np.float32(contrast) + 0.5
    return out.astype(np.float32)


def invert_cases(block=(8, 8), seed=None):
    """Images whose sizes are and are not multiples of the block, one thinner than a block; new
    random pixels on every call unless ``seed`` is given."""
    rng = np.random.default_rng(seed)
    cases = []
    for (h, w), k in (((16, 16), 1.0), ((37, 53), 1.0), ((5, 70), 1.5), ((29, 3), 0.5)):
        img = rng.random((h, w, 4), dtype=np.float32)
        out = np.full_like(img, np.nan)
        grid = lm.grid_for((w, h), block)
        cases.append(
            Case(
                f"{w}x{h} image, block {block}, contrast {k}",
                grid,
                block,
                (out, img, np.float32(k)),
                {0: lambda img=img.copy(), k=k: invert_reference(img, k)},
            )
        )
    return cases


def check_invert(kernel, block=(8, 8), backend: str = "sim", seed=None) -> CheckResult:
    """Run ``kernel(out, img, contrast)`` over several image sizes with a grid of
    ceil(width/bx) x ceil(height/by) blocks; every pixel right, no access outside the image."""
    if (start := untouched(kernel, judge=check_invert, block=block, backend=backend, seed=seed)) is not None:
        return start
    res, _ = run_cases(
        kernel,
        invert_cases(block, seed),
        backend=backend,
        atol=1e-5,
        arg_names=("out", "img", "contrast"),
        hint_oob="threads past the right or bottom edge must return before touching "
        "the image (compare x with img.shape[1] and y with img.shape[0])",
        hint_mismatch=" (is x the column, i.e. img[y, x]? cuda.grid(2) returns "
        "(x, y) with x along threadIdx.x; and is the formula "
        "(1 - c - 0.5) * contrast + 0.5 on r, g, b, alpha copied?)",
    )
    return res


def check_block_shape(answer, width: int = 100, height: int = 60) -> CheckResult:
    """Widget exercise: a block shape (a multiple of 32 threads, at most 1024) that covers a
    ``width`` x ``height`` image with the fewest idle threads."""
    if (start := untouched(answer, judge=check_block_shape, width=width, height=height)) is not None:
        return start
    if not isinstance(answer, dict) or "block" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be its dict")
    if (as_whole(answer.get("width")), as_whole(answer.get("height"))) != (width, height):
        return CheckResult(
            False,
            f"set the image to {width} x {height} (it is {answer.get('width')} x {answer.get('height')})",
        )
    try:
        block = tuple(as_whole(b) for b in answer["block"])
    except TypeError:
        block = (None,)
    if len(block) != 2 or None in block or min(block) < 1:
        return CheckResult(False, f"block should be two whole numbers (bx, by), got {answer['block']!r}")
    s = lm.summary((width, height), block)
    if not s["valid"]:
        return CheckResult(False, f"block {block} has {s['threads_per_block']} threads: at most 1024")
    if s["threads_per_block"] % 32:
        return CheckResult(
            False,
            f"block {block} has {s['threads_per_block']} threads, not a "
            f"multiple of 32: its last warp has {s['empty_lanes_per_block']} "
            f"empty lanes",
        )
    best, shapes = lm.fewest_idle((width, height))
    if s["idle_threads"] > best:
        return CheckResult(
            False,
            f"block {block} leaves {s['idle_threads']} idle threads; "
            f"some shape leaves fewer. Which side of the image divides "
            f"evenly?",
        )
    others = ", ".join(str(b) for b in shapes if b != block)
    return CheckResult(
        True,
        f"block {block}: grid {s['grid']}, {s['idle_threads']} idle threads, "
        f"the fewest possible (also: {others})",
    )
