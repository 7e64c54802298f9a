"""The app's graph panel and the Graphviz picture show the same nodes in the same states at every step.

Both draw ``replay.model.TraceModel`` (NOTE [ One trace model ]); this walks every event of
recorded traces (a training loop, checkpointing both ways, retain_graph, create_graph, two
graphs alive at once) and compares what each one is given to draw: the panel's layout input
(``tui.graph_view.panel_nodes``) and the picture's DOT text (``viz.graph_dot.graph_picture``).
"""
import re

import pytest

from replay.model import TraceModel
from tests.replay.traces import CKPT, RECORDED
from tui.graph_view import panel_nodes
from viz.graph_dot import graph_picture

_NODE = re.compile(r'^\s+n(\d+) \[label="(?:[^"\\]|\\.)*", (.*)\];$', re.M)
_FILL_STATE = {"#eeeeee": "pending", "#bbdefb": "pending", "#ffca28": "current", "#a5d6a7": "executed"}
_BOX_WORDS = {"none": "saves nothing", "kept": "saved", "recomputed": "saved", "packed": "packed",
              "released": "freed", "dropped": "✗"}


def _drawn(source: str) -> dict:
    """Node id -> the state its fill color shows, for every grad_fn/leaf box of the DOT text."""
    out = {}
    for m in _NODE.finditer(source):
        fill = re.search(r'fillcolor="([^"]*)"', m.group(2))
        out[int(m.group(1))] = _FILL_STATE.get(fill.group(1) if fill else None, "?")
    return out


def _slots_in_one_word(slots) -> str:
    states = [s.state for s in slots]
    if not states:
        return "none"
    for word in ("dropped", "released", "recomputed"):
        if word in states:
            return word
    return "packed" if any(s.packed for s in slots) else "kept"


def _check_step(model, i):
    app = panel_nodes(model, i)
    pic = graph_picture(model, step=i, expand_modules=True, legend=False)
    g = pic.state
    drawn = _drawn(pic.source)
    assert set(app) == set(g.nodes) == set(drawn), f"step {i}: node sets differ"
    for nid, (state, (_, second)) in app.items():
        n = g.nodes[nid]
        assert state == n.state, f"step {i}, node {nid} {n.name}: app {state}, picture {n.state}"
        assert (n.kind == "leaf") == model.nodes[nid].is_leaf and (n.kind == "missing") == \
            (model.nodes[nid].kind == "missing"), f"step {i}, node {nid}"
        if n.kind != "missing":
            assert drawn[nid] == state, f"step {i}, node {nid} {n.name}: drawn {drawn[nid]}, app {state}"
        if n.kind == "fn":
            assert second.removeprefix("↻ ").startswith(_BOX_WORDS[_slots_in_one_word(n.saved)]), \
                f"step {i}, node {nid} {n.name}: box says {second!r}, slots {[s.state for s in n.saved]}"
            assert second.startswith("↻ ") == n.recomputed, f"step {i}, node {nid} {n.name}"


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_app_and_picture_show_the_same_graph_at_every_step(name):
    model = TraceModel.from_trace(RECORDED[name]())
    for i in range(len(model)):
        _check_step(model, i)


def test_and_on_a_synthetic_checkpoint_trace():
    model = TraceModel(CKPT)
    for i in range(len(model)):
        _check_step(model, i)


def test_the_training_loop_no_longer_disagrees():
    """The old models differed in 14 steps here: a leaf at its own event, and last iteration's leaves."""
    model = TraceModel.from_trace(RECORDED["training loop"]())
    evs = model.events
    leaf_at = next(i for i, e in enumerate(evs) if e["kind"] == "leaf")
    assert model.shown(leaf_at) == {evs[leaf_at]["node"]}           # shown from its own event (rule 6)
    step = next(i for i, e in enumerate(evs) if e["kind"] == "optimizer_step")
    first = next(i for i in range(step, len(evs)) if evs[i]["kind"] == "op" and evs[i].get("node"))
    t = evs[first]["node"]
    assert t["name"] == "TBackward0"
    # the second iteration's graph: its first node and the one leaf it names so far, pending again
    assert model.shown(first) == {t["id"], t["next"][0][0]}
    assert model.state(t["next"][0][0], first) == "pending"
    assert model.state(t["next"][0][0], step) == "executed"          # in the first iteration's graph
