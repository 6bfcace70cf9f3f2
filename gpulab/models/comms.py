"""Scaling out: the alpha-beta cost of all-reduce, link figures, and Amdahl meeting communication.

The alpha-beta (latency-bandwidth) model charges every message ``alpha + n * beta`` seconds:
``alpha`` is the fixed cost of one step (software, synchronisation, wire latency) and
``beta = 1 / B`` the time per byte on a link of bandwidth ``B`` (bytes/s, one direction).
The all-reduce costs below are the textbook ones (Thakur, Rabenseifner & Gropp 2005; Patarasuk &
Yuan 2009) with the reduction arithmetic left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Link",
    "LINKS",
    "ring_allreduce",
    "tree_allreduce",
    "allreduce",
    "bus_bandwidth",
    "StepModel",
    "step_time",
    "scaling",
    "best_p",
    "NVSWITCH_DOMAIN_GPUS",
]

GB = 1e9


@dataclass(frozen=True)
class Link:
    """A GPU's connection to its peers: per-direction bandwidth in bytes/s and where it is from."""

    name: str
    per_direction: float  # bytes/s each way, per GPU
    quoted: str  # the figure as the source quotes it
    source: str

    @property
    def beta(self) -> float:
        """Seconds per byte in one direction."""
        return 1.0 / self.per_direction


# Vendor/standard figures, not measured here. NVIDIA quotes NVLink as the *total of both
# directions* over all of a GPU's links; the model needs one direction, hence the halving.
LINKS: dict[str, Link] = {
    "PCIe 4.0 x16": Link(
        "PCIe 4.0 x16",
        16e9 * 16 / 8 * 128 / 130,
        "16 GT/s per lane, 128b/130b coding: about 31.5 GB/s each way (NVIDIA quotes 64 GB/s for both)",
        "PCI-SIG, PCI Express Base Specification 4.0; NVIDIA A100 datasheet (PCIe Gen4: 64 GB/s)",
    ),
    "PCIe 5.0 x16": Link(
        "PCIe 5.0 x16",
        32e9 * 16 / 8 * 128 / 130,
        "32 GT/s per lane, 128b/130b coding: about 63 GB/s each way (NVIDIA quotes 128 GB/s for both)",
        "PCI-SIG, PCI Express Base Specification 5.0; NVIDIA H100/H200 datasheets (PCIe Gen5: 128 GB/s)",
    ),
    "NVLink 3 (A100 SXM)": Link(
        "NVLink 3 (A100 SXM)",
        300 * GB,
        "12 links, 600 GB/s total (both directions)",
        "NVIDIA A100 Tensor Core GPU datasheet and architecture whitepaper (2020)",
    ),
    "NVLink 4 (H100/H200 SXM)": Link(
        "NVLink 4 (H100/H200 SXM)",
        450 * GB,
        "18 links, 900 GB/s total (both directions)",
        "NVIDIA H100 and H200 Tensor Core GPU datasheets; NVIDIA Hopper architecture whitepaper (2022)",
    ),
    "NVLink 5 (B200)": Link(
        "NVLink 5 (B200)",
        900 * GB,
        "18 links, 1.8 TB/s total (both directions)",
        "NVIDIA Blackwell architecture technical brief / DGX B200 datasheet (2024)",
    ),
    "InfiniBand NDR (1 NIC)": Link(
        "InfiniBand NDR (1 NIC)",
        400e9 / 8,
        "400 Gb/s per port: 50 GB/s each way",
        "InfiniBand Trade Association NDR; NVIDIA ConnectX-7 datasheet",
    ),
}


# GPUs of one HGX/DGX H100 or H200 board, whose NVLinks all go to NVSwitch chips (Hopper
# whitepaper): the largest p at which the model's "every GPU keeps its full link bandwidth B"
# holds by design. Past it traffic crosses other links (NVLink Switch System, InfiniBand) and an
# alpha and B measured on two GPUs of one board say nothing; chapter 10 draws no conclusion there.
NVSWITCH_DOMAIN_GPUS = 8


def _check(p, n_bytes, alpha, bandwidth):
    if int(p) != p or p < 1:
        raise ValueError(f"p must be a positive integer, got {p}")
    if n_bytes < 0 or alpha < 0 or bandwidth <= 0:
        raise ValueError("n_bytes and alpha must be >= 0 and bandwidth > 0")


