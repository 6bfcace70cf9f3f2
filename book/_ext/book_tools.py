"""Tools for the chapter notebooks' book conventions (issue 15), and the checks tests run.

    python book/_ext/book_tools.py hide-setup chapters/*.ipynb   # tag the 3 set-up cells
    python book/_ext/book_tools.py retitle chapters/*.ipynb      # "# 3. Title" -> "(ch03)=\n# Title"
    python book/_ext/book_tools.py check                         # report what is not yet done

- The first three code cells of a chapter (Colab install, ``import gpulab``, imports) carry the
  myst-nb tag ``hide-input``: the book shows a "Show code cell source" toggle instead.
- A chapter's H1 has no number of its own (``_toc.yml`` numbers the chapters) and is preceded
  by the label ``(chNN)=``, so ``{numref}`Chapter %s <ch03>``` links it.
- Every install line and the Gradescope requirements name the repository URL of
  ``_config.yml`` (``repository.url``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUP_TAG = "hide-input"
SETUP_CELLS = 3
H1_RE = re.compile(r"^# +(?:(\d+)\. +)?(.+)$", re.M)
GIT_URL_RE = re.compile(r"git\+(https?://[^\s\"'@#`\\]+?)(?:\.git)?(?=[\s\"'@#`\\]|$)")
CLONE_RE = re.compile(r"git clone(?: -\S+)* (https?://[^\s\"'`\\]+?)(?:\.git)?(?=[\s\"'`\\]|$)")


def _nb(path_or_nb):
    import nbformat

    if isinstance(path_or_nb, (str, Path)):
        return nbformat.read(str(path_or_nb), as_version=4)
    return path_or_nb


def chapter_label(path) -> str:
    """``chapters/03_divergence.ipynb`` -> ``ch03`` (the label before its H1)."""
    m = re.match(r"(\d+)_", Path(path).name)
    if not m:
        raise ValueError(f"{path}: chapter notebooks are named NN_slug.ipynb")
    return f"ch{int(m.group(1)):02d}"


# --- set-up cells -------------------------------------------------------------------------------


def setup_cells(nb, n: int = SETUP_CELLS) -> list:
    """The first ``n`` code cells."""
    return [c for c in _nb(nb).cells if c.cell_type == "code"][:n]


def setup_cell_problems(nb, n: int = SETUP_CELLS) -> list[str]:
    """What is wrong with a notebook's set-up cells: each of the first ``n`` code cells must
    carry the ``hide-input`` tag (``hide-cell`` also hides it and is accepted)."""
    cells = setup_cells(nb, n)
    out = []
    if len(cells) < n:
        out.append(f"only {len(cells)} code cells; expected at least {n} set-up cells")
    for i, c in enumerate(cells, 1):
        tags = c.get("metadata", {}).get("tags", [])
        if not ({SETUP_TAG, "hide-cell"} & set(tags)):
            first = (c.source.splitlines() or [""])[0][:60]
            out.append(f"code cell {i} ({first!r}) lacks the {SETUP_TAG!r} tag")
    return out


def hide_setup_cells(path, n: int = SETUP_CELLS) -> bool:
    """Tag the first ``n`` code cells of the notebook at ``path`` with ``hide-input``
    (cell ids and everything else kept). Returns whether the file changed."""
    import nbformat

    nb = _nb(path)
    changed = False
    for c in setup_cells(nb, n):
        tags = c.metadata.setdefault("tags", [])
        if not ({SETUP_TAG, "hide-cell"} & set(tags)):
            tags.append(SETUP_TAG)
            changed = True
    if changed:
        nbformat.write(nb, str(path))
    return changed


# --- chapter titles -----------------------------------------------------------------------------


def title_problems(nb, label: str) -> list[str]:
    """The first markdown cell must start with ``(label)=`` and an H1 without a number."""
    md = [c for c in _nb(nb).cells if c.cell_type == "markdown"]
    if not md:
        return ["no markdown cell"]
    src = md[0].source
    out = []
    if not src.lstrip().startswith(f"({label})="):
        out.append(f"first markdown cell does not start with the label ({label})=")
    m = H1_RE.search(src)
    if not m:
        out.append("first markdown cell has no '# Title'")
    elif m.group(1):
        out.append(f"H1 {m.group(0)!r} carries its own number; _toc.yml numbers chapters")
    return out


def retitle(path) -> bool:
    """Drop the number from a chapter's H1 and put its label ``(chNN)=`` before it."""
    import nbformat

    nb = _nb(path)
    label = chapter_label(path)
    md = next(c for c in nb.cells if c.cell_type == "markdown")
    src = md.source
    src = H1_RE.sub(lambda m: f"# {m.group(2)}", src, count=1)
    if not src.lstrip().startswith(f"({label})="):
        src = f"({label})=\n{src.lstrip()}"
    if src == md.source:
        return False
    md.source = src
    nbformat.write(nb, str(path))
    return True


# --- the public repository URL ----------------------------------------------------------------


def repository_url(root: Path = ROOT) -> str:
    """``repository.url`` of ``_config.yml``: the one place the public URL is set."""
    import yaml

    url = (yaml.safe_load((root / "_config.yml").read_text()).get("repository") or {}).get("url")
    if not url:
        raise ValueError(f"{root / '_config.yml'}: no repository.url")
    return url.rstrip("/")


def install_files(root: Path = ROOT) -> list[Path]:
    """Files that install gpulab from the repository: notebooks (book, chapters, homework),
    the Gradescope requirements, the how-to-run page, READMEs."""
    pats = [
        "chapters/*.ipynb",
        "book/*.ipynb",
        "book/*.md",
        "exercises/**/*.ipynb",
        "exercises/**/requirements*.txt",
        "exercises/**/*.md",
        "README.md",
    ]
    files = []
    for pat in pats:
        files += [
            p
            for p in sorted(root.glob(pat))
            if "_build" not in p.parts and ".ipynb_checkpoints" not in p.parts
        ]
    return files


def url_mismatches(root: Path = ROOT) -> list[str]:
    """``file:line: URL`` for every ``git+URL`` (install lines, requirements) and every
    ``git clone URL`` that is not ``_config.yml``'s repository URL."""
    want = repository_url(root)
    out = []
    for p in install_files(root):
        if p.suffix == ".ipynb":
            blocks = [(f"cell {k}", c.source) for k, c in enumerate(_nb(p).cells, 1)]
        else:
            blocks = [("line", p.read_text(encoding="utf-8", errors="replace"))]
        for where, text in blocks:
            for i, line in enumerate(text.splitlines(), 1):
                for m in [*GIT_URL_RE.finditer(line), *CLONE_RE.finditer(line)]:
                    if m.group(1).rstrip("/") != want:
                        pos = f"{where} line {i}" if where != "line" else f"line {i}"
                        out.append(
                            f"{p.relative_to(root)} {pos}: {m.group(1)} (want {want}, "
                            "_config.yml repository.url)"
                        )
    return out


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("hide-setup", "retitle", "check"):
        print(__doc__)
        return 2
    cmd, paths = argv[0], [Path(p) for p in argv[1:]]
    if cmd == "hide-setup":
        for p in paths:
            print(p, "tagged" if hide_setup_cells(p) else "already tagged")
    elif cmd == "retitle":
        for p in paths:
            print(p, "retitled" if retitle(p) else "unchanged")
    else:
        bad = 0
        for p in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
            for msg in setup_cell_problems(p) + title_problems(p, chapter_label(p)):
                print(f"{p.relative_to(ROOT)}: {msg}")
                bad += 1
        for msg in url_mismatches():
            print(msg)
            bad += 1
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
