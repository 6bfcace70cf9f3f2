"""The sentences chapter 9 glues about the SM clock of its recorded tensor-core runs: what its one
nvidia-smi reading says, whether NVML flagged the power cap, and how the chapter's FP16 run
compares with chapter 11's batched one. Pure: the chapter passes the records it loaded
(tensor_cores_throughput.json, sgemm.json), so each branch can be tested on fake records."""

from __future__ import annotations

from gpulab.models.mma import HOPPER_SM_DENSE_FMA_PER_CLK, peak_at_clock

FP32_FMA_PER_CLK = 128  # FP32 multiply-adds per clock per SM on the CUDA cores (Hopper)


def clock_share(dense_peak: float, peak_at_clk: float, measured: float) -> float:
    """Share of the gap datasheet -> measured that the lower clock accounts for."""
    return (dense_peak - peak_at_clk) / (dense_peak - measured)


def run_reading(tflops: dict, peak_run: float, fp32_timed: dict | None, n_sm: int) -> str:
    """What the one nvidia-smi reading (the FP16 peak at its clock: ``peak_run``) says against
    the measured ``tflops`` per format; with the FP32 clock sampled during the timed n = 8192
    calls (``fp32_timed``, a sweep_sm_clock record) the FP32 gap is read at that clock."""
    if fp32_timed:
        fp32_peak = peak_at_clock(fp32_timed["median_MHz"], n_sm, FP32_FMA_PER_CLK)
        return (
            f"At that clock the tensor cores' peak would be {peak_run:.0f} TFLOP/s, "
            + ("below" if tflops["fp16"] > peak_run else "against")
            + f" the measured {tflops['fp16']:.0f} TFLOP/s, so the reading is not the "
            "clock the timed calls ran at: one sample says what the clock was at one "
            "moment of a separate loop. This run also sampled the clock during the timed "
            "calls of every format and size (below for FP16); FP32 at n = 8192 ran at a "
            f"median {fp32_timed['median_MHz']:.0f} MHz, where its peak is {fp32_peak:.0f} "
            f"TFLOP/s and the measured {tflops['fp32']:.1f} TFLOP/s is "
            f"{tflops['fp32'] / fp32_peak:.0%} of it: for FP32 the gap is not the "
            "clock."
        )
    return (  # the record has only the one nvidia-smi reading
        f"At that clock the tensor cores' peak is {peak_run:.0f} TFLOP/s, and the "
        f"measured {tflops['fp16']:.0f} TFLOP/s is "
        f"{tflops['fp16'] / peak_run:.0%} of it: for FP16, most of the gap to the "
        "datasheet is the clock, not the library. One sample is not a clock record: it "
        "says what the clock was at one moment of one matmul, not over the timed runs, "
        "and this run recorded no such sample for the other formats. For FP32 this run "
        "has no clock reading, so it cannot say how much of FP32's gap is the clock."
    )


def _capped(rec: dict) -> int:
    return rec.get("clock_reasons_seen", {}).get("sw_power_cap", 0)


def run_power(fp16_sweep: dict, copy_clock: dict, max_mhz: float, clock_frac: float) -> str:
    """Whether NVML flagged the software power cap during the timed FP16 calls (``fp16_sweep``:
    size -> sweep_sm_clock record) and the copy (``copy_clock``), against the ``max_mhz`` the
    GPU reports; ``clock_frac``: the reading's clock over the datasheet's."""
    fp16 = list((fp16_sweep or {}).values())
    capped = sum(_capped(c) for c in fp16)
    if not capped:  # no throttle reasons recorded
        return (
            f"The GPU was most likely power-limited (the run did not record the throttle "
            f"reasons nvidia-smi can report) and ran at {clock_frac:.0%} of the "
            "datasheet's clock."
        )
    n_fp16 = sum(c["samples"] for c in fp16)
    sizes = sorted(int(n) for n in fp16_sweep)
    copy_capped = _capped(copy_clock or {})
    return (
        "That one reading did not include throttle reasons, but NVML "
        f"reported the software power cap as the reason in {capped} of the {n_fp16} "
        "clock samples "
        f"taken during the timed FP16 calls (every size from {sizes[0]} to {sizes[-1]})"
        + (f" and in {copy_capped} of the {copy_clock['samples']} during the copy" if copy_capped else "")
        + ": the power controller held the clock below the "
        f"{max_mhz:.0f} MHz maximum "
        + (
            f"throughout the FP16 sweep, even at n = {sizes[0]}, whose calls are short"
            if capped == n_fp16
            else "for part of the FP16 sweep"
        )
        + ". The flag tells the controller's state, not the power each call drew "
        "(the run recorded no power during the timed calls). At the moment of the "
        f"reading the clock was {clock_frac:.0%} of the datasheet's."
    )


