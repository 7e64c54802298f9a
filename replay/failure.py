"""Where a run failed in backward: the node that was running and the saved tensor it refused.

NOTE [ A failed backward ]
1. A backward that raised leaves a ``backward_begin`` with no ``backward_end`` after it; the
   node it failed in is the last ``execute`` after that ``backward_begin`` (none: it failed
   before running a node, e.g. a second backward through a freed graph at its first node).
2. The offending saved tensor is the node's first slot whose storage had an in-place write
   (a ``version`` event) after the node saved it: saved at the version before the first such
   write, now at the last one's. A node without such a slot failed for another reason (a
   second backward, a shape error), and only the node is named.
"""
from __future__ import annotations

from dataclasses import dataclass

from .memory import events_of


@dataclass
class Failure:
    at: int                       # the event the app puts the cursor on
    node: int | None
    name: str | None
    slot: str | None = None
    storage: int | None = None
    saved_version: int | None = None
    now_version: int | None = None

    def words(self) -> str:
        if self.node is None:
            return "backward failed before running a node"
        if self.slot is None:
            return f"backward failed in {self.name}"
        return (f"backward failed in {self.name}: its saved {self.slot!r} was modified in place "
                f"(saved at version {self.saved_version}, now at version {self.now_version})")


def failed_backward(trace) -> Failure | None:
    """Rules 1-2; None when every backward finished."""
    events = events_of(trace)
    begin = None
    for i, e in enumerate(events):
        k = e.get("kind")
        if k == "backward_begin":
            begin = i
        elif k == "backward_end":
            begin = None
    if begin is None:
        return None
    runs = [i for i in range(begin, len(events)) if events[i].get("kind") == "execute"]
    if not runs:
        return Failure(begin, None, None)
    at = runs[-1]
    nid, name = events[at].get("node"), events[at].get("name")
    made = next((i for i, e in enumerate(events[:begin]) if e.get("kind") == "op"
                 and isinstance(e.get("node"), dict) and e["node"].get("id") == nid), None)
    f = Failure(at, nid, name)
    if made is None:
        return f
    for slot in events[made]["node"].get("saved") or []:
        writes = [e for e in events[made + 1:at] if e.get("kind") == "version" and e.get("storage") == slot.get("storage")]
        if writes:
            f.slot, f.storage = slot.get("name"), slot.get("storage")
            f.saved_version, f.now_version = writes[0]["version"] - 1, writes[-1]["version"]
            break
    return f
