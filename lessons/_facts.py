"""Small queries over a step's events, shared by the lessons' facts and checks."""
from __future__ import annotations


def nodes(events) -> dict:
    """Graph nodes created in ``events``: {node id: node_info} (from op events)."""
    return {e["node"]["id"]: e["node"] for e in events if e["kind"] == "op" and e.get("node")}


def node_named(events, name) -> dict:
    for n in nodes(events).values():
        if n["name"] == name:
            return n
    raise LookupError(f"no {name} node was recorded")


def saved_bytes(node) -> int:
    return sum(s["bytes"] for s in node["saved"])


def executed(events) -> list:
    """Names of the nodes backward executed, in order."""
    return [e["name"] for e in events if e["kind"] == "execute"]


def released_bytes(events) -> int:
    return sum(e.get("bytes", 0) for e in events if e["kind"] == "release")


def live_by_category(events_upto) -> dict:
    """Live bytes per category after the given events (alloc/free/category events)."""
    live: dict = {}
    cat_of: dict = {}
    for e in events_upto:
        k = e["kind"]
        if k == "alloc":
            cat_of[e["storage"]] = e["category"]
            live[e["category"]] = live.get(e["category"], 0) + e["bytes"]
        elif k == "free":
            c = cat_of.pop(e["storage"], e.get("category"))
            live[c] = live.get(c, 0) - e["bytes"]
        elif k == "category":
            live[e["old"]] = live.get(e["old"], 0) - e["bytes"]
            live[e["new"]] = live.get(e["new"], 0) + e["bytes"]
            cat_of[e["storage"]] = e["new"]
    return {c: b for c, b in live.items() if b}


def nbytes(n: int) -> str:
    """Bytes for people: 12 B, 3.0 KiB, 1.50 MiB."""
    n = int(n)
    if abs(n) < 1024:
        return f"{n} B"
    if abs(n) < 1024 ** 2:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 ** 2:.2f} MiB"
