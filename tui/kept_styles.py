"""Component styles kept until a widget's styles change (NOTE [ Kept styles ])."""
from __future__ import annotations

# NOTE [ Kept styles ]
# textual drops a widget's cache of component styles at every ``refresh()``, also a refresh of one
# line, so the panel that draws a changed row after a step works each style out again from the
# CSS of the widget and all its ancestors (~0.05 ms each, a few dozen a step).
#   1. ``KeptStyles`` keeps ``get_component_rich_style``'s answers (and the widget's own
#      ``rich_style``, as ``kept_rich_style()``) until ``notify_style_update``: textual calls it
#      whenever the stylesheet gives the widget new styles (a theme, a class, focus or hover,
#      on it or on an ancestor), the only way its component styles change.
#   2. It goes first in the bases (``class MemoryView(KeptStyles, Widget)``).


class KeptStyles:
    """Rule 1 of NOTE [ Kept styles ] for a textual widget."""

    def get_component_rich_style(self, *names: str, partial: bool = False, default=None):
        kept = self.__dict__.setdefault("_kept_styles", {})
        key = (names, partial, default)
        style = kept.get(key)
        if style is None:
            style = kept[key] = super().get_component_rich_style(*names, partial=partial, default=default)
        return style

    def kept_rich_style(self):
        """The widget's ``rich_style``, kept as the component styles are."""
        kept = self.__dict__.setdefault("_kept_styles", {})
        style = kept.get("")
        if style is None:
            style = kept[""] = self.rich_style
        return style

    def notify_style_update(self) -> None:
        self.__dict__["_kept_styles"] = {}
        super().notify_style_update()
