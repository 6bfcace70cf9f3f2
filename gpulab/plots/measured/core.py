"""Shared parts of the appendix module: finding and loading results files, the label read from each
file (GPU, driver, versions, date), headline figures, and how tables and figures are shown
within the book's column."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np


REPO = Path(__file__).resolve().parents[3]


def _roots():
    """Where results are looked up: :func:`gpulab.results.roots`."""
    from gpulab import results

    return results.roots()


def results_dir(root=None) -> Path | None:
    """``root`` if given (None when it is not a folder), else the first results folder that
    exists: $GPULAB_RESULTS, then the package's gpulab/data/results."""
    if root is not None:
        return Path(root) if Path(root).is_dir() else None
    for r in _roots():
        if r and Path(r).is_dir():
            return Path(r)
    return None


def available(root=None) -> list[str]:
    """Names (without .json) of the results files present, sorted."""
    if root is not None:
        d = results_dir(root)
        return sorted(p.stem for p in d.glob("*.json")) if d else []
    names = set()
    for r in _roots():
        if r and Path(r).is_dir():
            names |= {p.stem for p in Path(r).glob("*.json")}
    return sorted(names)


def load(name: str, root=None) -> dict | None:
    """The parsed ``<name>.json``, or None when this copy has none. Without ``root`` this is
    :func:`gpulab.timeline.load_result` (same search order)."""
    if root is None:
        from gpulab import results

        return results.load(name)
    p = Path(root) / f"{name}.json"
    return json.loads(p.read_text()) if p.is_file() else None


def _blocks(res: dict) -> list[dict]:
    """The dicts where scripts keep their environment: the top level and env/environment/versions/machine."""
    out = [res]
    for k in ("environment", "env", "versions", "machine"):
        if isinstance(res.get(k), dict):
            out.append(res[k])
    m = res.get("measured")  # perf_model.json: measured.environment
    if isinstance(m, dict) and isinstance(m.get("environment"), dict):
        out.append(m["environment"])
    return out


def _first(res: dict, *keys):
    for b in _blocks(res):
        for k in keys:
            if b.get(k) not in (None, ""):
                return b[k]
    return None


_VERSION_KEYS = (
    ("numba", ("numba",)),
    ("numba-cuda", ("numba_cuda", "numba-cuda")),
    ("numpy", ("numpy",)),
    ("torch", ("torch",)),
    ("python", ("python",)),
)


