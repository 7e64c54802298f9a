"""A local hub directory for glassgrad: ``engine.hub.list("examples/hub", trust_repo=True)``.

Two entry points, each a function that builds an ``engine.nn`` model:

* ``xor_mlp``: a 2-8-2 MLP that classifies XOR; with ``pretrained=True`` (the default)
  it loads the weights in ``xor_mlp.pt``, written by ``make_weights.py`` with engine.save.
* ``linear_regressor``: a fresh, untrained ``nn.Linear`` of any size.
"""
import os

import engine as torch

dependencies = ["numpy"]   # engine.hub checks these before calling an entry point

_HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHTS = os.path.join(_HERE, "xor_mlp.pt")


def _xor_architecture():
    return torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def xor_mlp(pretrained=True):
    """A 2-8-2 MLP (Linear, Tanh, Linear) whose two logits say whether x[0] XOR x[1].

    pretrained (bool): load the trained weights shipped in xor_mlp.pt (default True).
    """
    model = _xor_architecture()
    if pretrained:
        model.load_state_dict(torch.load(WEIGHTS, map_location="cpu"))
    return model


def linear_regressor(in_features=3, out_features=1, seed=0):
    """An untrained nn.Linear(in_features, out_features), initialised from manual_seed(seed)."""
    torch.manual_seed(seed)
    return torch.nn.Linear(in_features, out_features)
