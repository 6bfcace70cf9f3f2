"""Chapter 09's error-budget check restricted to the operand pairs Hopper's tensor cores multiply."""

from gpulab.checks import precision as P
from gpulab.models import formats as F


def test_native_pairs_follow_the_ptx_type_tables():
    assert F.native_pair("fp8_e4m3", "fp8_e5m2") and F.native_pair("int8", "int8")
    assert F.native_pair("bf16", "bf16") and F.native_pair("fp16", "fp16")
    for x, w in (("fp8_e4m3", "int8"), ("fp16", "int8"), ("bf16", "fp16"), ("fp32", "bf16")):
        assert not F.native_pair(x, w)


def test_native_problem_only_offers_native_pairs_and_one_accumulator():
    p = F.native_problem()
    rows = p.all_choices()
    assert rows and all(F.native_pair(r["x"], r["w"]) and r["acc"] == "fp32" for r in rows)
    assert len(rows) == len(F.SM90_MMA_PAIRS)


def test_the_old_mixed_answer_is_rejected_as_not_native():
    res = P.check_native_format_choice({"x": "fp8_e4m3", "w": "int8"})
    assert not res and "no Hopper tensor-core instruction" in res.message


def test_the_cheapest_native_pair_within_budget_passes_and_others_fail():
    p = F.native_problem()
    rows = p.all_choices()
    ok = [r for r in rows if r["error"] <= p.budget]
    best = min(r["bytes"] for r in ok)
    for r in rows:
        res = P.check_native_format_choice({"x": r["x"], "w": r["w"]})
        assert bool(res) == (r["error"] <= p.budget and r["bytes"] == best), (r, res)
    # the accumulator cannot be chosen any more: fp32 is accepted, fp16 is not
    good = next(r for r in ok if r["bytes"] == best)
    assert P.check_native_format_choice({"x": good["x"], "w": good["w"], "acc": "fp32"})
    assert not P.check_native_format_choice({"x": good["x"], "w": good["w"], "acc": "fp16"})


def test_bad_input_is_named():
    none = P.check_native_format_choice(None)  # the stub's starting state: a neutral note, a fail
    assert not none and "Not answered yet" in repr(none)
    assert "keys" in P.check_native_format_choice({"x": "fp16"}).message
    assert "not one of" in P.check_native_format_choice({"x": "fp9", "w": "fp16"}).message


def test_picker_hides_the_accumulator_for_the_native_problem():
    from gpulab.widgets.formats import picker

    ns = {}
    w = picker(ns, problem=F.native_problem(), start={"x": "bf16", "w": "bf16", "acc": "fp32"})
    assert w.acc not in w.box.children and ns["choice"]["x"] == "bf16"
    assert P.check_native_format_choice(ns["choice"])
    q = picker({})
    assert q.acc in q.box.children
    w.x.value = "fp8_e4m3"
    w.w.value = "int8"
    assert "No tensor-core instruction" in w.out.value
