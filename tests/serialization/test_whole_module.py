"""torch.save(model) and torch.load(f, weights_only=False) of a whole module, without running code
from the file (NOTE [ Saving a whole module ])."""
import io
import pickle
import pickletools
import zipfile

import pytest

import engine as torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.act = torch.nn.ReLU()
        self.head = self.fc                     # the same layer twice: one object after loading
        self.scale = 2.0

    def forward(self, x):
        return self.act(self.fc(x)) * self.scale


def _saved(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def test_a_whole_module_round_trips_with_weights_only_false():
    torch.manual_seed(0)
    net = Net().eval()
    m = torch.load(_saved(net), weights_only=False)
    x = torch.randn(2, 4)
    assert type(m) is Net and m.scale == 2.0 and m.training is False
    assert torch.equal(m(x), net(x))
    assert m.head is m.fc and [n for n, _ in m.named_parameters()] == ["fc.weight", "fc.bias"]
    m(x).sum().backward()
    assert m.fc.weight.grad is not None and net.fc.weight.grad is None


def test_glassgrads_layers_are_named_by_pytorchs_class_paths():
    buf = _saved(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh()))
    with zipfile.ZipFile(buf) as z:
        pkl = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    names = [a for op, a, _ in pickletools.genops(pkl) if op.name == "GLOBAL"]
    assert {"torch.nn.modules.container Sequential", "torch.nn.modules.linear Linear",
            "torch.nn.modules.activation Tanh"} <= set(names)
    assert not any(n.startswith("engine") for n in names)


def test_the_default_load_refuses_a_module_and_says_what_to_do():
    with pytest.raises(pickle.UnpicklingError, match=rf"GLOBAL {Net.__module__}.Net: the file holds a whole module. "
                                                     r"Load it with torch.load\(f, weights_only=False\)"):
        torch.load(_saved(Net()))


def test_a_class_the_program_does_not_have_is_refused_even_with_weights_only_false():
    buf = _saved(Net())
    with zipfile.ZipFile(buf) as z:
        files = {n: z.read(n) for n in z.namelist()}
    key = next(n for n in files if n.endswith("data.pkl"))
    files[key] = files[key].replace(f"{Net.__module__}\nNet".encode(), b"not_imported_anywhere\nNet")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n, b in files.items():
            z.writestr(n, b)
    out.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL not_imported_anywhere.Net"):
        torch.load(out, weights_only=False)


def test_an_attribute_a_checkpoint_cannot_hold_is_refused_at_save():
    net = Net()
    net.callback = lambda x: x
    with pytest.raises(TypeError, match="its attribute 'callback' holds a builtins.function, which a checkpoint "
                                        "cannot hold"):
        torch.save(net, io.BytesIO())
