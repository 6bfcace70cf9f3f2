"""Figures for chapter 04: the SM's sub-partitions, occupancy staircases, latency hiding with
ILP, and the tail effect. Every number drawn comes from :mod:`gpulab.models.occupancy`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from gpulab.models import occupancy as occ
from gpulab.plots.style import MIN_FONT_PT


def sm_diagram(ax=None):
    """Schematic Hopper SM (H100 whitepaper): 4 sub-partitions, each with a warp scheduler,
    dispatch, a 16K x 32-bit register file and its own INT32/FP32/FP64/tensor/LD-ST/SFU units;
    one L1 data cache / shared memory for the whole SM."""
    if ax is None:  # the column's width; every label at MIN_FONT_PT or larger
        _, ax = plt.subplots(figsize=(6.6, 6.2))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 82)
    ax.axis("off")

    def box(x, y, w, h, text, color):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="k", lw=0.6))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=MIN_FONT_PT, linespacing=1.1)

    ax.add_patch(Rectangle((0.5, 0.5), 99, 81, fill=False, lw=1.5))
    ax.text(50, 78.5, "one SM (Hopper, compute capability 9.0)", ha="center", fontsize=10, weight="bold")
    for q in range(4):
        x0 = 2 + q * 24.5
        ax.add_patch(Rectangle((x0, 15), 23, 61, fill=False, lw=1, ls="--"))
        ax.text(x0 + 11.5, 73, f"sub-partition {q}", ha="center", fontsize=MIN_FONT_PT)
        box(x0 + 1, 62, 21, 9, "warp scheduler\n+ dispatch\n1 instr. / clock", "#fde6b0")
        box(x0 + 1, 52, 21, 8, "register file\n16,384 x 32-bit\n(64 KB)", "#cfe3f7")
        box(x0 + 1, 44, 10, 6.5, "INT32\nx16", "#d9f0d3")
        box(x0 + 12, 44, 10, 6.5, "FP32\nx32", "#d9f0d3")
        box(x0 + 1, 36, 10, 6.5, "FP64\nx16", "#d9f0d3")
        box(x0 + 12, 36, 10, 6.5, "tensor\ncore", "#f4cccc")
        box(x0 + 1, 28, 10, 6.5, "LD/ST", "#e6e0f8")
        box(x0 + 12, 28, 10, 6.5, "SFU", "#e6e0f8")
        ax.text(
            x0 + 11.5,
            20.5,
            "up to 16\nresident warps\n(64 per SM)",
            ha="center",
            va="center",
            fontsize=MIN_FONT_PT,
            linespacing=1.1,
        )
    box(
        2,
        3,
        96,
        9,
        "L1 data cache / shared memory, 256 KB per SM\n"
        "up to 228 KB of it as shared memory (the split is the 'carveout')",
        "#eeeeee",
    )
    return ax.figure


def staircase(threads=(128, 256, 1024), arch="sm_90", max_registers: int = 255, naive: bool = True, ax=None):
    """Occupancy against registers per thread for several block sizes, with the seed's
    W <= floor(F / (32 R)) (capped at the SM's warp limit) as a dashed line."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 4))
    a = occ.ARCHS[arch]
    r = np.arange(1, max_registers + 1)
    for t in threads:
        o = [occ.occupancy(t, int(k), 0, arch).occupancy for k in r]
        ax.step(r, o, where="post", label=f"{t} threads/block")
    if naive:
        w = np.minimum([occ.naive_register_warps(int(k), a.registers_per_sm) for k in r], a.max_warps_per_sm)
        ax.plot(
            r,
            w / a.max_warps_per_sm,
            "k--",
            lw=1,
            label=r"$\lfloor F/(32R)\rfloor$ (no granularity, no whole blocks)",
        )
    ax.set_xlabel("registers per thread R")
    ax.set_ylabel("occupancy (active warps / max)")
    ax.set_title(f"Register staircase, {arch} ({a.gpus})")
    ax.set_ylim(0, 1.05)
    ax.set_xlim(0, max_registers + 1)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax.figure


def shared_staircase(
    threads: int = 128, registers: int = 32, archs=("sm_80", "sm_86", "sm_90"), max_kb: int = 100, ax=None
):
    """Occupancy against shared memory per block (opt-in above 48 KB), per architecture."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 4))
    s = np.arange(0, max_kb * occ.KB + 1, 256)
    for arch in archs:
        a = occ.ARCHS[arch]
        o = [
            occ.occupancy(
                threads, registers, int(b), arch, max_dynamic_shared_bytes=a.shared_per_block_optin
            ).occupancy
            for b in s
        ]
        ax.step(s / occ.KB, o, where="post", label=f"{arch} ({a.shared_per_sm // occ.KB} KB/SM)")
    ax.set_xlabel("shared memory per block (KB)")
    ax.set_ylabel("occupancy")
    ax.set_title(f"Shared-memory staircase, {threads} threads/block, {registers} registers")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax.figure


def block_size_map(arch="sm_90", registers=(16, 24, 32, 40, 48, 64, 80, 96, 128), ax=None):
    """Occupancy for block sizes 32..1024 (step 32) and a few register counts, as a heat map."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 3.4))
    t = np.arange(32, 1025, 32)
    m = np.array([[occ.occupancy(int(b), r, 0, arch).occupancy for b in t] for r in registers])
    im = ax.imshow(m, aspect="auto", cmap="viridis", vmin=0, vmax=1, origin="lower")
    ax.set_yticks(range(len(registers)), [str(r) for r in registers])
    ticks = [i for i, b in enumerate(t) if b in (32, 128, 256, 384, 512, 640, 768, 1024)]
    ax.set_xticks(ticks, [str(t[i]) for i in ticks])
    ax.set_xlabel("threads per block")
    ax.set_ylabel("registers per thread")
    ax.set_title(f"Theoretical occupancy, {arch}, no shared memory")
    ax.figure.colorbar(im, ax=ax, label="occupancy")
    return ax.figure


def latency_hiding_ilp(
    latency: int = 24, ilps=(1, 2, 4), max_warps: int = 16, hw_limit: int | None = 16, ax=None
):
    """Fraction of cycles one warp scheduler issues against its resident warps, for several
    amounts of instruction-level parallelism (cycle simulation, not hardware)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4))
    w = np.arange(1, max_warps + 1)
    for ilp in ilps:
        u = [occ.issue_utilization(int(k), latency, ilp, 40 * latency) for k in w]
        ax.plot(w, u, "o-", ms=3, label=f"ILP = {ilp} independent instructions")
    if hw_limit:
        ax.axvline(hw_limit, color="k", lw=0.8, ls="--")
        ax.text(hw_limit, 0.3, f" at most {hw_limit} warps\n per scheduler (Hopper)", fontsize=MIN_FONT_PT)
    ax.set_xlabel("resident warps per scheduler (x4 per SM)")
    ax.set_ylabel("fraction of cycles issuing")
    ax.set_title(f"Hiding a {latency}-cycle dependency: warps x ILP ≈ latency")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax.figure


def tail_effect(blocks_per_sm: int = 8, n_sm: int = 132, max_waves: float = 4.0, ax=None):
    """Share of block slots filled over the launch against grid size (in waves), equal-duration
    blocks. It counts slots, not SMs: blocks of a partial wave often run faster alone."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.6))
    per_wave = blocks_per_sm * n_sm
    g = np.arange(1, int(max_waves * per_wave) + 1)
    u = [occ.waves(int(k), blocks_per_sm, n_sm)["utilization"] for k in g]
    ax.plot(g / per_wave, u)
    ax.set_xlabel(f"grid size in waves (1 wave = {blocks_per_sm} blocks x {n_sm} SMs)")
    ax.set_ylabel("block slots filled over the launch")
    ax.set_title("Tail effect: a partial last wave leaves block slots empty")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    return ax.figure
