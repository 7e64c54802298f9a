"""Which module instance each graph node belongs to, and which instances collapse (moved from test_graph_state.py)."""
from replay.graph import default_step, graph_at
from replay.model import TraceModel
from viz.module_groups import collapsed_instances, instance_of


def _at(trace, step=None):
    return graph_at(TraceModel(trace.events, trace.meta), step)


def test_instance_rule():
    assert instance_of("blocks.3.attn.qkv") == ("blocks.3", "blocks.*")
    assert instance_of("0") == ("0", "*")
    assert instance_of("encoder.layers.11") == ("encoder.layers.11", "encoder.layers.*")
    assert instance_of("head") is None and instance_of(None) is None


def test_repeated_modules_collapse_and_tail_stays_outside(stack_trace):
    tr = stack_trace(4)
    g = _at(tr)
    boxed = collapsed_instances(g)
    assert set(boxed.values()) == {"0", "1", "2", "3"}
    per = {}
    for nid, inst in boxed.items():
        per.setdefault(inst, []).append(g.nodes[nid].name)
    for inst, names in per.items():
        assert sorted(names) == ["AccumulateGrad", "AccumulateGrad", "AddmmBackward0", "TBackward0",
                                 "TanhBackward0"], inst
    outside = [n.name for n in g.nodes.values() if n.id not in boxed]
    assert outside == ["SumBackward0"]        # the loss after the stack is not part of block 3
    assert collapsed_instances(g, min_repeats=5) == {}
    g2 = _at(stack_trace(2))
    assert collapsed_instances(g2) == {}       # two alike are not enough by default


def test_mlp_does_not_collapse(mlp_trace):
    tr, _ = mlp_trace
    assert collapsed_instances(_at(tr, default_step(tr))) == {}
