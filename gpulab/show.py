"""What the book shows of gpulab: kernel source with syntax colour, figures as numbered glue,
text wrapped to the book's column, the public repository's install line, and each widget's
starting state.

One home for these so that every chapter shows them the same way (issue 15).
"""

from __future__ import annotations

import inspect
import json
import textwrap
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent  # .../gpulab


def package_path(path) -> str:
    """``path`` as a reader should see it: relative to the package (``gpulab/kernels/matmul.py``),
    never the machine's absolute path; a notebook cell's code is "a notebook cell"; other
    paths keep only their file name."""
    p = Path(path)
    if "ipykernel_" in str(path) or str(path).startswith("<ipython-input"):
        return "a notebook cell"
    try:
        return str(Path("gpulab") / p.resolve().relative_to(PACKAGE_ROOT))
    except (ValueError, OSError):
        return p.name


def _python_function(obj):
    """The Python function behind a numba kernel/device function, or ``obj`` itself."""
    for attr in ("py_func", "__wrapped__"):
        inner = getattr(obj, attr, None)
        if inner is not None and inner is not obj:
            return _python_function(inner)
    return obj


class Source:
    """A function's source: Markdown with a fenced ``python`` block in a notebook and in the
    built book (highlighted by Jupyter and by Sphinx alike), plain text elsewhere."""

    def __init__(self, text: str, where: str, first_line: int = 1):
        self.text = text
        self.where = where
        self.first_line = first_line  # the number of the listing's first line in its file

    def _repr_html_(self) -> str:
        """Numbered lines (the file's own numbers, so "line 12" in the text can be found) that
        wrap inside the column with a hanging indent deeper than the line's own indentation,
        never back to column 0; colours inline, so it looks the same in Jupyter, Colab and the book."""
        return listing_html(self.text, self.where, self.first_line)

    def _repr_markdown_(self) -> str:
        fence = "````" if "```" in self.text else "```"
        return f"`{self.where}`\n\n{fence}python\n{self.text.rstrip()}\n{fence}\n"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"# {self.where}\n{self.text.rstrip()}"


def show_source(obj) -> Source:
    """The source of a kernel, device function, function or class, shown highlighted
    (leave it last in a cell, or pass it to ``display``). Replaces
    ``print(inspect.getsource(k.py_func))``."""
    fn = _python_function(obj)
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn)
    except (TypeError, OSError) as e:
        raise TypeError(
            f"show_source: no Python source for {obj!r} ({e}); pass a function, "
            "a @cuda.jit kernel or a class defined in a .py file or a cell"
        ) from e
    text = textwrap.dedent("".join(lines))
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "source"))
    if filename and Path(filename).suffix == ".py" and Path(filename).exists():
        where = f"{package_path(filename)}, lines {first}-{first + len(lines) - 1}: {name}"
    else:
        where = name  # defined in a notebook cell
    return Source(text, where, first if where != name else 1)


def listing_html(text: str, where: str = "", first_line: int = 1) -> str:
    """``text`` as a highlighted Python listing: one block per line, numbered from
    ``first_line``; a long line wraps with a hanging indent (its indentation + 4 characters)."""
    import html as _html

    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    body = highlight(text.rstrip("\n") + "\n", PythonLexer(), HtmlFormatter(nowrap=True, noclasses=True))
    raw, marked = text.rstrip("\n").split("\n"), body.rstrip("\n").split("\n")
    gutter = len(str(first_line + len(raw) - 1)) + 1  # characters for the line numbers
    rows = []
    for i, (src, hl) in enumerate(zip(raw, marked)):
        hang = len(src) - len(src.lstrip(" ")) + 4
        rows.append(
            f'<span class="gpulab-line" style="display:block;position:relative;'
            f"padding-left:{gutter + 1 + hang}ch;text-indent:-{hang}ch;white-space:pre-wrap;"
            f'overflow-wrap:anywhere"><span class="gpulab-lineno" style="position:absolute;left:0;'
            f"width:{gutter}ch;text-indent:0;text-align:right;color:#6e7781;user-select:none"
            f'">{first_line + i}</span>{hl or " "}</span>'
        )
    head = f'<div class="gpulab-listing-title"><code>{_html.escape(where)}</code></div>' if where else ""
    return (
        f'<div class="gpulab-listing highlight-python">{head}<div class="highlight">'
        f'<pre style="white-space:pre-wrap;overflow-x:hidden">{"".join(rows)}</pre></div></div>'
    )


OUTPUT_COLUMNS = 76  # characters of monospace output the book's text column holds


def print_wrapped(text, width: int = OUTPUT_COLUMNS) -> None:
    """Print ``text``, wrapping every line longer than the book's output column (an error
    message, a long check result) with a two-space hanging indent; shorter lines as they are."""
    for line in str(text).splitlines():
        if len(line) <= width:
            print(line)
        else:
            print(textwrap.fill(line, width, subsequent_indent="  ", break_long_words=False))


