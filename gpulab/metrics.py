"""The counting rules, in one place, and the Nsight Compute names they are reported under.

Rules (as Nsight Compute counts them on sm_70 and newer):

* global memory: one *request* per warp-level load/store instruction with at least one active
  lane; its *sectors* are the distinct aligned 32-byte chunks the active lanes touch;
* shared memory: 32 banks of 4 bytes, bank = (byte address / 4) mod 32; lanes reading the same
  32-bit word are served by one broadcast; the *wavefronts* of one instruction are the largest
  number of distinct words requested from one bank, and at least bytes/128 for wide accesses;
  *bank conflicts* = wavefronts - the minimum possible wavefronts;
* warp execution efficiency = average active lanes per warp-level instruction / 32;
* atomics: one warp-level instruction per warp with an active lane. Shared-memory atomics are
  ATOMS instructions; a global atomic is an ATOM (returns the old value) or, when the kernel
  discards the old value and PTX ``red`` has the operation (PTX ISA, "red": integer add, min,
  max, and, or, xor, float add; sub is an add of the negated value), a RED. That choice is the
  compiler's: gpulab assumes it takes RED whenever it may, which has not been checked against
  SASS on a GPU. numba-cuda implements float max/min (and nanmax/nanmin) as a compare-and-swap
  loop: counted here as one ATOM per warp, a lower bound (a contended loop retries).

Every function works on a whole launch at once: arrays of shape (warps, 32).
"""

import numpy as np

from .models.occupancy import WARP  # noqa: F401  (lanes per warp; its one home)

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4
WAVEFRONT_BYTES = 128

# Nsight Compute metric names for what gpulab counts.
GLOBAL_REQUESTS = {
    "ld": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "st": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
}
GLOBAL_SECTORS = {
    "ld": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "st": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
}
SHARED_INSTRUCTIONS = {
    "ld": "smsp__sass_inst_executed_op_shared_ld.sum",
    "st": "smsp__sass_inst_executed_op_shared_st.sum",
}
SHARED_WAVEFRONTS = {
    "ld": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "st": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
}
SHARED_BANK_CONFLICTS = {
    "ld": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "st": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
}
# Atomics (Nsight Compute "Memory Workload Analysis" tables and the nvprof-to-ncu metric map:
# inst_executed_global_atomics, inst_executed_global_reductions, inst_executed_shared_atomics).
GLOBAL_ATOM_INSTRUCTIONS = "smsp__sass_inst_executed_op_global_atom.sum"
GLOBAL_RED_INSTRUCTIONS = "smsp__sass_inst_executed_op_global_red.sum"
SHARED_ATOM_INSTRUCTIONS = "smsp__sass_inst_executed_op_shared_atom.sum"
GLOBAL_ATOM_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"
GLOBAL_RED_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"
# operations PTX ``red`` offers, by operand kind (numpy dtype.kind): a discarded result of
# these may compile to RED instead of ATOM
REDUCIBLE_ATOMICS = {
    "i": frozenset({"add", "sub", "min", "max", "and", "or", "xor"}),
    "u": frozenset({"add", "sub", "min", "max", "and", "or", "xor"}),
    "f": frozenset({"add", "sub"}),
}
INST_EXECUTED = "smsp__inst_executed.sum"
THREAD_INST_EXECUTED = "smsp__thread_inst_executed.sum"
THREADS_PER_INST = "smsp__thread_inst_executed_per_inst_executed.ratio"

ALL_NAMES = (
    list(GLOBAL_REQUESTS.values())
    + list(GLOBAL_SECTORS.values())
    + list(SHARED_INSTRUCTIONS.values())
    + list(SHARED_WAVEFRONTS.values())
    + list(SHARED_BANK_CONFLICTS.values())
    + [
        GLOBAL_ATOM_INSTRUCTIONS,
        GLOBAL_RED_INSTRUCTIONS,
        SHARED_ATOM_INSTRUCTIONS,
        GLOBAL_ATOM_REQUESTS,
        GLOBAL_RED_REQUESTS,
    ]
    + [INST_EXECUTED, THREAD_INST_EXECUTED, THREADS_PER_INST]
)


def empty_counters():
    """A fresh counter dict: every metric gpulab reports, at zero."""
    return {name: 0 for name in ALL_NAMES if name != THREADS_PER_INST}


def finish(counters):
    """Add the derived ratio metric to a counter dict (returns a new dict)."""
    out = dict(counters)
    inst = out.get(INST_EXECUTED, 0)
    out[THREADS_PER_INST] = out.get(THREAD_INST_EXECUTED, 0) / inst if inst else 0.0
    return out


