"""Small queries over a step's events, shared by the lessons' facts and checks.

Memory and words come from ``replay``, as the app's and the pictures' do.
"""
from __future__ import annotations

from replay import words
from replay.memory import live_after


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
    """Live bytes per category after the given events, counted from nothing (``replay.memory``)."""
    return live_after(events_upto)


nbytes = words.nbytes     # one format everywhere (NOTE [ One format ] in replay/words.py)
