"""``engine.autograd``: backward, grad, Function, grad modes and graph utilities."""
from __future__ import annotations

import contextlib

from ..core import grad_mode
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable
from ..core.grad_mode import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled
from . import graph  # noqa: F401  (engine.autograd.graph, as torch.autograd.graph)
from ..core.backward import _as_list, _make_grads, backward, run_backward  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # engine.autograd.gradcheck: the function, as in PyTorch
from . import functional  # noqa: F401  (engine.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp)

__all__ = ["backward", "grad", "Function", "FunctionCtx", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "graph", "set_detect_anomaly", "detect_anomaly",
           "gradcheck", "gradgradcheck", "functional", "Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from ..core.tensor import Tensor
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """The deprecated wrapper: every tensor is a Variable, and ``Variable(t, requires_grad=...)``
    returns a new leaf sharing ``t``'s storage."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        from ..core.tensor import Tensor
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)



def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    from .. import functional as E
    gos = _as_list(grad_outputs)
    if grad_outputs is None or not gos or any(g is None for g in gos):
        raise RuntimeError("grad_outputs must be given (one batched tensor per output) when is_grads_batched=True")
    from ..backend.size import Size
    for i, (g, o) in enumerate(zip(gos, _as_list(outputs))):
        if tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {Size(g.shape[1:])} and "
                f"output[{i}] has a shape of {o.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
    n = gos[0].shape[0]
    if any(g.shape[0] != n for g in gos):
        raise RuntimeError("If `is_grads_batched=True`, every grad_output must have the same size in its first "
                           "(batch) dimension")
    keep = create_graph if retain_graph is None else retain_graph
    rows = [grad(outputs, inputs, [g[k] for g in gos], retain_graph=True if k < n - 1 else keep,
                 create_graph=create_graph, allow_unused=allow_unused, materialize_grads=materialize_grads)
            for k in range(n)]
    n_in = len(_as_list(inputs))
    return tuple(None if not rows or rows[0][j] is None else E.stack([r[j] for r in rows]) for j in range(n_in))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated).

    ``is_grads_batched``: the first dim of each ``grad_outputs`` tensor is a batch of cotangents;
    one backward runs per row (PyTorch vectorizes this with vmap) and the results are stacked.
    """
    from .. import functional as E
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, t in enumerate(outs):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors does not require grad")
    grads = _make_grads(outs, _as_list(grad_outputs), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    captured = run_backward(outs, grads, retain_graph=retain_graph, create_graph=create_graph,
                            inputs=ins, accumulate=False, allow_unused=True)
    result = []
    for i, (c, t) in enumerate(zip(captured, ins)):
        if c is None:
            if materialize_grads:
                c = E.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        elif not create_graph:
            c = c.detach()
        result.append(c)
    return tuple(result)


@contextlib.contextmanager
def detect_anomaly(check_nan=True):
    yield


class set_detect_anomaly:
    def __init__(self, mode, check_nan=True):
        self.mode = mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass
