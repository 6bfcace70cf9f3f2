"""The bibliography as a reader meets it (issues 23 and 25): no two works share a citation label,
and the source articles carry what a reader needs to find them.

The book cites in author-year style (`bibtex_reference_style: author_year` in _config.yml), so a
citation reads "[NVIDIA, 2025b]": two entries with the same author names and year would print
the same label for different works. The label is rebuilt here the way sphinxcontrib-bibtex's
author_year style builds it (one author: the last name; two: both; three or more: the first and
"et al."), and every label must be unique. The rendered pages are checked by tests/test_pages.py.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

pybtex = pytest.importorskip("pybtex.database")

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"


def entries():
    return pybtex.parse_file(str(BIB)).entries


def _last(person) -> str:
    return " ".join(person.last_names) or " ".join(person.first_names)


def citation_label(entry) -> str:
    """The text of an author_year citation of ``entry``: "Names, year"."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [re.sub(r"[{}]", "", _last(p)) for p in people]
    if len(names) >= 3:
        who = f"{names[0]} et al."
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = names[0] if names else entry.fields.get("key", "?")
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


def duplicate_labels(ents) -> dict[str, list[str]]:
    by_label = defaultdict(list)
    for key, e in ents.items():
        by_label[citation_label(e)].append(key)
    return {lab: keys for lab, keys in by_label.items() if len(keys) > 1}


def test_label_check_finds_a_clash():
    """The check itself can fail: two NVIDIA manuals of the same year clash."""
    two = pybtex.parse_string(
        "@manual{a, author={{NVIDIA}}, title={A}, year={2025}}\n"
        "@manual{b, author={{NVIDIA}}, title={B}, year={2025}}\n"
        "@manual{c, author={{NVIDIA}}, title={C}, year={2025c}}\n",
        "bibtex",
    ).entries
    assert duplicate_labels(two) == {"NVIDIA, 2025": ["a", "b"]}
    assert citation_label(two["c"]) == "NVIDIA, 2025c"


def test_no_two_works_share_a_citation_label():
    dups = duplicate_labels(entries())
    assert not dups, (
        "these works would print the same citation label (give the years a/b/c suffixes): "
        + "; ".join(f"[{lab}]: {', '.join(keys)}" for lab, keys in dups.items())
    )


def test_source_articles_can_be_found():
    """Each source article gives its title in the original language (a Japanese one with an
    English translation in parentheses), says in which language and what kind of text it is, and no entry talks
    about what was "not recorded" (a development note, not something a reader can use)."""
    ents = entries()
    seeds = [k for k in ents if k.startswith("seed")]
    assert len(seeds) == 5
    for key in seeds:
        f = ents[key].fields
        title, how = f.get("title", ""), f.get("howpublished", "")
        lang = re.search(r"\bin (Japanese|English)\b", how)
        assert lang, f"{key}: the language is not named"
        if lang.group(1) == "Japanese":
            assert re.search(r"\([A-Z{][^()]*\)\s*$", title), f"{key}: title without an English translation"
        assert "not recorded" not in how + f.get("note", ""), f"{key}: 'not recorded' is a development note"
    dated = [k for k in seeds if re.search(r"\b20\d\d-\d\d-\d\d\b", ents[k].fields.get("howpublished", ""))]
    assert {"seed001", "seed003"} <= set(dated), "the two dated articles must give their dates"


def test_every_cited_key_exists():
    """Every {cite}`key` in the chapters and the book's pages names an entry of references.bib."""
    keys = set(entries())
    missing = set()
    for path in [*sorted((ROOT / "chapters").glob("*.ipynb")), *sorted((ROOT / "book").glob("*.*"))]:
        if path.suffix not in (".ipynb", ".md"):
            continue
        for group in re.findall(r"\{cite(?::[a-z]+)?\}`([^`]+)`", path.read_text()):
            for k in group.split(","):
                if k.strip() and k.strip() not in keys:
                    missing.add(f"{path.name}: {k.strip()}")
    assert not missing, sorted(missing)
