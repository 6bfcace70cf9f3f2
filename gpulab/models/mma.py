"""Warp-collective matrix multiply-accumulate (MMA), emulated lane by lane on the CPU.

``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`` computes D = A x B + C for a 16x16 A,
a 16x8 B and 16x8 C/D, with the matrices spread over the 32 lanes of a warp. Which lane holds
which element is fixed by the PTX ISA, section "Matrix Fragments for mma.m16n8k16 with
floating point type" (https://docs.nvidia.com/cuda/parallel-thread-execution/index.html
#warp-level-matrix-fragment-mma-16816-float); the formulas below are that section's.
The wmma API (16x16x16 tiles) deliberately leaves its fragment layout unspecified, so only
its tile-level arithmetic is modelled here.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass

import numpy as np

from gpulab.models.occupancy import WARP

__all__ = [
    "SHAPES",
    "fragment_coords",
    "owner_map",
    "load_fragments",
    "store_fragments",
    "mma_sync_m16n8k16",
    "mma_matmul",
    "wmma_matmul",
    "operand_traffic",
    "H200_DATASHEET",
    "roofline",
    "ridge_point",
    "matmul_intensity",
    "HOPPER_SM_DENSE_FMA_PER_CLK",
    "implied_clock_ghz",
    "peak_at_clock",
    "ISSUE7_RECORD",
    "load_throughput_records",
    "load_mma_check",
]

# operand -> (rows, cols, elements per lane)
SHAPES = {"A": (16, 16, 8), "B": (16, 8, 4), "C": (16, 8, 4)}


def fragment_coords(operand: str):
    """(row, col) arrays of shape (32 lanes, elements per lane) for operand A, B or C (= D),
    f16 inputs / f32 or f16 accumulators, straight from the PTX ISA formulas."""
    lane = np.arange(WARP)[:, None]
    group = lane >> 2  # groupID           = %laneid >> 2
    tig = lane % 4  # threadID_in_group = %laneid % 4
    n = SHAPES[operand][2]
    i = np.arange(n)[None, :]
    if operand == "A":
        # row = groupID for a0,a1,a4,a5 ; groupID+8 otherwise
        # col = tig*2 + (i&1) for i<4 ; tig*2 + (i&1) + 8 for i>=4
        row = group + 8 * (((i >= 2) & (i < 4)) | (i >= 6))
        col = tig * 2 + (i & 1) + 8 * (i >= 4)
    elif operand == "B":
        # row = tig*2 + (i&1) for i<2 ; tig*2 + (i&1) + 8 for i>=2 ; col = groupID
        row = tig * 2 + (i & 1) + 8 * (i >= 2)
        col = np.broadcast_to(group, (WARP, n))
    elif operand in ("C", "D"):
        # row = groupID for i<2 ; groupID+8 for i>=2 ; col = tig*2 + (i&1)
        row = group + 8 * (i >= 2)
        col = tig * 2 + (i & 1)
    else:
        raise ValueError(f"operand must be 'A', 'B' or 'C', not {operand!r}")
    return np.broadcast_to(row, (WARP, n)).copy(), np.broadcast_to(col, (WARP, n)).copy()


def owner_map(operand: str):
    """(lane, index) arrays shaped like the matrix: which lane holds element [r, c] and as
    which of its fragment elements (a0..a7, b0..b3, c0..c3). -1 where nobody would."""
    op = "C" if operand == "D" else operand
    rows, cols, _ = SHAPES[op]
    lane_of = -np.ones((rows, cols), dtype=int)
    idx_of = -np.ones((rows, cols), dtype=int)
    r, c = fragment_coords(op)
    for lane in range(WARP):
        for i in range(r.shape[1]):
            lane_of[r[lane, i], c[lane, i]] = lane
            idx_of[r[lane, i], c[lane, i]] = i
    return lane_of, idx_of


def load_fragments(matrix, operand: str) -> np.ndarray:
    """What each lane holds: a (32, n) array taken from the full matrix by the PTX layout."""
    m = np.asarray(matrix)
    op = "C" if operand == "D" else operand
    if m.shape != SHAPES[op][:2]:
        raise ValueError(f"{operand} must be {SHAPES[op][:2]}, got {m.shape}")
    r, c = fragment_coords(op)
    return m[r, c]


def store_fragments(frags, operand: str) -> np.ndarray:
    """Inverse of :func:`load_fragments`: rebuild the full matrix from the 32 lanes' values."""
    op = "C" if operand == "D" else operand
    f = np.asarray(frags)
    rows, cols, n = SHAPES[op]
    if f.shape != (WARP, n):
        raise ValueError(f"{operand} fragments must be (32, {n}), got {f.shape}")
    out = np.zeros((rows, cols), dtype=f.dtype)
    r, c = fragment_coords(op)
    out[r, c] = f
    return out


def mma_sync_m16n8k16(a_frag, b_frag, c_frag, acc: str = "f32") -> np.ndarray:
    """Emulate one warp-wide ``mma.sync.m16n8k16.row.col``: lanes' fragments in, D fragments out.

    Inputs are rounded to fp16 (as the registers hold them); products are exact and each output
    element's 16 products plus C are summed in float64 and rounded once to the accumulator type
    (``f32`` or ``f16``). The PTX ISA leaves accumulation order and rounding unspecified (it only
    promises at least single precision for f32), so a GPU may differ in the last bits.
    """
    a = store_fragments(np.asarray(a_frag, dtype=np.float16), "A").astype(np.float64)
    b = store_fragments(np.asarray(b_frag, dtype=np.float16), "B").astype(np.float64)
    dt = np.float32 if acc == "f32" else np.float16
    c = store_fragments(np.asarray(c_frag, dtype=dt), "C").astype(np.float64)
    d = (a @ b + c).astype(dt)
    return load_fragments(d, "D")


def mma_matmul(a, b, c=None, acc: str = "f32") -> np.ndarray:
    """D = A @ B + C for multiples of (16, 8, 16) built only from fragment-level
    :func:`mma_sync_m16n8k16` calls: each 16x8 output tile is one warp looping over K."""
    a = np.asarray(a, dtype=np.float16)
    b = np.asarray(b, dtype=np.float16)
    m, k = a.shape
    k2, n = b.shape
    if k != k2 or m % 16 or n % 8 or k % 16:
        raise ValueError("need A (16i x 16k), B (16k x 8j)")
    dt = np.float32 if acc == "f32" else np.float16
    d = np.zeros((m, n), dtype=dt) if c is None else np.asarray(c, dtype=dt).copy()
    for i in range(0, m, 16):
        for j in range(0, n, 8):
            frag = load_fragments(d[i : i + 16, j : j + 8], "C")
            for kk in range(0, k, 16):
                frag = mma_sync_m16n8k16(
                    load_fragments(a[i : i + 16, kk : kk + 16], "A"),
                    load_fragments(b[kk : kk + 16, j : j + 8], "B"),
                    frag,
                    acc,
                )
            d[i : i + 16, j : j + 8] = store_fragments(frag, "D")
    return d


def wmma_matmul(a, b, c=None, tile: int = 16, acc=np.float32) -> np.ndarray:
    """wmma-style tiled matmul: fp16 A and B, 16x16x16 tile MMAs, accumulator in ``acc``.

    Each warp owns one 16x16 output tile and walks K in steps of 16; every tile MMA is summed
    exactly and rounded once to the accumulator, so the only rounding is one per K-step (plus
    the fp16 rounding of the inputs). M, N, K must be multiples of ``tile``.
    """
    a = np.asarray(a, dtype=np.float16).astype(np.float64)
    b = np.asarray(b, dtype=np.float16).astype(np.float64)
    m, k = a.shape
    _, n = b.shape
    if m % tile or n % tile or k % tile or b.shape[0] != k:
        raise ValueError(f"shapes must be multiples of {tile}")
    d = np.zeros((m, n), dtype=acc) if c is None else np.asarray(c, dtype=acc).copy()
    # all output tiles at once (vectorised over warps), one K-step at a time
    for kk in range(0, k, tile):
        d = (d.astype(np.float64) + a[:, kk : kk + tile] @ b[kk : kk + tile, :]).astype(acc)
    return d


def operand_traffic(m: int = 16, n: int = 16, k: int = 16) -> dict:
    """Operand reads for one m x n x k multiply-accumulate: one FMA per thread reads three
    registers per multiply-add; an MMA array reads each element of A, B and C once and
    reuses it across the array (the reason it wins on energy and area per FLOP)."""
    fma = m * n * k
    return dict(
        fmas=fma,
        fma_operand_reads=3 * fma,
        mma_operand_reads=m * k + k * n + m * n,
        reuse=3 * fma / (m * k + k * n + m * n),
    )


# --------------------------------------------------------------------------- roofline

# NVIDIA H200 (SXM) datasheet, https://www.nvidia.com/en-us/data-center/h200/ : tensor-core
# figures there are "with sparsity"; the dense peaks (half of them) are what a dense matmul
# can reach. TFLOP/s; memory bandwidth in TB/s.
H200_DATASHEET = {
    "source": "NVIDIA H200 SXM datasheet (nvidia.com/en-us/data-center/h200); tensor-core "
    "figures are the datasheet's 'with sparsity' values halved (dense)",
    "peak_tflops": {
        "fp32": 67.0,
        "tf32": 989.0 / 2,
        "bf16": 1979.0 / 2,
        "fp16": 1979.0 / 2,
        "fp8": 3958.0 / 2,
    },
    "bandwidth_tbs": 4.8,
}


#: Dense tensor-core multiply-adds per clock per Hopper SM (H100 SXM5; the H200 has the same
#: GH100 SMs): twice an A100 SM's 1024 FP16 FMA/clock, i.e. 4 tensor cores x 512 for FP16/BF16,
#: half that for TF32 and twice for FP8 (NVIDIA H100 Tensor Core GPU Architecture whitepaper).
HOPPER_SM_DENSE_FMA_PER_CLK = {"tf32": 1024, "fp16": 2048, "bf16": 2048, "fp8": 4096}


