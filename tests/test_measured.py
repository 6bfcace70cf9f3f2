"""gpulab.plots.measured and the appendix (book/measured_h200 and its pages, tests/appendix_pages.py),
against the committed results."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402

import appendix_pages  # noqa: E402

from gpulab.models import mma  # noqa: E402
from gpulab.plots import measured  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "gpulab" / "data" / "results"
COMMITTED = sorted(p.stem for p in RESULTS.glob("*.json"))


def raw(name):
    return json.loads((RESULTS / f"{name}.json").read_text())


def copy_results(tmp_path, names=None):
    for n in names or COMMITTED:
        shutil.copy(RESULTS / f"{n}.json", tmp_path / f"{n}.json")
    return tmp_path


def by_what(hs):
    return {h.what: h for h in hs}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ---------------------------------------------------------------- coverage


def test_there_are_committed_results():
    assert {"reduction", "occupancy_vs_driver", "divergence_paths"} <= set(COMMITTED)


def test_every_committed_json_has_a_section():
    assert measured.uncovered(RESULTS) == []
    assert set(COMMITTED) <= set(measured.SECTIONS)


def test_every_committed_json_is_shown_by_the_notebook():
    src = appendix_pages.all_code()
    explicit = set(re.findall(r'measured\.show\(\s*"(\w+)"', src))
    missing = [n for n in COMMITTED if n not in explicit]
    # the rest are shown by the "other results" loop, which shows everything not listed as shown
    listed = set(re.findall(r'"(\w+)"', src.split("shown = ", 1)[1].split("}", 1)[0]))
    assert listed == explicit
    assert all(n not in listed for n in missing)


def test_unknown_file_is_reported_not_dropped(tmp_path, capsys):
    copy_results(tmp_path, ["reduction"])
    (tmp_path / "something_new.json").write_text(json.dumps({"device": "X", "value": 1}))
    assert measured.uncovered(tmp_path) == ["something_new"]
    assert measured.show("something_new", tmp_path) == []
    out = capsys.readouterr().out
    assert "No section describes something_new.json" in out and "value" in out


def test_available_matches_the_folder(tmp_path):
    assert measured.available(RESULTS) == COMMITTED
    assert measured.available(tmp_path) == []
    assert measured.available(tmp_path / "nowhere") == []


def test_default_lookup_finds_the_committed_files():
    assert set(COMMITTED) <= set(measured.available())
    assert measured.load("reduction") == raw("reduction")


# ---------------------------------------------------------------- missing files


def test_missing_file_is_handled(tmp_path, capsys):
    copy_results(tmp_path, ["reduction"])
    assert measured.load("bandwidth", tmp_path) is None
    assert measured.show("bandwidth", tmp_path) == []
    out = capsys.readouterr().out
    assert "python benchmarks/bandwidth.py" in out and "bandwidth.json" in out
    assert measured.headlines("bandwidth", None) == []
    assert measured.figure("bandwidth", None) is None
    card = measured.scorecard(tmp_path)
    rows = card[card["from"] == "bandwidth.json absent"]
    assert set(rows["check"]) == set(measured.SECTIONS["bandwidth"].targets)
    assert set(rows["verdict"]) == {"not measured"}


def test_empty_copy_gives_messages_not_errors(tmp_path, capsys):
    assert measured.run_info(tmp_path) == {}
    card = measured.scorecard(tmp_path)
    assert set(card["verdict"]) == {"not measured"}
    for name in measured.SECTIONS:
        assert measured.show(name, tmp_path) == []
    assert capsys.readouterr().out.count("No gpulab/data/results/") == len(measured.SECTIONS)


# ---------------------------------------------------------------- headline figures recomputed


def test_reduction_ratios_recomputed_from_times():
    r = raw("reduction")
    d = r["device_sum"]
    hs = by_what(measured.headlines("reduction", r))
    for lib in ("cupy", "torch"):
        h = hs[f"full-device sum vs {lib}.sum"]
        # same bytes for both, so the bandwidth ratio is the inverse ratio of the times
        assert h.value == pytest.approx(d["libraries"][lib]["ms"] / d["best"]["ms"], rel=1e-9)
        assert h.value == pytest.approx(d[f"best_over_{lib}"], rel=1e-9)
        assert h.met == (h.value >= 0.9)
        assert f"{h.value:.1%}" in h.text
    big = max((b for b in r["block_sums"] if not b["tree"]["launch_bound"]), key=lambda b: b["n"])
    assert hs["per-block shuffle / tree"].value == pytest.approx(big["tree"]["ms"] / big["shuffle"]["ms"])


def test_reduction_target_can_be_missed():
    r = raw("reduction")
    r["device_sum"]["libraries"]["cupy"]["GBps"] = r["device_sum"]["best"]["GBps"] / 0.85
    h = by_what(measured.headlines("reduction", r))["full-device sum vs cupy.sum"]
    assert h.value == pytest.approx(0.85)
    assert h.met is False and "MISSED" in str(h)


def test_divergence_ratio_recomputed():
    r = raw("divergence_paths")
    hs = [h for h in measured.headlines("divergence_paths", r) if h.what.startswith("divergent time")]
    iters = sorted({x["iters"] for x in r["rows"]})
    assert len(hs) == len(iters)
    (n,) = [h for h in measured.headlines("divergence_paths", r) if "(ncu)" in h.what]
    top = max(r["ncu"]["rows"], key=lambda x: x["paths"])
    assert n.value == pytest.approx(
        top["smsp__inst_executed.sum"]
        / min(r["ncu"]["rows"], key=lambda x: x["paths"])["smsp__inst_executed.sum"]
    )
    for it, h in zip(iters, hs):
        rows = {x["paths"]: x for x in r["rows"] if x["iters"] == it and x["mode"] == "divergent"}
        pmax = max(rows)
        assert h.value == pytest.approx(rows[pmax]["ms_median"] / rows[1]["ms_median"])
        assert h.value == pytest.approx(rows[pmax]["ratio_to_1_path"])
        assert f"model: {pmax}x" in h.against


def test_occupancy_agreement_recomputed_and_can_fail():
    r = raw("occupancy_vs_driver")
    agree = sum(c["driver"] == c["gpulab"] for c in r["configs"])
    assert agree == sum(s["match"] for s in r["summary"].values())
    (h,) = measured.headlines("occupancy_vs_driver", r)
    assert h.value == agree / len(r["configs"])
    assert h.met == (agree == len(r["configs"]))
    r["configs"][0]["gpulab"] = r["configs"][0]["driver"] + 1
    (h2,) = measured.headlines("occupancy_vs_driver", r)
    assert h2.value == (agree - 1) / len(r["configs"]) and h2.met is False


def test_fidelity_counts_recomputed_from_counters():
    r = raw("fidelity")
    c = measured.fidelity_counts(r)
    launches = {k: v for k, v in r.items() if k != "environment"}
    ratios_equal = [k for k, v in launches.items() if all(x["ncu"] == x["sim"] for x in v["ratios"].values())]
    assert c["ratios_equal"] == ratios_equal
    assert len(c["launches"]) == len(launches)
    (h,) = measured.headlines("fidelity", r)
    assert h.value == len(ratios_equal) / len(launches)
    for k in c["launches"]:
        if k not in ratios_equal:
            assert k in h.text


def test_tensor_core_fractions_use_the_datasheet_only_for_an_h200():
    r = raw("tensor_cores_throughput")
    peaks = mma.H200_DATASHEET["peak_tflops"]
    hs = by_what(measured.headlines("tensor_cores_throughput", r))
    for prec, tf in r["tflops"].items():
        base = "fp8" if prec.startswith("fp8") else prec
        assert hs[f"{prec} matmul / dense datasheet peak"].value == pytest.approx(tf / peaks[base])
    r["device"] = "Tesla T4"
    (h,) = measured.headlines("tensor_cores_throughput", r)
    assert h.value is None and "do not apply" in h.text


def test_issue7_compared_with_this_run(tmp_path):
    copy_results(tmp_path, ["tensor_cores_throughput", "tensor_cores_throughput_issue7"])
    old, new = raw("tensor_cores_throughput_issue7"), raw("tensor_cores_throughput")
    (h,) = measured.headlines("tensor_cores_throughput_issue7", old, tmp_path)
    assert h.value == pytest.approx(min(new["tflops"][p] / v for p, v in old["tflops"].items()))
    (tmp_path / "tensor_cores_throughput.json").unlink()
    (h,) = measured.headlines("tensor_cores_throughput_issue7", old, tmp_path)
    assert h.value is None


def test_launch_and_amdahl_and_sim_speed_recomputed():
    lo = raw("launch_overhead")
    hs = by_what(measured.headlines("launch_overhead", lo))
    small = min(lo["chain"], key=lambda x: x["n"])
    assert hs["unfused / fused chain time"].value == pytest.approx(
        small["numba_unfused_s"] / small["numba_fused_s"]
    )
    assert f"{lo['numba_tiny']['host_s_per_launch'] * 1e6:.1f} us" in hs["numba launch, host side (s)"].text

    am = raw("amdahl_gpu")
    fit, ps, t, used, worst = measured.amdahl_fit(am)
    assert sorted(ps[used]) == [2, 8]
    assert fit.time(2) == pytest.approx(t[ps == 2][0]) and fit.time(8) == pytest.approx(t[ps == 8][0])
    held = [abs(fit.check(p, x)) for p, x in zip(ps, t) if p not in (2, 8) and p <= am["env"]["n_sm"]]
    assert worst == pytest.approx(max(held))

    ss = raw("sim_speed")
    (h,) = measured.headlines("sim_speed", ss)
    assert h.value == pytest.approx(
        min(k["numba_sim_s"] / k["gpulab_s"] for k in ss["kernels"].values()), rel=1e-6
    )


def test_transpose_variants_recomputed():
    r = raw("transpose_variants") if "transpose_variants" in COMMITTED else None
    if r is None:
        pytest.skip("no transpose_variants.json in this copy")
    (h,) = measured.headlines("transpose_variants", r)
    best = max(v["GBps"] for v in r["variants"].values())
    assert h.value == pytest.approx(best / r["torch_copy_GBps"])
    assert h.met == (best / r["torch_copy_GBps"] >= 0.8)
    slow = min(r["variants"], key=lambda k: r["variants"][k]["GBps"])
    r["variants"] = {k: dict(v, GBps=v["GBps"] * 0.5) for k, v in r["variants"].items()}
    (h2,) = measured.headlines("transpose_variants", r)
    assert h2.value == pytest.approx(h.value / 2) and slow in h2.text


def test_notebook_runs_counted():
    r = {
        "backend": "gpu",
        "describe": "gpulab 0.1.0: GPU: Tesla T4 (numba.cuda)",
        "date": "2030-01-01 00:00 UTC",
        "runs": [
            {"notebook": "chapters/01_a.ipynb", "seconds": 1.0, "ok": True, "error": None},
            {
                "notebook": "chapters/02_b.ipynb",
                "seconds": 2.0,
                "ok": False,
                "error": "Traceback\n\x1b[31mValueError\x1b[39m: boom\n",
            },
        ],
    }
    (h,) = measured.headlines("notebooks_gpu", r)
    assert h.value == 0.5 and h.met is False and "02_b" in h.text and "01_a" not in h.text
    assert measured.environment(r)["gpu"] == "Tesla T4"
    t = measured.table("notebooks_gpu", r)
    assert list(t["error (last line)"]) == ["", "ValueError: boom"]
    r["runs"][1]["ok"] = True
    assert measured.headlines("notebooks_gpu", r)[0].met is True


# ---------------------------------------------------------------- bandwidth.json, when it arrives


def fake_bandwidth(copy_frac=0.95, transpose_frac=0.85):
    """A bandwidth.json with the keys benchmarks/bandwidth.py writes."""
    torch_gbps = 4000.0
    best = torch_gbps * copy_frac
    return {
        "environment": {
            "gpu": "Some GPU",
            "when_utc": "2030-01-02T03:04:05Z",
            "numba": "9.9",
            "numba_cuda": "8.8",
            "nvidia_smi": "999.1, 2000 MHz, 1 MiB",
        },
        "copy": {
            "bytes": 1 << 30,
            "kernels": {
                "float32, one per thread": {"ms": 1.0, "GBps": best},
                "float32, grid-stride": {"ms": 1.1, "GBps": best * 0.9},
            },
            "best": "float32, one per thread",
            "best_GBps": best,
            "correct": True,
            "torch": {"version": "x", "ms": 1.0, "GBps": torch_gbps},
            "best_over_torch": copy_frac,
        },
        "strided": [{"stride": s, "ms": 1.0, "useful_GBps": best / s} for s in (1, 2, 4, 8)],
        "offset": [{"offset": 0, "ms": 1.0, "useful_GBps": best}],
        "transpose": {
            "side": 1024,
            "kernels": {
                "transpose_naive": {"ms": 3.0, "GBps": best / 3, "correct": True},
                "transpose_shared": {"ms": 2.0, "GBps": best / 2, "correct": True},
                "transpose_padded": {"ms": 1.0, "GBps": best * transpose_frac, "correct": True},
            },
            "padded_over_best_copy": transpose_frac,
        },
        "matmul": {
            "n": 1024,
            "kernels": {"matmul_naive": {"ms": 9, "TFLOPs": 2.0}, "matmul_tiled": {"ms": 3, "TFLOPs": 6.0}},
            "torch_fp32_tf32_off": {"version": "x", "ms": 1, "TFLOPs": 40.0},
            "tiled_over_torch": 0.15,
        },
    }


@pytest.mark.parametrize("copy_frac,transpose_frac", [(0.95, 0.85), (0.85, 0.75)])
def test_bandwidth_targets_when_present(tmp_path, copy_frac, transpose_frac, capsys):
    (tmp_path / "bandwidth.json").write_text(json.dumps(fake_bandwidth(copy_frac, transpose_frac)))
    res = measured.load("bandwidth", tmp_path)
    hs = by_what(measured.headlines("bandwidth", res))
    assert hs["device copy vs torch copy"].value == pytest.approx(copy_frac)
    assert hs["device copy vs torch copy"].met == (copy_frac >= 0.9)
    assert hs["padded transpose vs copy"].value == pytest.approx(transpose_frac)
    assert hs["padded transpose vs copy"].met == (transpose_frac >= 0.8)
    assert hs["tiled fp32 matmul / torch fp32"].value == pytest.approx(6.0 / 40.0)
    assert hs["tiled fp32 matmul / torch fp32"].met is None
    card = measured.scorecard(tmp_path)
    row = card[card["check"] == "device copy vs torch copy"].iloc[0]
    assert row["verdict"] == ("met" if copy_frac >= 0.9 else "MISSED")
    assert measured.show("bandwidth", tmp_path)
    assert len(plt.get_fignums()) == 2  # strided-read figure and the copy/transpose bars
    out = capsys.readouterr().out
    assert "Some GPU" in out and "driver 999.1" in out and "2030-01-02" in out


def test_measured_on_lines_give_the_sm_clock_or_say_none_was_recorded(tmp_path, capsys):
    """Issue 23: every 'measured on' line of a GPU result shows the SM clock it recorded (never the
    nvidia-smi query in its environment, which is not a clock record), or 'SM clock: not recorded';
    a result made on a CPU shows none."""
    from gpulab.plots.measured.appendix import clock_line

    b = fake_bandwidth()
    (tmp_path / "bandwidth.json").write_text(json.dumps(b))
    measured.show("bandwidth", tmp_path)
    out = " ".join(capsys.readouterr().out.split())
    assert "2030-01-02 03:04 UTC; SM clock: not recorded rerun:" in out and "2000 MHz" not in out
    assert measured.provenance(tmp_path).iloc[0, 1].endswith("UTC; no SM clock record")
    b["copy"]["sm_clock"] = {
        "source": "s",
        "samples": 9,
        "min_MHz": 1400.0,
        "median_MHz": 1500.0,
        "max_MHz": 1600.0,
    }
    (tmp_path / "bandwidth.json").write_text(json.dumps(b))
    measured.show("bandwidth", tmp_path)
    out = " ".join(capsys.readouterr().out.split())
    assert "SM clock 1500 MHz (min 1400, max 1600), median of 9 samples" in out
    prov = measured.provenance(tmp_path)
    assert prov.iloc[0, 1].endswith("2030-01-02 03:04 UTC; SM clock 1500 MHz")
    assert clock_line("sim_speed", {"machine": {"cpus": 2, "platform": "Linux-x"}}) is None


def test_padded_transpose_uses_the_best_padded_kernel(tmp_path):
    b = fake_bandwidth(0.95, 0.6)
    best = b["copy"]["best_GBps"]
    b["transpose"]["kernels"]["transpose_padded_wide"] = {"ms": 0.5, "GBps": best * 0.9, "correct": True}
    hs = by_what(measured.headlines("bandwidth", b))
    assert "padded transpose vs copy" not in hs  # the row names the variant it reports
    h = hs["wide padded transpose vs copy"]
    assert h.value == pytest.approx(0.9) and h.met is True
    assert "transpose_padded " in h.text and "transpose_padded_wide" in h.text and "60.0%" in h.text
    (tmp_path / "bandwidth.json").write_text(json.dumps(b))
    card = measured.scorecard(tmp_path)
    rows = card[card["from"] == "bandwidth.json"]
    assert "wide padded transpose vs copy" in set(rows["check"])
    assert "padded transpose vs copy" not in set(rows["check"])  # no 'not measured' row for the target


def test_bandwidth_partial_file_does_not_break(tmp_path):
    b = fake_bandwidth()
    del b["matmul"], b["transpose"]
    b["copy"]["torch"] = {"error": "ImportError('torch')"}
    (tmp_path / "bandwidth.json").write_text(json.dumps(b))
    res = measured.load("bandwidth", tmp_path)
    assert measured.headlines("bandwidth", res) == []
    card = measured.scorecard(tmp_path)
    assert set(card[card["from"] == "not in bandwidth.json"]["check"]) == set(
        measured.SECTIONS["bandwidth"].targets
    )


# ---------------------------------------------------------------- labels


def test_labels_are_read_from_the_file(tmp_path):
    r = raw("reduction")
    lab = measured.label("reduction", r)
    env = r["environment"]
    assert env["gpu"] in lab and env["nvidia_smi"].split(",")[0] in lab
    day = (env.get("when_utc") or env["date_utc"])[:10]
    assert day in lab and f"numba {env['numba']}" in lab
    r["environment"]["gpu"] = "Tesla T4"
    r["environment"]["nvidia_smi"] = "535.1, 1590 MHz"
    lab2 = measured.label("reduction", r)
    assert "Tesla T4" in lab2 and "driver 535.1" in lab2 and day in lab2


def test_every_committed_file_gets_a_label_with_machine_and_date():
    for name in COMMITTED:
        lab = measured.label(name, raw(name))
        assert "machine unknown" not in lab, name
        assert re.search(r"\d{4}-\d{2}-\d{2}|undated", lab), name


def test_fidelity_label_comes_from_its_readme():
    env = measured.environment(raw("fidelity"), "fidelity")
    readme = (ROOT / "benchmarks" / "fidelity" / "README.md").read_text()
    assert env["gpu"] in readme and env["driver"] in readme and env["date"] in readme
    # the file's own "environment" block is read first; the README line only when it has none
    assert raw("fidelity")["environment"]["gpu"] == env["gpu"]
    assert "README" not in measured.label("fidelity", raw("fidelity"))
    bare = {k: v for k, v in raw("fidelity").items() if k != "environment"}
    assert "README" in measured.label("fidelity", bare)


def test_run_info_collects_every_gpu_and_driver():
    info = measured.run_info(RESULTS)
    gpus = {raw(n).get("device") or raw(n).get("environment", {}).get("gpu") for n in COMMITTED} - {None}
    assert set(info["gpu"]) == gpus
    assert raw("reduction")["environment"]["nvidia_smi"].split(",")[0] in info["driver"]


# ---------------------------------------------------------------- figures and tables


@pytest.mark.parametrize("name", COMMITTED)
def test_every_committed_file_has_a_figure_or_a_table(name):
    res = raw(name)
    fig = measured.figure(name, res)
    tab = measured.table(name, res)
    assert fig is not None or tab is not None
    if tab is not None:
        assert len(tab) > 0


# ---------------------------------------------------------------- the notebook

COLAB_CELL = '''# On Colab, install gpulab first (does nothing elsewhere).
import sys
if "google.colab" in sys.modules:
    %pip install -q "gpulab[colab] @ git+https://github.com/gpulab/gpulab"'''


@pytest.mark.parametrize("notebook", appendix_pages.notebooks(), ids=lambda p: p.stem)
def test_notebook_follows_the_house_conventions(notebook):
    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].source.strip() == COLAB_CELL
    assert code[1].source.strip() == "import gpulab"
    assert not [c for c in code if c.outputs or c.execution_count is not None]
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


def test_appendix_says_how_to_rerun_on_your_own_gpu():
    text = appendix_pages.all_markdown()
    assert "Run it on your own GPU" in text and "T4" in text and "ncu" in text


def test_notebook_text_does_not_type_in_the_measured_numbers():
    text = appendix_pages.all_markdown()
    d = raw("reduction")["device_sum"]
    typed = [
        f"{d['best']['GBps']:.0f}",
        f"{d['libraries']['cupy']['GBps']:.0f}",
        f"{raw('launch_overhead')['numba_tiny']['host_s_per_launch'] * 1e6:.1f}",
    ]
    typed += [
        f"{h.value:.1%}"
        for n in COMMITTED
        for h in measured.headlines(n, raw(n), RESULTS)
        if h.value is not None and h.value < 10
    ]
    assert not [t for t in typed if t in text]


def test_every_results_loader_reads_through_gpulab_results(tmp_path, monkeypatch):
    """One lookup for recorded results: a file placed in $GPULAB_RESULTS is what all loaders see."""
    import json

    from gpulab import results, timeline
    from gpulab.models import occupancy
    from gpulab.plots import memory, reduction_bench

    payload = {"marker": 42}
    for name in ("bandwidth", "reduction", "occupancy_vs_driver", "zz_only_here"):
        (tmp_path / f"{name}.json").write_text(json.dumps(payload))
    monkeypatch.setenv("GPULAB_RESULTS", str(tmp_path))
    assert results.load("zz_only_here") == payload
    assert timeline.load_result("zz_only_here") == payload
    assert memory.load_benchmark("bandwidth") == payload
    assert reduction_bench.load() == payload
    assert occupancy.load_driver_check() == payload
    assert results.load("no_such_result") is None


# ---------------------------------------------------------------- issue 13's re-measurements (results_views)

import numpy as np  # noqa: E402

from gpulab import results_views as views  # noqa: E402


def test_latency_levels_are_medians_of_the_recorded_plateaus():
    r = raw("latency")
    lv = views.latency_levels(r)
    for level, (lo, hi) in views.LATENCY_LEVELS.items():
        ns = sorted(g["ns"] for g in r["global"] if lo <= g["working_set_bytes"] <= hi)
        assert ns, level
        assert lv[level] == pytest.approx(float(np.median(ns)))
    assert lv["shared"] < lv["L1"] < lv["L2"] < lv["DRAM"]
    rows = views.latency_ladder(r)
    assert [x["working_set_bytes"] for x in rows] == [g["working_set_bytes"] for g in r["global"]]
    assert all(x["ns_min_repeat"] <= x["ns"] <= x["ns_max_repeat"] for x in rows)
    # every chase started at a fresh random node: the method says so and repeats are recorded
    assert "fresh random" in r["method"] and all(len(g["ns_each_repeat"]) > 1 for g in r["global"])


def test_launch_parts_are_labelled_and_ordered():
    lp = views.launch_parts(raw("launch_overhead"))
    for fw in ("numba", "torch"):
        row = lp[fw]
        assert set(row) <= set(lp["labels"])
        # GPU time of a tiny kernel is far below the host's launch-plus-sync time
        assert row["gpu_back_to_back_s"] < row["gpu_single_behind_long_s"] < row["end_to_end_s"]
        assert row["host_launch_s"] < row["end_to_end_s"]
    nb = raw("launch_overhead")["launch_parts"]["numba"]
    # the long kernel really outlasted the enqueueing of the back-to-back launches
    assert nb["enqueue_of_back_to_back_s"] < nb["long_kernel_s"]
    assert lp["numba"]["ncu_gpu_time_duration_s"] < lp["numba"]["end_to_end_s"]


def test_divergence_paths_are_equal_length_and_counted_by_ncu():
    r = raw("divergence_paths")
    # 32 paths x 5 FMAs, each loop unrolled the same way: a multiple of 160 FFMA, none merged
    assert r["sass"]["FFMA"] % (32 * r["fma_per_iter"]) == 0 and r["sass"]["FFMA"] >= 160
    rows = views.divergence_paths(r)
    ncu = {x["paths"]: x for x in r["ncu"]["rows"]}
    for x in rows:
        assert x["ncu_inst_executed_ratio"] == pytest.approx(
            ncu[x["paths"]]["smsp__inst_executed.sum"] / ncu[1]["smsp__inst_executed.sum"]
        )
        assert x["ncu_threads_per_inst"] <= 32 / x["paths"] * 1.2 + 0.5
    split = views.divergence_instruction_split(r)
    assert split["max_rel_residual"] < 0.02  # common + P x per-path fits every P
    assert 1 < split["predicted_ratio_at_32"] < 32


def test_strided_copy_bytes_per_load_recomputed():
    r = raw("strided_copy")
    n = r["ncu"]["n_loads"]
    rows = {x["stride"]: x for x in views.strided_copy(r)}
    for x in r["ncu"]["rows"]:
        assert rows[x["stride"]]["dram_bytes_read_per_load"] == pytest.approx(x["dram__bytes_read.sum"] / n)
        assert rows[x["stride"]]["l1_sectors_per_request"] == pytest.approx(
            x["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
            / x["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
        )
    assert all(x["correct"] for x in r["rows"])
    for x in r["ncu"]["rows"]:  # useful GB/s over the kernel's own time: same bytes, ncu's time
        row = rows[x["stride"]]
        t = x["gpu__time_duration.sum"] * 1e-9
        assert row["ncu_time_s"] == pytest.approx(t)
        assert row["useful_GBps_ncu_time"] == pytest.approx(8 * r["n_loads"] / t / 1e9, rel=1e-6)
        # the read half compares with HBM's reads: equal where every fetched byte is used
        assert row["useful_read_GBps_ncu_time"] == pytest.approx(row["useful_GBps_ncu_time"] / 2)
        if x["stride"] == 1:
            assert row["useful_read_GBps_ncu_time"] == pytest.approx(row["dram_read_GBps_ncu"], rel=0.01)
        assert row["time_s"] > row["ncu_time_s"]  # the events' interval holds more
    times = [rows[s]["time_s"] for s in sorted(rows)]
    assert times == sorted(times)  # time keeps growing with the stride


def test_allreduce_alpha_three_ways():
    r = raw("allreduce_alpha_beta")
    v = views.allreduce(r)
    p = r["env"]["gpus"]
    assert v["alpha_graph_s"] == pytest.approx(v["small_message_graph_s"] / (2 * (p - 1)))
    small = [x["graph_s"] for x in r["rows"] if x["bytes"] <= 1024 and x.get("graph_s")]
    assert v["small_message_graph_s"] == pytest.approx(float(np.median(small)))
    assert v["alpha_graph_s"] < v["alpha_back_to_back_s"] <= v["alpha_per_call_s"] * 1.5
    assert all(g > 0 for g in v["p2p_GBps"].values())
    assert r["env"]["NCCL_NVLS_ENABLE"] == "0"


def test_occupancy_against_cuda_occupancy_h_recomputed_and_can_fail():
    r = raw("occupancy_vs_cuda_occupancy_h")
    rows = views.occupancy_vs_header(r)
    assert {x["arch"] for x in rows} == {"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"}
    (h,) = measured.headlines("occupancy_vs_cuda_occupancy_h", r)
    assert h.value == sum(x["agree"] for x in rows) / sum(x["cases"] for x in rows)
    r["per_arch"]["sm_75"]["agree"] -= 3
    (h2,) = measured.headlines("occupancy_vs_cuda_occupancy_h", r)
    assert h2.met is False


def test_stall_reasons_top_reason_recomputed():
    r = raw("stall_reasons")
    for x in views.stall_reasons(r):
        s = r["kernels"][x["kernel"]]["stalls_per_issue"]
        assert x["top_reason"] == max(s, key=s.get)
        total = sum(v for k, v in s.items() if k != "selected")
        assert x["built_for_share"] == pytest.approx(s[x["built_for"]] / total)


def test_reduction_in_flight_derived_from_recorded_files():
    v = views.reduction_in_flight(raw("reduction_in_flight"))
    lat = max(raw("latency")["global"], key=lambda g: g["working_set_bytes"])["ns"]
    red = raw("reduction")
    sms = red["environment"]["sm_count"]
    assert v["needed_per_sm_for_grid_stride_GBps"] == pytest.approx(
        red["device_sum"]["best"]["GBps"] * 1e9 * lat * 1e-9 / sms
    )
    assert (
        v["per_block_max_bytes_in_flight_per_sm"]
        < v["needed_per_sm_for_grid_stride_GBps"]
        < v["grid_stride_max_bytes_in_flight_per_sm"]
    )


def test_int4_mma_on_sm90_is_not_int4_sass():
    rows = views.int4_mma(raw("int4_mma_ptx"))
    s4 = [x for x in rows if ".s4" in x["ptx"]]
    assert all(x["accepted"] for x in rows)
    assert all("S4" in x["tensor_sass"] for x in s4 if x["arch"] == "sm_80")
    assert not any("S4" in x["tensor_sass"] for x in s4 if x["arch"] == "sm_90")


# ---------------------------------------------------------------- the appendix as the book shows it

WIDTH_TABLE = 84  # tests/test_book_html.py: MAX_TABLE_CHARS
WIDTH_OUTPUT = 76  # tests/test_book_html.py: MAX_OUTPUT_CHARS
MACHINE = re.compile(r"/work/|/root/|/home/|/tmp/|/usr/local/|site-packages")
DEV = re.compile(r"\bissue \d+|\bseeds? 0\d\d|design notes|\bTODO\b|earlier", re.I)


@pytest.mark.parametrize("name", COMMITTED)
def test_show_prints_within_the_column_without_machine_paths(name, capsys):
    measured.show(name, RESULTS)
    out = capsys.readouterr().out
    assert out.strip()
    wide = [x for x in out.splitlines() if len(x) > WIDTH_OUTPUT]
    assert not wide, wide
    assert not MACHINE.search(out), MACHINE.search(out).group(0)
    assert not DEV.search(out), DEV.search(out).group(0)
    assert "date not recorded" not in out  # a file's own note, said in a reader's words


def test_a_files_notes_on_itself_read_as_facts_not_notes_to_the_authors():
    """tensor_cores_throughput_issue7.json says "before 2026-11-29 (date not recorded)": the page
    says "undated (before 2026-11-29)", in the label, the provenance table and the run summary."""
    from gpulab.plots.measured.core import reader_note

    assert reader_note("before 2026-11-29 (date not recorded)") == "undated (before 2026-11-29)"
    assert reader_note("2026-11-29T12:09:20Z") == "2026-11-29T12:09:20Z"
    issue7 = raw("tensor_cores_throughput_issue7")
    assert "date not recorded" in json.dumps(issue7)  # the file itself is left as recorded
    shown = [measured.label("tensor_cores_throughput_issue7", issue7), measured.provenance().to_string()]
    shown += measured.run_info()["date"]
    assert not [x for x in shown if "not recorded" in x], shown
    assert any("undated (before 2026-11-29)" in x for x in shown)


@pytest.mark.parametrize("name", COMMITTED)
def test_tables_fit_the_column_and_hide_the_index(name):
    t = measured.table(name, raw(name), RESULTS)
    if t is None:
        return
    assert measured.text_width(t) <= WIDTH_TABLE, (name, measured.text_width(t))
    html = measured.display_table(t).to_html()
    assert "<tbody>" in html and 'class="row_heading' not in html  # no index column
    assert not MACHINE.search(html) and not DEV.search(html)


def test_scorecard_and_provenance_fit_the_column():
    assert measured.text_width(measured.scorecard().drop(columns="from")) <= WIDTH_TABLE
    assert measured.text_width(measured.provenance()) <= WIDTH_TABLE
    assert not DEV.search(measured.scorecard().to_string())


def test_text_width_is_the_longest_word_per_column():
    import pandas as pd

    t = pd.DataFrame({"a b": ["xx yyyy", "z"], "c": [1234567.0, 0.5]})
    assert measured.text_width(t) == (4 + 3) + (len("1,234,567") + 3)


@pytest.mark.parametrize("name", COMMITTED)
def test_figures_are_legible_and_fit_the_column(name):
    from matplotlib.text import Text

    from gpulab.plots.style import MIN_FONT_PT

    for fig in measured.figures(name, raw(name)):
        assert fig.get_size_inches()[0] <= 6.7, name
        assert fig.get_tightbbox(fig.canvas.get_renderer()).width <= 6.7, name  # labels too
        assert "$" not in "".join(t.get_text() for t in fig.findobj(Text)), name  # no mathtext
        small = [t.get_text() for t in fig.findobj(Text) if t.get_text() and t.get_fontsize() < MIN_FONT_PT]
        assert not small, (name, small)


@pytest.mark.parametrize("page", appendix_pages.pages())
def test_every_glued_figure_has_a_numbered_captioned_block(page):
    """On the page that glues it: a figure glued on one page cannot be shown on another."""
    code = appendix_pages.code(page)
    text = appendix_pages.markdown(page)
    for name, fig in re.findall(r'measured\.show\("(\w+)", fig="([\w-]+)"\)', code):
        n = len(measured.figures(name, raw(name))) if name in COMMITTED else 1
        assert n >= 1, name
        for i in range(n):
            key = fig if i == 0 else f"{fig}-{'bcdefgh'[i - 1]}"
            m = re.search(
                r"```\{glue:figure\} " + re.escape(key) + r"\n:name: " + re.escape(key) + r"\n\n(.+?)```",
                text,
                re.S,
            )
            assert m and m.group(1).strip(), key
        plt.close("all")
    shown = set(re.findall(r'measured\.show\("(\w+)"\)', code))  # shown without a figure name
    assert not [n for n in shown if n in COMMITTED and measured.figures(n, raw(n))]


def test_appendix_is_labelled_titled_and_reader_facing():
    nb = nbformat.read(appendix_pages.source(appendix_pages.FIRST), as_version=4)
    first = nb.cells[0].source.splitlines()
    assert first[0] == "(appendix-measured)=" and first[1] == "# Measured on an H200"
    for path in appendix_pages.notebooks():
        code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        assert all("hide-input" in c.metadata.get("tags", []) for c in code[:3]), path.name
    text = appendix_pages.all_markdown()
    assert not DEV.search(text.replace("tensor_cores_throughput_issue7", "")), DEV.search(text)
    assert not MACHINE.search(text)
    for n in range(1, 12):
        if n not in (2, 7):  # chapters 2 and 7 use no recorded result (tests/test_appendix_used_in.py)
            assert f"<ch{n:02d}>" in text, n  # every chapter that uses a result is linked
    assert "{cite}" in text and "(appendix-rerun)=" in text


def test_superseded_figures_are_labelled_as_such(capsys):
    lo = raw("launch_overhead")
    hs = by_what(measured.headlines("launch_overhead", lo))
    idle = hs["events on an idle stream (not GPU time)"]
    assert idle.text.startswith("Not a GPU time") and idle.score is False
    t = measured.table("launch_overhead", lo)
    row = t[t["what the figure is"].str.startswith("events on an idle stream")]
    assert "not a GPU time" in row.iloc[0, 0]
    lp = lo["launch_parts"]["numba"]
    assert row.iloc[0, 1] == pytest.approx(lp["events_idle_stream_s"] * 1e6)
    (h,) = measured.headlines(
        "tensor_cores_throughput_issue7", raw("tensor_cores_throughput_issue7"), RESULTS
    )
    assert h.text.startswith("Superseded") and h.score is False
    measured.show("tensor_cores_throughput_issue7", RESULTS)
    assert "rerun: none" in capsys.readouterr().out


def test_cuda_driver_api_is_never_the_display_driver():
    for name in COMMITTED:
        env = measured.environment(raw(name), name)
        if "driver" in env and "cuda_driver_api" in env:
            assert env["driver"] != env["cuda_driver_api"], name


def test_widget_png_is_high_resolution_and_shown_at_figure_size():
    from gpulab.plots import style
    from gpulab.widgets import figure as wf

    fig, ax = wf.figure((3.0, 2.0))
    ax.plot([0, 1], [0, 1])
    ax.set_title("t")
    view = wf.image()
    wf.show(view, fig)
    w = wf.png_width(view.value)
    assert style.RC["savefig.dpi"] >= 2 * style.RC["figure.dpi"]
    assert int(view.width) == round(w * style.RC["figure.dpi"] / style.RC["savefig.dpi"])
    assert w >= 1.5 * int(view.width)  # test_book_html's MIN_PNG_DENSITY
    with pytest.raises(ValueError, match="PNG"):
        wf.png_width(b"GIF89a" + bytes(30))


def test_display_compared_turns_kernels_into_columns_with_three_significant_figures():
    import pandas as pd

    from gpulab.plots.measured import display_compared

    df = pd.DataFrame({"TFLOP/s": [31.026861, 2.5], "kind": ["fp32", "fp32"]}, index=["vec", "naive"])
    html = display_compared(df, rows=["TFLOP/s"], names={"vec": "vectorised"}).to_html()
    assert "vectorised" in html and ">31.0<" in html and "31.02" not in html and ">2.50<" in html
    assert "kind" not in html


def test_markdown_table_rounds_like_the_text_and_escapes_bars():
    """Tables glued for a numbered {table} block show what the text quotes (3 significant
    figures), no index, and a '|' in a value does not split its cell."""
    import pandas as pd

    from gpulab.plots.measured import markdown_table

    md = markdown_table(pd.DataFrame({"kernel": ["a|b", "c"], "TFLOP/s": [15.185, 1.365], "n": [4096, 8]}))
    lines = md.splitlines()
    assert lines[0] == "| kernel | TFLOP/s | n |" and lines[1] == "|---|---|---|"
    assert lines[2] == "| a\\|b | 15.2 | 4,096 |", lines[2]
    assert "1.36" in lines[3] or "1.37" in lines[3]
    assert "15.185" not in md and "1.365" not in md


def test_other_results_tables_are_numbered_table_blocks(monkeypatch):
    """A results file no section of the page describes still gets its table as a numbered,
    captioned {table} block (glued MyST text), never an unnumbered table."""
    import gpulab.show

    got = {}
    monkeypatch.setattr(gpulab.show, "glue", lambda key, value, display=True: got.setdefault(key, value))
    measured.glue_other_tables("k", ["sgemm", "no_such_file"], RESULTS)
    text = got["k"].data
    assert text.count("```{table}") == 1 and ":name: tab-app-other-sgemm" in text
    assert "| kernel | TFLOP/s |" in text and "(sgemm.json)." in text
    measured.glue_other_tables("k2", ["no_such_file"], RESULTS)
    assert "{table}" not in got["k2"].data


def test_amdahl_reading_splits_held_out_errors_at_the_sm_count():
    """A.6.2 reads amdahl_gpu.json through measured.amdahl_reading: errors up to the SM count
    and past it, the kernel's time at both ends, and how much the 'constant' host part varied."""
    n_sm = 4
    rows = []
    for p in (1, 2, 4, 8, 16):
        kernel = 1.0 / min(p, n_sm)  # past the SM count the kernel gets no more SMs
        host = 0.1 if p != 16 else 0.3
        rows.append({"p": p, "step_s": host + kernel, "host_s": host, "kernel_s": kernel})
    rows[3]["step_s"] = rows[3]["host_s"] + 1.0 / 8  # p = 8 is a fit point: the fit sees 1/p
    a = measured.amdahl_reading({"env": {"n_sm": n_sm}, "rows": rows})
    assert [p for p, _ in a["within"]] == [1, 4] and [p for p, _ in a["past"]] == [16]
    assert abs(a["worst_within"]) < 0.01
    assert a["worst_past_p"] == 16 and a["worst_past"] < -0.5
    assert a["kernel_at_n_sm_s"] == a["kernel_at_p_max_s"] == 0.25 and a["p_max"] == 16
    assert a["host_ratio"] == pytest.approx(3.0)


