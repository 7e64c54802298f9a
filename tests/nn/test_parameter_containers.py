"""nn.ParameterList and nn.ParameterDict: registration, key names, conversion, repr and errors as PyTorch 2.13."""
from __future__ import annotations

import pytest

import engine
import engine.nn as nn
from engine import optim


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = nn.ParameterList([nn.Parameter(engine.ones(2, 3)), engine.zeros(4)])
        self.pd = nn.ParameterDict({"b": engine.ones(1), "a": nn.Parameter(engine.zeros(2), requires_grad=False)})
        self.lin = nn.Linear(1, 1)


def test_parameters_and_state_dict_see_them_with_pytorchs_keys():
    # PyTorch 2.13 prints the same names; a plain dict is taken in sorted key order
    m = M()
    names = ["ws.0", "ws.1", "pd.a", "pd.b", "lin.weight", "lin.bias"]
    assert [n for n, _ in m.named_parameters()] == names and list(m.state_dict()) == names
    assert type(m.ws[1]) is nn.Parameter and m.ws[1].requires_grad and not m.pd["a"].requires_grad
    assert m.ws[1]._storage.category == "parameter"
    assert len(optim.SGD(m.parameters(), lr=0.1).param_groups[0]["params"]) == 6
    m2 = M()
    m2.load_state_dict({k: v * 0 + 5 for k, v in m.state_dict().items()})
    assert m2.ws[0].sum().item() == 30.0 and m2.pd["a"].tolist() == [5.0, 5.0]


def test_repr_matches_pytorch():
    assert repr(M()) == (
        "M(\n"
        "  (ws): ParameterList(\n"
        "      (0): Parameter containing: [torch.float32 of size 2x3]\n"
        "      (1): Parameter containing: [torch.float32 of size 4]\n"
        "  )\n"
        "  (pd): ParameterDict(\n"
        "      (a): Parameter containing: [torch.FloatTensor of size 2]\n"
        "      (b): Parameter containing: [torch.FloatTensor of size 1]\n"
        "  )\n"
        "  (lin): Linear(in_features=1, out_features=1, bias=True)\n"
        ")")
    pl = nn.ParameterList([engine.ones(1)])
    assert repr(pl) == "ParameterList(  (0): Parameter containing: [torch.float32 of size 1])"
    pl.append("x").append(None)
    assert repr(pl) == ("ParameterList(\n    (0): Parameter containing: [torch.float32 of size 1]\n"
                        "    (1): Object of type: str\n    (2): Object of type: NoneType\n)")
    assert len(pl) == 3 and len(pl[0:2]) == 2 and type(pl[0:2]) is nn.ParameterList


def test_parameter_list_indexing_and_assignment():
    pl = nn.ParameterList([engine.ones(1), engine.ones(2)])
    pl[0] = engine.zeros(3)
    assert type(pl[0]) is nn.Parameter and pl[0].shape == (3,) and pl[-1].shape == (2,)
    assert [p.shape for p in pl] == [(3,), (2,)]
    pl += [engine.ones(4)]
    assert len(pl) == 3 and [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert "0" not in dir(pl)


def test_parameter_dict_mapping_methods():
    pd = nn.ParameterDict([("z", engine.ones(1)), ("y", 3)])     # a sequence of pairs keeps its order
    assert list(pd) == ["z", "y"] and pd["y"] == 3
    assert repr(pd) == ("ParameterDict(\n    (z): Parameter containing: [torch.FloatTensor of size 1]\n"
                        "    (y): Object of type: int\n)")
    assert pd.pop("z").shape == (1,) and list(pd) == ["y"] and pd.get("q", 5) == 5 and "y" in pd
    both = nn.ParameterDict({"a": engine.ones(1)}) | nn.ParameterDict({"b": engine.ones(1)})
    assert list(both) == ["a", "b"] and [n for n, _ in both.named_parameters()] == ["a", "b"]
    assert both.setdefault("c", engine.zeros(2)).shape == (2,) and len(both) == 3
    k, v = both.popitem()
    assert k == "c" and list(both.keys()) == ["a", "b"]
    both.clear()
    assert len(both) == 0 and list(both.parameters()) == []


def test_errors_in_pytorchs_words():
    pl, pd = nn.ParameterList([engine.ones(1)]), nn.ParameterDict({"a": engine.ones(1)})
    with pytest.raises(IndexError, match="^index 5 is out of range$"):
        pl[5]
    with pytest.raises(TypeError, match=r"^Index given to ParameterDict cannot be used as a key as it is not a "
                                        r"string \(type is 'int'\). Open an issue on github if you need non-string "
                                        r"keys.$"):
        pd[1]
    with pytest.raises(RuntimeError, match="^ParameterList should not be called.$"):
        pl()
    with pytest.raises(RuntimeError, match="^ParameterDict should not be called.$"):
        pd(1)
    with pytest.raises(TypeError, match="^ParameterList.extend should be called with an iterable, but got Tensor$"):
        pl.extend(engine.ones(2))
    with pytest.raises(TypeError, match="^ParametersDict.update should be called with an iterable of key/value "
                                        "pairs, but got int$"):
        pd.update(3)
    with pytest.raises(ValueError, match="^ParameterDict update sequence element #0 has length 3; 2 is required$"):
        pd.update([(1, 2, 3)])
    with pytest.raises(TypeError, match="^ParameterDict update sequence element #0 should be Iterable; isint$"):
        pd.update([3])


def test_reassigning_a_parameter_keeps_its_place():
    # PyTorch 2.13: lin.weight = nn.Parameter(...) leaves state_dict order ['weight', 'bias']
    lin = nn.Linear(2, 2)
    lin.weight = nn.Parameter(engine.ones(2, 2))
    assert list(lin.state_dict()) == ["weight", "bias"] and lin.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
