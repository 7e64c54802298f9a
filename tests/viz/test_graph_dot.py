"""DOT text of fixture traces (nodes, edges, labels, styles), rendering, and the missing-`dot` error."""
import re
import shutil

import pytest

import engine as torch
from engine import nn
import viz
from replay.graph import default_step
from viz.graph_dot import INSTALL_HINT, STYLES, GraphvizNotFound, graph_picture

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz `dot` is not installed (apt-get install graphviz)")


def _node_line(src, nid):
    m = re.search(rf"^ +{nid} \[(.*)\];$", src, re.M)
    assert m, f"no node {nid} in\n{src}"
    return m.group(1)


def _ids(pic):
    return {n.name: n.id for n in pic.state.nodes.values()}


def _edge(src, a, b):
    """The attributes of the graph edge a -> b ("" when it has none); fails when there is no such edge."""
    m = re.search(rf"^  {a} -> {b}(?: \[(.*)\])?;$", src, re.M)
    assert m, f"no edge {a} -> {b}"
    return m.group(1) or ""


def _note_edges(src, note):
    """keeper -> attributes of a saved-tensor note's lines (written keeper -> note or note -> keeper)."""
    out = {}
    for a, b, attrs in re.findall(rf"^  (\w+) -> (\w+) \[(.*)\];$", src, re.M):
        if note in (a, b):
            out.setdefault(b if a == note else a, []).append(attrs)
    return out


def test_sincos_dot_nodes_edges_labels(sincos):
    pic = graph_picture(sincos)
    src, ids = pic.source, _ids(pic)
    assert src.startswith("digraph autograd {") and src.rstrip().endswith("}")
    for a, b in [("AccumulateGrad", "SinBackward0"), ("SinBackward0", "CosBackward0"),
                 ("CosBackward0", "SumBackward0")]:
        _edge(src, f"n{ids[a]}", f"n{ids[b]}")
    sin = _node_line(src, f"n{ids['SinBackward0']}")
    assert 'label="SinBackward0\\nsin -> (3,) float32\\n<string>' in sin or "SinBackward0\\nsin -> (3,) float32" in sin
    assert 'fillcolor="#eeeeee"' in sin                      # pending before backward
    leaf = _node_line(src, f"n{ids['AccumulateGrad']}")
    assert "leaf tensor\\n(3,) float32 · 12 B\\nAccumulateGrad" in leaf and 'fillcolor="#bbdefb"' in leaf
    # the output tensor, below the last node
    root = next(e for e in sincos.events if e["kind"] == "backward_begin")["roots"][0]
    _edge(src, f"n{ids['SumBackward0']}", f"t{root}")
    assert 'shape="ellipse"' in _node_line(src, f"t{root}")
    # saved tensors: sin keeps the leaf's storage (no extra bytes); cos keeps a 12-byte activation
    x_st = pic.state.nodes[ids["AccumulateGrad"]].tensor["storage"]
    sx = _node_line(src, f"s{x_st}")
    assert "SinBackward0._saved_self · (3,) float32\\n= storage of the leaf tensor: no extra bytes" in sx
    cos_st = pic.state.nodes[ids["CosBackward0"]].saved[0].storage
    sc = _node_line(src, f"s{cos_st}")
    assert "CosBackward0._saved_self · (3,) float32\\nstorage 12 B · activation" in sc
    assert 'fillcolor="#ffcc80"' in sc
    assert _note_edges(src, f"s{cos_st}") == {f"n{ids['CosBackward0']}": ['style=dashed, color="#e65100", dir=none']}
    assert "saved tensors hold 12 B beyond the leaves' own storage" in src   # cos's; sin's is x itself


def test_tensors_off_the_cpu_name_their_device(sincos):
    import copy
    from engine.trace import Trace
    moved = Trace(meta=dict(sincos.meta))
    moved.events = copy.deepcopy(sincos.events)
    for e in moved.events:                  # the same program as if run with device="cuda"
        for t in [e.get("tensor"), e.get("output"), *e.get("inputs", [])]:
            if isinstance(t, dict) and "device" in t:
                t["device"] = "cuda:0"
    src, ids = graph_picture(moved).source, _ids(graph_picture(moved))
    assert "sin -> (3,) float32 cuda:0" in _node_line(src, f"n{ids['SinBackward0']}")
    assert "(3,) float32 cuda:0 · 12 B" in _node_line(src, f"n{ids['AccumulateGrad']}")
    assert "float32 cuda" not in graph_picture(sincos).source        # the CPU goes unsaid, as in a repr


