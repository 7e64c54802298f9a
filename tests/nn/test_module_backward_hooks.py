"""Module.register_full_backward_hook / register_full_backward_pre_hook (NOTE [ Module backward hooks ]),
and the per-Function node class of custom autograd Functions."""
import pytest

import engine
from engine import nn


def _linear():
    lin = nn.Linear(3, 2)
    with engine.no_grad():
        lin.weight.copy_(engine.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]))
        lin.bias.zero_()
    return lin


def test_hooks_see_grad_output_then_grad_input():
    lin, log = _linear(), []
    lin.register_full_backward_hook(lambda m, gi, go: log.append(("hook", [g.tolist() for g in gi],
                                                                    [g.tolist() for g in go])))
    lin.register_full_backward_pre_hook(lambda m, go: log.append(("pre", [g.tolist() for g in go])))
    x = engine.tensor([[1.0, 1.0, 1.0]], requires_grad=True)
    y = lin(x)
    assert y.grad_fn.name() == "BackwardHookFunctionBackward"
    assert y.grad_fn.next_functions[0][0].name() == "AddmmBackward0"
    (y * engine.tensor([[2.0, 3.0]])).sum().backward()
    assert log == [("pre", [[[2.0, 3.0]]]), ("hook", [[[-1.0, 5.5, 12.0]]], [[[2.0, 3.0]]])]
    assert x.grad.tolist() == [[-1.0, 5.5, 12.0]]


def test_returned_values_replace_the_gradients():
    lin = _linear()
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0,))
    x = engine.tensor([[1.0, 1.0, 1.0]], requires_grad=True)
    lin(x).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0]]
    lin2 = _linear()
    lin2.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
    lin2(x).sum().backward()
    assert lin2.bias.grad.tolist() == [10.0, 10.0]


def test_no_input_needs_grad_fires_at_the_outputs_with_a_warning():
    lin, log = _linear(), []
    handle = lin.register_full_backward_hook(lambda m, gi, go: log.append((gi, [g.tolist() for g in go])))
    with pytest.warns(UserWarning, match="^Full backward hook is firing when gradients are computed with respect "
                                         "to module outputs since no inputs require gradients"):
        y = lin(engine.ones(1, 3))
    (y * 2).sum().backward()
    assert log == [((None,), [[[2.0, 2.0]]])]
    handle.remove()
    assert not lin._backward_hooks and lin(engine.ones(1, 3)).grad_fn.name() == "AddmmBackward0"


def test_wrong_number_of_returned_gradients_is_pytorchs_error():
    lin = _linear()
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="^Backward hook returned an invalid number of grad_input, got 2, but "
                                           "expected 1$"):
        lin(engine.ones(1, 3, requires_grad=True)).sum().backward()


def test_custom_function_nodes_are_named_after_the_function():
    class Exp(engine.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            return i.exp()

        @staticmethod
        def backward(ctx, g):
            return g

    y = Exp.apply(engine.ones(1, requires_grad=True))
    assert type(y.grad_fn).__name__ == "ExpBackward" and y.grad_fn.name() == "ExpBackward"
    assert type(y.grad_fn) is Exp._backward_cls
    assert isinstance(y.grad_fn, engine.autograd.function.BackwardCFunction)
