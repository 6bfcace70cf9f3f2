"""results_views says whether a blind round scores the model now shipped (the last fit in
perf_train.json never saw the round) or a version since refitted on it, and the chapters' clause
follows (issue 23, reader4 item 2)."""

from __future__ import annotations

import pytest

from gpulab import results, results_views as rv

FIT = {"train": ["perf_model:a", "blind_r4:b"], "held_out": ["perf_model:c"], "after": {"blind_r4": {}}}


@pytest.fixture
def fake_fit(monkeypatch):
    real = results.load
    monkeypatch.setattr(results, "load", lambda name: FIT if name == "perf_train" else real(name))


def test_a_round_the_fit_trained_on_is_not_the_current_models(fake_fit):
    assert rv.blind_round_vs_fit("blind_r4") == {"refitted_on": True, "current_model": False}
    assert rv.blind_round_vs_fit("blind_r5") == {"refitted_on": False, "current_model": True}


def test_a_round_the_fit_scored_without_training_on_it_is_not_current_either(monkeypatch):
    fit = {**FIT, "after": {"blind_r5": {}}}
    monkeypatch.setattr(results, "load", lambda name: fit)
    assert rv.blind_round_vs_fit("blind_r5") == {"refitted_on": False, "current_model": False}


def test_the_clause_follows_the_files():
    base = dict(rv.blind_accuracy("blind_r4"), kernels=30, median_error_text="12%", outside_2x=1)
    own = rv.blind_accuracy_clause(dict(base, current_model=True, refitted_on=False))
    assert own.startswith("on 30 kernels it had never seen (blind round 4), its median error was 12%")
    assert own.endswith("with 1 of them off by more than a factor of two") and "previous version" not in own
    old = rv.blind_accuracy_clause(dict(base, current_model=False, refitted_on=True, outside_2x=0))
    assert "previous version of the model (before it was refitted on those kernels)" in old
    assert "a median error of 12% on 30 kernels" in old and "with none of them off" in old
    revised = rv.blind_accuracy_clause(dict(base, current_model=False, refitted_on=False))
    assert "revised after seeing them" in revised