def ring_allreduce(p: int, n_bytes: float, alpha: float, bandwidth: float) -> float:
    """Ring all-reduce (reduce-scatter then all-gather): 2(p-1) steps of n/p bytes each,
    T = 2(p-1) alpha + 2 (p-1)/p * n / B. Bandwidth-optimal; latency grows linearly in p."""
    _check(p, n_bytes, alpha, bandwidth)
    if p == 1:
        return 0.0
    return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n_bytes / bandwidth


def tree_allreduce(p: int, n_bytes: float, alpha: float, bandwidth: float) -> float:
    """Binomial-tree reduce then broadcast, whole message per step:
    T = 2 ceil(log2 p) (alpha + n / B). Few steps (good for small n), but every step sends n."""
    _check(p, n_bytes, alpha, bandwidth)
    if p == 1:
        return 0.0
    return 2 * math.ceil(math.log2(p)) * (alpha + n_bytes / bandwidth)


def allreduce(p: int, n_bytes: float, alpha: float, bandwidth: float, algorithm: str = "ring") -> float:
    """All-reduce time by name: "ring", "tree", or "best" (the cheaper of the two, as a library
    that picks its algorithm by message size would)."""
    if algorithm == "ring":
        return ring_allreduce(p, n_bytes, alpha, bandwidth)
    if algorithm == "tree":
        return tree_allreduce(p, n_bytes, alpha, bandwidth)
    if algorithm == "best":
        return min(ring_allreduce(p, n_bytes, alpha, bandwidth), tree_allreduce(p, n_bytes, alpha, bandwidth))
    raise ValueError(f"unknown algorithm {algorithm!r}: use 'ring', 'tree' or 'best'")


def bus_bandwidth(p: int, n_bytes: float, seconds: float) -> float:
    """nccl-tests' 'bus bandwidth' of an all-reduce: (n / t) * 2 (p-1)/p, comparable to a link's
    per-direction bandwidth whatever p is (NVIDIA/nccl-tests doc/PERFORMANCE.md)."""
    return n_bytes / seconds * 2 * (p - 1) / p


@dataclass(frozen=True)
class StepModel:
    """One data-parallel training step: host/serial time, compute on one GPU, gradient bytes."""

    serial_s: float  # never shrinks (host work, launches, data loading not overlapped)
    compute_s: float  # compute for the whole batch on one GPU
    grad_bytes: float  # size of the gradients all-reduced every step
    alpha: float  # seconds per all-reduce step
    bandwidth: float  # bytes/s per direction per GPU
    algorithm: str = "ring"
    overlap: float = 0.0  # share of the all-reduce hidden behind compute (0..1)


def step_time(m: StepModel, p: int, mode: str = "strong") -> float:
    """Step time on p GPUs. strong: the batch is split p ways (Amdahl); weak: every GPU keeps the
    one-GPU batch, so the work grows with p (Gustafson). Gradients are all-reduced either way."""
    if mode not in ("strong", "weak"):
        raise ValueError("mode must be 'strong' or 'weak'")
    if not 0 <= m.overlap <= 1:
        raise ValueError("overlap must lie in [0, 1]")
    compute = m.compute_s / p if mode == "strong" else m.compute_s
    comm = allreduce(p, m.grad_bytes, m.alpha, m.bandwidth, m.algorithm)
    hidden = min(m.overlap * comm, compute)
    return m.serial_s + compute + comm - hidden


def scaling(m: StepModel, ps, mode: str = "strong") -> dict:
    """Speedup and efficiency over one GPU for each p. strong: S = T(1)/T(p) (Amdahl). weak: the
    time one GPU would need for the p-times-larger step, serial + p * compute, over T(p)
    (Gustafson's scaled speedup)."""
    ps = np.asarray(ps, dtype=int)
    t = np.array([step_time(m, int(p), mode) for p in ps])
    if mode == "strong":
        s = step_time(m, 1, mode) / t
    else:
        s = (m.serial_s + ps * m.compute_s) / t
    return {"p": ps, "time_s": t, "speedup": s, "efficiency": s / ps}


def best_p(m: StepModel, p_max: int = 4096, mode: str = "strong") -> int:
    """The p in 1..p_max with the highest speedup (strong scaling has a peak once communication
    grows faster than compute shrinks)."""
    ps = np.arange(1, p_max + 1)
    return int(ps[np.argmax(scaling(m, ps, mode)["speedup"])])
