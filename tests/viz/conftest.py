"""Small traces recorded for the picture tests."""
import pytest

import engine as torch
from engine import nn


@pytest.fixture
def sincos():
    """x.sin().cos().sum() and its backward; x made before recording."""
    x = torch.randn(3, requires_grad=True)
    with torch.record() as tr:
        y = x.sin().cos().sum()
        y.backward()
    return tr


@pytest.fixture
def mlp_trace():
    """A 2-layer MLP (Linear-ReLU-Linear) with cross_entropy, backward and an SGD step; model made before."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(5, 8), torch.randint(0, 4, (5,))
    with torch.record() as tr:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    return tr, model


def _stack_trace(n_blocks=4):
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(n_blocks)])
    x = torch.randn(2, 4)
    with torch.record() as tr:
        loss = model(x).sum()      # bound: the graph lives on after backward (NOTE [ One trace model ] 9)
        loss.backward()
    return tr


@pytest.fixture
def stack_trace():
    """A factory: n alike blocks (Linear + Tanh) in a Sequential, forward and backward."""
    return _stack_trace


def _ckpt_trace(use_reentrant):
    from engine.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
    list(model.named_parameters())  # name the parameters ("2.weight") before calling children
    x = torch.randn(5, 8)

    def mid(h):
        return torch.relu(model[2](torch.relu(h)))

    with torch.record() as tr:
        h = checkpoint(mid, model[0](x), use_reentrant=use_reentrant)
        loss = model[4](h).pow(2).mean()
        loss.backward()
    return tr


@pytest.fixture
def ckpt_trace():
    """A factory: an MLP whose middle Linear+ReLUs run under checkpoint (reentrant or not)."""
    pytest.importorskip("engine.utils.checkpoint")
    return _ckpt_trace
