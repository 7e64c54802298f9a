"""Traces the replay tests (and the pictures' tests) share: a synthetic checkpoint trace and recorded runs.

Each ``record_*`` function records one situation with ``engine.record()`` and returns the trace.
"""
import engine as torch
from engine import nn


def _ev(seq, kind, phase="forward", **f):
    return {"seq": seq, "t": 0.0, "phase": phase, "kind": kind, **f}


def _op(seq, nid, name, nxt, saved, region=None, phase="forward"):
    return _ev(seq, "op", phase, op=name.lower(), inputs=[], output={"id": 100 + nid, "storage": 200 + nid,
               "shape": [2], "dtype": "float32", "bytes": 8, "storage_bytes": 8}, file="m.py", line=seq,
               region=region, node={"id": nid, "name": name, "next": nxt, "saved": saved, "attrs": {}})


def _sv(name, storage, packed=False):
    return {"name": name, "storage": storage, "bytes": 8, "shape": [2], "dtype": "float32",
            "is_output": False, "packed": packed}


# memory events by hand: a parameter, an activation, a gradient, optimizer state, an input made before
# recording (moved from tests/viz/test_memory.py)
SYN = [
    _ev(0, "alloc", storage=1, bytes=1000, device="cpu", category="parameter"),
    _ev(1, "alloc", storage=2, bytes=300, device="cpu", category="other"),
    _ev(2, "category", storage=2, bytes=300, device="cpu", old="other", new="activation"),
    _ev(3, "op", op="relu", inputs=[], output=None, node=None, file="/a/b/train.py", line=9, region=None),
    _ev(4, "alloc", "backward", storage=3, bytes=1000, device="cpu", category="gradient"),
    _ev(5, "free", "backward", storage=2, bytes=300, device="cpu", category="activation"),
    _ev(6, "alloc", "optimizer", storage=4, bytes=2000, device="cpu", category="optimizer"),
    _ev(7, "free", "optimizer", storage=9, bytes=50, device="cpu", category="input"),   # made before recording
]


# w -> sin -> cos inside checkpoint region 7, then sum; backward recomputes the region (moved from
# tests/viz/test_graph_state.py)
CKPT = [
    _ev(0, "leaf", node=1, name="AccumulateGrad", tensor={"id": 50, "storage": 60, "shape": [2],
        "dtype": "float32", "bytes": 8, "storage_bytes": 8, "requires_grad": True, "leaf": True, "name": "w"}),
    _op(1, 2, "SinBackward0", [[1, 0, "AccumulateGrad"]], [_sv("self", 60, packed=True)], region=7),
    _op(2, 3, "CosBackward0", [[2, 0, "SinBackward0"]], [_sv("self", 202, packed=True)], region=7),
    _op(3, 4, "SumBackward0", [[3, 0, "CosBackward0"]], []),
    _ev(4, "backward_begin", roots=[104], retain_graph=False, create_graph=False),
    _ev(5, "execute", "backward", node=4, name="SumBackward0"),
    _op(6, 12, "SinBackward0", [[1, 0, "AccumulateGrad"]], [_sv("self", 60)], region=7, phase="recompute"),
    _op(7, 13, "CosBackward0", [[12, 0, "SinBackward0"]], [_sv("self", 212)], region=7, phase="recompute"),
    _ev(8, "execute", "backward", node=3, name="CosBackward0"),
]


def record_training_loop():
    """Two SGD iterations of nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 2)); the model is made before."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(3, 4), torch.randn(3, 2)
    with torch.record() as tr:
        for _ in range(2):
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return tr


def record_checkpoint(use_reentrant):
    """An MLP whose middle Linear and ReLUs run under checkpoint, forward and backward."""
    from engine.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
    list(model.named_parameters())
    x = torch.randn(5, 8)

    def mid(h):
        return torch.relu(model[2](torch.relu(h)))

    with torch.record() as tr:
        h = checkpoint(mid, model[0](x), use_reentrant=use_reentrant)
        model[4](h).pow(2).mean().backward()
    return tr


def record_retain_graph():
    """Backward twice through one graph (retain_graph), then a retained graph that stays alive beside a new one."""
    w = torch.randn(3, requires_grad=True)
    with torch.record() as tr:
        y = (w.exp() * w).sum()
        y.backward(retain_graph=True)
        y.backward()
        z = w.sin().sum()
        z.backward(retain_graph=True)
        z2 = w.cos().sum()
        z2.backward()
    return tr


def record_retain_loop():
    """A loop that retains each graph: the old graph dies when ``loss`` is bound to the new one."""
    w = torch.randn(3, requires_grad=True)
    with torch.record() as tr:
        for _ in range(3):
            loss = (w.exp() * w).sum()
            loss.backward(retain_graph=True)
    return tr


def record_create_graph():
    """A gradient with create_graph=True, then backward through that gradient (a second derivative)."""
    x = torch.randn(3, requires_grad=True)
    with torch.record() as tr:
        y = (x.sin() * x).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
    return tr


def record_two_graphs():
    """Two graphs alive at once sharing leaves; a third starts before the second runs."""
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    with torch.record() as tr:
        y1 = (a.exp() * b).sum()
        y2 = (a.sin() + b).sum()
        y1.backward()
        z = (b * 2).sum()
        y2.backward()
        z.backward()
    return tr


RECORDED = {
    "training loop": record_training_loop,
    "checkpoint, reentrant": lambda: record_checkpoint(True),
    "checkpoint, non-reentrant": lambda: record_checkpoint(False),
    "retain_graph": record_retain_graph,
    "retain_graph loop": record_retain_loop,
    "create_graph": record_create_graph,
    "two graphs alive": record_two_graphs,
}
