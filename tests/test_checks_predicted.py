"""gpulab.checks.predicted: an exercise's prediction cell predicts the reader's kernel only once
its check has passed (issue 23 items 2-3: an empty stub was 'predicted' as launch-bound)."""

import re
from pathlib import Path

import exercise_order as eo
import numpy as np
import pytest
from numba import cuda

import gpulab
from gpulab.checks import predicted
from gpulab.checks.result import NOT_STARTED, CheckResult


@cuda.jit
def _stub(out, a):
    i = cuda.grid(1)  # noqa: F841


@cuda.jit
def _copy(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i]


def _refuse(*a, **k):
    raise AssertionError("gpulab.predict must not run for an answer whose check has not passed")


@pytest.mark.parametrize(
    "verdict,words",
    [
        (CheckResult(False, f"`_stub` writes nothing: {NOT_STARTED}"), "Not answered yet"),
        (CheckResult(False, "out[3] is 1.0, expected 2.0"), "has not passed its check"),
    ],
)
def test_an_answer_that_has_not_passed_is_not_predicted(monkeypatch, capsys, verdict, words):
    monkeypatch.setattr(gpulab, "predict", _refuse)
    a = np.ones(256, np.float32)
    got = predicted.predict_answer(verdict, _stub, 1, 256, np.empty_like(a), a, compare=(_copy,))
    text = capsys.readouterr().out
    assert got == {}
    assert words in text and "`_stub`" in text
    assert "❌" not in text and "predicted on an" not in text
    assert max(len(line) for line in text.splitlines()) <= predicted.WIDTH


def test_a_passed_answer_is_predicted_after_the_kernels_it_is_compared_with(monkeypatch, capsys):
    calls = []

    class P:
        def __init__(self, k):
            self.kernel = k.__name__ if hasattr(k, "__name__") else k.py_func.__name__

        def summary(self, width):
            return f"predicted on an H200: `{self.kernel}`"

    def fake(kernel, grid, block, *args, gpu, budget_s):
        calls.append((kernel, grid, block, gpu, budget_s))
        return P(kernel)

    monkeypatch.setattr(gpulab, "predict", fake)
    a = np.ones(256, np.float32)
    got = predicted.predict_answer(
        CheckResult(True, "ok"), _stub, 1, 256, a, a, compare=(_copy,), budget_s=0.5
    )
    assert [c[0] for c in calls] == [_copy, _stub]
    assert all(c[1:] == (1, 256, "H200", 0.5) for c in calls)
    assert list(got) == ["_copy", "_stub"]
    assert capsys.readouterr().out.splitlines() == [
        "predicted on an H200: `_copy`",
        "predicted on an H200: `_stub`",
    ]


def test_a_real_prediction_of_a_passed_answer(capsys):
    a = np.ones(1 << 14, np.float32)
    got = predicted.predict_answer(CheckResult(True, "ok"), _copy, 64, 256, np.empty_like(a), a, budget_s=0.2)
    assert list(got) == ["_copy"] and got["_copy"].time_us > 0
    assert "predicted on an H200" in capsys.readouterr().out


def test_the_verdict_must_be_the_checks_result():
    with pytest.raises(TypeError, match="CheckResult"):
        predicted.predict_answer(True, _copy, 1, 32)


# --- every chapter: an exercise's own prediction cell goes through predict_answer -------------

CHAPTERS = sorted((Path(__file__).resolve().parents[1] / "chapters").glob("[0-9][0-9]_*.ipynb"))
# exercises whose cells between the exercise and its solution still call gpulab.predict directly,
# each with its reason
DIRECT_PREDICT_OK = {
    "ex-ch05-scale": "the starting code is a complete (uncoalesced) kernel; the exercise asks the reader "
    "to compare its prediction before and after the change",
}
DIRECT = re.compile(r"\bgpulab\.predict\(")


def _direct_predictions():
    found = []
    for path in CHAPTERS:
        nb = eo.load(path)
        for ex in eo.exercises(nb):
            end = min(ex.solution_cells, default=len(nb["cells"]))
            for i in range(ex.cell + 1, end):
                c = nb["cells"][i]
                if c["cell_type"] == "code" and DIRECT.search(eo._source(c)):
                    found.append((ex.label, f"{path.stem} cell {i}"))
    return found


def test_exercise_predictions_wait_for_the_check():
    """Between an exercise and its solution, a prediction of the reader's kernel goes through
    predict_answer (so a stub is never predicted), unless DIRECT_PREDICT_OK says why not."""
    bad = [(label, where) for label, where in _direct_predictions() if label not in DIRECT_PREDICT_OK]
    assert bad == []


def test_the_direct_prediction_scan_is_not_vacuous():
    assert {label for label, _ in _direct_predictions()} >= {"ex-ch05-scale"}