def glue(name: str, value, display: bool = True) -> None:
    """Pass ``value`` to the book's text as ``{glue}`name``` (myst-nb's glue, when the book is
    being built or myst-nb is installed); elsewhere (Colab, a plain Jupyter) only show it when
    ``display`` is true. Chapters call this, never myst_nb directly, so they run without myst-nb."""
    try:
        from myst_nb import glue as _myst_glue
    except ImportError:
        if display:
            from IPython.display import display as _display

            _display(value)
        return
    _myst_glue(name, value, display=display)


def glue_figure(name: str, fig) -> None:
    """Glue ``fig`` under ``name`` for a numbered, captioned ``{glue:figure}`` in the markdown,
    and close it so that the cell does not also show it without a caption."""
    glue(name, fig, display=False)
    try:
        import matplotlib.pyplot as plt

        plt.close(fig)
    except Exception:  # a Figure not managed by pyplot needs no closing
        pass


# --- the public repository -------------------------------------------------------------------


def repository_url() -> str:
    """The public repository (``[project.urls] Homepage`` of the installed package, which
    tests keep equal to ``_config.yml``'s ``repository.url``)."""
    from importlib import metadata

    try:
        for entry in metadata.metadata("gpulab").get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() == "homepage":
                return url.strip()
    except metadata.PackageNotFoundError:
        pass
    raise RuntimeError(
        "gpulab's package metadata has no Homepage URL: reinstall gpulab "
        "(pip install -e .) so that [project.urls] is recorded"
    )


def install_line(extras: str = "colab", url: str | None = None) -> str:
    """The ``%pip install`` line that notebooks' first cells use, for the given extras."""
    url = url or repository_url()
    pkg = f"gpulab[{extras}]" if extras else "gpulab"
    return f'%pip install -q "{pkg} @ git+{url}"'


# --- widgets: record the state each widget starts in --------------------------------------

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
START_KEY = "gpulab_start"  # extra key in the widget-view JSON (renderers ignore unknown keys)
_STATE_KEYS = ("value", "index", "description")


def _start_state(widget) -> dict:
    """{model_id: {key: value}} for ``widget`` and every widget below it: the values a
    reader sees before touching anything (bytes, e.g. images, are left out)."""
    import ipywidgets as W

    out, todo, seen = {}, [widget], set()
    while todo:
        w = todo.pop()
        if not isinstance(w, W.Widget) or w.model_id in seen:
            continue
        seen.add(w.model_id)
        state = {}
        for k in _STATE_KEYS:
            if k in w.keys:
                v = w.get_state(k)[k]
                try:
                    json.dumps(v)
                except TypeError:
                    continue
                state[k] = v
        out[w.model_id] = state
        todo.extend(getattr(w, "children", ()) or ())
    return out


_ORIGINAL_REPR = None


def record_widget_starts() -> bool:
    """Make every displayed widget carry its starting state in its view data, so the built
    book can check that the saved snapshot still shows it (tests/test_book_html.py).
    Idempotent; returns whether the hook is installed."""
    global _ORIGINAL_REPR
    try:
        import ipywidgets as W
    except ImportError:
        return False
    if _ORIGINAL_REPR is not None:
        return True
    if hasattr(W.Widget, "_repr_mimebundle_"):  # ipywidgets 8: display() asks for the bundle
        _ORIGINAL_REPR = W.Widget._repr_mimebundle_

        def _repr_mimebundle_(self, **kwargs):
            data = _ORIGINAL_REPR(self, **kwargs)
            view = (data or {}).get(WIDGET_VIEW)
            if isinstance(view, dict):
                view[START_KEY] = _start_state(self)
            return data

        W.Widget._repr_mimebundle_ = _repr_mimebundle_
        return True
    # ipywidgets 7 (Colab's): the widget displays itself; the same bundle as its own
    # Widget._ipython_display_, with the starting state added to the view data
    _ORIGINAL_REPR = W.Widget._ipython_display_

    def _ipython_display_(self, **kwargs):
        if self._view_name is None:
            return _ORIGINAL_REPR(self, **kwargs)
        from IPython.display import display

        plaintext = repr(self)
        view = {"version_major": 2, "version_minor": 0, "model_id": self._model_id}
        view[START_KEY] = _start_state(self)
        display({"text/plain": plaintext[:110], WIDGET_VIEW: view}, raw=True)
        self._handle_displayed(**kwargs)

    W.Widget._ipython_display_ = _ipython_display_
    return True


def setup_notebook() -> None:
    """What ``import gpulab`` does inside a Jupyter kernel: the book's figure style, SVG inline
    figures, and widget starting states. Does nothing outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    ip = get_ipython()
    if ip is None or not hasattr(ip, "kernel"):
        return
    from gpulab.plots import style

    style.apply()
    style.use_svg_inline()
    record_widget_starts()