def test_states_drawn_at_steps(sincos):
    i = next(k for k, e in enumerate(sincos.events) if e["kind"] == "execute" and e["name"] == "CosBackward0")
    pic = graph_picture(sincos, i)
    src, ids = pic.source, _ids(pic)
    cur = _node_line(src, f"n{ids['CosBackward0']}")
    assert "RUNNING NOW" in cur and 'penwidth="3"' in cur and 'fillcolor="#ffca28"' in cur
    assert 'fillcolor="#a5d6a7"' in _node_line(src, f"n{ids['SumBackward0']}")
    end = graph_picture(sincos, len(sincos) - 1)
    src = end.source
    cos_st = end.state.nodes[ids["CosBackward0"]].saved[0].storage
    line = _node_line(src, f"s{cos_st}")
    assert 'style="dashed"' in line and "released · memory freed" in line
    x_st = end.state.nodes[ids["AccumulateGrad"]].tensor["storage"]
    assert "released · storage still in use" in _node_line(src, f"s{x_st}")
    assert _note_edges(src, f"s{cos_st}") == {f"n{ids['CosBackward0']}": ['style=dotted, color="#9e9e9e", dir=none']}
    assert "grad accumulated" in _node_line(src, f"n{ids['AccumulateGrad']}")


def test_legend_explains_every_style_used(sincos, mlp_trace):
    src = graph_picture(sincos).source
    legend = _node_line(src, "legend")
    for k in ("pending", "current", "executed", "leaf", "output", "saved", "released"):
        assert STYLES[k][1].replace("&", "&amp;") in legend
    assert STYLES["dropped"][1] not in legend                  # not used here
    assert "graph edge" in legend and "keeps this saved tensor" in legend
    assert "legend" not in graph_picture(sincos, legend=False).source


def test_mlp_parameter_labels_and_shared_storage(mlp_trace):
    tr, model = mlp_trace
    pic = graph_picture(tr)
    src = pic.source
    for name, shape, nbytes in [("0.weight", "(16, 8)", "512 B"), ("0.bias", "(16,)", "64 B"),
                                ("2.weight", "(4, 16)", "256 B"), ("2.bias", "(4,)", "16 B")]:
        assert f'label="{name}\\n{shape} float32 · {nbytes}\\nAccumulateGrad"' in src
    w2 = model[2].weight._storage.id
    assert "AddmmBackward0._saved_mat2 · (16, 4) float32\\n= storage of 2.weight: no extra bytes" in \
        _node_line(src, f"s{w2}")
    # relu's result is also the second addmm's mat1: one storage box, two dashed edges
    relu = next(n for n in pic.state.nodes.values() if n.name == "ReluBackward0")
    st = relu.saved[0].storage
    line = _node_line(src, f"s{st}")
    assert "ReluBackward0._saved_result" in line and "AddmmBackward0._saved_mat1" in line
    assert sum(map(len, _note_edges(src, f"s{st}").values())) == 2


def test_collapsed_modules_box_and_expand(stack_trace):
    tr = stack_trace(4)
    src = graph_picture(tr).source
    for i in range(4):
        line = _node_line(src, f"m_{i}")
        assert 'shape="box3d"' in line
        assert f'label="module {i}\\ncollapsed: 3 grad_fn nodes · 2 parameters\\nops: t, addmm, tanh\\n' in line
        assert "backward: 0/3 nodes run" in line
    for i in range(3):
        _edge(src, f"m_{i}", f"m_{i + 1}")
    assert "AddmmBackward0" not in src.split("legend")[0]
    assert STYLES["module"][1] in _node_line(src, "legend")
    assert "4 alike modules drawn collapsed, one box each: 0, 1, 2, 3" in _node_line(src, "legend")
    full = graph_picture(tr, expand_modules=True).source
    assert "box3d" not in full.split("  legend")[0] and full.count('label="AddmmBackward0\\n') == 4
    done = graph_picture(tr, len(tr) - 1).source
    assert "backward: 3/3 nodes run" in _node_line(done, "m_0") and 'fillcolor="#a5d6a7"' in _node_line(done, "m_0")


