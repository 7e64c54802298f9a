"""The layered layout and its box-drawing picture."""
from tui.graph_layout import layout, to_text


def test_chain_is_drawn_top_down_with_arrows():
    g = {3: [2], 2: [1], 1: []}
    names = {3: "SumBackward0", 2: "CosBackward0", 1: "SinBackward0"}
    lay = layout(g, names)
    text = to_text(lay, {k: (v, "") for k, v in names.items()})
    assert text == [
        "┌────────────┐",
        "│SumBackward0│",
        "│            │",
        "└──────┬─────┘",
        "       │",
        "       │",
        "       │",
        "┌──────▼─────┐",
        "│CosBackward0│",
        "│            │",
        "└──────┬─────┘",
        "       │",
        "       │",
        "       │",
        "┌──────▼─────┐",
        "│SinBackward0│",
        "│            │",
        "└────────────┘",
    ]


def test_layers_are_longest_paths_and_boxes_never_overlap():
    # 1 -> 2 -> 4, 1 -> 4 (a skip edge), 1 -> 3 -> 4
    g = {1: [2, 3, 4], 2: [4], 3: [4], 4: []}
    lay = layout(g)
    assert lay.layer_of == {1: 0, 2: 1, 3: 1, 4: 2}
    rects = list(lay.rects.values())
    for a in range(len(rects)):
        for b in range(a + 1, len(rects)):
            ax, ay, aw, ah = rects[a]
            bx, by, bw, bh = rects[b]
            assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay
    # three arrows end on node 4's top border (one per incoming edge)
    x4, y4, w4, _ = lay.rects[4]
    assert sum(1 for (x, y) in lay.arrows if y == y4 and x4 <= x < x4 + w4) == 3


def test_edges_only_between_visible_nodes():
    g = {2: [1], 1: []}
    lay = layout(g)
    x, y, w, h = lay.rects[2]
    below = [(cx, cy) for (cx, cy) in lay.cell_edges if cy == y + h]
    assert below
    assert lay.edge_char(*below[0], visible={1, 2}) == "│"
    assert lay.edge_char(*below[0], visible={2}) is None


def test_node_at_finds_the_box_under_a_cell():
    lay = layout({2: [1], 1: []})
    x, y, w, h = lay.rects[1]
    assert lay.node_at(x + 1, y + 1) == 1
    assert lay.node_at(x + w + 5, y + 1) is None
