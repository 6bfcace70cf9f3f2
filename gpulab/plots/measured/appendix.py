"""The appendix's view of every results file: which section describes it (``SECTIONS``, in the
order of the scorecard), and the calls the notebook makes: show, scorecard, provenance."""

from __future__ import annotations

from . import divergence, memory, model, occupancy, reduction, runs, serial, sgemm_ladder, tensor_cores
from .core import (
    Headline,
    _day_time,
    _df,
    _legible,
    _wrap,
    available,
    display_table,
    environment,
    glue_table,
    label,
    load,
    reader_note,
)


ORDER = (
    "occupancy_vs_driver",
    "fidelity",
    "divergence_paths",
    "bandwidth",
    "transpose_variants",
    "notebooks_gpu",
    "chapters_from_wheel_gpu",
    "notebooks_cpu",
    "latency",
    "fma_loop",
    "reduction",
    "tensor_cores_mma",
    "tensor_cores_throughput",
    "tensor_cores_throughput_issue7",
    "launch_overhead",
    "amdahl_gpu",
    "allreduce_alpha_beta",
    "strided_copy",
    "stall_reasons",
    "reduction_in_flight",
    "occupancy_vs_cuda_occupancy_h",
    "int4_mma_ptx",
    "sgemm",
    "sgemm_predicted",
    "sgemm_attribution",
    "perf_model",
    "perf_blind",
    "instruction_costs",
    "sim_speed",
    "blind_r3",
    "blind_r4",
    "blind_r5",
    "blind_r6",
    "blind_r7",
    "perf_sass_check",
    "perf_train",
    "hw05_copies",
)
_ALL = {
    s.name: s
    for m in (divergence, memory, model, occupancy, reduction, runs, serial, sgemm_ladder, tensor_cores)
    for s in m.SECTIONS
}
if set(ORDER) != set(_ALL):
    raise ImportError(
        f"gpulab.plots.measured: ORDER and the modules' sections differ: {sorted(set(ORDER) ^ set(_ALL))}"
    )
SECTIONS = {name: _ALL[name] for name in ORDER}


def uncovered(root=None) -> list[str]:
    """Results files present that no section describes."""
    return [n for n in available(root) if n not in SECTIONS]


def missing_message(name: str) -> str:
    s = SECTIONS.get(name)
    if s is None:
        return f"No {name}.json in this copy."
    return f"No gpulab/data/results/{name}.json in this copy. To write it, run\n    {s.run}\n" + _wrap(
        f"on {s.needs}, then re-run this page."
    )


def headlines(name: str, res: dict | None, root=None) -> list[Headline]:
    """The headline figures of one results file (empty when the file is missing)."""
    if not res:
        return []
    s = SECTIONS.get(name)
    if s is None:
        return []
    if s.compares_files:
        return s.headlines(res, root)
    return s.headlines(res)


def table(name: str, res: dict | None, root=None):
    """A pandas DataFrame for files shown as a table, else None."""
    s = SECTIONS.get(name)
    if not res or s is None or s.table is None:
        return None
    if s.compares_files:
        return s.table(res, root)
    return s.table(res)


def figure(name: str, res: dict | None, ax=None):
    """Draw the file's (first) figure; the Axes, or None without data or figure. The label
    (where, with what, when) is printed by :func:`show`, not drawn: a caption carries it."""
    s = SECTIONS.get(name)
    if not res or s is None or s.figure is None:
        return None
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 3.8))
    out = s.figure(res, ax)
    if out is None and not ax.has_data():
        plt.close(ax.figure)
    return out


def figures(name: str, res: dict | None) -> list:
    """Every matplotlib Figure the file's section draws (some draw two), in order."""
    import matplotlib.pyplot as plt

    before = set(plt.get_fignums())
    if figure(name, res) is None:
        for n in set(plt.get_fignums()) - before:
            plt.close(n)
        return []
    figs = [plt.figure(n) for n in sorted(set(plt.get_fignums()) - before)]
    for f in figs:
        _legible(f)
    return figs


def _covered(target: str, seen) -> bool:
    """A target is measured when a headline has its name, or its name qualified by the variant
    it reports ("wide padded transpose vs copy" for "padded transpose vs copy")."""
    return any(w == target or w.endswith(" " + target) for w in seen)


