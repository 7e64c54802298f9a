"""Small queries over recorded checkpoint runs (lessons 9 and 10): regions and backward passes."""
from __future__ import annotations


def index_of(events, kind, **fields) -> int:
    """Index (into ``events``) of the first event of ``kind`` whose fields match."""
    for i, e in enumerate(events):
        if e["kind"] == kind and all(e.get(k) == v for k, v in fields.items()):
            return i
    raise LookupError(f"no {kind} event with {fields} was recorded")


def event(events, kind, **fields) -> dict:
    return events[index_of(events, kind, **fields)]


def region_span(events, nth: int = 0) -> tuple:
    """(enter, exit) indices of the ``nth`` checkpointed region's forward."""
    enters = [i for i, e in enumerate(events) if e["kind"] == "checkpoint_enter"]
    a = enters[nth]
    return a, index_of(events[a:], "checkpoint_exit", region=events[a]["region"]) + a


def backwards(events) -> list:
    """[(begin, end)] of every backward pass, in the order they began (nested ones inside others)."""
    spans, open_ = [], []
    for i, e in enumerate(events):
        if e["kind"] == "backward_begin":
            open_.append((i, e["roots"]))
        elif e["kind"] == "backward_end":
            for k in range(len(open_) - 1, -1, -1):
                if open_[k][1] == e["roots"]:
                    spans.append((open_.pop(k)[0], i))
                    break
    return sorted(spans)


def types_of(values) -> str:
    """``(None, None, Tensor[4, 16], None)``: what a backward returned, by type and shape."""
    def one(v):
        if v is None:
            return "None"
        shape = getattr(v, "shape", None)
        return f"Tensor[{', '.join(map(str, shape))}]" if shape is not None else type(v).__name__
    return "(" + ", ".join(one(v) for v in values) + ")"
