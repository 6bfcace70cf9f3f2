"""The appendix's figures and tables are numbered A.1, A.2, ... as a chapter's are 3.1, 3.2, ...
(issue 25). The appendix sits in the toc's unnumbered Reference part, where Sphinx numbers
objects in one running count shared with the start page ("Table 2" was the appendix's first).
Its first page and every page under it in _toc.yml count together, in reading order, each kind
(figure, table, code block) on its own, as numfig does within a chapter."""

from __future__ import annotations

APPENDIX = "book/measured_h200"
LETTER = "A"


def appendix_docs(env) -> list[str]:
    """The appendix's first page and the pages under it, in reading order."""
    out = []

    def walk(doc):
        if doc in out:
            return
        out.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    if APPENDIX in env.found_docs:
        walk(APPENDIX)
    return out


def renumber(env, docs: list[str]) -> list[str]:
    """Number each kind of object of ``docs`` (LETTER, 1), (LETTER, 2), ... in page order, and
    within a page in the order Sphinx numbered them. Returns the pages whose numbers changed."""
    changed = set()
    kinds = {k for d in docs for k in env.toc_fignumbers.get(d, {})}
    for kind in sorted(kinds):
        n = 0
        for doc in docs:
            numbers = env.toc_fignumbers.get(doc, {}).get(kind, {})
            for ident, old in sorted(numbers.items(), key=lambda kv: kv[1][-1]):
                n += 1
                if tuple(old) != (LETTER, n):
                    numbers[ident] = (LETTER, n)
                    changed.add(doc)
    return sorted(changed)


def number_appendix(app, env):
    """After Sphinx has assigned figure numbers (its toctree collector, same event)."""
    if not app.config.numfig:
        return []
    return renumber(env, appendix_docs(env))


def setup(app):
    app.connect("env-get-updated", number_appendix, priority=900)