def test_checkpoint_region_cluster_and_dropped():
    from tests.replay.traces import CKPT
    src = graph_picture(CKPT, 3).source
    assert "subgraph cluster_region_7 {" in src
    assert "checkpoint region 7\\ndropped 16 B in forward" in src
    line = _node_line(src, "d3_0")
    assert "dropped by checkpoint" in line and 'style="dashed,bold"' in line and "8 B not kept" in line
    assert STYLES["dropped"][1] in src and STYLES["region"][1] in src
    src = graph_picture(CKPT, len(CKPT) - 1).source
    assert "recomputed in backward" in src
    cos = _node_line(src, "n3")
    assert 'peripheries="2"' in cos and "recomputed" in cos and "RUNNING NOW" in cos


def test_step_out_of_range(sincos):
    with pytest.raises(IndexError, match=f"the trace has {len(sincos)} events"):
        graph_picture(sincos, len(sincos))


@needs_dot
@pytest.mark.parametrize("fmt,magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_render_files(mlp_trace, tmp_path, fmt, magic):
    tr, _ = mlp_trace
    out = tmp_path / f"g.{fmt}"
    graph_picture(tr).render(out)
    data = out.read_bytes()
    assert data.startswith(magic) and len(data) > 5000
    if fmt == "svg":
        text = data.decode()
        assert "AddmmBackward0" in text and "0.weight" in text and "legend" in text
    if fmt == "png":
        w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert 400 < w < 4000 and 400 < h < 4000


@needs_dot
def test_dot_accepts_every_fixture(sincos, mlp_trace, stack_trace):
    import subprocess
    from tests.replay.traces import CKPT
    for ev, step in [(sincos, None), (mlp_trace[0], None), (stack_trace(4), None), (CKPT, 3), (CKPT, None)]:
        src = graph_picture(ev, step).source
        r = subprocess.run(["dot", "-Tplain"], input=src.encode(), capture_output=True)
        assert r.returncode == 0, r.stderr.decode()


def test_missing_dot_error(sincos, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))           # no `dot` on this PATH
    pic = graph_picture(sincos)
    with pytest.raises(GraphvizNotFound) as e:
        pic.render(tmp_path / "g.png")
    assert "sudo apt-get install graphviz" in str(e.value) and "`dot`" in str(e.value)
    assert str(e.value) == INSTALL_HINT
    assert not (tmp_path / "g.png").exists()
    assert "SinBackward0" in pic.source                  # the DOT text still works
    pic.render(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text() == pic.source


def test_bad_output_names(sincos, tmp_path):
    pic = graph_picture(sincos)
    with pytest.raises(ValueError, match=r"use a \.svg, \.png or \.pdf"):
        pic.render(tmp_path / "g.jpg")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        pic.render(tmp_path / "no" / "g.dot")


def test_make_dot_live_graph():
    x = torch.randn(3, requires_grad=True)
    y = (x * x).exp().sum()
    pic = viz.make_dot(y, params={"x": x})
    src = pic.source
    ids = _ids(pic)
    _edge(src, f"n{ids['MulBackward0']}", f"n{ids['ExpBackward0']}")
    assert 'label="x\\n(3,) float32 · 12 B\\nAccumulateGrad"' in src
    assert f"t{y._id}" in src and "graph of a tensor ()" in src
    # mul keeps x twice: one storage box that is x's own
    assert list(map(len, _note_edges(src, f"s{x._storage.id}").values())) == [2]
    y.backward()
    after = viz.make_dot(y).source
    mul = _ids(viz.make_dot(y))["MulBackward0"]
    assert "MulBackward0._saved_self · (3,) float32\\nreleased" in _node_line(after, f"r{mul}_1")  # other, self
    with pytest.raises(ValueError, match="no grad_fn"):
        viz.make_dot(x)


@needs_dot
def test_make_dot_repr_svg():
    x = torch.randn(2, requires_grad=True)
    svg = viz.make_dot(x.tanh().sum())._repr_svg_()
    assert "<svg" in svg and "TanhBackward0" in svg


# ------------------------------------------------------------ layout (NOTE [ Graph picture layout ])
def _plain(src):
    """Graphviz's node centres (inches) for DOT text: id -> (x, y), y growing upwards."""
    import subprocess
    r = subprocess.run(["dot", "-Tplain"], input=src.encode(), capture_output=True, check=True)
    rows = (line.split() for line in r.stdout.decode().splitlines())
    return {p[1]: (float(p[2]), float(p[3])) for p in rows if p[0] == "node"}


def _spines(src):
    """group name -> the ids drawn in it (spine nodes, top to bottom as written)."""
    out = {}
    for nid, g in re.findall(r'^ +(\w+) \[.*group="(spine\d+)"', src, re.M):
        out.setdefault(g, []).append(nid)
    return out


def _residual_trace():
    torch.manual_seed(0)

    class Res(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(6, 6), nn.Linear(6, 6)

        def forward(self, x):
            return x + self.b(torch.relu(self.a(x)))

    model = nn.Sequential(Res(), Res(), nn.Linear(6, 2))
    list(model.named_parameters())
    with torch.record() as tr:
        model(torch.randn(3, 6)).pow(2).mean().backward()
    return tr


def _attention_trace():
    torch.manual_seed(0)
    block = nn.TransformerBlock(8, 2)
    with torch.record() as tr:
        block(torch.randn(1, 3, 8)).pow(2).mean().backward()
    return tr


def _ckpt_stack_trace():
    from engine.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(6, 6), nn.Tanh()) for _ in range(4)])
    list(model.named_parameters())
    with torch.record() as tr:
        h = torch.randn(2, 6)
        for block in model:
            h = checkpoint(block, h, use_reentrant=False)
        h.sum().backward()
    return tr


