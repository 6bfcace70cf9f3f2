"""The Otter plugin :class:`GradingGuard`: puts a first cell in front of each submission (time
limits, sealed tamper snapshot), grades with the ``python3`` kernel whatever the notebook was
saved with, and scores a hostile submission 0. Named ``gpulab.grading.GradingGuard`` in every
master's config."""

from __future__ import annotations

import os

from .limits import patch_nbclient
from .tamper import TAMPER_MESSAGE, changed_files, package_hashes

__all__ = ["GUARD_CELL", "GradingGuard", "use_python3_kernel", "hostile_reasons", "PLUGIN_NAME"]

#: the name results carry this plugin's data under (Otter's ``set_plugin_data``)
PLUGIN_NAME = "gpulab.grading.GradingGuard"

GUARD_CELL = """\
# gpulab grading guard (added by gpulab.grading.GradingGuard; not part of the submission)
import gpulab.grading as _gpulab_grading
_gpulab_grading.install_cell_time_limit()
_gpulab_grading.install_test_time_limit()
_gpulab_grading.snapshot(seal=True)
del _gpulab_grading
"""

try:
    from otter.plugins import AbstractOtterPlugin as _PluginBase
except Exception:  # Otter not installed: the plugin is only needed while grading
    _PluginBase = object


class GradingGuard(_PluginBase):
    """Otter plugin: before the submission runs, insert :data:`GUARD_CELL` (per-cell time limit,
    sealed snapshot of the grading code), give Otter's notebook client time limits too
    (:func:`patch_nbclient`) and hash gpulab's, Otter's and the tests' files; after grading, in
    this process (which the submission's kernel cannot reach), score the submission 0 on every
    question when it was hostile (:func:`hostile_reasons`), with the reasons in the results'
    plugin data. Listed under ``generate: plugins`` in each master's config, so it acts in
    ``otter run``, ``otter assign``'s own test run and on Gradescope alike."""

    _hashes = None

    def before_grading(self, config):
        patch_nbclient()
        self._hashes = package_hashes(_hashed_roots())

    def after_grading(self, results):
        before = self._hashes
        after = package_hashes(_hashed_roots()) if before is not None else None
        reasons = hostile_reasons(results, before, after)
        if reasons:
            for name in list(getattr(results, "results", {}) or {}):
                results.update_score(name, 0)
        results.set_plugin_data(PLUGIN_NAME, {"hostile": reasons})

    def before_execution(self, submission):
        import nbformat

        if isinstance(submission, str):  # a .py submission: prepend the same lines
            return GUARD_CELL + "\n" + submission
        submission.cells.insert(0, nbformat.v4.new_code_cell(GUARD_CELL))
        use_python3_kernel(submission)
        return submission

    def during_assign(self, assignment):  # nothing to do while assigning
        return None


def use_python3_kernel(nb):
    """Grade with the grading environment's own Python kernel ("python3", which Jupyter starts
    with the running interpreter) whatever kernel the student's notebook was saved with (an
    environment named "gpulab", a Colab kernel): otherwise ``otter run`` stops on NoSuchKernel."""
    spec = nb.setdefault("metadata", {}).get("kernelspec") or {}
    if spec.get("name") != "python3":
        nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


#: the parts of gpulab whose files are hashed: the grader, the checks and the public tests. The
#: rest (simulator, models, kernels) is imported whole by the snapshot before the submission
#: runs, so a file of it rewritten later changes nothing in memory (and a re-import shows in the
#: snapshot); leaving it out keeps a maintainer's edit to it during a local test run from zeroing
#: the grades being made.
HASHED_PARTS = ("grading", "checks", "homework")


def _hashed_roots():
    """What the plugin hashes: the :data:`HASHED_PARTS` of gpulab, Otter, and the autograder's
    ``tests`` folder in the working directory, where Otter reads the hidden tests from."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = [os.path.join(pkg, part) for part in HASHED_PARTS]
    try:
        import otter

        roots.append(os.path.dirname(os.path.abspath(otter.__file__)))
    except Exception:
        pass
    if os.path.isdir("tests"):
        roots.append(os.path.abspath("tests"))
    return roots


def hostile_reasons(results, before=None, after=None, limit: int = 5):
    """Why a graded submission is hostile, in words (empty when it is not): files of gpulab, Otter
    or the tests that changed on disk between ``before`` and ``after`` (:func:`package_hashes`),
    and tests that refused to grade because the grading environment was changed
    (:data:`~gpulab.grading.tamper.TAMPER_MESSAGE`)."""
    reasons = []
    if before is not None and after is not None:
        changed = changed_files(before, after)
        if changed:
            shown = ", ".join(_short(p) for p in changed[:limit])
            more = f" and {len(changed) - limit} more" if len(changed) > limit else ""
            reasons.append(f"the grader's files changed on disk during grading: {shown}{more}")
    for name, tf in sorted((getattr(results, "results", {}) or {}).items()):
        for tcr in getattr(tf, "test_case_results", []) or []:
            msg = str(getattr(tcr, "message", "") or "")
            if TAMPER_MESSAGE in msg:
                detail = msg.split(TAMPER_MESSAGE, 1)[1].split(":", 1)[-1].strip()
                reasons.append(f"{name}: {TAMPER_MESSAGE}: {detail[:300]}")
                break
    return reasons


def _short(path):
    """A hashed path shortened to what an instructor recognises (gpulab/..., otter/..., tests/...)."""
    parts = path.replace(os.sep, "/").split("/")
    for key in ("gpulab", "otter", "tests"):
        if key in parts:
            return "/".join(parts[len(parts) - 1 - parts[::-1].index(key) :])
    return path