def test_blind_rounds_are_described_from_their_files_and_the_quoted_one_says_so():
    """Issue 23 review item 4: each blind round has its own section, generated from its file; the
    round results_views.blind_accuracy() reports is 'the figure the chapters quote', and the
    perf_model summary puts that blind median beside the in-sample ones."""
    quoted = views.blind_accuracy()
    for name in ("blind_r3", "blind_r4", "blind_r5", "blind_r6"):
        res = measured.load(name)
        hs = measured.headlines(name, res)
        if res.get("summary", {}).get("median_abs_error") is None:
            assert "not recorded in this copy yet" in hs[0].text
            assert "meas. µs" not in measured.table(name, res).columns  # no empty measured column
        else:
            assert f"{100 * res['summary']['median_abs_error']:.0f}%" in hs[0].text
            assert ("the figure the chapters quote" in hs[0].text) == (name == quoted["round"])
    pred_only = {
        "predicted": {"date_utc": "2030-01-01T00:00:00Z", "model_commit": "abc1234", "cases": {"k": {}}}
    }
    assert "1 kernels" in measured.headlines("blind_r4", pred_only)[0].text
    pm = measured.headlines("perf_model", measured.load("perf_model"))
    blind = [h for h in pm if h.what.startswith("perf model, newest blind round")]
    assert len(blind) == 1 and blind[0].value == quoted["median_error"]
    assert f"{quoted['round']}.json" in blind[0].text and quoted["median_error_text"] in blind[0].text
