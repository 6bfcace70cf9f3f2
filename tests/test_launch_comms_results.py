"""Chapter 10 reads recorded launch costs and all-reduce fits through gpulab.timeline.launch_costs
and gpulab.models.comms.measured_alpha_beta: each figure under the name of what it measures."""
import pytest

from gpulab.models import comms
from gpulab.timeline import LAUNCH_COST_LABELS, launch_costs


def test_launch_costs_reads_the_labelled_block():
    res = {"launch_parts": {"numba": {"host_launch_s": 17e-6, "gpu_single_behind_long_s": 2e-6,
                                      "gpu_back_to_back_s": 1.5e-6, "end_to_end_s": 30e-6,
                                      "events_idle_stream_s": 21e-6,
                                      "ncu_gpu_time_duration": {"gpu_time_duration_s_median": 1.9e-6}},
                            "torch": {"host_launch_s": 7e-6, "gpu_single_behind_long_s": 1.8e-6}},
           "numba_tiny": {"host_s_per_launch": 99.0, "gpu_s_single_isolated": 99.0}}
    nb = launch_costs(res)
    assert nb == {"host_launch_s": 17e-6, "gpu_kernel_s": 2e-6, "gpu_back_to_back_s": 1.5e-6,
                  "end_to_end_s": 30e-6, "events_idle_stream_s": 21e-6, "gpu_kernel_ncu_s": 1.9e-6}
    th = launch_costs(res, "torch")
    assert th["host_launch_s"] == 7e-6 and th["gpu_kernel_s"] == 1.8e-6 and th["end_to_end_s"] is None
    assert set(nb) == set(LAUNCH_COST_LABELS)


def test_launch_costs_labels_old_files_for_what_they_measured():
    old = {"numba_tiny": {"host_s_per_launch": 17.6e-6, "gpu_s_per_launch": 17.6e-6,
                          "gpu_s_single_isolated": 21.6e-6},
           "torch_add_": {"host_s_per_launch": 7.1e-6}}
    nb = launch_costs(old)
    # the idle-stream events are never passed off as the kernel's GPU time
    assert nb["gpu_kernel_s"] is None and nb["events_idle_stream_s"] == 21.6e-6
    assert nb["host_launch_s"] == 17.6e-6 and launch_costs(old, "torch")["host_launch_s"] == 7.1e-6
    assert all(v is None for v in launch_costs(None).values())
    with pytest.raises(ValueError, match="numba"):
        launch_costs(old, "cupy")


def test_measured_alpha_beta():
    res = {"env": {"gpus": 2, "device": "NVIDIA H200", "nccl": "2.27.3", "when_utc": "2026-12-01T01:00:00Z"},
           "fit": {"alpha_s": 4e-6, "bandwidth_Bps": 350e9, "small_message_time_s": 8e-6,
                   "max_bus_bandwidth_Bps": 360e9, "alpha_graph_s": 2e-6},
           "p2p_copy": {"bytes": 1 << 30, "gpu0_to_gpu1": {"GBps": 390.0}, "gpu1_to_gpu0": {"GBps": 380.0}},
           "topology": "GPU0\t X \tNV18\nGPU1\tNV18\t X \n NV#  = Connection traversing a bonded set of # NVLinks"}
    m = comms.measured_alpha_beta(res)
    assert m["alpha_s"] == 4e-6 and m["p"] == 2 and m["date"] == "2026-12-01"
    assert m["p2p_copy_Bps"] == 380e9 and m["nvlinks_between"] == 18 and m["alpha_graph_s"] == 2e-6
    assert m["alpha_back_to_back_s"] is None
    # consistent with the ring model the fit assumes: a small message costs 2(p-1) alpha
    assert comms.ring_allreduce(m["p"], 0, m["alpha_s"], m["bandwidth_Bps"]) == pytest.approx(m["small_message_time_s"])
    assert comms.measured_alpha_beta(None) is None
    with pytest.raises(ValueError, match="allreduce_alpha_beta.py"):
        comms.measured_alpha_beta({"env": {"gpus": 2}, "fit": {"alpha_s": 1e-6}})


def test_stall_shares_draws_each_kernel_and_refuses_other_files():
    import matplotlib
    matplotlib.use("Agg")
    from gpulab.plots import amdahl as aplots
    res = {"kernels": {
        "dependent_loads": {"built_for": "long_scoreboard",
                            "share_of_stalls": {"long_scoreboard": 0.9, "wait": 0.05, "selected": 0.3}},
        "one_warp_works": {"built_for": "barrier", "share_of_stalls": {"barrier": 0.8, "wait": 0.1}}}}
    ax = aplots.stall_shares(res)
    widths = [p.get_width() for p in ax.patches]
    assert sum(widths) == pytest.approx(2.0)              # each bar sums to the whole of its stalls
    assert "long scoreboard" in [t.get_text() for t in ax.get_legend().get_texts()]
    with pytest.raises(ValueError, match="ncu_runs.py stalls"):
        aplots.stall_shares({"rows": []})
