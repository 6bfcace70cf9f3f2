"""Pictures of one warp's memory instruction: global addresses over 32-byte sectors, shared
addresses over the 32 banks.

The counts printed on the figures come from :mod:`gpulab.metrics` (the one place the counting
rules live); these functions only turn addresses into pictures. Addresses come either from a
simulator trace (``rep.accesses``) or from :func:`warp_addresses` for a textbook pattern.
"""

import textwrap

import numpy as np
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, LogLocator

from gpulab import metrics
from gpulab.plots.style import MIN_FONT_PT

from gpulab.models.memory import (  # noqa: F401 (re-exported: chapters call them as plots.memory.*)
    WARP,
    bank_summary,
    coalescing_summary,
    column_addresses,
    random_addresses,
    warp_addresses,
)


def plot_sectors(addresses, elem_bytes=4, mask=None, ax=None, title=None):
    """One warp's global addresses drawn over the 32-byte sectors and 128-byte lines they fall in.

    Each lane is a short bar at its bytes; touched sectors are shaded; the title gives the
    sector count from :func:`gpulab.metrics.global_sectors`.
    """
    addr = np.asarray(addresses, dtype=np.int64)
    act = np.ones(addr.shape, bool) if mask is None else np.asarray(mask, bool)
    s = coalescing_summary(addr, elem_bytes, act)
    a = addr[act]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 2.8))
    SB, LINE = metrics.SECTOR_BYTES, metrics.WAVEFRONT_BYTES  # sector; 128-byte cache line
    lo = (a.min() // LINE) * LINE if a.size else 0
    hi = (-(-(a.max() + elem_bytes) // LINE)) * LINE if a.size else LINE
    span = hi - lo
    touched = set()
    for x in a:
        touched.update(range(int(x) // SB, int(x + elem_bytes - 1) // SB + 1))
    lanes = np.arange(addr.size)[act]
    if span <= 4096:
        for sec in range(lo // SB, hi // SB):
            hit = sec in touched
            ax.add_patch(
                Rectangle(
                    (sec * SB, 0),
                    SB,
                    WARP,
                    facecolor="#f4a261" if hit else "white",
                    edgecolor="#999999",
                    lw=0.5,
                    alpha=0.55 if hit else 1,
                )
            )
        for line in range(lo, hi + 1, LINE):
            ax.axvline(line, color="black", lw=1.2)
        ax.barh(lanes + 0.5, elem_bytes, left=a, height=0.8, color="#264653")
        ax.set_xlabel("byte address (thin boxes: 32-byte sectors, thick lines: 128-byte lines)")
    else:  # too wide to draw every sector: mark the lanes and the sectors they touch
        for sec in touched:
            ax.axvspan(sec * SB, sec * SB + SB, color="#f4a261", alpha=0.8, lw=1)
        ax.plot(a, lanes + 0.5, "o", ms=3, color="#264653")
        ax.set_xlabel("byte address (each lane's sector is shaded; too wide to draw every sector)")
    ax.set_xlim(lo, hi)
    ax.set_ylim(0, WARP)
    ax.set_ylabel("lane")
    ax.set_title(
        title
        or (
            f"{s['sectors']} sectors for {s['bytes_used']} useful bytes: "
            f"{s['bytes_moved']} bytes moved, efficiency {s['efficiency']:.0%}"
        )
    )
    return ax


def plot_banks(addresses, elem_bytes=4, mask=None, ax=None, title=None):
    """One warp's shared-memory words placed in their banks, one row per wavefront.

    Column = bank (byte address / 4 mod 32). Lanes reading the same word share a box (a
    broadcast); a bank holding n distinct words needs n rows: that is the conflict.
    """
    addr = np.asarray(addresses, dtype=np.int64)
    act = np.ones(addr.shape, bool) if mask is None else np.asarray(mask, bool)
    s = bank_summary(addr, elem_bytes, act)
    words_per_lane = max(1, elem_bytes // metrics.BANK_BYTES)
    word_lanes = {}
    for lane in np.arange(addr.size)[act]:
        for w in range(words_per_lane):
            word_lanes.setdefault(int(addr[lane] // metrics.BANK_BYTES) + w, []).append(int(lane))
    per_bank = {}
    for word in sorted(word_lanes):
        per_bank.setdefault(int(metrics.bank_of(word * metrics.BANK_BYTES)), []).append(word)
    depth = max((len(v) for v in per_bank.values()), default=1)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, min(1.4 + 0.35 * depth, 5.5)))
    for bank, words in per_bank.items():
        for row, word in enumerate(words):
            lanes = word_lanes[word]
            color = "#2a9d8f" if row == 0 else "#e76f51"
            ax.add_patch(Rectangle((bank, row), 0.95, 0.9, facecolor=color, edgecolor="black", lw=0.4))
            label = str(lanes[0]) if len(lanes) == 1 else f"{lanes[0]}+{len(lanes) - 1}"
            ax.text(
                bank + 0.47, row + 0.45, label, ha="center", va="center", fontsize=MIN_FONT_PT, color="white"
            )
    ax.set_xlim(0, metrics.BANKS)
    ax.set_ylim(max(depth, 1), 0)
    step = 1 if depth <= 8 else 4
    ax.set_yticks(np.arange(0, depth, step) + 0.45)
    ax.set_yticklabels(range(1, depth + 1, step))
    ax.set_xticks(np.arange(0, metrics.BANKS, 4) + 0.5)
    ax.set_xticklabels(range(0, metrics.BANKS, 4))
    ax.set_xlabel("bank (box label: lane, '+n' = n more lanes reading the same word)")
    ax.set_ylabel("distinct word")
    ax.set_title(
        title or f"{s['wavefronts']} wavefront(s), ideal {s['ideal']}: {s['conflicts']} bank conflict(s)"
    )
    return ax


def plot_access(access, ax=None, title=None):
    """Draw one traced memory instruction from ``rep.accesses`` (global -> sectors, shared -> banks)."""
    addr, mask = _field(access, "addresses"), _field(access, "mask")
    size = _field(access, "size", None) or _field(access, "itemsize", None) or 4
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            mask = ((int(mask) >> np.arange(WARP)) & 1).astype(bool) if mask.ndim == 0 else mask.astype(bool)
    space = _field(access, "space")
    draw = plot_banks if space == "shared" else plot_sectors
    return draw(addr, elem_bytes=int(size), mask=mask, ax=ax, title=title)


def _field(obj, name, default=None):
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def plot_bandwidth_vs_stride(strides, gbps, copy_gbps=None, ax=None, label=None):
    """Effective bandwidth (useful bytes per second) against stride, from a benchmarks/ JSON."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(strides, gbps, "o-", label=label or "strided read")
    if copy_gbps:
        ax.axhline(copy_gbps, color="gray", ls="--", label="contiguous copy")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 1, 2, 4 (no superscripts)
    ax.set_xlabel("stride (elements)")
    ax.set_ylabel("effective bandwidth (GB/s)")
    ax.legend()
    return ax


def copy_bandwidth_lines(bw):
    """Lines naming each copy kernel's GB/s in a bandwidth.json (benchmarks/bandwidth.py), then
    torch's device-to-device copy and the best kernel's share of it, when recorded."""
    cp = bw["copy"]
    lines = [
        f"  copy, {name:40s} " + (f"{r['GBps']:7.0f} GB/s" if "GBps" in r else r.get("error", ""))
        for name, r in cp["kernels"].items()
    ]
    if "GBps" in cp.get("torch", {}):
        lines.append(f"  torch device-to-device copy {'':18s} {cp['torch']['GBps']:7.0f} GB/s")
        lines.append(f"  (best kernel = {cp['best_over_torch']:.0%} of it)")
    return lines


def plot_stride_bandwidth(bw, ax=None):
    """bandwidth.json's strided reads against the stride, with the best contiguous copy and the
    run's label as title (events around one launch: the figure includes the launch path)."""
    s = bw["strided"]
    ax = plot_bandwidth_vs_stride(
        [r["stride"] for r in s],
        [r["useful_GBps"] for r in s],
        copy_gbps=bw["copy"]["best_GBps"],
        ax=ax,
        label="strided read (CUDA events, includes the launch path)",
    )
    ax.set_title(measured_label(bw), fontsize=9)
    ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.9))  # under the copy line, above the points
    return ax


def load_benchmark(name):
    """The JSON a benchmarks/ script wrote (``name`` without .json), or None (see gpulab.results)."""
    from gpulab import results

    return results.load(name)


def measured_label(res):
    """'GPU, date' line from a benchmark JSON's environment block (a figure title: the script's
    folder is no reader's business, issue 25 point 7)."""
    env = res.get("environment", {})
    when = env.get("when_utc") or env.get("date_utc") or "?"
    return f"measured on {env.get('gpu', '?')} on {when[:10]}"


KiB, MiB = 1 << 10, 1 << 20


def size_text(nbytes):
    """4096 -> '4 KiB', 3 << 20 -> '3 MiB', 1 << 30 -> '1 GiB' (binary units, as the benchmarks size sets)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", KiB)):
        if nbytes >= scale:
            v = nbytes / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{nbytes} B"


SCOPES = [  # (execution scope, memory, who sees it, where it lives)
    ("thread", "registers", "one thread", "register file in the SM"),
    (
        "block (on one SM)",
        "shared memory / L1",
        "the threads of one block (sm_90: of its cluster)",
        "SRAM in the SM",
    ),
    ("grid (all SMs)", "L2 cache", "every thread of every block", "on the die, shared by all SMs"),
    (
        "grid and the host",
        "global memory (HBM)",
        "every thread, every launch, the CPU by copies",
        "DRAM stacks beside the die",
    ),
]


def plot_scope_map(ax=None):
    """The execution hierarchy beside the memory hierarchy, joined at the scope that sees each memory."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 4.4))  # the column's width
    n = len(SCOPES)
    for i, (ex, mem, who, where) in enumerate(SCOPES):
        y = n - 1 - i
        shade = 0.25 + 0.6 * i / (n - 1)
        ax.add_patch(Rectangle((0, y + 0.1), 3, 0.8, facecolor=plt.cm.Blues(shade), edgecolor="black"))
        ax.text(
            1.5,
            y + 0.5,
            textwrap.fill(ex, 14),
            ha="center",
            va="center",
            fontsize=9,
            color="white" if shade > 0.6 else "black",
        )
        ax.add_patch(Rectangle((5, y + 0.1), 3.4, 0.8, facecolor=plt.cm.Oranges(shade), edgecolor="black"))
        ax.text(
            6.7,
            y + 0.5,
            textwrap.fill(mem, 14),
            ha="center",
            va="center",
            fontsize=9,
            color="white" if shade > 0.6 else "black",
        )
        ax.annotate("", xy=(5, y + 0.5), xytext=(3, y + 0.5), arrowprops=dict(arrowstyle="<->"))
        ax.text(
            8.6,
            y + 0.5,
            textwrap.fill(f"seen by {who}; {where}", 24),
            va="center",
            fontsize=MIN_FONT_PT,
            linespacing=1.1,
        )
    ax.text(1.5, n + 0.1, "execution scope", ha="center", fontweight="bold")
    ax.text(6.7, n + 0.1, "memory it shares", ha="center", fontweight="bold")
    ax.annotate("", xy=(-0.4, 0.1), xytext=(-0.4, n - 0.1), arrowprops=dict(arrowstyle="->"))
    ax.text(
        -0.6,
        n / 2,
        "wider scope: farther, slower, larger",
        rotation=90,
        ha="right",
        va="center",
        fontsize=MIN_FONT_PT,
    )
    ax.set_xlim(-1.2, 13.6)
    ax.set_ylim(0, n + 0.4)
    ax.set_axis_off()
    return ax


def plot_latency(res, ax=None, ghz=None):
    """Pointer-chase latency against working-set size from gpulab/data/results/latency.json, in SM
    cycles: ns x ``ghz`` (the clock the chapter converts at, e.g. the median sampled during the
    run), or the file's cycles at the driver's maximum clock when ``ghz`` is None."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.5))
    rows = res["global"]
    x = [r["working_set_bytes"] for r in rows]

    def cyc(r):
        return r["ns"] * ghz if ghz else r["cycles_at_max_clock"]

    ax.plot(x, [cyc(r) for r in rows], "o-", label="global loads (pointer chase)")
    ax.axhline(cyc(res["shared"]), color="C2", ls="--", label="shared memory")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=8))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_text(int(v))))  # "16 KiB"
    ax.set_xlabel("working set")
    ax.set_ylabel("cycles per dependent load")
    ax.set_title(measured_label(res), fontsize=9)
    ax.legend()
    return ax


def plot_shared_occupancy(threads_per_block=256, registers_per_thread=32, marks=None, ax=None, arch="sm_90"):
    """Resident warps per SM against shared memory per block (chapter 4's occupancy model).

    ``marks`` maps a label to a kernel's shared bytes per block, drawn as points on the curve.
    """
    from gpulab.models.occupancy import occupancy

    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 3.5))
    kb = np.arange(0, 228, 1)
    occ = [
        occupancy(
            threads_per_block,
            registers_per_thread,
            int(k * 1024),
            arch,
            max_dynamic_shared_bytes=int(k * 1024),
        ).occupancy
        for k in kb
    ]
    ax.step(kb, occ, where="post")
    for label, b in (marks or {}).items():
        o = occupancy(
            threads_per_block, registers_per_thread, int(b), arch, max_dynamic_shared_bytes=int(b)
        ).occupancy
        ax.plot(b / 1024, o, "o", label=f"{label}: {b / 1024:.1f} KB, {o:.0%}")
    if marks:
        ax.legend()
    ax.set_xlabel("shared memory per block (KB)")
    ax.set_ylabel("occupancy (resident / 64 warps)")
    ax.set_title(
        f"{arch}: {threads_per_block} threads/block, {registers_per_thread} registers/thread", fontsize=9
    )
    ax.set_ylim(0, 1.05)
    return ax
