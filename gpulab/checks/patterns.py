"""Self-checks for chapter 07 (compute-shader patterns); also used by the homework's tests."""

from __future__ import annotations

import numpy as np

from gpulab.checks.answers import as_whole
from gpulab.checks.kernels import Case, CheckResult, run_cases
from gpulab.checks.simt import invert_reference  # noqa: F401 (the reference the chapter shows)
from gpulab.models.memory import halo_cost
from gpulab.models.occupancy import Arch
from gpulab.checks.result import untouched


def check_halo_tile(answer, target=1.6) -> CheckResult:
    """Widget task: with R = 4, the smallest TILE (one thread per output pixel, so at most
    1024 threads) whose tiled blur loads at most ``target`` values per output pixel."""
    if (start := untouched(answer, judge=check_halo_tile, target=target)) is not None:
        return start
    if not isinstance(answer, dict) or "tile" not in answer:
        return CheckResult(False, "run the explorer cell first: `answer` should be the dict it writes")
    t, r = as_whole(answer["tile"]), as_whole(answer.get("radius"))
    if r != 4:
        return CheckResult(False, f"set R to 4 (you have {answer.get('radius')!r})")
    if t is None or t < 1:
        return CheckResult(False, f"TILE should be a whole number of pixels, got {answer['tile']!r}")
    c = halo_cost(t, r)
    if c["threads_per_block"] > Arch.max_threads_per_block:
        return CheckResult(
            False,
            f"TILE {t} needs {c['threads_per_block']} threads per block: over the "
            f"{Arch.max_threads_per_block} limit",
        )
    if c["tiled_loads_per_pixel"] > target:
        return CheckResult(
            False, f"TILE {t}: {c['tiled_loads_per_pixel']:.3f} loads per pixel, above {target}"
        )
    smaller = [x for x in range(8, t, 8) if halo_cost(x, r)["tiled_loads_per_pixel"] <= target]
    if smaller:
        return CheckResult(False, f"TILE {t} works, but so does {smaller[0]}: find the smallest")
    return CheckResult(
        True,
        f"TILE {t}: {c['tiled_loads_per_pixel']:.3f} loads per pixel with "
        f"{c['threads_per_block']} threads: the halo costs less as the tile grows, "
        f"and, with one thread per output pixel, the {Arch.max_threads_per_block}-thread limit "
        "caps the tile",
    )


def check_invert(kernel, dispatch, backend="sim", seed=None) -> CheckResult:
    """Exercise: an edge-guarded invert kernel(out, img, contrast) and dispatch(width, height)
    returning the grid for 8 x 8 blocks. Passes if the grid is the smallest that covers the
    image (ceil(width/8) x ceil(height/8): a larger one launches blocks with no pixel), every
    pixel is right on four image sizes (50 x 37, 8 x 8, 17 x 1 and 9 x 20: three of them not
    multiples of 8, so edge blocks hang over the image) and the simulator finds no out-of-bounds
    access (chapter 02's reference and case runner, with the reader's own grid)."""
    if (start := untouched(kernel, dispatch, judge=check_invert, backend=backend, seed=seed)) is not None:
        return start
    from gpulab.models import launch as lm

    rng = np.random.default_rng(seed)
    cases = []
    for h, w in ((37, 50), (8, 8), (1, 17), (20, 9)):
        img = rng.random((h, w, 4), dtype=np.float32)
        try:
            grid = tuple(dispatch(w, h))
        except Exception as e:  # noqa: BLE001
            return CheckResult(False, f"dispatch({w}, {h}) raised {type(e).__name__}: {e}")
        if len(grid) != 2 or grid[0] * 8 < w or grid[1] * 8 < h:
            return CheckResult(
                False,
                f"dispatch({w}, {h}) = {grid}: 8 x 8 groups on that grid do not "
                f"cover a {w} x {h} image (round up, and x is the width)",
            )
        want = tuple(lm.grid_for((w, h), (8, 8)))
        if grid != want:
            return CheckResult(
                False,
                f"dispatch({w}, {h}) = {grid} covers the image, but {want} "
                f"does too with fewer blocks: launch ceil(width / 8) x "
                f"ceil(height / 8), no block without a pixel",
            )
        cases.append(
            Case(
                f"{w} x {h} image",
                grid,
                (8, 8),
                (np.full_like(img, np.nan), img, np.float32(1.5)),
                {0: lambda img=img.copy(): invert_reference(img, 1.5)},
            )
        )
    res, _ = run_cases(kernel, cases, backend=backend, atol=1e-6, arg_names=("out", "img", "contrast"))
    return CheckResult(True, "correct on 4 image sizes, no out-of-bounds access") if res else res
