"""Dependencies run one way (issue 18, item 1), read from the source with ``ast``.

Layers, bottom to top: ``models/`` and ``metrics`` (pure: no matplotlib, no ipywidgets, no file
I/O at import); ``sim/`` and ``backends/`` (never ``plots/``, ``widgets/``, ``checks/``,
``grading``); ``checks/`` (never ``plots/`` or ``widgets/``); ``plots/`` and ``widgets/`` on top.
And no import cycle among gpulab's modules (imports executed at import time).

Violations that exist today in files their owners are changing are listed, one line each, in
KNOWN_VIOLATIONS: the test reports them and fails on any other. Delete a line once its file is
fixed. ``python tests/test_layering.py [ROOT]`` prints the import graph (module -> gpulab
modules it imports) and the violations, of this checkout or of another one at ROOT.
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "gpulab"

# (rule, importing module, imported module): which file must change, and how
KNOWN_VIOLATIONS = {}

PURE = ("gpulab.models", "gpulab.metrics")
PURE_FORBIDDEN = ("matplotlib", "ipywidgets")
LOW = ("gpulab.sim", "gpulab.backends")
LOW_FORBIDDEN = ("gpulab.plots", "gpulab.widgets", "gpulab.checks", "gpulab.grading")
CHECKS = ("gpulab.checks",)
CHECKS_FORBIDDEN = ("gpulab.plots", "gpulab.widgets")
# calls that read or write files, refused at module level of the pure layer
IO_CALLS = {
    "open",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "load",
    "loads_file",
    "loadtxt",
    "genfromtxt",
    "read_csv",
    "savefig",
    "mkdir",
}


def module_name(path):
    """Dotted module name of a file under gpulab/ (a package's __init__ is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules():
    """{module name: path} for every .py file of the gpulab package."""
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _within(name, prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _resolve(mod, node, known):
    """The modules one import statement names (submodules for ``from pkg import sub``)."""
    out = []
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    is_pkg = known.get(mod, Path("x")).name == "__init__.py"
    if node.level:
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module
    for a in node.names:
        sub = f"{target}.{a.name}"
        out.append(sub if sub in known else target)
    return out


def imports(mod, path, known, module_level_only):
    """Modules ``mod`` imports; with ``module_level_only``, skip imports inside functions
    (those run at call time, so they cannot form an import-time cycle)."""
    tree = ast.parse(path.read_text())
    found = []

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            fn = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)) and not (module_level_only and fn):
                found.extend(_resolve(mod, child, known))
            walk(child, fn)

    walk(tree, False)
    return found


def module_level_io(path):
    """Calls at module level (outside functions) that read or write files."""
    tree = ast.parse(path.read_text())
    bad = []

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Call):
                f = child.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if name in IO_CALLS:
                    bad.append(f"line {child.lineno}: {name}(...)")
            walk(child)

    walk(tree)
    return bad


def graph(module_level_only=True):
    """{module: sorted gpulab modules it imports}."""
    known = modules()
    return {
        m: sorted({i for i in imports(m, p, known, module_level_only) if i.startswith("gpulab") and i != m})
        for m, p in known.items()
    }


def violations():
    """{(rule, importer, imported): detail} for every layering rule broken today."""
    known = modules()
    found = {}
    for m, p in known.items():
        every = imports(m, p, known, module_level_only=False)
        if _within(m, PURE):
            for i in every:
                if _within(i, PURE_FORBIDDEN):
                    found[("pure-no-gui", m, i)] = f"{m} imports {i}"
            for call in module_level_io(p):
                found[("pure-no-io", m, call)] = f"{m} does file I/O at import ({call})"
        if _within(m, LOW):
            for i in every:
                if _within(i, LOW_FORBIDDEN):
                    found[("sim-backends-below-ui-and-checks", m, i)] = f"{m} imports {i}"
        if _within(m, CHECKS):
            for i in every:
                for rule, prefix in (
                    ("checks-not-plots", "gpulab.plots"),
                    ("checks-not-widgets", "gpulab.widgets"),
                ):
                    if _within(i, (prefix,)):
                        found[(rule, m, i)] = f"{m} imports {i}"
    for cycle in cycles():
        found[("no-cycles", cycle[0], " -> ".join(cycle))] = "import cycle: " + " -> ".join(cycle)
    return found


def cycles():
    """Import-time cycles among gpulab modules (strongly connected components), each as a list."""
    g = graph(module_level_only=True)
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in g:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


# -- tests ------------------------------------------------------------------------------------------
def test_the_scan_sees_the_package():
    g = graph()
    assert "gpulab.sim.runner" in g and "gpulab.sim.context" in g["gpulab.sim.runner"]
    assert "gpulab.metrics" in g["gpulab.sim.memory"]


def test_no_new_layering_violation():
    found = violations()
    new = {k: v for k, v in found.items() if k not in KNOWN_VIOLATIONS}
    still = sorted(KNOWN_VIOLATIONS[k] for k in found if k in KNOWN_VIOLATIONS)
    fixed = sorted(v for k, v in KNOWN_VIOLATIONS.items() if k not in found)
    if still:
        print("known layering violations still present (see KNOWN_VIOLATIONS):\n  " + "\n  ".join(still))
    if fixed:
        print("fixed, delete from KNOWN_VIOLATIONS:\n  " + "\n  ".join(fixed))
    assert not new, "new layering violations:\n  " + "\n  ".join(sorted(new.values()))


def test_no_import_cycles():
    assert not cycles(), cycles()


def test_the_backends_do_not_import_launch():
    g = graph(module_level_only=False)
    for m in g:
        if m.startswith("gpulab.backends"):
            assert "gpulab.launch" not in g[m], m


def test_the_rules_catch_a_violation(tmp_path, monkeypatch):
    """The scanner finds a forbidden import and file I/O in a pure module (self-check)."""
    fake = tmp_path / "gpulab"
    (fake / "models").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "models" / "__init__.py").write_text("")
    (fake / "models" / "bad.py").write_text("import matplotlib.pyplot as plt\nDATA = open('x').read()\n")
    (fake / "a.py").write_text("from . import b\n")
    (fake / "b.py").write_text("from .a import *\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PKG", fake)
    rules = {k[0] for k in violations()}
    assert {"pure-no-gui", "pure-no-io", "no-cycles"} <= rules


def summary():
    """The import graph and the violations, as text."""
    g = graph()
    lines = [f"{m} -> {', '.join(d) if d else '-'}" for m, d in g.items()]
    edges = sum(len(d) for d in g.values())
    lines.append(f"\n{len(g)} modules, {edges} import-time gpulab imports")
    found = violations()
    lines.append(f"{len(found)} layering violation(s):")
    lines += [f"  [{'known' if k in KNOWN_VIOLATIONS else 'NEW'}] {v}" for k, v in sorted(found.items())]
    return "\n".join(lines)


if __name__ == "__main__":
    # optional argument: another checkout's root (e.g. a `git worktree` of an older commit)
    if len(sys.argv) > 1:
        ROOT = Path(sys.argv[1]).resolve()
        PKG = ROOT / "gpulab"
    print(summary())