def fp16_runs(
    measured: float,
    here_sweep: dict | None,
    batched: dict,
    dense_peak: float,
    n_sm: int,
    unused: list[float],
    sessions: tuple[str, str] = ("", ""),
    reading: dict | None = None,
) -> dict:
    """How this chapter's FP16 n = 8192 run (``measured`` TFLOP/s; ``here_sweep``: its
    sweep_sm_clock["fp16"], size -> record, or None when the run sampled no clock) compares
    with chapter 11's batched run (``batched``: "tflops", "MHz", "samples", "capped"), as
    {"compare": the paragraph's sentences, "summary": the summary's clause}. ``unused``: the
    batched runs' shares of the peak left unused at their clocks; ``sessions``: the two runs'
    start times (this one's, chapter 11's), "" when unrecorded; ``reading``: the one
    nvidia-smi reading ("sm_mhz"), the comparison when the sweep sampled no clock."""
    fma = HOPPER_SM_DENSE_FMA_PER_CLK["fp16"]
    tc_peak = peak_at_clock(batched["MHz"], n_sm, fma)
    tc_share = clock_share(dense_peak, tc_peak, batched["tflops"])
    unused = list(unused)
    here = (here_sweep or {}).get("8192")
    if not here:  # one nvidia-smi reading, in a separate loop of the same matmul
        peak_run = peak_at_clock(reading["sm_mhz"], n_sm, fma)
        run_share = clock_share(dense_peak, peak_run, measured)
        unused.append(1 - measured / peak_run)
        assert abs(batched["MHz"] / reading["sm_mhz"] - 1) < 0.05, "clocks differ"
        assert min(run_share, tc_share) > 0.5, "the clock is not most of both gaps"
        compare = (
            f"By the single reading above it accounts for {run_share:.0%}. The two "
            "runs read nearly the same clock, yet this chapter's was "
            f"{measured / batched['tflops'] - 1:.0%} faster, so the difference between them "
            "is not the clock as either run read it. They were timed differently: "
            "here single calls between synchronisations, with the clock read once in "
            "a separate loop of the same matmul; there long batches with the clock "
            "sampled throughout. Whether the clock ran higher during this chapter's "
            "short timed calls than in that loop was not measured. What both runs "
            "support: the clock is more than half of FP16's gap to the datasheet, and "
            f"the library leaves {min(unused):.0%} to {max(unused):.0%} of the peak "
            "at the measured clock unused."
        )
        summary = (
            f"one sample during the FP16 run read {reading['sm_mhz']:.0f} MHz at the "
            "board's "
            "power limit, which explains most of FP16's distance from its peak (a run that "
            f"sampled the clock throughout puts the clock's share at {tc_share:.0%})"
        )
        return {"compare": compare, "summary": summary}
    here_mhz = here["median_MHz"]
    here_peak = peak_at_clock(here_mhz, n_sm, fma)
    unused.append(1 - measured / here_peak)
    thr, clk = measured / batched["tflops"] - 1, here_mhz / batched["MHz"] - 1
    pace = "kept pace with it" if thr >= 0.8 * clk else "did not keep pace with it"
    than = "about the same clock as"
    if abs(clk) > 0.05:
        than = "a higher clock than" if clk > 0 else "a lower clock than"
    above = here_peak >= dense_peak
    if above:
        here_part = "none in this chapter's"
    else:
        here_part = f"{clock_share(dense_peak, here_peak, measured):.0%} in this chapter's run"
    # within this run: did the FP16 clock change with the size (how long a call ran)?
    fp16_mhz = {int(n): c["median_MHz"] for n, c in here_sweep.items()}
    lo_n, hi_n = min(fp16_mhz), max(fp16_mhz)
    if max(fp16_mhz.values()) - min(fp16_mhz.values()) < 1:
        sizes_read = f"read the same {here_mhz:.0f} MHz"
    else:
        sizes_read = f"read {min(fp16_mhz.values()):.0f} to {max(fp16_mhz.values()):.0f} MHz"
    here_capped = _capped(here)
    both_capped = (
        "NVML flagged the software power cap, the controller's state, in both ("
        f"{here_capped} of {here['samples']} samples here, {batched['capped']} of "
        f"{batched['samples']} there); "
        if here_capped and batched["capped"]
        else ""
    )
    compare = (
        "This chapter's run sampled the clock during its timed calls too: a median "
        f"of {here_mhz:.0f} MHz for FP16 at n = {hi_n}. At {here_mhz:.0f} MHz "
        f"the peak is {here_peak:.0f} TFLOP/s, and the measured {measured:.0f} TFLOP/s is "
        f"{measured / here_peak:.0%} of it. This run read {than} chapter 11's "
        f"batched run, and the throughput {pace}: {thr:+.0%} throughput for "
        f"{clk:+.0%} clock. Why was not measured (the clock may move faster than "
        "NVML's sampling, or part of the work may not scale with the SM clock). So "
        "how much of FP16's gap to the datasheet is the clock differs between the "
        f"two recorded runs: {tc_share:.0%} in chapter 11's batched run, {here_part}. "
        + (f"{both_capped}within" if both_capped else "Within")
        + f" this run every FP16 size, from {lo_n} to {hi_n}, "
        f"{sizes_read}, so the difference is not shown to come from how long each "
        "call ran. The two runs were different sessions"
        + (f" (chapter 11's at {sessions[1]} UTC, this one at {sessions[0]})" if all(sessions) else "")
        + " on lent machines, not necessarily the same board. In both, the library "
        f"leaves {min(unused):.0%} to {max(unused):.0%} of the peak at the measured "
        "clock unused."
    )
    summary = (
        "FP16's clock differed between runs"
        + (", NVML flagging the software power cap in both" if both_capped else "")
        + f": a median {here_mhz:.0f} MHz in this chapter's timed calls ("
        + (
            "above the clock the datasheet implies, so there the gap is not the clock"
            if above
            else f"where the clock is {clock_share(dense_peak, here_peak, measured):.0%} of the gap"
        )
        + f"), {batched['MHz']:.0f} MHz in chapter 11's batched run, where the "
        f"clock is {tc_share:.0%} of the gap"
    )
    return {"compare": compare, "summary": summary}


