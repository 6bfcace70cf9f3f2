"""Tamper detection for grading: :func:`snapshot` records what numpy, gpulab, Otter and
builtins expose (and what changes their behaviour in place) before a submission runs;
:func:`tamper_findings` / :func:`assert_untampered` name what it replaced, deleted, changed or
redefined since; :func:`package_hashes` / :func:`changed_files` see what it wrote to disk;
:func:`suspicious` lists code patterns for the instructor to read."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import sysconfig
import types

__all__ = [
    "snapshot",
    "tamper_findings",
    "assert_untampered",
    "package_hashes",
    "changed_files",
    "TAMPER_MESSAGE",
    "suspicious",
    "SENSITIVE",
    "SUSPICIOUS",
    "ALSO_WATCHED",
    "WATCHED_PACKAGES",
]

#: modules whose callables the tests rely on; replacing one of them is tampering
SENSITIVE = ("numpy", "gpulab", "otter", "importlib", "builtins", "math", "signal", "inspect", "random")
#: modules :func:`snapshot` imports besides ``gpulab.checks.*`` because they change how a kernel
#: is judged: numba's type check (``check``, ``enabled``), the launch budgets
#: (``DEFAULT_TIMEOUT_S``, ``launch``'s defaults) and eager compilation (``jit``)
ALSO_WATCHED = (
    "numpy.testing",
    "gpulab.launch",
    "gpulab.sim.typecheck",
    "gpulab.sim.eager",
    "gpulab.sim.runner",
    "gpulab.metrics",
)
#: packages whose every submodule :func:`snapshot` imports, so that what the checks import only
#: when they run is covered too: the checks; the performance model hw05 q7 is graded by
#: (``gpulab.perf``: replacing ``engine.predict`` or ``Prediction.dram_roofline_fraction`` went
#: unseen); the book's kernels the checks compare with (``gpulab.kernels.memory.copy``)
WATCHED_PACKAGES = ("gpulab.checks", "gpulab.perf", "gpulab.kernels")
#: figure-only submodules (matplotlib): nothing a grade depends on
_UNWATCHED_SUBMODULES = ("plot",)
#: dunder names watched all the same: every ``import`` statement goes through
#: ``builtins.__import__`` (round 3: a hook handing the hidden test a stand-in gpulab.checks went
#: unseen, because dunder names were skipped), every class statement through ``__build_class__``
_WATCHED_DUNDERS = ("builtins.__import__", "builtins.__build_class__")
#: changed by the notebook machinery itself, not by a submission
_LEGIT_CHANGES = ("builtins.input", "builtins.raw_input", "builtins.get_ipython")
#: what a failed :func:`assert_untampered` says; the plugin scores a submission whose tests say it
#: as hostile (gpulab.grading.plugin)
TAMPER_MESSAGE = "the grading environment was changed by the submission"

# The snapshot is taken once, by the guard cell, before the submission runs, and then sealed:
# the hidden tests use the modules as they were then and never reload them from disk (a
# submission that rewrote gpulab/grading/tamper.py on disk got its neutered copy loaded by the
# reload the tests used to do). _SEALED, _SNAPSHOT_ID and _SNAPSHOT_SIZE are immutable module
# constants, so the snapshot watches them too: re-opening it or swapping or emptying the
# recorded dict is itself a finding.
_SNAPSHOT = None
_SEALED = False
_SNAPSHOT_ID = 0
_SNAPSHOT_SIZE = 0
_RETAKEN: list = []  # snapshot() calls refused after sealing (what the submission tried)


def _sensitive(name: str) -> bool:
    return name.split(".")[0] in SENSITIVE


def _trusted_dirs():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # all of gpulab
    paths = sysconfig.get_paths()
    dirs = {here}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            dirs.add(os.path.realpath(paths[key]))
    for p in sys.path:  # site-packages of the interpreter actually running
        if p.endswith("site-packages"):
            dirs.add(os.path.realpath(p))
    return tuple(d.rstrip(os.sep) + os.sep for d in dirs)


def _code_file(obj):
    fn = getattr(obj, "__func__", obj)
    fn = getattr(fn, "fget", fn)
    code = getattr(fn, "__code__", None)
    return code.co_filename if isinstance(code, types.CodeType) else None


_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), range)
#: modules whose plain values (constants, and public dicts/lists/arrays) are watched too; in
#: numpy and math only constants (numpy keeps private caches that change legitimately)
_VALUE_MODULES = ("gpulab",)
_CONSTANT_MODULES = ("gpulab", "numpy", "math")


def _frozen(obj, depth: int = 0):
    """A comparable picture of a value: immutables as they are, containers and arrays by content,
    instances of gpulab classes by their fields; anything else by identity."""
    if isinstance(obj, _IMMUTABLE):
        return (type(obj).__name__, obj)
    if depth > 4:
        return ("id", id(obj))
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, tuple(_frozen(v, depth + 1) for v in obj[:2000]), len(obj))
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, frozenset(_frozen(v, depth + 1) for v in list(obj)[:2000]))
    if isinstance(obj, dict):
        return (
            "dict",
            tuple((_frozen(k, depth + 1), _frozen(v, depth + 1)) for k, v in list(obj.items())[:2000]),
            len(obj),
        )
    try:
        import numpy as np

        if isinstance(obj, np.ndarray):
            return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes()[:65536])
        if isinstance(obj, np.generic):
            return ("npscalar", obj.dtype.str, obj.tobytes())
    except Exception:
        pass
    cls_mod = getattr(type(obj), "__module__", "") or ""
    if cls_mod.split(".")[0] == "gpulab" and hasattr(obj, "__dict__") and not isinstance(obj, type):
        return (type(obj).__name__, id(obj), _frozen(dict(vars(obj)), depth + 1))
    return ("id", id(obj))


def _fingerprint(obj, values: bool):
    """What about ``obj`` changes its behaviour, beyond its identity: a function's code,
    defaults, keyword defaults and closure; a classmethod/staticmethod/property's functions;
    with ``values``, a plain value's content. None when only identity can be compared."""
    fn = obj
    if isinstance(obj, (staticmethod, classmethod)):
        fn = obj.__func__
    if isinstance(obj, property):
        return tuple(
            _fingerprint(f, values) if f is not None else None for f in (obj.fget, obj.fset, obj.fdel)
        )
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if isinstance(fn, types.FunctionType):
        cells = tuple(("id", id(c.cell_contents)) if _cell_ok(c) else None for c in (fn.__closure__ or ()))
        return (
            "function",
            fn.__code__,
            _frozen(fn.__defaults__),
            _frozen(fn.__kwdefaults__),
            cells,
            id(fn.__globals__),
        )
    if values and not callable(obj) and not isinstance(obj, types.ModuleType):
        return _frozen(obj)
    return None


