"""Chapter 11's ladder (issue 27): the one-figure view of every step (gpulab.plots.sgemm), the
homework's reading of the generated steps' counters (gpulab.checks.sgemm_ladder), and the
recorded gpulab.predict lines (sgemm_predicted.json)."""

from __future__ import annotations

import copy

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from gpulab import results  # noqa: E402
from gpulab.checks import sgemm_ladder as L  # noqa: E402
from gpulab.plots import sgemm as P  # noqa: E402
from gpulab.plots import style  # noqa: E402

R = results.load("sgemm")
pytestmark = pytest.mark.skipif(R is None, reason="no sgemm.json in this copy")


def _tc(res, gflops=180e3, lib=700e3):
    return dict(
        copy.deepcopy(res),
        tensor_core={"gflops": gflops, "ok": True, "size": 8192, "torch_fp16": {"gflops": lib}},
    )


def test_rows_follow_the_recorded_run_in_ladder_order():
    rows = P.ladder_rows(R)
    assert [r["key"] for r in rows[:9]] == [k for k, _ in P.CHAPTER_STEPS + P.GENERATED_STEPS]
    every = {**R["steps"], **R["steps_unrolled"]}
    for r in rows[:9]:
        assert r["measured"] and r["library"].startswith("torch fp32")
        assert r["pct"] == pytest.approx(100 * every[r["key"]]["fraction_of_torch"])
        assert r["tflops"] == pytest.approx(every[r["key"]]["gflops"] / 1e3)


def test_tensor_core_bar_is_against_torch_fp16_or_not_measured():
    res = {k: v for k, v in R.items() if k != "tensor_core"}
    assert not P.ladder_rows(res)[-1]["measured"]
    tc = P.ladder_rows(_tc(res))[-1]
    assert tc["measured"] and tc["library"] == "torch fp16"
    assert tc["pct"] == pytest.approx(100 * 180 / 700) and tc["tflops"] == pytest.approx(180)
    # variants: the fastest correct one, the run's library figure kept
    rec = {
        "torch_fp16": {"gflops": 600e3},
        "variants": {"a": {"gflops": 150e3, "ok": True}, "b": {"gflops": 190e3, "ok": False}},
    }
    tc = P.tensor_core_point(dict(res, tensor_core=rec))
    assert tc["key"] == "a" and tc["pct"] == pytest.approx(25.0)


def test_rows_name_a_missing_file():
    with pytest.raises(ValueError, match="sgemm.json"):
        P.ladder_rows({})


@pytest.mark.parametrize("with_tc", [False, True])
def test_figure_fits_the_column_and_its_text_is_legible(with_tc):
    bare = {k: v for k, v in R.items() if k != "tensor_core"}
    fig = P.ladder_figure(_tc(bare) if with_tc else bare)
    w, _ = fig.get_size_inches()
    assert w <= 6.6
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
    assert texts and min(t.get_fontsize() for t in texts) >= style.MIN_FONT_PT
    shown = " ".join(t.get_text() for t in texts)
    assert ("torch fp16" in shown) and ("torch fp32" in shown)
    assert (P.NOT_MEASURED in shown) != with_tc
    matplotlib.pyplot.close(fig)


def _right_answer(facts):
    per = facts["steps"]
    return {
        "ffma_share": {s: round(per[s]["ffma_share"], 3) for s in L.STEPS},
        "blocks_per_sm": {s: per[s]["blocks_per_sm"] for s in L.STEPS},
        "unroll_alone": next(iter(facts["worse"])),
        "uint32_fixed": sorted(facts["improved"]),
    }


def test_the_recorded_run_reads_as_the_chapter_says():
    facts = L.ladder_facts()
    assert facts["worse"] == {"occupancy"}
    assert facts["improved"] == {"occupancy", "instruction overhead"}
    assert [facts["steps"][s]["blocks_per_sm"] for s in L.STEPS] == [2, 1, 2]
    assert L.check_ladder_reading(_right_answer(facts))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"unroll_alone": "instruction overhead"}, "did not slow"),
        ({"uint32_fixed": ["instruction overhead"]}, "missing"),
        ({"uint32_fixed": ["occupancy", "instruction overhead", "bank conflicts"]}, "did not change"),
        ({"blocks_per_sm": {"prefetch": 2, "unroll": 2, "unroll_u32": 2}}, "blocks_per_sm['unroll']"),
        ({"unroll_alone": "memory"}, "must be one of"),
        ({"ffma_share": {"prefetch": 0.5}}, "exactly the keys"),
    ],
)
def test_wrong_readings_fail_and_say_why(change, message):
    ans = dict(_right_answer(L.ladder_facts()), **change)
    res = L.check_ladder_reading(ans)
    assert not res and message in res.message


def test_a_share_off_by_more_than_the_tolerance_fails():
    ans = _right_answer(L.ladder_facts())
    ans["ffma_share"]["unroll"] += 2 * L.SHARE_TOLERANCE
    assert not L.check_ladder_reading(ans)
    ans["ffma_share"]["unroll"] -= 1.5 * L.SHARE_TOLERANCE
    assert L.check_ladder_reading(ans)


def test_the_key_comes_from_the_data_not_from_constants():
    """A run in which unrolling kept two blocks per SM (fewer registers) has no occupancy loss:
    the expected reading changes with the counters."""
    res = copy.deepcopy(R)
    res["steps_unrolled"]["unroll"]["registers"] = 120
    facts = L.ladder_facts(res)
    assert facts["worse"] == set() and facts["improved"] == {"instruction overhead"}
    assert not L.check_ladder_reading(_right_answer(L.ladder_facts()), res=res)


