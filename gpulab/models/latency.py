"""Little's law and latency hiding: how much work must be in flight to keep a machine busy.

Closed forms used by chapter 01, plus a tiny cycle-level issue simulation that checks the
closed form for latency hiding (the tests compare the two).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class GPUSpec:
    """Numbers of one GPU that Little's law needs, each with where it comes from."""

    name: str
    bandwidth: float  # DRAM bandwidth, bytes/s
    n_sm: int  # streaming multiprocessors
    max_warps_per_sm: int  # resident warps per SM
    source: str


# NVIDIA H200 SXM datasheet: 4.8 TB/s HBM3e. GH100 as shipped in H100/H200 SXM: 132 SMs;
# compute capability 9.0: 64 resident warps per SM (CUDA C++ Programming Guide, table of
# technical specifications per compute capability).
H200 = GPUSpec(
    "NVIDIA H200 SXM",
    4.8e12,
    132,
    64,
    "H200 datasheet (4.8 TB/s); CUDA C++ Programming Guide, compute capability 9.0",
)


def littles_law(rate: float, latency: float) -> float:
    """N = λ·L: items in flight needed to sustain `rate` items/s when each takes `latency` s."""
    if rate < 0 or latency < 0:
        raise ValueError("rate and latency must be non-negative")
    return rate * latency


def bytes_in_flight(bandwidth: float, latency: float) -> float:
    """Bytes that must be outstanding to sustain `bandwidth` (bytes/s) at `latency` (s)."""
    return littles_law(bandwidth, latency)


def bytes_in_flight_per_sm(bandwidth: float, latency: float, n_sm: int) -> float:
    """Little's N for the whole chip, shared evenly by `n_sm` SMs."""
    if n_sm <= 0:
        raise ValueError("n_sm must be positive")
    return bytes_in_flight(bandwidth, latency) / n_sm


def warps_needed(
    bandwidth: float, latency: float, n_sm: int, bytes_per_request: float, requests_per_warp: int = 1
) -> int:
    """Warps per SM that keep DRAM busy, if each has `requests_per_warp` loads of
    `bytes_per_request` bytes outstanding: ceil(bytes in flight per SM / bytes per warp)."""
    if bytes_per_request <= 0 or requests_per_warp <= 0:
        raise ValueError("bytes_per_request and requests_per_warp must be positive")
    per_warp = bytes_per_request * requests_per_warp
    need = bytes_in_flight_per_sm(bandwidth, latency, n_sm) / per_warp
    # round before ceil so 200.0000000001 from float error does not become 201
    return int(math.ceil(round(need, 9)))


def achievable_bandwidth(
    warps_per_sm: float,
    latency: float,
    n_sm: int,
    bytes_per_request: float,
    peak: float,
    requests_per_warp: int = 1,
) -> float:
    """Little's law read the other way: bandwidth = bytes in flight / latency, capped at peak."""
    in_flight = warps_per_sm * requests_per_warp * bytes_per_request * n_sm
    return min(peak, in_flight / latency)


def utilization(warps: int, compute_cycles: float, latency_cycles: float) -> float:
    """Fraction of cycles an in-order issue slot is busy when `warps` warps each alternate
    `compute_cycles` of independent work with one stall of `latency_cycles`:
    min(1, W·C / (C + L))."""
    if warps < 0 or compute_cycles <= 0 or latency_cycles < 0:
        raise ValueError("need warps >= 0, compute_cycles > 0, latency_cycles >= 0")
    return min(1.0, warps * compute_cycles / (compute_cycles + latency_cycles))


def warps_to_hide(compute_cycles: float, latency_cycles: float) -> int:
    """Smallest W with utilization 1: ceil((C + L) / C)."""
    return int(math.ceil(round((compute_cycles + latency_cycles) / compute_cycles, 9)))


def simulate_issue(warps: int, compute_cycles: int, latency_cycles: int, cycles: int) -> float:
    """Cycle-by-cycle model of one scheduler: each cycle it issues one instruction from a
    ready warp, staying with the same warp until it stalls (greedy), then taking the next
    ready one. A warp issues `compute_cycles` instructions, then waits `latency_cycles` for
    memory, and repeats. Returns the fraction of cycles that issued something."""
    if warps <= 0:
        return 0.0
    ready_at = [0] * warps  # cycle at which each warp may issue again
    left = [compute_cycles] * warps  # instructions left before its next memory stall
    busy = 0
    cur = 0
    for t in range(cycles):
        for k in range(warps):
            w = (cur + k) % warps
            if ready_at[w] <= t:
                cur = w
                busy += 1
                left[w] -= 1
                if left[w] == 0:
                    left[w] = compute_cycles
                    ready_at[w] = t + 1 + latency_cycles
                break
    return busy / cycles