def implied_clock_ghz(peak_tflops: float, n_sm: int, fma_per_clk_per_sm: int) -> float:
    """The SM clock a datasheet peak assumes: peak / (SMs x 2 FLOP per FMA x FMA/clock/SM)."""
    return peak_tflops * 1e12 / (n_sm * 2 * fma_per_clk_per_sm) / 1e9


def peak_at_clock(clock_mhz: float, n_sm: int, fma_per_clk_per_sm: int) -> float:
    """Dense tensor-core peak in TFLOP/s if every SM issued at full rate at ``clock_mhz``."""
    return n_sm * 2 * fma_per_clk_per_sm * clock_mhz * 1e6 / 1e12


def ridge_point(peak_tflops: float, bandwidth_tbs: float) -> float:
    """Arithmetic intensity (FLOP/byte) where a kernel stops being memory-bound."""
    return peak_tflops / bandwidth_tbs


def roofline(intensity, peak_tflops: float, bandwidth_tbs: float):
    """Attainable TFLOP/s = min(peak, bandwidth x intensity)."""
    return np.minimum(peak_tflops, bandwidth_tbs * np.asarray(intensity, dtype=float))


def matmul_intensity(m: int, n: int, k: int, bytes_per_elem: float, out_bytes: float | None = None) -> float:
    """FLOP per byte of an m x n x k matmul that reads A and B once and writes C once."""
    out_bytes = bytes_per_elem if out_bytes is None else out_bytes
    return 2 * m * n * k / ((m * k + k * n) * bytes_per_elem + m * n * out_bytes)


# --------------------------------------------------------------------------- recorded results

ISSUE7_RECORD = {
    "source": "measured by an earlier session on an H200, numbers from issue 7",
    "device": "NVIDIA H200",
    "measured_at": "before 2026-11-29 (date not recorded)",
    "method": "torch matmul, one run; sizes and timing method not recorded",
    "tflops": {"fp32": 51.0, "tf32": 413.0, "bf16": 791.0, "fp16": 757.0, "fp8": 1416.0},
}


@dataclass
class ThroughputRecord:
    """One set of matmul throughputs and where/when/how they were measured."""

    source: str
    device: str
    measured_at: str
    method: str
    tflops: dict
    path: str | None = None
    sweep: dict | None = None  # {precision: {size: TFLOP/s}} for square matmuls


def load_throughput_records(search=None):
    """Records to show: every ``tensor_cores_throughput*.json`` found (newest first; in
    ``search`` folders, else where gpulab.results looks), then the figures from issue 7 as a
    fallback, each labelled with its provenance."""
    recs = []
    if search is None:
        from gpulab import results

        files = [str(p) for p in results.glob("tensor_cores_throughput*.json")]
    else:
        files = [f for d in search for f in glob.glob(os.path.join(d, "tensor_cores_throughput*.json"))]
    for p in sorted(set(files)):
        try:
            with open(p) as fh:
                j = json.load(fh)
            sweep = {
                prec: {int(n): float(t) for n, t in v.items()}
                for prec, v in j.get("sweep_tflops", {}).items()
            } or None
            recs.append(
                ThroughputRecord(
                    j["source"], j["device"], j["measured_at"], j["method"], j["tflops"], p, sweep
                )
            )
        except (OSError, KeyError, ValueError):
            continue
    recs = [r for r in recs if r.source != ISSUE7_RECORD["source"]]
    recs.sort(key=lambda r: r.measured_at, reverse=True)  # ISO dates: newest first
    recs.append(ThroughputRecord(**ISSUE7_RECORD))  # the issue's figures always last
    return recs


def clock_readings(rec: ThroughputRecord) -> list[dict]:
    """The SM clock and board power the benchmark read with nvidia-smi during a matmul, from the
    record's file: [{"during", "sm_mhz", "max_mhz", "fraction", "power"}], empty if none."""
    if not rec.path:
        return []
    with open(rec.path) as fh:
        raw = json.load(fh)
    out = []
    for key, value in raw.items():
        if not key.startswith("sm_clock") or not isinstance(value, str):
            continue  # a benchenv clock record ("sm_clock": {...}) is read by results_views
        sm, sm_max, power = [s.strip() for s in str(value).split(",")]
        sm_mhz, max_mhz = float(sm.split()[0]), float(sm_max.split()[0])
        out.append(
            {
                "during": key.split("_during_")[-1].replace("_", " "),
                "sm_mhz": sm_mhz,
                "max_mhz": max_mhz,
                "fraction": sm_mhz / max_mhz,
                "power": power,
            }
        )
    return out


def load_mma_check(search=None) -> dict | None:
    """The GPU tensor-core check written by benchmarks/tensor_cores/run_mma.py, if present."""
    if search is None:
        from gpulab import results

        return results.load("tensor_cores_mma")
    for d in search:
        p = os.path.join(d, "tensor_cores_mma.json")
        if os.path.exists(p):
            with open(p) as fh:
                return json.load(fh)
    return None