def _cell_ok(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:  # an empty cell
        return False


def _watched(mod):
    """(key, object, fingerprint) for what a module exposes: callables and submodules; in
    gpulab, numpy and math also constants (``warp.SHARED_LD``, ``numpy.pi``), in gpulab also
    public dicts, lists and arrays (metric-name tables); and the functions and class-level
    values of the classes gpulab and Otter define (so ``CheckResult.__bool__ = ...`` or a
    changed class constant shows too)."""
    out = []
    try:
        items = list(vars(mod).items())
    except TypeError:
        return out
    top = mod.__name__.split(".")[0]
    values, constants = top in _VALUE_MODULES, top in _CONSTANT_MODULES
    for name, obj in items:
        key = f"{mod.__name__}.{name}"
        if name.startswith("__") and name.endswith("__") and key not in _WATCHED_DUNDERS:
            continue
        if isinstance(
            obj, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type, types.MethodType)
        ) or callable(obj):
            out.append((key, obj, _fingerprint(obj, False)))
        elif constants and isinstance(obj, _IMMUTABLE) and not (top == "numpy" and name.startswith("_")):
            out.append((key, obj, _frozen(obj)))
        elif values and not name.startswith("_"):
            out.append((key, obj, _frozen(obj)))
        if (
            isinstance(obj, type)
            and getattr(obj, "__module__", None) == mod.__name__
            and top in ("gpulab", "otter")
        ):
            for mname, m in list(vars(obj).items()):
                if isinstance(m, (types.FunctionType, staticmethod, classmethod, property)):
                    out.append((f"{key}.{mname}", m, _fingerprint(m, False)))
                elif top == "gpulab" and isinstance(m, _IMMUTABLE) and not mname.startswith("__"):
                    out.append((f"{key}.{mname}", m, _frozen(m)))
    return out


