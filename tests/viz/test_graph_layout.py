"""The spine, left anchors and components the graph picture is laid out by (NOTE [ Graph picture layout ])."""
from viz.graph_layout import components, left_anchors, positions, side_heights, spine, spines


def _chain(*ids):
    return {v: i for i, v in enumerate(ids)}


def test_spine_is_the_longest_chain_to_an_output():
    # a residual block: x -> f1 -> f2 -> add, and x -> add (the skip)
    chain = _chain("x", "f1", "f2", "add", "loss")
    edges = [("x", "f1"), ("f1", "f2"), ("f2", "add"), ("x", "add"), ("add", "loss")]
    assert spine(chain, edges, ["loss"]) == ["x", "f1", "f2", "add", "loss"]


def test_spine_ends_at_the_deepest_output_first_listed_on_ties():
    chain = _chain("a", "b", "c", "d")
    edges = [("a", "b"), ("b", "c"), ("a", "d")]
    assert spine(chain, edges, ["d", "c"]) == ["a", "b", "c"]
    assert spine(chain, edges, ["d"]) == ["a", "d"]            # only d is an output
    assert spine(chain, edges, []) == ["a", "b", "c"]          # no outputs: any node may end it
    assert spine(_chain("p", "q"), [], ["p", "q"]) == ["p"]


def test_spine_ties_go_to_the_predecessor_built_first():
    # addmm(view(x), t(weight)): both inputs are one node deep; the data input (view) was built first
    chain = {"view": 1, "t": 2, "addmm": 3}
    assert spine(chain, [("view", "addmm"), ("t", "addmm")], ["addmm"]) == ["view", "addmm"]
    chain = {"view": 2, "t": 1, "addmm": 3}
    assert spine(chain, [("view", "addmm"), ("t", "addmm")], ["addmm"]) == ["t", "addmm"]


def test_spine_ignores_nodes_off_the_chain_and_survives_a_cycle():
    chain = _chain("a", "b")
    edges = [("leaf", "a"), ("a", "b"), ("b", "out_tensor")]
    assert spine(chain, edges, ["b"]) == ["a", "b"]
    assert spine(_chain("a", "b"), [("a", "b"), ("b", "a")], ["a"]) == []
    assert spine({}, [], []) == []


def test_spines_one_per_connected_part_largest_first():
    chain = _chain("p", "q", "a", "b", "c")
    edges = [("p", "q"), ("a", "b"), ("b", "c")]
    sp = spines(chain, edges, ["q", "c"])
    assert sp == [["a", "b", "c"], ["p", "q"]]
    assert positions(sp) == {"a": (0, 0), "b": (0, 1), "c": (0, 2), "p": (1, 0), "q": (1, 1)}


def test_left_anchors_take_the_rank_above_their_first_spine_consumer():
    sp = [["x", "addmm1", "tanh1", "addmm2"]]
    edges = [("w1", "t1"), ("t1", "addmm1"), ("b1", "addmm1"), ("x", "addmm1"), ("addmm1", "tanh1"),
             ("tanh1", "addmm2"), ("t2", "addmm2"), ("w2", "t2"), ("side", "addmm2"), ("side", "t2"),
             ("both", "addmm1"), ("both", "addmm2")]
    nodes = ["w1", "t1", "b1", "t2", "w2", "side", "both"]
    got = left_anchors(sp, nodes, edges)
    assert got == {"t1": "x", "b1": "x", "t2": "tanh1", "both": "x"}
    # w1, w2 feed a node off the spine; side feeds one too; nothing takes a rank above the spine's top
    assert left_anchors(sp, ["x0"], [("x0", "x")]) == {}
    # a node feeding two different spines is anchored to neither
    assert left_anchors([["a", "b"], ["c", "d"]], ["s"], [("s", "b"), ("s", "d")]) == {}


def test_components_ignore_edge_direction_and_keep_order():
    assert components(["a", "b", "c", "d", "e"], [("b", "a"), ("d", "c"), ("c", "e"), ("a", "zz")]) == \
        [["a", "b"], ["c", "d", "e"]]
    assert components(["legend"], []) == [["legend"]]


def test_side_heights_count_leaf_rooted_inputs_only():
    sp = [["x", "addmm", "relu", "add"]]
    edges = [("w", "t"), ("t", "addmm"), ("b", "addmm"), ("x", "addmm"), ("addmm", "relu"), ("relu", "add"),
             ("x", "branch"), ("branch", "add")]
    # addmm: w -> t -> addmm takes two ranks; add: its side input hangs off the spine node x, so none
    assert side_heights(sp, edges) == {"x": 0, "addmm": 2, "relu": 0, "add": 0}