def scorecard(root=None):
    """Every target the issues set, with the measured value and met/MISSED, or 'not measured'
    when the file is absent; plus the other headline ratios. A pandas DataFrame."""
    rows = []
    for name, s in SECTIONS.items():
        res = load(name, root)
        if res is None:
            for what in s.targets:
                rows.append((what, None, "", "", "not measured", f"{name}.json absent"))
            continue
        hs = headlines(name, res, root)
        seen = {h.what for h in hs}
        for h in hs:
            if h.score:
                rows.append(
                    (
                        h.what,
                        None if h.value is None else round(h.value, 4),
                        h.against,
                        h.target_text,
                        h.verdict or "-",
                        f"{name}.json",
                    )
                )
        for what in s.targets:
            if not _covered(what, seen):
                rows.append((what, None, "", "", "not measured", f"not in {name}.json"))
    return _df(rows, ["check", "measured (ratio)", "relative to", "target", "verdict", "from"])


def clock_line(name: str, res: dict, short: bool = False) -> str | None:
    """The SM clock a GPU result ran at, for its "measured on" line (issue 23): the recorded clock
    (results_views.result_clock), else "SM clock: not recorded" (results_views.clock_text; the
    reasons in CLOCK_NOT_RECORDED are notes for the project, not for the page). ``short``: the
    median only, or "no SM clock record" (the provenance table). None for a result made on a CPU
    (no GPU in its environment and no clock record)."""
    from gpulab import results_views as rv

    recs = rv.clock_records(res)
    if not recs and "gpu" not in environment(res, name):
        return None
    clk = rv.result_clock(name, res)["clock"]
    rerun_only = bool(recs) and all(w.startswith("clock_rerun") for w in recs)
    if short and clk and rerun_only:  # the dated run recorded none: say whose clock it is
        return (
            "no SM clock record (a re-run of the same launches"
            f"{_rerun_when(res)}: {round(1e3 * clk['GHz'])} MHz)"
        )
    if short:
        return f"SM clock {round(1e3 * clk['GHz'])} MHz" if clk else "no SM clock record"
    if clk is None:
        return rv.clock_text(None)
    text = rv.result_clock(name, res)["text"]
    if rerun_only:  # perf_model, perf_blind, launch_overhead
        text += " (of the clock re-run of the same launches; the run whose figures are shown recorded none)"
    return text


def _rerun_when(res: dict) -> str:
    """ " on 2026-12-02 03:08 UTC": when a result's clock re-run ran (its "environment" or "env"
    date), or "" when it records no date."""
    rerun = res.get("clock_rerun") or {}
    env = rerun.get("environment") or rerun.get("env") or {}
    return f" on {_day_time(env['date_utc'])}" if env.get("date_utc") else ""


def _reruns_note(res: dict) -> str:
    """ " (half_axpby: a separate run at 07:35 UTC, measured.reruns)" for the cases a result
    timed apart from the run its "measured on" line dates (blind_r5.json's measured.reruns)."""
    reruns = (res.get("measured") or {}).get("reruns") or {}
    if not isinstance(reruns, dict) or not reruns:
        return ""
    main_day = str(environment(res).get("date", ""))[:10]
    parts = []
    for case, r in reruns.items():
        date = ((r or {}).get("environment") or {}).get("date_utc")
        when = _day_time(date) if date else None
        if when and when[:10] == main_day:
            when = when[11:]  # the same day: the time alone
        parts.append(f"{case}: a separate run" + (f" at {when}" if when else ""))
    return f" ({'; '.join(parts)}, measured.reruns)"


def _derived_note(res: dict) -> str:
    """ "; its figures derived on a CPU from reduction.json (2026-12-02 03:07 UTC) and ..." for a
    result whose figures were re-derived from other results (its "sources": name -> their date),
    so the date and clock beside it are not read as the run of those figures."""
    src = res.get("sources")
    if not isinstance(src, dict) or not src:
        return ""
    parts = [f"{n}.json ({_day_time(d)})" if d else f"{n}.json" for n, d in src.items()]
    return "; its figures derived on a CPU from " + " and ".join(parts)