def test_unanswered_is_not_started():
    for blank in (None, ...):
        res = L.check_ladder_reading(blank)
        assert not res and res.not_started


def test_recorded_predictions_are_labelled_and_consistent():
    pred = results.load("sgemm_predicted")
    if pred is None:
        pytest.skip("no sgemm_predicted.json (python benchmarks/sgemm_predict.py)")
    assert "not a measurement" in pred["what"]
    s = pred["shape"]
    flop = 2.0 * s["M"] * s["N"] * s["K"]
    assert pred["kernels"], "no kernel predicted"
    for name, k in pred["kernels"].items():
        assert k["time_us"] > 0 and k["limiter_key"] in k["bounds_us"], name
        assert k["tflops"] == pytest.approx(flop / k["time_us"] / 1e6), name


def test_tensor_core_bar_reads_sgemm_tc_records():
    """benchmarks/sgemm_tc.py's layout: per size, torch fp16 and the best correct variant; the
    largest size with a best is the one shown."""
    tc = {
        "sizes": {
            "4096": {
                "torch_fp16": {"tflops": 600.0},
                "best": {"variant": "a", "tflops": 120.0, "fraction_of_torch_fp16": 0.2},
            },
            "8192": {
                "torch_fp16": {"tflops": 700.0},
                "variants": {"b": {"tflops": 210.0, "check": {"ok": True}}},
                "best": {"variant": "b", "tflops": 210.0, "fraction_of_torch_fp16": 0.3},
            },
        }
    }
    res = {k: v for k, v in R.items() if k != "tensor_core"}
    for args in ((dict(res, tensor_core=tc), None), (res, tc)):
        p = P.tensor_core_point(*args)
        assert p["key"] == "b" and p["size"] == 8192 and p["pct"] == pytest.approx(30.0) and p["ok"]
    assert P.tensor_core_point(res, {"sizes": {"4096": {"torch_fp16": {}}}}) is None


def test_limiter_rule_on_the_recorded_counters():
    """The rule names what the chapter's text says of steps 4 to 9."""
    nc, sms = R["ncu"]["kernels"], R["environment"]["sm_count"]
    assert P.limiter(nc["reg2d"], sms).startswith("occupancy")
    assert P.limiter(nc["unroll"], sms).startswith("occupancy")
    for k in ("vec", "prefetch"):
        assert P.limiter(nc[k], sms).startswith("issue:") and "only" in P.limiter(nc[k], sms)
    for k in ("unroll_u32", "warptile"):
        assert P.limiter(nc[k], sms).startswith("issue and FMA pipe")
    if "shared" in nc:  # steps 1-3, profiled apart (benchmarks/sgemm_ncu_extra.py)
        assert P.limiter(nc["shared"], sms).startswith("shared loads")
        assert P.limiter(nc["reg1d"], sms).startswith("issue:")


def test_limiter_rule_order_and_fallback():
    base, sms = dict(R["ncu"]["kernels"]["prefetch"]), R["environment"]["sm_count"]
    shared_bound = dict(base, **{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 1e12})
    assert P.limiter(shared_bound, sms).startswith("shared loads")
    idle = dict(base, **{"smsp__issue_active.avg.pct_of_peak_sustained_active": 30.0})
    assert P.limiter(idle, sms).startswith("stalls: not_selected")
    few = dict(shared_bound, **{"sm__warps_active.avg.pct_of_peak_sustained_active": 12.5})
    assert P.limiter(few, sms).startswith("occupancy")  # occupancy is read first


def test_tables_mark_what_was_not_recorded():
    res = copy.deepcopy(R)
    res["ncu"]["kernels"].pop("reg2d")
    t = P.ladder_table(res)
    assert t.loc[t.step.str.startswith("4 "), "limiter (Nsight Compute)"].item() == "no profile recorded"
    assert P.predicted_table(R, None) is None


def test_loop_mix_of_step3_listing_matches_its_profile():
    # benchmarks/raw/sgemm_reg1d_sm90_cpu.sass.gz (benchmarks/sgemm_sass_cpu.py, compiled on a CPU):
    # per 8-wide step along K a warp runs the outer loop once and the inner loop BK1*TM1/FFMA times;
    # Nsight Compute's instruction count on the H200 must agree, or the listing is not what ran
    import gzip
    from pathlib import Path

    from gpulab.kernels import sgemm as S

    raw = Path(__file__).resolve().parents[1] / "benchmarks" / "raw" / "sgemm_reg1d_sm90_cpu.sass.gz"
    mix = P.loop_mix(gzip.open(raw, "rt").read())
    inner, outer = mix["inner"], mix["outer_only"]
    assert inner["LDS"] > 0 and outer["BAR"] == 2 and "FFMA" not in outer
    per_step = sum(outer.values()) + sum(inner.values()) * S.BK1 * S.TM1 / inner["FFMA"]
    p = R["ncu"]["kernels"]["reg1d"]
    n = R["size"]
    warps = (n // S.BM1) * (n // S.BN1) * (S.BN1 * S.BM1 // S.TM1 // 32)  # blocks x warps per block
    assert per_step == pytest.approx(p["smsp__inst_executed.sum"] / warps / (n // S.BK1), rel=0.02)
    with pytest.raises(ValueError, match="no loop"):
        P.loop_mix("/*0000*/ FFMA R1, R2, R3, R4 ;\n/*0010*/ EXIT ;")
