"""The prediction an exercise prints under its check: ``gpulab.predict`` for the reader's kernel
only once the check has passed. A stub (an empty kernel) or a wrong kernel predicted on an H200
reads like a statement about the exercise ("invert takes 2 us, limited by launch overhead"),
so until the check passes the cell prints a neutral note instead (issue 23 items 2-3)."""

from __future__ import annotations

import textwrap

from gpulab.checks.result import CheckResult

WIDTH = 70  # an output line of 76 characters is 639 px, wider than the 621 px output column at 1280 px


def not_predicted_note(verdict: CheckResult, name: str) -> str:
    """The neutral line printed in place of a prediction while ``verdict`` has not passed."""
    if verdict.not_started:
        text = f"✎ Not answered yet: `{name}` is predicted here once its check above passes."
    else:
        text = f"✎ Not predicted yet: `{name}` has not passed its check above; fix it, then run both cells again."
    return textwrap.fill(text, WIDTH, subsequent_indent="  ", break_on_hyphens=False)


def predict_answer(verdict, kernel, grid, block, *args, compare=(), gpu="H200", budget_s=1.0, **kw) -> dict:
    """Print ``gpulab.predict``'s summary for ``kernel[grid, block](*args)`` on ``gpu``, and for
    each kernel in ``compare`` (the book's own kernels, launched the same way) before it, but only
    when ``verdict`` (the exercise's CheckResult) passed; otherwise print :func:`not_predicted_note`
    and predict nothing. Returns {kernel name: Prediction} (empty when nothing was predicted)."""
    if not isinstance(verdict, CheckResult):
        raise TypeError(
            f"predict_answer needs the CheckResult the exercise's check returned, got {type(verdict).__name__}"
        )
    name = getattr(kernel, "__name__", None) or getattr(
        getattr(kernel, "py_func", None), "__name__", "kernel"
    )
    if not verdict.passed:
        print(not_predicted_note(verdict, name))
        return {}
    import gpulab  # lazy: gpulab.checks stays below the package's top level

    out = {}
    for k in (*compare, kernel):
        p = gpulab.predict(k, grid, block, *args, gpu=gpu, budget_s=budget_s, **kw)
        out[p.kernel] = p
        print(p.summary(width=WIDTH))
    return out