def snapshot(seal: bool = False):
    """Record what numpy, gpulab, Otter and builtins expose now (before student code runs):
    each object and its fingerprint (:func:`_watched`). Imports every submodule of
    :data:`WATCHED_PACKAGES` and :data:`ALSO_WATCHED` first so they are covered too. With
    ``seal`` (the guard cell) the snapshot cannot be taken again: a later call (a submission
    re-recording the state it patched) is refused and reported by :func:`tamper_findings`."""
    global _SNAPSHOT, _SEALED, _SNAPSHOT_ID, _SNAPSHOT_SIZE
    if _SEALED:
        _RETAKEN.append("snapshot")
        raise RuntimeError("the grading snapshot was taken before the submission ran and is sealed")
    import importlib
    import pkgutil

    for name in ALSO_WATCHED:
        importlib.import_module(name)
    for pkg in WATCHED_PACKAGES:
        path = importlib.import_module(pkg).__path__
        for info in pkgutil.iter_modules(path):
            if info.name in _UNWATCHED_SUBMODULES:
                continue
            try:
                importlib.import_module(f"{pkg}.{info.name}")
            except Exception:
                pass
    for name in ("gpulab.grading", "gpulab.grading.limits", "gpulab.grading.cli", "gpulab.grading.plugin"):
        importlib.import_module(name)  # the grading helpers the hidden tests call are watched too
    _SEALED = bool(seal)  # before recording, so the recorded value is the sealed one
    snap = {}
    for name, mod in list(sys.modules.items()):
        if mod is not None and _sensitive(name) and isinstance(mod, types.ModuleType):
            snap[name] = (mod, {k: (o, fp) for k, o, fp in _watched(mod)})
    _SNAPSHOT_ID, _SNAPSHOT_SIZE = id(snap), len(snap)
    me = sys.modules[__name__]  # recorded again: with the id and size just set
    snap[__name__] = (me, {k: (o, fp) for k, o, fp in _watched(me)})
    _SNAPSHOT = snap
    return len(snap)


def _what_changed(before, after) -> str:
    """Name the part of a fingerprint that differs (code, defaults, ...)."""
    if before and after and before[0] == "function" == after[0]:
        for i, part in (
            (1, "__code__"),
            (2, "__defaults__"),
            (3, "__kwdefaults__"),
            (4, "closure"),
            (5, "__globals__"),
        ):
            if before[i] != after[i]:
                return part
    return "value"


def tamper_findings(limit: int = 10):
    """What the submission changed: modules replaced in ``sys.modules``; objects replaced or
    deleted since :func:`snapshot`; objects changed in place (a function's ``__code__``,
    ``__defaults__``, ``__kwdefaults__`` or closure, a module constant, the content of a public
    gpulab table); and functions of numpy/gpulab/Otter whose code was written outside their
    installed files (a notebook cell). Empty list when nothing was found."""
    trusted = _trusted_dirs()
    found = []

    def untrusted_code(obj):
        f = _code_file(obj)
        if f is None:
            return False
        if f.startswith("<"):  # an old-style IPython cell; not "<string>": dataclasses
            return f.startswith("<ipython-input")  # and namedtuples make their methods that way
        if not os.path.isabs(f):  # Cython modules record relative .pyx paths
            return False
        return not os.path.realpath(f).startswith(trusted)

    snap = _SNAPSHOT or {}
    if _RETAKEN:
        found.append("gpulab.grading.snapshot() was called again after the submission started")
    if _SNAPSHOT_ID and (id(snap) != _SNAPSHOT_ID or len(snap) != _SNAPSHOT_SIZE):
        found.append("the grading snapshot itself was replaced or changed")
    for name, (mod, objs) in snap.items():
        now = sys.modules.get(name)
        if now is None:  # dropped, so that the next import reads the file again
            found.append(f"sys.modules[{name!r}] was removed")
            continue
        if now is not mod:
            found.append(f"sys.modules[{name!r}] was replaced")
            continue
        current = {k: (o, fp) for k, o, fp in _watched(mod)}
        for key, (obj, fp) in objs.items():
            if key in _LEGIT_CHANGES:
                continue
            if key in current:
                cobj, cfp = current[key]
                if cobj is not obj and not (fp is not None and not callable(obj) and cfp == fp):
                    found.append(f"{key} was replaced")
                elif cfp != fp:
                    found.append(f"{key} was changed in place ({_what_changed(fp, cfp)})")
            elif not key.rsplit(".", 1)[-1].startswith("_"):
                found.append(f"{key} was deleted")
    for name, mod in list(sys.modules.items()):
        if mod is None or not _sensitive(name):
            continue
        if not isinstance(mod, types.ModuleType):
            found.append(f"sys.modules[{name!r}] is not a module")
            continue
        for key, obj, _ in _watched(mod):
            if untrusted_code(obj):
                found.append(f"{key} was redefined in the submission ({_code_file(obj)})")
    seen, out = set(), []
    for f in found:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out[:limit] if limit else out


def assert_untampered():
    """Fail the calling test when :func:`tamper_findings` finds anything."""
    found = tamper_findings()
    if found:
        raise AssertionError(f"{TAMPER_MESSAGE}, so this test refuses to trust it: " + "; ".join(found))


