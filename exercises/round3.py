"""Grade the round-3 submissions (issue 26) with ``python -m gpulab.grading grade`` and judge them.

Each entry of ``exercises/<hw>/submissions_round3.py`` becomes one notebook (the autograder's
solution with the entry's cells replaced), graded on its own with a **private copy of the gpulab
package** first on ``PYTHONPATH``: several entries write to the installed package, and must not
rewrite this checkout. The verdict follows the entry's ``kind``:

- ``correct``: every question keeps full marks;
- ``wrong``: the questions it targets lose points (a kernel that is wrong must not get full marks);
- ``hostile``: at most half the points of the questions it targets (a public test's point for
  the answer's form; the rest of the notebook is the solution); the table shows the flags
  (``hostile:`` when the plugin scored it 0 throughout).

Usage (from the repository root; ``--dist`` is reused when it already holds the assigned zips)::

    python exercises/round3.py --dist /tmp/r3/dist --work /tmp/r3/work [--hw hw02_simt ...] [--only NAME ...]

It prints a markdown table (entry, kind, scores, flags, verdict) and writes ``results.json``.
"""

from __future__ import annotations

import argparse
import copy
import csv
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXERCISES = os.path.join(ROOT, "exercises")
HWS = sorted(
    d for d in os.listdir(EXERCISES) if os.path.exists(os.path.join(EXERCISES, d, "submissions_round3.py"))
)


def load_round3(hw):
    """The ROUND3 dict of one homework."""
    path = os.path.join(EXERCISES, hw, "submissions_round3.py")
    spec = importlib.util.spec_from_file_location(f"round3_{hw}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ROUND3


def build(solution, entry):
    """The solution notebook with the entry's cells replaced or added (as tests/test_homework.py does)."""
    nb = copy.deepcopy(solution)

    def find(text):
        hits = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and text in c.source]
        if not hits:
            raise ValueError(f"no code cell contains {text!r}")
        return hits[0]

    for text, src in entry.get("replace", {}).items():
        nb.cells[find(text)].source = src.strip("\n")
    for text, src in entry.get("add", []):
        nb.cells.insert(find(text) + 1, nbformat.v4.new_code_cell(src))
    return nb


def assign(dist, hws):
    """otter assign the masters of ``hws`` whose zips are not in ``dist`` yet (with a copy of
    gpulab taken now, so edits to the checkout while it runs change nothing)."""
    missing = [hw for hw in hws if not glob.glob(os.path.join(dist, hw, "autograder", "*.zip"))]
    if missing:
        env = dict(private_package(dist.rstrip(os.sep) + "-gpulab"), GPULAB_QUIET="1")
        ex = os.path.join(ROOT, "exercises")
        subprocess.run(
            [sys.executable, "-m", "gpulab.grading", "assign", *missing, "--exercises", ex, "--out", dist],
            cwd=os.path.dirname(os.path.abspath(dist)),
            check=True,
            env=env,
        )


SITECUSTOMIZE = """\
# written by exercises/round3.py: import gpulab from this folder, not from the editable install
import sys

sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in str(getattr(f, "__module__", ""))]
"""


