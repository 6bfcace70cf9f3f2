"""A static fallback under every widget: the page reads well when the widget script cannot
load (offline, blocked CDN, print, PDF).

Each ``<script type="application/vnd.jupyter.widget-view+json">`` gets a
note before it, always shown, that says the widget responds only when the notebook runs, and
a ``<div class="gpulab-widget-fallback">`` after it that renders the saved state: each
control's label and value, HTML and label text, images and output figures. CSS hides the
fallback once the widget renderer has drawn the widget (``static/gpulab_book.css``).
"""

from __future__ import annotations

import html
import json
import re

VIEW_RE = re.compile(r'(<script type="application/vnd\.jupyter\.widget-view\+json">(.*?)</script>)', re.S)
NOTE = (
    "Interactive widget: run this notebook to use it. The page shows it as it starts; "
    "it does not respond here."
)
SKIP = {
    "LayoutModel",
    "DescriptionStyleModel",
    "SliderStyleModel",
    "ButtonStyleModel",
    "ProgressStyleModel",
    "ToggleButtonsStyleModel",
    "CheckboxStyleModel",
    "TextStyleModel",
    "HTMLStyleModel",
    "LabelStyleModel",
    "StyleModel",
    "ButtonModel",
}


def page_widget_state(script_files) -> dict:
    """{model_id: model} from the page's embedded widget state, or {}."""
    for js in script_files or ():
        attrs = getattr(js, "attributes", {}) or {}
        if attrs.get("type") == "application/vnd.jupyter.widget-state+json" and attrs.get("body"):
            body = attrs["body"].replace("<\\/", "</")
            try:
                return json.loads(body).get("state", {})
            except json.JSONDecodeError:
                return {}
    return {}


def _ref(v):
    return v[len("IPY_MODEL_") :] if isinstance(v, str) and v.startswith("IPY_MODEL_") else None


def _label(st):
    return html.escape(str(st.get("description") or "").strip() or "value")


def _value_text(st):
    """A control's shown value (selection widgets keep only the index and the labels)."""
    if "index" in st and "_options_labels" in st:
        idx, labels = st["index"], st["_options_labels"]
        if isinstance(idx, int) and 0 <= idx < len(labels):
            return str(labels[idx])
        if isinstance(idx, list):
            return ", ".join(str(labels[i]) for i in idx if 0 <= i < len(labels))
        return "(none)"
    return str(st.get("value"))


def _output_html(out):
    data = out.get("data", {}) if out.get("output_type") != "stream" else {"text/plain": out.get("text", "")}
    if "image/svg+xml" in data:
        svg = data["image/svg+xml"]
        svg = "".join(svg) if isinstance(svg, list) else svg
        svg = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", "", svg)  # not valid inside HTML
        return f'<div class="gpulab-fallback-figure">{svg}</div>'
    if "image/png" in data:
        return f'<img class="gpulab-fallback-figure" alt="widget output" src="data:image/png;base64,{data["image/png"]}"/>'
    if "text/html" in data:
        t = data["text/html"]
        return "".join(t) if isinstance(t, list) else t
    if "text/plain" in data:
        t = data["text/plain"]
        return f"<pre>{html.escape(''.join(t) if isinstance(t, list) else t)}</pre>"
    return ""


def render_model(models: dict, model_id: str, depth: int = 0) -> str:
    """Static HTML for one widget model and its children."""
    m = models.get(model_id)
    if m is None or depth > 20:
        return ""
    name, st = m.get("model_name", ""), m.get("state", {})
    if name in SKIP:
        return ""
    if "children" in st:
        return "".join(render_model(models, _ref(c), depth + 1) for c in st["children"] if _ref(c))
    if name in ("HTMLModel", "HTMLMathModel"):
        return f'<div class="gpulab-fallback-html">{st.get("value", "")}</div>'
    if name == "LabelModel":
        return f"<p>{html.escape(str(st.get('value', '')))}</p>"
    if name == "ImageModel":
        for b in m.get("buffers", []):
            if b.get("path") == ["value"] and b.get("data"):
                fmt = html.escape(st.get("format", "png"))
                # a high-DPI PNG carries its display width (gpulab.widgets.figure.show)
                size = f' width="{html.escape(str(st["width"]))}"' if st.get("width") else ""
                return (
                    f'<img class="gpulab-fallback-figure" alt="widget image"{size} '
                    f'src="data:image/{fmt};base64,{b["data"]}"/>'
                )
        return ""
    if name == "OutputModel":
        return "".join(_output_html(o) for o in st.get("outputs", []))
    if "value" in st or "index" in st:
        return f'<p class="gpulab-fallback-control"><b>{_label(st)}</b>: {html.escape(_value_text(st))}</p>'
    return ""


def fallback_html(models: dict, view_json: str) -> str:
    try:
        view = json.loads(view_json.replace("<\\/", "</"))
    except json.JSONDecodeError:
        return ""
    inner = render_model(models, view.get("model_id", ""))
    return f'<div class="gpulab-widget-fallback">{inner}</div>'


def with_note_and_fallback(models: dict, script: str, view_json: str) -> str:
    """The note (always shown), the widget's view script, then its static fallback."""
    return f'<p class="gpulab-widget-note">{NOTE}</p>{script}{fallback_html(models, view_json)}'


def all_widget_states(env) -> dict:
    """Every document's saved widget models (the single-page build embeds none of them)."""
    models = {}
    for meta in getattr(env, "nb_metadata", {}).values():
        entry = (meta.get("js_files") or {}).get("ipywidgets_state")
        if entry:
            models.update(page_widget_state([_Js(entry[1])]))
    return models


class _Js:
    def __init__(self, attributes):
        self.attributes = attributes


def add_fallbacks(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if not body or "widget-view+json" not in body:
        return
    models = page_widget_state(context.get("script_files"))
    if app.builder.name == "singlehtml":
        models = {**all_widget_states(app.env), **models}
    context["body"] = VIEW_RE.sub(lambda m: with_note_and_fallback(models, m.group(1), m.group(2)), body)


def setup(app):
    app.connect("html-page-context", add_fallbacks, priority=900)  # after myst-nb adds the state
