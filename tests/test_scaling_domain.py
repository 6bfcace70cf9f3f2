"""Chapter 10's scaling-out conclusions stop at one NVSwitch domain (issue 23 review): the figure
hatches p past it, the explorer says so, and a benchenv clock record in a tensor-core result
does not break the nvidia-smi clock readings."""

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from gpulab.models import comms as C, mma  # noqa: E402
from gpulab.plots import amdahl as P  # noqa: E402
from gpulab.widgets import amdahl as WA  # noqa: E402


def _hatched(ax):
    return [p for p in ax.patches if p.get_hatch()]


def test_scaling_plot_hatches_only_past_the_domain():
    m = C.StepModel(1e-3, 0.2, 1e9, 10e-6, C.LINKS["PCIe 5.0 x16"].per_direction)
    ax = P.scaling_plot({"pcie": m}, p_valid=C.NVSWITCH_DOMAIN_GPUS)
    (span,) = _hatched(ax)
    x0 = span.get_x() if hasattr(span, "get_x") else span.get_xy()[0][0]
    assert x0 == C.NVSWITCH_DOMAIN_GPUS and ax.get_xlim() == (1, 1024)
    assert "outside the model" in span.get_label()
    # the curve itself is unchanged: the hatch marks the range, it does not cut it
    y = [l for l in ax.get_lines() if l.get_label() == "pcie"][0].get_ydata()
    assert len(y) > 8 and np.isfinite(y).all()
    ax = P.scaling_plot({"pcie": m}, ps=[1, 2, 4, 8], p_valid=C.NVSWITCH_DOMAIN_GPUS)
    assert not _hatched(ax)  # nothing past the domain, nothing hatched
    plt.close("all")


def test_scaling_explorer_marks_a_best_p_past_the_domain_as_a_what_if():
    ns = {}
    s = WA.scaling_explorer(ns, "best", alpha_us=7.0)
    assert ns["best"] > C.NVSWITCH_DOMAIN_GPUS and "what-if" in s.out.value
    s.compute_ms.value = 1.0  # little compute: the peak falls inside the domain
    assert ns["best"] <= C.NVSWITCH_DOMAIN_GPUS and "what-if" not in s.out.value


def test_clock_readings_skip_a_benchenv_clock_record(tmp_path):
    p = tmp_path / "tensor_cores_throughput.json"
    rec = {"median_MHz": 1755.0, "min_MHz": 1700.0, "max_MHz": 1980.0, "samples": 9, "source": "NVML"}
    smi = "1470 MHz, 1980 MHz, 699.32 W"
    p.write_text(json.dumps({"sm_clock": rec, "sm_clock_mhz_max_mhz_power_during_fp16_8192": smi}))
    (r,) = mma.clock_readings(mma.ThroughputRecord("s", "GPU", "x", "m", {}, str(p)))
    assert r["sm_mhz"] == 1470


def test_chapter_10_draws_no_scaling_conclusion_past_the_domain():
    from pathlib import Path

    import nbformat

    nb = nbformat.read(Path(__file__).resolve().parents[1] / "chapters" / "10_amdahl.ipynb", as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    # every best_p the chapter prints searches one NVSwitch domain, and the figure hatches the rest
    assert "comms.best_p(m, p_dom)" in code and "p_dom = comms.NVSWITCH_DOMAIN_GPUS" in code
    assert "best_p(m, 1024)" not in code and code.count("p_valid=p_dom") == 2
