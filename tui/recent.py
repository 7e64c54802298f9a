"""Recently opened traces, remembered in $GLASSGRAD_HOME/recent.json (default ~/.glassgrad)."""
from __future__ import annotations

import json
import os

LIMIT = 8


def _path() -> str:
    home = os.environ.get("GLASSGRAD_HOME") or os.path.join(os.path.expanduser("~"), ".glassgrad")
    return os.path.join(home, "recent.json")


def load() -> list:
    try:
        with open(_path(), encoding="utf-8") as f:
            items = json.load(f)
    except (OSError, ValueError):
        return []
    return [p for p in items if isinstance(p, str) and os.path.exists(p)][:LIMIT]


def remember(path: str) -> None:
    p = os.path.abspath(path)
    items = [x for x in load() if x != p]
    try:
        os.makedirs(os.path.dirname(_path()), exist_ok=True)
        with open(_path(), "w", encoding="utf-8") as f:
            json.dump([p] + items[: LIMIT - 1], f)
    except OSError:
        pass
