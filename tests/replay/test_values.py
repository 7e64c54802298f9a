"""Value capture: summaries equal NumPy's figures for the same tensors, gradients get norms and
flags, the cap refuses large tensors, and nothing is captured unless asked."""
import math

import numpy as np
import pytest

import engine as torch
from engine.core.hooks import op_hooks
from engine.trace import Trace
from replay.values import EXPLODING, grad_norms, summaries


def _run(**kw):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    x = torch.randn(4, 8)
    with torch.record(**kw) as tr:
        h = m[1](m[0](x))
        y = m[2](h)
        (y * 1e4).sum().backward()
    return tr, m, h


def test_off_by_default_and_the_op_hook_is_gone_after_recording():
    tr, _, _ = _run()
    assert not [e for e in tr.events if e["kind"] == "values"]
    _run(values=True)
    assert op_hooks.stack == ()


def test_a_forward_summary_is_numpys_figures_of_the_output():
    tr, _, h = _run(values=True)
    s = summaries(tr)
    a = h.detach().numpy().astype(np.float64).reshape(-1)
    e = s[h._id]
    assert e["numel"] == a.size and e["nan"] == 0 and e["inf"] == 0
    assert e["min"] == pytest.approx(a.min()) and e["max"] == pytest.approx(a.max())
    assert e["mean"] == pytest.approx(a.mean()) and e["std"] == pytest.approx(a.std())
    assert e["norm"] == pytest.approx(math.sqrt((a * a).sum()))
    assert sum(e["hist"]) == a.size and len(e["hist"]) == 16


def test_gradient_norms_are_the_parameters_and_flag_exploding_ones():
    tr, m, _ = _run(values=True)
    rows = {r.name: r for r in grad_norms(tr)}
    assert set(rows) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    for name, p in m.named_parameters():
        g = p.grad.detach().numpy().astype(np.float64)
        assert rows[name].norm == pytest.approx(math.sqrt((g * g).sum()))
        assert rows[name].flag == ("exploding" if rows[name].norm > EXPLODING else "")
    assert any(r.flag == "exploding" for r in rows.values())          # the loss was scaled by 1e4


def test_the_cap_refuses_large_tensors_clearly_and_the_trace_loads(tmp_path):
    tr, _, _ = _run(values=True, values_cap=20)
    refused = [e for e in tr.events if e["kind"] == "values" and "refused" in e]
    assert refused and all(e["refused"] == f"{e['numel']:,} elements is over the values cap of 20" for e in refused)
    assert all("min" not in e for e in refused)
    tr.save(tmp_path / "v.jsonl")
    assert len(Trace.load(tmp_path / "v.jsonl")) == len(tr)
    with pytest.raises(ValueError, match="values_cap must be a non-negative number"):
        with torch.record(values=True, values_cap=-1):
            pass
