"""Grade one submission with Otter in this process and write ``scores.json`` (run by
:func:`gpulab.grading.cli.grade_one` as ``python -m gpulab.grading.run_one SUBMISSION AUTOGRADER
OUTDIR`` in its own process group, so the whole run can be killed on a time limit)."""

import json
import os
import sys


def main(submission: str, autograder: str, output_dir: str) -> None:
    """Run ``otter run``'s grading on ``submission`` with nbclient time limits and write the
    scores, test-case messages, any catastrophic error and why the plugin scored it as hostile
    (``hostile``: empty when it did not) to ``output_dir/scores.json``."""
    os.environ.setdefault("GPULAB_QUIET", "1")
    from gpulab.grading.limits import patch_nbclient

    patch_nbclient()
    from otter.run import main as otter_run

    res = otter_run(submission, autograder=autograder, output_dir=output_dir, no_logo=True)
    scores = {name: [float(r.score), float(r.possible)] for name, r in res.results.items()}
    cases = {
        name: [[c.test_case.name, bool(c.passed), c.message[:2000]] for c in r.test_case_results]
        for name, r in res.results.items()
    }
    err = repr(res.catastrophic_error) if res.has_catastrophic_failure() else ""
    from gpulab.grading.plugin import PLUGIN_NAME

    hostile = (res.get_plugin_data(PLUGIN_NAME) or {}).get("hostile", [])
    with open(os.path.join(output_dir, "scores.json"), "w") as f:
        json.dump(
            {
                "total": float(res.total),
                "possible": float(res.possible),
                "scores": scores,
                "cases": cases,
                "error": err,
                "hostile": hostile,
            },
            f,
        )


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python -m gpulab.grading.run_one SUBMISSION.ipynb AUTOGRADER.zip OUTDIR")
    main(*sys.argv[1:])