def _distinct_per_row(keys, active):
    """Number of distinct values among the active entries of each row of ``keys``."""
    k = np.where(active, keys, -1)
    k.sort(axis=1)
    changes = (np.diff(k, axis=1) != 0).sum(axis=1) + 1
    has_inactive = k[:, 0] == -1
    return np.where(active.any(axis=1), changes - has_inactive, 0)


def instruction_counts(active):
    """(warp instructions, thread instructions) for one statement executed under ``active``."""
    per_warp = active.sum(axis=1)
    return int(np.count_nonzero(per_warp)), int(per_warp.sum())


def global_sectors(addresses, size, active):
    """Sectors touched by each warp: ``addresses`` (warps, 32) byte addresses of ``size`` bytes."""
    addresses = np.asarray(addresses, dtype=np.int64)
    first = addresses // SECTOR_BYTES
    last = (addresses + size - 1) // SECTOR_BYTES
    if np.array_equal(first[active], last[active]):
        return _distinct_per_row(first, active)
    # an access straddling a sector boundary (only for misaligned wide accesses): count both
    both = np.concatenate([first, last], axis=1)
    return _distinct_per_row(both, np.concatenate([active, active], axis=1))


def warp_instructions(active):
    """Warp-level instructions of one statement: one per warp with an active lane."""
    return int(np.count_nonzero(active.any(axis=1)))


def shared_counts(op, addresses, size, active):
    """Counter increments of one shared-memory load or store (``op`` "ld"/"st"), by metric name.

    Also returns the per-warp (wavefronts, ideal) arrays, which the trace records keep.
    """
    wave, ideal = shared_wavefronts(addresses, size, active)
    counts = {
        SHARED_INSTRUCTIONS[op]: warp_instructions(active),
        SHARED_WAVEFRONTS[op]: int(wave.sum()),
        SHARED_BANK_CONFLICTS[op]: int((wave - ideal).sum()),
    }
    return counts, wave, ideal


def atomic_counts(space, op, active, result_used=True, kind="i"):
    """Counter increments of one warp-level atomic ``op`` on ``space`` memory, by metric name.

    ``active`` is (warps, 32); ``kind`` the element's numpy dtype kind. Global atomics count one instruction and one request per warp,
    as ATOM, or as RED when the old value is discarded and PTX has a ``red`` for ``op``;
    shared atomics count ATOMS instructions. Atomics on local or constant memory are not
    counted (numba refuses them on a GPU).
    """
    n = warp_instructions(active)
    if not n:
        return {}
    if space == "shared":
        return {SHARED_ATOM_INSTRUCTIONS: n}
    if space != "global":
        return {}
    if not result_used and op in REDUCIBLE_ATOMICS.get(kind, ()):
        return {GLOBAL_RED_INSTRUCTIONS: n, GLOBAL_RED_REQUESTS: n}
    return {GLOBAL_ATOM_INSTRUCTIONS: n, GLOBAL_ATOM_REQUESTS: n}


def global_requests(active):
    """Requests per warp: 1 if the warp has an active lane, else 0."""
    return active.any(axis=1).astype(np.int64)


def shared_wavefronts(addresses, size, active):
    """(wavefronts, ideal wavefronts) per warp for one shared-memory instruction.

    ``addresses`` are byte offsets within the block's shared memory, shape (warps, 32).
    """
    addresses = np.asarray(addresses, dtype=np.int64)
    words_per_lane = max(1, size // BANK_BYTES)
    first_word = addresses // BANK_BYTES
    if words_per_lane == 1:
        words, act = first_word, active
    else:
        offs = np.arange(words_per_lane, dtype=np.int64)
        words = (first_word[:, :, None] + offs).reshape(first_word.shape[0], -1)
        act = np.repeat(active, words_per_lane, axis=1)
    nwarps = words.shape[0]
    w = np.where(act, words, -1)
    w.sort(axis=1)
    first_occ = np.ones_like(w, dtype=bool)
    first_occ[:, 1:] = w[:, 1:] != w[:, :-1]
    first_occ &= w >= 0
    banks = np.where(w >= 0, bank_of(w * BANK_BYTES), 0)
    rows = np.repeat(np.arange(nwarps, dtype=np.int64), w.shape[1])
    per_bank = np.bincount(
        rows * BANKS + banks.ravel(), weights=first_occ.ravel(), minlength=nwarps * BANKS
    ).reshape(nwarps, BANKS)
    distinct_words = first_occ.sum(axis=1)
    ideal = np.where(distinct_words > 0, np.maximum(1, -(-distinct_words * BANK_BYTES // WAVEFRONT_BYTES)), 0)
    wavefronts = np.maximum(per_bank.max(axis=1).astype(np.int64), ideal)
    return wavefronts, ideal


def bank_of(byte_address):
    """The shared-memory bank that serves a byte address (its 4-byte word, mod 32 banks)."""
    return (np.asarray(byte_address) // BANK_BYTES) % BANKS
