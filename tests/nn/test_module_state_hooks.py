"""Module state-dict hooks, extra state, get_buffer/set_submodule, to_empty, half/share_memory
(PyTorch 2.13 gives the same keys, calls and messages for the same programs)."""
from __future__ import annotations

import pytest

import engine
from engine import nn


class WithExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(2, 2)
        self.c = 3

    def get_extra_state(self):
        return {"c": self.c}

    def set_extra_state(self, state):
        self.c = state["c"]


def test_extra_state_is_saved_after_own_entries_and_loaded_back():
    m = WithExtra()
    sd = m.state_dict()
    assert list(sd) == ["_extra_state", "l.weight", "l.bias"] and sd["_extra_state"] == {"c": 3}
    outer = nn.Sequential(m)
    assert list(outer.state_dict()) == ["0._extra_state", "0.l.weight", "0.l.bias"]
    sd2 = dict(sd, _extra_state={"c": 7})
    assert repr(m.load_state_dict(sd2)) == "<All keys matched successfully>" and m.c == 7
    del sd2["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        m.load_state_dict(sd2)
    assert "_extra_state" not in nn.Linear(2, 2).state_dict()
    with pytest.raises(RuntimeError, match="^Reached a code path in Module.get_extra_state"):
        nn.Linear(2, 2).get_extra_state()


def test_state_dict_hooks_run_in_pytorchs_order_with_its_arguments():
    m = WithExtra()
    calls = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", mod is m, prefix, keep_vars)))
    h = m.l.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(("post", prefix, sorted(sd))))
    m.state_dict(keep_vars=True)
    assert calls == [("pre", True, "", True), ("post", "l.", ["_extra_state", "l.bias", "l.weight"])]
    h.remove()
    calls.clear()
    m.state_dict()
    assert calls == [("pre", True, "", False)]

    def renaming(mod, sd, prefix, meta):
        sd[prefix + "renamed"] = sd.pop(prefix + "bias")
    m.l.register_state_dict_post_hook(renaming)
    assert list(m.state_dict()) == ["_extra_state", "l.weight", "l.renamed"]
    m.l.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd)
    with pytest.raises(RuntimeError, match="^state_dict post-hook must return None$"):
        m.state_dict()


def test_load_hooks_see_each_prefix_and_can_forgive_keys():
    m = WithExtra()
    sd = dict(m.state_dict(), junk=engine.ones(1))
    calls = []
    m.l.register_load_state_dict_pre_hook(
        lambda mod, state, prefix, meta, strict, missing, unexpected, errors: calls.append(("pre", prefix, strict)))
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "junk"'):
        m.load_state_dict(sd)

    def forgive(mod, incompatible):
        calls.append(("post", list(incompatible.missing_keys), list(incompatible.unexpected_keys)))
        incompatible.unexpected_keys.clear()
    m.register_load_state_dict_post_hook(forgive)
    calls.clear()
    assert repr(m.load_state_dict(sd)) == "<All keys matched successfully>"
    assert calls == [("pre", "l.", True), ("post", [], ["junk"])]

    def upgrade(mod, state, prefix, meta, strict, missing, unexpected, errors):   # an old checkpoint's key
        if prefix + "w" in state:
            state[prefix + "weight"] = state.pop(prefix + "w")
    lin = nn.Linear(2, 2)
    lin.register_load_state_dict_pre_hook(upgrade)
    old = {"w": engine.full((2, 2), 5.0), "bias": engine.zeros(2)}
    lin.load_state_dict(old)
    assert lin.weight.tolist() == [[5.0, 5.0], [5.0, 5.0]] and list(old) == ["w", "bias"]   # the caller's dict kept


def test_get_buffer_and_set_submodule():
    bn = nn.BatchNorm1d(2)
    assert bn.get_buffer("running_mean") is bn.running_mean
    s = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises(AttributeError, match="^`weight` is not a buffer$"):
        s.get_buffer("0.weight")
    with pytest.raises(AttributeError, match="^Linear has no attribute `nope`$"):
        s.get_buffer("0.nope")
    relu = nn.ReLU()
    s.set_submodule("0", relu)
    assert s[0] is relu
    with pytest.raises(AttributeError, match="^Sequential has no attribute `1`$"):
        s.set_submodule("1", nn.ReLU(), strict=True)
    s.set_submodule("1", nn.Tanh())
    assert [type(c).__name__ for c in s] == ["ReLU", "Tanh"]


def test_to_empty_half_and_share_memory():
    lin = nn.Linear(2, 3)
    out = lin.to_empty(device="cpu")
    assert out is lin and isinstance(lin.weight, nn.Parameter) and tuple(lin.weight.shape) == (3, 2)
    assert lin.share_memory() is lin
    half = nn.Linear(2, 2).half()
    assert isinstance(half.weight, nn.Parameter) and half.weight.dtype is engine.float16
    assert half(engine.ones(1, 2, dtype=engine.float16)).dtype is engine.float16


def test_torch_pdist_is_the_functional_one():
    x = engine.randn(4, 3, requires_grad=True)
    assert engine.pdist is nn.functional.pdist and engine.pdist(x).grad_fn.name() == "PdistBackward0"