def environment(res: dict, name: str | None = None) -> dict:
    """GPU, driver, date and versions recorded in one results file, under uniform keys
    (missing ones are left out). ``name`` enables the per-file fallbacks: a fidelity.json without
    an environment block is labelled from the "Recorded run" line of benchmarks/fidelity/README.md."""
    env = {}
    gpu = _first(res, "gpu", "device")
    timed = gpu if isinstance(gpu, dict) else None  # hw05_copies.json: its "gpu" part, not a name
    if timed is not None:  # then the machine is the file's own environment block, if it has one
        gpu = (res.get("environment") or {}).get("gpu")
    if not gpu and isinstance(res.get("describe"), str):  # run_notebooks.py: gpulab.describe()
        m = re.search(r"GPU: (.+?) \(", res["describe"])
        gpu = m.group(1) if m else None
        if not m and "CPU" in res["describe"]:
            env["cpu"] = res["describe"].split(": ", 1)[-1]
    if gpu:
        env["gpu"] = str(gpu)
    smi = _first(res, "nvidia_smi")
    if isinstance(smi, str) and re.match(r"\d+\.\d+", smi):
        env["driver"] = smi.split(",")[0].strip()
    # "driver" in bandwidth.json and "driver_version" in occupancy_vs_driver.json are the CUDA
    # driver API version (cuDriverGetVersion), not the display driver's
    api = _first(res, "cuda_driver_api", "driver_version", "driver")
    if api and str(api) == env.get("driver"):  # the display driver, no API version recorded
        api = None
    if api and "driver" not in env and re.fullmatch(r"\d{3}\.\d+\.\d+", str(api)):
        env["driver"], api = str(api), None  # a display driver's version (580.159.04), not the API's
    if api:
        env["cuda_driver_api"] = ".".join(map(str, api)) if isinstance(api, list) else str(api)
    date = _first(res, "when_utc", "date_utc", "measured_at", "date")
    if date:
        env["date"] = reader_note(str(date))
    for label_, keys in _VERSION_KEYS:
        v = _first(res, *keys)
        if v:
            env[label_] = str(v)
    for b in _blocks(res):
        for k, v in b.items():
            if k.startswith("cupy") and isinstance(v, str):
                env["cupy"] = v
    if "torch" not in env and isinstance(res.get("method"), str):
        m = re.search(r"torch (\d[\w.+]*)", res["method"])
        if m:
            env["torch"] = m.group(1)
    if isinstance(res.get("nvcc"), str):
        m = re.search(r"cuda_(\d+\.\d+)", res["nvcc"])
        env["nvcc"] = m.group(1) if m else res["nvcc"]
    if isinstance(res.get("machine"), dict) and "cpus" in res["machine"]:
        env["cpu"] = (
            f"{res['machine']['cpus']} CPU cores ({str(res['machine'].get('platform', '?')).split('-')[0]})"
        )
    if name == "fidelity" and "gpu" not in env:
        env.update(_fidelity_readme())
    if "gpu" not in env and "cpu" not in env:  # a run recorded in parts: the first part's block
        for v in res.values():
            if isinstance(v, dict) and isinstance(v.get("environment"), dict):
                return {**environment(v, name), **env}
    if name == "perf_sass_check" and "gpu" not in env:
        env["cpu"] = "ptxas for sm_90 on a CPU machine, against recorded NVIDIA H200 counters"
    if name == "perf_train" and "gpu" not in env and "cpu" not in env:
        env["cpu"] = "a fit on a CPU, to counters and times recorded on an NVIDIA H200"
    if timed is not None and timed.get("date_utc"):  # the date of the timed part
        env.setdefault("gpu", "a GPU the file does not name")
        env.setdefault("date", reader_note(str(timed["date_utc"])))
    pred = res.get("predicted") or res.get("predict")
    if "gpu" not in env and "cpu" not in env and isinstance(pred, dict) and pred.get("date_utc"):
        # a blind round before its kernels ran: only the predictions, made on a CPU
        env["cpu"] = f"predictions on a CPU ({str(pred.get('cpu', '')).split(';')[0] or 'cores unknown'})"
        env.setdefault("date", str(pred["date_utc"]))
    return env


# What a results file says about itself in a note, in a reader's words (issue 25: "date not
# recorded" reads as a note to the authors): tensor_cores_throughput_issue7.json's date and method.
_READER_NOTES = (
    (re.compile(r"before (\S+) \(date not recorded\)"), r"undated (before \1)"),
    (re.compile(r"sizes and timing method not recorded"), "matrix sizes and timing method unknown"),
)


def reader_note(text: str) -> str:
    """A file's own note on its date or method, phrased for the page (see _READER_NOTES)."""
    for rx, repl in _READER_NOTES:
        text = rx.sub(repl, text)
    return text


def _fidelity_readme() -> dict:
    """GPU, driver, versions and date from benchmarks/fidelity/README.md's "Recorded run" line."""
    p = REPO / "benchmarks" / "fidelity" / "README.md"
    if not p.is_file():
        return {}
    m = re.search(r"Recorded run:(.*?)(?:\n\s*\n)", p.read_text(), re.S)
    if not m:
        return {}
    text = " ".join(m.group(1).split())
    out = {"source_of_label": "benchmarks/fidelity/README.md (fidelity.json records no environment)"}
    g = re.match(r"\s*(.*?)\s*\(driver ([\d.]+)\)", text)
    if g:
        out["gpu"], out["driver"] = g.group(1), g.group(2)
    for key, pat in (
        ("numba", r"numba ([\d.]+)"),
        ("numba-cuda", r"numba-cuda ([\d.]+)"),
        ("numpy", r"numpy ([\d.]+)"),
        ("date", r"on (\d{4}-\d{2}-\d{2})"),
    ):
        g = re.search(pat, text)
        if g:
            out[key] = g.group(1)
    return out