def _with_clock(res: dict, clock: str | None) -> str:
    """ "; SM clock ..." after a result's date, or, for a result re-derived from other results,
    "; its figures derived ... from X (date); SM clock ... (recorded by those runs)": the clock is
    theirs, not that of the date before it."""
    derived = _derived_note(res)
    if not clock:
        return derived
    return f"{derived}; {clock} (recorded by those runs)" if derived else f"; {clock}"


def provenance(root=None):
    """One row per results file: where, with what and when it was measured (from the file), and
    for a GPU result the SM clock it recorded (or "no SM clock record")."""
    rows = []
    for name in available(root):
        res = load(name, root)
        if not isinstance(res, dict):
            rows.append((f"{name}.json", "unreadable"))
            continue
        clock = clock_line(name, res, short=True)
        rows.append((f"{name}.json", label(name, res) + _with_clock(res, clock)))
    return _df(rows, ["file", "measured on, with, when"])


def show(name: str, root=None, fig: str | None = None, tab: str | None = None, with_table: bool = True):
    """Print one file's label, how to rerun it, its method and headlines (lines of at most
    :data:`WIDTH` characters), display its table and draw its figures. With ``fig``, the figures
    are glued as ``fig``, ``fig-b``... for numbered, captioned ``{glue:figure}`` blocks (and
    closed); with ``tab``, the table is glued as ``tab`` for a numbered, captioned ``{table}``
    block (core.glue_table); ``with_table=False`` leaves the table out (see
    :func:`glue_other_tables`). Returns the headlines (empty when the file is missing)."""
    res = load(name, root)
    if res is None:
        print(missing_message(name))
        if tab:  # the page's {table} block still needs a table: one row saying what is missing
            glue_table(tab, _df([[f"{name}.json", "no (see above)"]], ["results file", "in this copy"]))
        return []
    s = SECTIONS.get(name)
    clock = clock_line(name, res)
    on = "measured on: " + label(name, res) + _with_clock(res, clock) + _reruns_note(res)
    print(_wrap(on, rest="  "))
    if s is None:
        print(_wrap(f"No section describes {name}.json; its top-level keys: {', '.join(res)}"))
        if tab:
            glue_table(tab, _df([[f"{name}.json", "no section describes it yet"]], ["results file", "shown"]))
        return []
    if s.run == "-":
        print("rerun: none (the file names no script or method)")
    else:
        print(_wrap(f"rerun: {s.run} (needs {s.needs})", rest="  "))
    if isinstance(res.get("method"), str):
        print(_wrap("method: " + reader_note(res["method"]), rest="  "))
    hs = headlines(name, res, root)
    for h in hs:
        print(_wrap(str(h), first="- ", rest="  "))
    t = table(name, res, root) if with_table else None
    if t is not None:
        try:
            from IPython.display import display

            shown = glue_table(tab, t) if tab else display_table(t)
            if shown is not None:
                display(shown)
        except ImportError:  # pragma: no cover
            print(t)
    figs = figures(name, res)
    if fig:
        from gpulab.show import glue_figure

        for i, f in enumerate(figs):
            glue_figure(fig if i == 0 else f"{fig}-{'bcdefgh'[i - 1]}", f)
    return hs


def glue_other_tables(key: str, names, root=None) -> None:
    """The tables of results files that no section of the page describes (a newer script's),
    each as a numbered, captioned table: glued under ``key`` as MyST text with one ``{table}``
    block per file, for a ``{glue:md}`` block with ``:format: myst``. Without myst-nb (Colab,
    a plain Jupyter) the tables are shown in the cell instead."""
    from .core import markdown_table

    blocks, frames = [], []
    for name in names:
        res = load(name, root)
        t = table(name, res, root) if res is not None else None
        if t is None:
            continue
        s = SECTIONS.get(name)
        title = s.title if s else name
        label = "tab-app-other-" + name.replace("_", "-")
        blocks.append(f"```{{table}} {title} ({name}.json).\n:name: {label}\n\n{markdown_table(t)}```\n")
        frames.append(t)
    text = "\n".join(blocks) or "None of them has a table."
    try:
        import myst_nb  # noqa: F401
    except ImportError:
        from IPython.display import display

        for t in frames:
            display(display_table(t))
        return
    from IPython.display import Markdown

    from gpulab.show import glue

    glue(key, Markdown(text), display=False)