def fp8_accumulation(tflops: dict, sweep_clock: dict | None, sweep_tflops: dict | None, n_sm: int) -> str:
    """FP8 with cuBLAS's promotion of partial sums ("fp8") against fast accumulation
    ("fp8_fast_accum") at n = 8192: ``tflops`` per mode, ``sweep_clock`` and ``sweep_tflops``
    the run's per-mode, per-size records (None when not recorded). When the two modes ran at
    different clocks, the run cannot say what promotion costs, and the sentence says so."""
    fast, promoted = tflops.get("fp8_fast_accum", float("nan")), tflops["fp8"]
    modes = ("fp8", "fp8_fast_accum")
    clocks = {m: ((sweep_clock or {}).get(m) or {}).get("8192") for m in modes}
    both = f"The recorded run timed both: {promoted:.0f} TFLOP/s with promotion"
    if not all(clocks.values()):  # no clock per mode in the record
        return (
            f"{both}, {fast:.0f} without ({fast / promoted - 1:+.1%}); the run recorded no "
            "clock per mode, so how much of that is the mode and how much the clock is not known."
        )
    mhz_p, mhz_f = (clocks[m]["median_MHz"] for m in modes)
    clk_gap = mhz_f / mhz_p - 1
    if abs(clk_gap) < 0.01:  # the same clock: the throughput difference is the mode's
        return (
            f"{both}, {fast:.0f} without, both at a median SM clock of {mhz_p:.0f} MHz, so "
            f"on this GPU the accurate mode cost {fast / promoted - 1:.1%} of throughput."
        )
    assert abs(clk_gap) >= 0.01, "the two FP8 modes ran at the same clock"
    capped = all(_capped(c) == c["samples"] for c in clocks.values())
    under_cap = ", NVML flagging the software power cap in every sample of both" if capped else ""
    fma8 = HOPPER_SM_DENSE_FMA_PER_CLK["fp8"]
    eff = {m: tflops[m] / peak_at_clock(clocks[m]["median_MHz"], n_sm, fma8) for m in modes}
    sweep = sweep_tflops or {}
    sizes = sorted(set(sweep.get("fp8", {})) & set(sweep.get("fp8_fast_accum", {})), key=int)
    ahead = [n for n in sizes if sweep["fp8"][n] > sweep["fp8_fast_accum"][n]]
    behind = [n for n in sizes if sweep["fp8"][n] < sweep["fp8_fast_accum"][n]]
    across = ""
    if ahead and behind:
        across = (
            "Across the sweep's sizes neither mode is consistently faster (promotion ahead at "
            f"n = {', '.join(ahead)}, behind at {', '.join(behind)}). "
        )
    return (
        f"{both}, at a median SM clock of {mhz_p:.0f} MHz, and {fast:.0f} without, at "
        f"{mhz_f:.0f} MHz{under_cap}. The clocks differ by {abs(clk_gap):.0%}, the "
        f"throughputs by {abs(fast / promoted - 1):.1%}; per clock, the promoted run reached "
        f"{eff['fp8']:.0%} of the peak at its clock, the other {eff['fp8_fast_accum']:.0%}. "
        f"{across}So this run cannot separate what promotion costs from the clock: whether "
        "promotion's extra work lowered the clock, or the power controller's state did, was "
        "not recorded."
    )