def run_info(root=None) -> dict:
    """What the whole set of files says about where it was measured: each key (gpu, driver,
    numba, ...) mapped to the sorted distinct values found, and the distinct dates (days)."""
    info: dict[str, set] = {}
    for name in available(root):
        res = load(name, root)
        if not isinstance(res, dict):
            continue
        for k, v in environment(res, name).items():
            if k in ("source_of_label", "cpu"):
                continue
            if k == "date":
                m = re.match(r"\d{4}-\d{2}-\d{2}", v)
                v = m.group(0) if m else v
            info.setdefault(k, set()).add(v)
    return {k: sorted(v) for k, v in info.items()}


def _day_time(d: str) -> str:
    """'2026-11-29T12:09:20Z' -> '2026-11-29 12:09 UTC'; anything else unchanged."""
    m = re.match(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::[\d.]+)?(Z|\+00:00)$", d)
    return f"{m.group(1)} {m.group(2)} UTC" if m else d


WIDTH = 76  # characters per output line that the book's text column holds


COLUMN_IN = 6.6  # inches a figure may take, labels included (676 px column at 100 px/inch)


def _wrap(text: str, width: int = WIDTH, first: str = "", rest: str = "") -> str:
    import textwrap

    return "\n".join(
        textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False)
    )


def label(name: str, res: dict) -> str:
    """One line: where, with what and when this file was measured, from the file itself."""
    env = environment(res, name)
    parts = [env.get("gpu") or env.get("cpu") or "machine unknown"]
    if env.get("gpu") and env.get("cpu"):
        parts.append(env["cpu"])
    if "driver" in env:
        parts.append(f"driver {env['driver']}")
    if "cuda_driver_api" in env:
        parts.append(f"CUDA driver API {env['cuda_driver_api']}")
    for k in ("numba", "numba-cuda", "numpy", "cupy", "torch", "nvcc"):
        if k in env:
            parts.append(f"{k} {env[k]}")
    parts.append(_day_time(env.get("date", "undated")))
    s = ", ".join(parts)
    if "source_of_label" in env:
        s += f" [from {env['source_of_label']}]"
    return s


@dataclass
class Headline:
    """One headline figure: ``value`` (a ratio when ``target`` is set) and what it means."""

    what: str
    value: float | None
    text: str
    target: float | None = None  # the value must be >= target to meet it
    target_text: str = ""
    score: bool = True  # listed in the scorecard
    against: str = ""  # the peer, model or datasheet the value is relative to

    @property
    def met(self) -> bool | None:
        if self.target is None or self.value is None:
            return None
        return bool(self.value >= self.target)

    @property
    def verdict(self) -> str:
        return {True: "met", False: "MISSED", None: ""}[self.met]

    def __str__(self):
        tail = f" Target {self.target_text}: {self.verdict}." if self.target is not None else ""
        return self.text + tail


def _span(xs, fmt="{:.2f}x"):
    lo, hi = fmt.format(min(xs)), fmt.format(max(xs))
    return lo if lo == hi else f"{lo} to {hi}"


def _pct(x):
    return f"{x:.1%}"


def _size(b: int) -> str:
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return f"{b / k:g} {unit}"
    return f"{b} B"


def size_range(bs) -> str:
    """Working-set sizes as the book writes them: '512 KiB to 16 MiB' (or one size)."""
    return f"{_size(min(bs))}" if len(bs) == 1 else f"{_size(min(bs))} to {_size(max(bs))}"


def _df(rows, columns):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is in requirements.txt
        return rows
    return pd.DataFrame(rows, columns=columns)