def test_spine_attributes_in_the_dot_text(stack_trace):
    tr = stack_trace(4)
    pic = graph_picture(tr, expand_modules=True)
    src, nodes = pic.source, pic.state.nodes
    names = [nodes[int(v[1:])].name if v.startswith("n") else v[0] for v in _spines(src)["spine0"]]
    # the data path: each block's addmm and tanh, then the sum and the output tensor. The input x needs no
    # grad, so the chain starts at the first weight's TBackward0; the other blocks' TBackward0 stay off it
    assert names == ["TBackward0"] + ["AddmmBackward0", "TanhBackward0"] * 4 + ["SumBackward0", "t"]
    spine = _spines(src)["spine0"]
    for a, b in zip(spine, spine[1:]):
        assert "weight=100" in _edge(src, a, b)
    for n in nodes.values():
        if n.kind == "leaf" or (n.name == "TBackward0" and f"n{n.id}" != spine[0]):
            assert "group=" not in _node_line(src, f"n{n.id}")
    # each block's bias, and the TBackward0 of every block but the first, is ranked with the node above its
    # addmm, on its left
    invis = re.findall(r"^  (n\d+) -> (n\d+) \[style=invis\];$", src, re.M)
    assert sorted(nodes[int(a[1:])].name for a, _ in invis) == ["AccumulateGrad"] * 4 + ["TBackward0"] * 3
    assert all(b in spine for _, b in invis)
    assert len(re.findall(r"^  \{rank=same; ", src, re.M)) >= 3


@needs_dot
@pytest.mark.parametrize("which", ["stack", "stack_mid", "residual", "attention", "ckpt", "ckpt_reentrant",
                                   "ckpt_stack", "collapsed"])
