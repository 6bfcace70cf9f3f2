"""Grading support for the homework in ``exercises/`` (Otter-Grader 7).

Otter runs a submission top to bottom in one Jupyter kernel and then runs the tests *in that
same kernel*, so a submission can hang the grader or change the functions the tests call. The
parts, one job each:

- :mod:`.limits`: :func:`timed` (a student's function with a time limit, raising
  :class:`TimeLimit`), per-test and per-cell limits, and nbclient's own limit;
- :mod:`.tamper`: :func:`snapshot`, :func:`tamper_findings` / :func:`assert_untampered` (what the
  submission replaced or changed in place) and :func:`suspicious` (patterns for the CSV);
- :mod:`.oracles`: :func:`audited` / :func:`assert_own_work` (an answer gpulab's own models,
  checks or kernels produced is not the student's: issue 26's policy);
- :mod:`.plugin`: :class:`GradingGuard`, the Otter plugin every master names (and the one that
  scores a submission that changed the grader 0);
- :mod:`.cli`: ``python -m gpulab.grading grade | assign | otter ...``; :mod:`.run_one` grades
  one submission in a subprocess.

The hidden tests use this package as the guard cell imported it, before the submission ran, and
never reload it from disk (a submission can rewrite the files; the plugin compares their hashes
before and after grading). Limits (in-process grading cannot be made tamper-proof): see
``exercises/README.md``.
"""

from __future__ import annotations

from . import cli, limits, oracles, plugin, tamper  # noqa: F401
from .cli import DEFAULT_SUBMISSION_TIMEOUT, assign_all, grade_folder, grade_one, main  # noqa: E402
from .limits import (  # noqa: E402
    DEFAULT_CELL_TIMEOUT,
    DEFAULT_TEST_TIMEOUT,
    EXPORT_CELL_FACTOR,
    CellTimeLimit,
    TimeLimit,
    install_cell_time_limit,
    install_test_time_limit,
    patch_nbclient,
    per_test_seconds,
    time_limit,
    timed,
)
from .oracles import ORACLE_MESSAGE, assert_own_work, audited, library_calls  # noqa: E402
from .plugin import GUARD_CELL, GradingGuard, use_python3_kernel  # noqa: E402
from .tamper import (  # noqa: E402
    SENSITIVE,
    SUSPICIOUS,
    TAMPER_MESSAGE,
    assert_untampered,
    changed_files,
    package_hashes,
    snapshot,
    suspicious,
    tamper_findings,
)

__all__ = [
    "TimeLimit",
    "CellTimeLimit",
    "timed",
    "time_limit",
    "per_test_seconds",
    "install_cell_time_limit",
    "install_test_time_limit",
    "patch_nbclient",
    "snapshot",
    "tamper_findings",
    "assert_untampered",
    "package_hashes",
    "changed_files",
    "TAMPER_MESSAGE",
    "suspicious",
    "audited",
    "assert_own_work",
    "library_calls",
    "ORACLE_MESSAGE",
    "GradingGuard",
    "GUARD_CELL",
    "use_python3_kernel",
    "grade_one",
    "grade_folder",
    "assign_all",
    "main",
    "DEFAULT_CELL_TIMEOUT",
    "DEFAULT_TEST_TIMEOUT",
    "EXPORT_CELL_FACTOR",
    "DEFAULT_SUBMISSION_TIMEOUT",
    "SENSITIVE",
    "SUSPICIOUS",
]