def package_hashes(roots=None) -> dict:
    """SHA-256 of every ``.py`` file under ``roots`` (default: the installed gpulab and Otter
    packages), keyed by path. The plugin takes them before the submission runs, in the grading
    process the submission cannot reach, and again after grading (:func:`changed_files`)."""
    if roots is None:
        roots = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
        try:
            import otter

            roots.append(os.path.dirname(os.path.abspath(otter.__file__)))
        except Exception:
            pass
    out = {}
    for root in roots:
        if os.path.isfile(root):
            files = [root]
        else:
            files = [
                os.path.join(d, f)
                for d, dirs, fs in os.walk(root)
                for f in fs
                if f.endswith(".py") and "__pycache__" not in d
            ]
        for path in files:
            try:
                with open(path, "rb") as fh:
                    out[os.path.abspath(path)] = hashlib.sha256(fh.read()).hexdigest()
            except OSError:
                out[os.path.abspath(path)] = "unreadable"
    return out


def changed_files(before: dict, after: dict) -> list:
    """Paths whose hash differs between two :func:`package_hashes` results, or that appeared or
    disappeared, sorted."""
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


SUSPICIOUS = [
    (
        r"sys\.modules\s*\[[^]]*\]\s*=[^=]|sys\.modules\.(pop|update|setdefault)|del\s+sys\.modules",
        "sys.modules",
    ),
    (r"\bimportlib\b", "importlib"),
    (r"\bsetattr\s*\(", "setattr"),
    (r"\b(np|numpy)\.(testing|allclose|isclose|array_equal)\s*(\.\w+\s*)?=[^=]", "assigns to numpy"),
    (r"\bgpulab\.(checks|grading|launch)\b.*=[^=]", "assigns to gpulab"),
    (r"\botter\b", "otter internals"),
    (r"__code__|__globals__|__builtins__|__defaults__|__kwdefaults__|__closure__", "code objects"),
    (r"\bos\._exit\b|\bsignal\.", "process/signal control"),
    (r"['\"][^'\"]*tests?[/\\]", "test file paths"),
    # reading the grader's expectations instead of computing them
    (
        r"\b_getframe\b|\bcurrentframe\b|\binspect\.(stack|trace|getouterframes|getinnerframes|"
        r"getframeinfo|getsource)\b|\bf_(back|locals|globals)\b|\btb_frame\b|\bgi_frame\b|"
        r"\bsettrace\b|\bsetprofile\b",
        "frame inspection",
    ),
    (
        r"\bgc\.(get_referrers|get_referents|get_objects)\b|\bget_referrers\b|\bget_objects\b",
        "heap inspection",
    ),
    (
        r"\bgpulab\.(checks|models|grading|homework\.\w+\.tests)\b|"
        r"from\s+gpulab\s+import\s+[^#\n]*\b(checks|models|grading)\b",
        "imports the checkers",
    ),
    (r"\b__import__\b|\bgetattr\s*\(\s*(sys|inspect|gc|gpulab)\b", "dynamic import/attribute"),
]


def _ignored_by_otter(cell) -> bool:
    """Whether Otter drops ``cell`` before grading (otter.execute.preprocessor's rule)."""
    meta = cell.get("metadata") or {}
    tags = meta.get("tags") or []
    otter_meta = meta.get("otter") or {}
    return "otter_ignore" in tags or bool(isinstance(otter_meta, dict) and otter_meta.get("ignore", False))


def suspicious(nb_path: str):
    """Patterns in a submission's code cells that suggest an attempt on the grader (for review;
    they change no score): patching, frame or heap inspection (``sys._getframe``, ``inspect``,
    ``gc.get_referrers``), importing gpulab's checkers or models (the reference answers). Ignores
    the lines the master itself contains (``grader = ...``) and the cells Otter never runs when
    grading (tag ``otter_ignore`` or ``otter: {ignore: true}``: the widget cells, whose imports of
    ``gpulab.models`` flagged every hw09 submission, the untouched student notebook included)."""
    try:
        with open(nb_path, encoding="utf-8") as f:
            nb = json.load(f)
        cells = [
            "".join(c.get("source", ""))
            for c in nb.get("cells", [])
            if c.get("cell_type") == "code" and not _ignored_by_otter(c)
        ]
    except Exception as e:
        return [f"unreadable notebook: {type(e).__name__}"]
    flags = []
    for src in cells:
        for line in src.splitlines():
            if "otter.Notebook(" in line or line.strip().startswith("import otter"):
                continue
            for rx, what in SUSPICIOUS:
                if re.search(rx, line) and what not in flags:
                    flags.append(what)
    return flags