def private_package(dest):
    """A copy of this checkout's gpulab in ``dest`` (what a submission may write to), with the
    files that make ``dest`` a checkout ``assign`` can build gpulab's wheel from."""
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(
        os.path.join(ROOT, "gpulab"),
        os.path.join(dest, "gpulab"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for name in ("pyproject.toml", "README.md", "requirements.txt", "LICENSE"):
        if os.path.exists(os.path.join(ROOT, name)):
            shutil.copy(os.path.join(ROOT, name), os.path.join(dest, name))
    # gpulab is installed editable: its finder sits on sys.meta_path ahead of PYTHONPATH, so a
    # process would import (and a hostile submission rewrite) this checkout's files. With dest
    # first on PYTHONPATH, this sitecustomize drops that finder before anything imports gpulab.
    with open(os.path.join(dest, "sitecustomize.py"), "w") as f:
        f.write(SITECUSTOMIZE)
    env = dict(os.environ, PYTHONPATH=dest)
    where = subprocess.run(
        [sys.executable, "-c", "import gpulab.grading, os; print(os.path.realpath(gpulab.__file__))"],
        env=dict(env, GPULAB_QUIET="1"),
        cwd=dest,  # not this checkout: a script's working directory comes first on sys.path
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not where.startswith(os.path.realpath(dest) + os.sep):
        raise RuntimeError(
            f"the private copy in {dest} is not what Python imports ({where!r}): refusing to grade"
        )
    return env


def changed_files(pkg):
    """Files of the private copy that differ from this checkout's (what the submission wrote)."""
    out = []
    for path in glob.glob(os.path.join(pkg, "gpulab", "**", "*.py"), recursive=True):
        rel = os.path.relpath(path, pkg)
        ref = os.path.join(ROOT, rel)
        if not os.path.exists(ref) or open(path, "rb").read() != open(ref, "rb").read():
            out.append(rel)
    return sorted(out)


def grade(hw, name, entry, dist, work, cell_timeout, timeout):
    """Build, grade in its own process with its own package copy, and return the CSV row."""
    here = os.path.join(work, hw, name)
    os.makedirs(here, exist_ok=True)
    sol = nbformat.read(os.path.join(dist, hw, "autograder", f"{hw}.ipynb"), as_version=4)
    nb_path = os.path.join(here, f"{hw}.ipynb")
    nbformat.write(build(sol, entry), nb_path)
    pkg = os.path.join(here, "pkg")
    env = dict(private_package(pkg), GPULAB_QUIET="1")
    zip_path = glob.glob(os.path.join(dist, hw, "autograder", "*.zip"))[0]
    csv_path = os.path.join(here, "grades.csv")
    cmd = [sys.executable, "-m", "gpulab.grading", "grade", zip_path, nb_path, "--csv", csv_path]
    cmd += ["--timeout", str(timeout), "--cell-timeout", str(cell_timeout)]
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=here, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if p.returncode != 0 or not os.path.exists(csv_path):
        return {"status": "runner-error", "error": (p.stdout + p.stderr)[-2000:], "seconds": seconds}
    with open(csv_path) as f:
        row = next(csv.DictReader(f))
    row["wall_seconds"] = round(seconds, 1)
    row["package_changed"] = changed_files(pkg)
    return row


def read_row(here):
    """The CSV row an earlier :func:`grade` left in ``here`` (status 'missing' without one)."""
    path = os.path.join(here, "grades.csv")
    if not os.path.exists(path):
        return {"status": "missing", "error": f"no {path}"}
    with open(path) as f:
        return next(csv.DictReader(f))


def full_marks(dist, hw):
    """{question: points} from the master's BEGIN QUESTION cells."""
    nb = nbformat.read(os.path.join(EXERCISES, hw, f"{hw}.ipynb"), as_version=4)
    out = {}
    for c in nb.cells:
        if c.cell_type == "raw" and "BEGIN QUESTION" in c.source:
            fields = dict(line.split(":", 1) for line in c.source.splitlines()[1:] if ":" in line)
            pts = fields["points"].strip().strip("[]")
            out[fields["name"].strip()] = sum(float(p) for p in pts.split(","))
    return out


def judge(entry, row, full):
    """(meets the done-bar, why) for one graded entry."""
    if row.get("status") != "ok":
        return False, f"status {row.get('status')}: {row.get('error', '')[:200]}"
    scores = {q: float(row[q]) for q in full if row.get(q) not in (None, "")}
    flags = row.get("flags", "")
    hostile_flag = "hostile" in flags
    targets = entry.get("questions", list(full))
    if entry["kind"] == "correct":
        lost = {q: scores.get(q) for q in full if scores.get(q, 0) < full[q]}
        return (not lost, "full marks" if not lost else f"lost points on {lost}")
    if entry["kind"] == "wrong":
        full_on = [q for q in targets if scores.get(q, 0) >= full[q]]
        return (not full_on, "loses points" if not full_on else f"full marks on {full_on}")
    earned = {q: scores.get(q) for q in targets if scores.get(q, 0) > 0}
    if sum(earned.values()) > sum(full[q] for q in targets) / 2:
        return False, f"earned {earned}{'' if flags else ', UNFLAGGED'}"
    if earned:  # e.g. a public test's point for the answer's form: at most half
        return True, f"earned only {earned}, at most half" + (", flagged" if flags else "")
    if hostile_flag:
        return True, "scored as hostile: 0 on every question"
    return True, "0 on its questions" + (", flagged for review" if flags else "")


def short_flags(flags: str) -> str:
    """The CSV's flags for a table cell: each ``hostile:`` reason cut to its first words, the
    review flags as they are."""
    from gpulab.grading.tamper import SUSPICIOUS

    parts = [f.strip() for f in flags.split("; ") if f.strip()]
    hostile = [p for p in parts if p.startswith("hostile:")]
    review = [p for p in parts if p in {what for _, what in SUSPICIOUS}]
    out = [h[:90] + ("..." if len(h) > 90 else "") for h in hostile[:1]]
    if len(hostile) > 1:
        out.append(f"(+{len(hostile) - 1} more hostile reasons)")
    return "; ".join(out + review)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", required=True, help="folder for (or of) otter assign's output")
    ap.add_argument("--work", required=True, help="folder for the notebooks, package copies and CSVs")
    ap.add_argument("--hw", nargs="*", default=HWS, help="homeworks (default: all with a round-3 file)")
    ap.add_argument("--only", nargs="*", default=None, help="entry names to grade (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report-only", action="store_true", help="judge the CSVs already in --work")
    ap.add_argument("--cell-timeout", type=float, default=30)
    ap.add_argument("--timeout", type=float, default=400)
    a = ap.parse_args(argv)
    mine = [os.path.join(ROOT, "gpulab"), os.path.join(ROOT, "exercises")]
    before = {
        p: open(p, "rb").read()
        for d in mine
        for p in glob.glob(os.path.join(d, "**", "*.py"), recursive=True)
    }
    assign(a.dist, a.hw)
    jobs = [
        (hw, name, entry)
        for hw in a.hw
        for name, entry in load_round3(hw).items()
        if a.only is None or name in a.only
    ]
    if a.report_only:  # the verdicts again from the CSVs an earlier run left in --work
        rows = [read_row(os.path.join(a.work, hw, name)) for hw, name, _ in jobs]
    else:
        with ThreadPoolExecutor(a.jobs) as pool:
            rows = list(
                pool.map(lambda j: grade(j[0], j[1], j[2], a.dist, a.work, a.cell_timeout, a.timeout), jobs)
            )
    results = []
    print("| homework | submission | kind | scores | flags | verdict |")
    print("|---|---|---|---|---|---|")
    for (hw, name, entry), row in zip(jobs, rows):
        full = full_marks(a.dist, hw)
        ok, why = judge(entry, row, full)
        qs = " ".join(f"{q}={row.get(q, '?')}/{full[q]:g}" for q in entry.get("questions", full))
        total = f"{row.get('total', '?')}/{row.get('possible', '?')}"
        need = f" (needs the sim's {entry['needs_sim']})" if entry.get("needs_sim") and not ok else ""
        print(
            f"| {hw} | {name} | {entry['kind']} | {total}: {qs} | {short_flags(row.get('flags', ''))} | "
            f"{'ok' if ok else 'FAIL'}: {why}{need} |"
        )
        results.append({"hw": hw, "name": name, "kind": entry["kind"], "ok": ok, "why": why, "row": row})
    with open(os.path.join(a.work, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    touched = [p for p, b in before.items() if not os.path.exists(p) or open(p, "rb").read() != b]
    if touched:  # the private copies failed, or someone edited the checkout meanwhile: say so
        print(f"\nWARNING: files of this checkout changed during the run: {touched[:10]}")
    bad = [r for r in results if not r["ok"]]
    print(f"\n{len(results) - len(bad)}/{len(results)} meet the done-bar")
    return 0


if __name__ == "__main__":
    sys.exit(main())