def test_spine_is_straight_inputs_left_notes_right(which, stack_trace, ckpt_trace):
    make = {"stack": lambda: (stack_trace(6), None), "stack_mid": lambda: (stack_trace(6), "mid"),
            "residual": lambda: (_residual_trace(), None), "attention": lambda: (_attention_trace(), None),
            "ckpt": lambda: (ckpt_trace(False), "end"), "ckpt_reentrant": lambda: (ckpt_trace(True), "mid"),
            "ckpt_stack": lambda: (_ckpt_stack_trace(), "mid"), "collapsed": lambda: (stack_trace(6), None)}
    tr, when = make[which]()
    ex = [i for i, e in enumerate(tr.events) if e["kind"] == "execute"]
    step = {None: None, "mid": ex[len(ex) // 2], "end": len(tr) - 1}[when]
    src = graph_picture(tr, step, expand_modules=which != "collapsed").source
    pos = _plain(src)
    spines = _spines(src)
    assert spines and max(map(len, spines.values())) >= 5
    for ids in spines.values():
        xs = {round(pos[v][0], 2) for v in ids}
        assert len(xs) == 1, f"spine bends: {[(v, pos[v]) for v in ids]}"
    if which.startswith("ckpt"):
        return       # inside checkpoint frames Graphviz orders ranks its own way (rule 6)
    for a, b in re.findall(r"^  (\w+) -> (\w+) \[style=invis\];$", src, re.M):
        assert pos[a][0] < pos[b][0] and pos[a][1] == pos[b][1], (a, b)
    notes = re.findall(r"^  (\w+) -> ([sdr]\d\w*) \[style=(?:dashed|dotted), color=\"#\w+\", dir=none\];$", src, re.M)
    assert notes or which == "collapsed"
    for keeper, note in notes:
        assert pos[keeper][0] < pos[note][0] and pos[keeper][1] == pos[note][1], (keeper, note)


@needs_dot
def test_legend_beside_the_graph_without_stretching_a_rank(stack_trace):
    src = graph_picture(stack_trace(6)).source
    pos = _plain(src)
    boxes = [pos[f"m_{i}"] for i in range(6)]
    gaps = [a[1] - b[1] for a, b in zip(boxes, boxes[1:])]
    assert max(gaps) - min(gaps) < 0.01, gaps                 # no tall first rank
    assert len({round(x, 2) for x, _ in boxes}) == 1
    assert pos["legend"][0] > max(x for v, (x, _) in pos.items() if v != "legend")
    assert 'packmode="array_tu2"' in src and "legend [shape=plaintext, style=solid, fontsize=9, sortv=1," in src


@needs_dot
def test_residual_skip_runs_down_the_left():
    import subprocess
    src = graph_picture(_residual_trace(), expand_modules=True).source
    spine = _spines(src)["spine0"]
    at = {v: i for i, v in enumerate(spine)}
    skips = [(a, b) for a, b in re.findall(r"^  (\w+) -> (\w+)(?: \[.*\])?;$", src, re.M)
             if a in at and b in at and at[b] > at[a] + 1]
    assert len(skips) == 1                         # the second block's x + f(x) (the first x needs no grad)
    a, b = skips[0]
    lines = src.splitlines()
    assert lines.index(f"  {a} -> {b};") < lines.index(f"  {a} -> {spine[at[a] + 1]} [weight=100];")
    plain = subprocess.run(["dot", "-Tplain"], input=src.encode(), capture_output=True, check=True).stdout.decode()
    pts = next(p for p in (line.split() for line in plain.splitlines()) if p[:3] == ["edge", a, b])
    xs = [float(x) for x in pts[4:4 + 2 * int(pts[3]):2]]
    assert min(xs) < _plain(src)[a][0] - 0.5


def test_collapsed_checkpoint_regions_say_so():
    from engine.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    ws = [torch.randn(4, 4, requires_grad=True) for _ in range(5)]       # unnamed: regions stand in for modules
    with torch.record() as tr:
        h = torch.randn(2, 4)
        for w in ws:
            h = checkpoint(lambda a, w=w: (a @ w).tanh(), h, use_reentrant=False)
        h.sum().backward()
    pic = graph_picture(tr)
    rids = sorted(pic.state.regions)
    assert len(rids) == 5
    line = _node_line(pic.source, f"m_region_{rids[0]}")
    assert line.startswith(f'label="checkpoint region {rids[0]}\\ncollapsed: 2 grad_fn nodes · 0 parameters\\n'
                           "ops: mm, tanh\\nsaved: 32 B held beyond parameters\\ncheckpointed: 32 B dropped\\n")
    assert (f"5 alike checkpoint regions drawn collapsed, one box each: {rids[0]}, {rids[1]}, …, {rids[4]}"
            in _node_line(pic.source, "legend"))