def _cell(x) -> str:
    """A table value as the book shows it: 3 significant figures, thousands separated."""
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return ""
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if x == int(x) and abs(x) < 1e6:
            return f"{int(x):,}"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:#.3g}".rstrip(".")  # 3 significant figures, kept: 31.0, 0.500
    return str(x)


def display_table(df):
    """The table as the book shows it: no pandas index, values through :func:`_cell`
    (a Styler, which renders as HTML in a notebook)."""
    if df is None or not hasattr(df, "style"):
        return df
    return df.style.hide(axis="index").format(_cell)


def compared(df, rows=None, cols=None, names=None):
    """``df`` (a row per kernel) turned to a column per kernel and a row per quantity, without
    the pandas index; ``rows`` picks quantities, ``cols`` kernels, ``names`` renames kernels
    for their column headers."""
    t = df.loc[cols if cols is not None else df.index, rows if rows is not None else df.columns]
    return t.rename(index=names or {}).T.reset_index(names="")


def display_compared(df, rows=None, cols=None, names=None, glue_as: str | None = None):
    """:func:`compared` as the book shows it: values to 3 significant figures (as the text
    quotes them). With ``glue_as``, see :func:`glue_table`."""
    t = compared(df, rows, cols, names)
    if glue_as:
        return glue_table(glue_as, t)
    return display_table(t)


def markdown_table(df) -> str:
    """``df`` as a Markdown table, values through :func:`_cell`, no index."""

    def esc(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(esc(c) for c in df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(esc(_cell(v)) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body]) + "\n"


def glue_table(name: str, df):
    """Pass ``df`` to the book as a Markdown table under ``name`` for a numbered, captioned
    table (a ``{table}`` block holding ``{glue:md}`name``` with ``:format: myst``). Where the
    notebook runs without myst-nb (Colab, a plain Jupyter) there is no such block, so the
    table is shown in the cell instead."""
    try:
        import myst_nb  # noqa: F401
    except ImportError:
        return display_table(df)
    from IPython.display import Markdown

    from gpulab.show import glue

    glue(name, Markdown(markdown_table(df)), display=False)
    return None


def text_width(df) -> int:
    """The narrowest width, in characters, a table can take in the book: per column its longest
    unbreakable word (header included, values as shown), plus 3 characters of padding."""
    cols = [[str(c)] + [_cell(v) for v in df[c]] for c in df.columns]
    return sum(max(len(w) for v in col for w in (v.split() or [""])) + 3 for col in cols)


def _legible(fig) -> None:
    """No text below the book's minimum size, and no figure wider than the column."""
    from matplotlib.text import Text

    from gpulab.plots.style import MIN_FONT_PT
    from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter

    for ax in fig.axes:  # log axes: plain numbers (no small superscripts)
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_major_formatter(), LogFormatter):
                axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                axis.set_minor_formatter(NullFormatter())
    for t in fig.findobj(Text):
        if t.get_text() and t.get_fontsize() < MIN_FONT_PT:
            t.set_fontsize(MIN_FONT_PT)
    w, h = fig.get_size_inches()
    if w > COLUMN_IN:
        fig.set_size_inches(COLUMN_IN, h)
    for _ in range(3):  # the drawn extent, labels included, fits too
        extent = fig.get_tightbbox(fig.canvas.get_renderer()).width
        w, h = fig.get_size_inches()
        if extent <= COLUMN_IN:
            break
        fig.set_size_inches(w - (extent - COLUMN_IN) - 0.05, h)


@dataclass
class Section:
    """How one results file is presented."""

    name: str  # file name without .json
    title: str
    script: str  # the benchmark that writes it
    run: str  # the command (from the repository root)
    headlines: Callable
    figure: Callable | None = None
    table: Callable | None = None
    needs: str = "an NVIDIA GPU"
    targets: list = field(default_factory=list)  # headline "what"s that carry a target
    compares_files: bool = False  # headlines/table take (res, root): they read another file too