def serial_time(n, exponent: float = 2.0, c: float = 1.0):
    """Time of an O(n^exponent) algorithm on one worker (arbitrary units)."""
    return c * n**exponent


def parallel_time(n, workers: int, exponent: float = 2.0, c: float = 1.0):
    """The same algorithm ideally split over `workers`: a constant factor, the same slope."""
    return serial_time(n, exponent, c) / workers


def crossover_n(workers: int, exponent_fast: float = 1.0, exponent_slow: float = 2.0) -> float:
    """n where a serial O(n^a) algorithm catches up with O(n^b)/workers (b > a):
    n^a = n^b / P  ->  n = P^(1/(b-a))."""
    if exponent_slow <= exponent_fast:
        raise ValueError("exponent_slow must exceed exponent_fast")
    return workers ** (1.0 / (exponent_slow - exponent_fast))


def crossover_nlogn(workers: float) -> float:
    """Smallest n (found by bisection) where n·log2(n) on one worker beats n²/workers:
    beyond it the better algorithm wins however many workers the worse one has."""
    if workers < 2:
        return 2.0
    lo, hi = 2.0, 2.0
    while hi * math.log2(hi) >= hi * hi / workers:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid * math.log2(mid) >= mid * mid / workers:
            lo = mid
        else:
            hi = mid
    return hi


def max_hidden_latency(warps: int, compute_cycles: float) -> float:
    """Longest latency (cycles) that `warps` warps with `compute_cycles` of independent work
    each between waits hide completely on one scheduler: W·C >= C + L  <=>  L <= (W - 1)·C."""
    if warps < 1 or compute_cycles <= 0:
        raise ValueError("need warps >= 1 and compute_cycles > 0")
    return (warps - 1) * compute_cycles


def max_latency_covered(warps_per_sm: float, bytes_per_warp: float, n_sm: int, bandwidth: float) -> float:
    """Longest latency (s) at which `warps_per_sm` warps per SM, each with `bytes_per_warp`
    bytes in flight, still sustain `bandwidth`: Little's law solved for L."""
    if bandwidth <= 0:
        raise ValueError("bandwidth must be positive")
    return warps_per_sm * bytes_per_warp * n_sm / bandwidth


def ladder_levels(chase: dict) -> dict:
    """The L1, L2 and DRAM rungs of a pointer-chase ladder (gpulab/data/results/latency.json),
    with cycles at the SM clock recorded during the chases.

    A rung is the median ns over the working sets of that level's range,
    ``gpulab.results_views.LATENCY_LEVELS`` (the one place that says which working sets make a
    rung, so chapters 1 and 5 read the same ladder). Cycles convert at the SM clock recorded
    during the chases (``sm_clock``, benchmarks/benchenv.py), or at the maximum clock for an older
    file that recorded none ("clock_measured" says which). Returns {level: {"ns", "cycles",
    "clock_GHz", "clock_measured", "working_sets"}} for the levels the file has rows for."""
    from gpulab.results_views import LATENCY_LEVELS  # lazy: the rule lives with the recorded views

    rows = chase.get("global") if isinstance(chase, dict) else None
    if not rows:
        raise ValueError(
            "not a pointer-chase result: no 'global' rows (expected the JSON "
            "written by benchmarks/latency.py)"
        )
    clock = chase.get("sm_clock") or {}
    measured = "median_MHz" in clock
    ghz = clock["median_MHz"] / 1e3 if measured else chase.get("max_sm_clock_GHz")
    out = {}
    for level, (lo, hi) in LATENCY_LEVELS.items():
        sel = [r for r in rows if lo <= r["working_set_bytes"] <= hi]
        if not sel:
            continue
        ns = float(statistics.median(r["ns"] for r in sel))
        out[level] = {
            "ns": ns,
            "cycles": ns * ghz if ghz else None,
            "clock_GHz": ghz,
            "clock_measured": measured,
            "working_sets": [r["working_set_bytes"] for r in sel],
        }
    return out
