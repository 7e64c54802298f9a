"""A graph picture always finishes: past its time budget Graphviz is stopped and glassgrad's own
layered layout draws the graph, with a note saying so."""
import shutil

import pytest

import engine as torch
from viz.graph_dot import graph_picture
from viz.picture import GraphvizTimeout
from viz.quick_layout import MAX_NODES, layout, svg


def _chain(n):
    torch.manual_seed(0)
    cell = torch.nn.Linear(4, 4)
    h = torch.zeros(1, 4)
    with torch.record() as tr:
        for _ in range(n):
            h = torch.tanh(cell(h))
        h.sum().backward()
    return tr


def test_ranks_follow_the_chain_and_leaves_sit_under_their_first_consumer():
    pic = graph_picture(_chain(5), None)
    st = pic.state
    pos = layout(st)
    for n in st.nodes.values():                                       # every edge between ops points down
        for c, _ in n.next:
            if c in pos and st.nodes[c].kind == "fn":
                assert pos[c][0] > pos[n.id][0]
    for n in st.nodes.values():
        users = [u for u in st.nodes.values() if n.id in [c for c, _ in u.next]]
        if n.kind == "leaf" and users:
            assert pos[n.id][0] == min(pos[u.id][0] for u in users) + 1
    assert len(set(pos.values())) == len(pos)                       # no two nodes in one place


def test_the_svg_has_every_node_edge_and_the_note():
    pic = graph_picture(_chain(3), None)
    doc = svg(pic.state, "a note")
    assert doc.count("<rect") == len(pic.state.nodes)
    edges = sum(1 for n in pic.state.nodes.values() for c, _ in n.next if c in pic.state.nodes)
    assert doc.count("<line") == edges
    assert ">a note</text>" in doc


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_render_falls_back_when_graphviz_runs_past_its_budget(tmp_path):
    pic = graph_picture(_chain(40), None)
    with pytest.raises(GraphvizTimeout):
        pic.pipe("svg", timeout=0.001)
    out = pic.render(tmp_path / "g.svg", time_budget=0.001)
    assert pic.fallback.startswith("Graphviz did not finish in 0.001 s")
    assert "glassgrad&#x27;s quick layered layout" in (tmp_path / "g.svg").read_text()
    pic.render(tmp_path / "g.png", time_budget=0.001)
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    assert out.endswith("g.svg")


def test_a_graph_too_big_to_draw_is_refused_with_what_to_do():
    class Big:
        nodes = dict.fromkeys(range(MAX_NODES + 1))
    with pytest.raises(ValueError, match="too many to draw .* choose an earlier --step or a --phase"):
        layout(Big())
