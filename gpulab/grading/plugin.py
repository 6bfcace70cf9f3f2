"""The Otter plugin :class:`GradingGuard`: puts a first cell in front of each submission (time
limits, tamper snapshot) and grades with the ``python3`` kernel whatever the notebook was saved
with. Named ``gpulab.grading.GradingGuard`` in every master's config."""

from __future__ import annotations

from .limits import patch_nbclient

__all__ = ["GUARD_CELL", "GradingGuard", "use_python3_kernel"]

GUARD_CELL = """\
# gpulab grading guard (added by gpulab.grading.GradingGuard; not part of the submission)
import gpulab.grading as _gpulab_grading
_gpulab_grading.install_cell_time_limit()
_gpulab_grading.install_test_time_limit()
_gpulab_grading.snapshot()
del _gpulab_grading
"""

try:
    from otter.plugins import AbstractOtterPlugin as _PluginBase
except Exception:  # Otter not installed: the plugin is only needed while grading
    _PluginBase = object


class GradingGuard(_PluginBase):
    """Otter plugin: before the submission runs, insert :data:`GUARD_CELL` (per-cell time limit,
    snapshot of the grading code), and give Otter's notebook client time limits too
    (:func:`patch_nbclient`). Listed under ``generate: plugins`` in each master's config, so it
    acts in ``otter run``, ``otter assign``'s own test run and on Gradescope alike."""

    def before_grading(self, config):
        patch_nbclient()

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
