"""Who holds the bytes at one moment: live storages grouped by module, op or source line.

NOTE [ Holders ]
1. The storages counted are those alive after event ``i`` (NOTE [ Storage lifetimes ] rule 1),
   on one device or all, optionally only those whose category at ``i`` is in ``categories``.
2. A storage belongs to one row: ``by="op"`` its maker op ("before recording" when it has
   none), ``by="line"`` the maker's source line, ``by="module"`` the module path of the op
   that made it ("" when the trace names none: the model's top level).
3. ``own`` is the bytes of the row's storages; ``total`` adds every row below it in the
   module tree (``blocks.0`` includes ``blocks.0.attn``), so it equals ``own`` for ops and
   lines. ``count`` is the number of storages; ``split`` their bytes per category at ``i``.
4. Rows are sorted by ``sort`` ("total", "own", "count" or "name"), largest first.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .lifetimes import spans_of

BY = ("module", "op", "line")
SORTS = ("total", "own", "count", "name")
NO_MAKER = "before recording"


@dataclass
class Row:
    name: str
    own: int = 0
    total: int = 0
    count: int = 0
    split: dict = field(default_factory=dict)
    storages: list = field(default_factory=list)


def key_of(lt, by: str) -> str:
    if by == "op":
        return lt.made_by or NO_MAKER
    if by == "line":
        return lt.where or (NO_MAKER if lt.before_recording else "(no source line)")
    return getattr(lt, "module", None) or ""


def holders(lts, i: int, by: str = "op", device: str | None = None, categories=None,
            sort: str = "total") -> list:
    """Rows of who holds the bytes alive after event ``i`` (rules 1-4)."""
    if by not in BY:
        raise ValueError(f"by must be one of {BY}, got {by!r}")
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {SORTS}, got {sort!r}")
    rows: dict = {}
    for k in spans_of(lts).alive(i, device).tolist():       # NOTE [ Lifetime spans ]
        lt = lts[k]
        cat = lt.category_at(i)
        if categories and cat not in categories:
            continue
        r = rows.setdefault(key_of(lt, by), Row(key_of(lt, by)))
        r.own += lt.bytes
        r.count += 1
        r.split[cat] = r.split.get(cat, 0) + lt.bytes
        r.storages.append(lt.storage)
    for r in rows.values():
        r.total = r.own
    if by == "module":
        for name, r in list(rows.items()):
            parts = name.split(".") if name else []
            for k in range(len(parts)):                 # every ancestor gets this row's bytes
                anc = ".".join(parts[:k])
                a = rows.setdefault(anc, Row(anc))
                a.total += r.own
    key = {"total": lambda r: (-r.total, r.name), "own": lambda r: (-r.own, r.name),
           "count": lambda r: (-r.count, r.name), "name": lambda r: r.name}[sort]
    return sorted(rows.values(), key=key)
