"""matplotlib figures drawn from reports, models and recorded results, in the book's style."""

from .style import apply as _apply_style

_apply_style()
