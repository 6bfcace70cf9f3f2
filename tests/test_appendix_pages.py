"""The appendix is split into pages a reader can navigate (issue 25: it was one page of 41,574 px):
its first page holds A.1 and A.2, each page under it in _toc.yml is numbered A.3, A.4, ... in
reading order with its sections A.k.1, A.k.2, ...; each page is labelled, the first page links
every other, and every number a page's text pastes (glue) is glued by that same page."""

from __future__ import annotations

import re

import pytest

import appendix_pages as ap

PAGES = ap.pages()
FIRST_SUBPAGE = 3  # the first page's own sections are A.1 and A.2


def headings(text: str, level: int) -> list[str]:
    """Markdown headings of one level, outside code fences."""
    out, fence = [], None
    for line in text.splitlines():
        m = re.match(r"^(`{3,}|~{3,})", line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif line.strip() == fence:
                fence = None
            continue
        if fence is None and re.match("#" * level + r" ", line):
            out.append(line[level + 1 :].strip())
    return out


def numbering_problems(page_texts: list[str]) -> list[str]:
    """Headings out of step with the pages' order: page k (from A.3) is titled 'A.k ...' and its
    sections 'A.k.1 ...', 'A.k.2 ...' in order; the first page's sections are A.1, A.2, ..."""
    out = []
    first = headings(page_texts[0], 2)
    want = [f"A.{j}" for j in range(1, FIRST_SUBPAGE)]
    got = [h.split(" ", 1)[0] for h in first]
    if got != want:
        out.append(f"first page: sections {got}, expected {want}")
    for k, text in enumerate(page_texts[1:], FIRST_SUBPAGE):
        h1 = headings(text, 1)
        if len(h1) != 1 or not h1[0].startswith(f"A.{k} "):
            out.append(f"page {k - FIRST_SUBPAGE + 2}: title {h1}, expected one 'A.{k} ...'")
        got = [h.split(" ", 1)[0] for h in headings(text, 2)]
        want = [f"A.{k}.{j}" for j in range(1, len(got) + 1)]
        if got != want:
            out.append(f"A.{k}: sections {got}, expected {want}")
    return out


def unglued_keys(markdown: str, code: str) -> list[str]:
    """Glue keys the page's text pastes that its own code does not glue (myst-nb's glue is per
    page: a key glued on another page is a build error). Code names keys as string literals,
    f-string templates (``f"app-lat-{k}"``) or measured.show's fig=/tab= (fig-b, -c, ... for its
    further figures)."""
    used = set(re.findall(r"\{glue:[a-z]*\}`([\w-]+)", markdown))
    used |= set(re.findall(r"\{glue:[a-z]*\} ([\w-]+)", markdown))
    literals = set(re.findall(r'"([\w-]+)"', code))
    templates = [
        re.compile("^" + re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(t)) + "$")
        for t in re.findall(r'f"([\w{}\[\]"\'-]+)"', code)
    ]
    figures = set(re.findall(r'fig="([\w-]+)"', code))

    def glued(key):
        if key in literals or any(t.match(key) for t in templates):
            return True
        return any(re.fullmatch(re.escape(f) + r"(-[b-h])?", key) for f in figures)

    return sorted(k for k in used if not glued(k))


# --- the checks can fail ----------------------------------------------------------------------------


def test_numbering_check_finds_pages_out_of_order():
    good = ["## A.1 Where\n## A.2 Score\n", "# A.3 Latency\n## A.3.1 Ladder\n```\n## not a heading\n```\n"]
    assert numbering_problems(good) == []
    assert numbering_problems([good[0], "# A.4 Latency\n## A.4.1 Ladder\n"])
    assert numbering_problems([good[0], "# A.3 Latency\n## A.3.2 Ladder\n"])
    assert numbering_problems(["## A.1 Where\n", good[1]])


def test_glue_check_finds_a_key_glued_elsewhere():
    code = 'hs = measured.show("x", fig="fig-x", tab="tab-x")\nglue(f"app-lat-{k}", 1)\nglue("app-n", 2)'
    text = "{glue:text}`app-lat-L1:.1f` {glue:text}`app-n` ```{glue:figure} fig-x-b\n```{glue:md} tab-x"
    assert unglued_keys(text, code) == []
    assert unglued_keys(text + " {glue:text}`app-str-hbm8:.0f`", code) == ["app-str-hbm8"]


# --- the appendix -------------------------------------------------------------------------------------


def test_the_appendix_has_pages_under_its_first_page():
    assert len(PAGES) >= 4, PAGES
    assert all(ap.source(p).exists() for p in PAGES)


def test_pages_are_numbered_in_reading_order():
    assert numbering_problems([ap.markdown(p) for p in PAGES]) == []


@pytest.mark.parametrize("page", PAGES)
def test_every_page_is_labelled_and_every_number_it_shows_is_glued_there(page):
    text = ap.markdown(page)
    assert re.match(r"\(appendix-[\w-]+\)=\n# ", text), f"{page}: no (appendix-...)= label before its title"
    assert unglued_keys(text, ap.code(page)) == []


def test_first_page_links_every_other_page():
    text = ap.markdown(ap.FIRST)
    for page in PAGES[1:]:
        assert "{doc}`" + page.split("/", 1)[1] + "`" in text, page


def test_appendix_objects_are_numbered_a1_a2_in_reading_order():
    """book/_ext/book_appendix.py: figures and tables of the appendix's pages count A.1, A.2, ...
    per kind across its pages in toc order (Sphinx's running count had them as Table 2...)."""
    import sys
    from types import SimpleNamespace

    sys.path.insert(0, str(ap.ROOT / "book" / "_ext"))
    import book_appendix

    env = SimpleNamespace(
        found_docs={"book/intro", ap.FIRST, "book/p1", "book/p2", "book/glossary"},
        toctree_includes={ap.FIRST: ["book/p1", "book/p2"]},
        toc_fignumbers={
            "book/intro": {"table": {"t0": (1,)}},
            ap.FIRST: {"table": {"t2": (3,), "t1": (2,)}},
            "book/p1": {"figure": {"f1": (1,), "f2": (2,)}, "table": {"t3": (4,)}},
            "book/p2": {"figure": {"f3": (3,)}},
        },
    )
    docs = book_appendix.appendix_docs(env)
    assert docs == [ap.FIRST, "book/p1", "book/p2"]
    assert book_appendix.renumber(env, docs) == [ap.FIRST, "book/p1", "book/p2"]
    n = env.toc_fignumbers
    assert n[ap.FIRST]["table"] == {"t1": ("A", 1), "t2": ("A", 2)} and n["book/p1"]["table"] == {
        "t3": ("A", 3)
    }
    assert n["book/p1"]["figure"] == {"f1": ("A", 1), "f2": ("A", 2)} and n["book/p2"]["figure"] == {
        "f3": ("A", 3)
    }
    assert n["book/intro"]["table"] == {"t0": (1,)}  # pages outside the appendix keep Sphinx's numbers
    assert book_appendix.renumber(env, docs) == []  # a second pass changes nothing
