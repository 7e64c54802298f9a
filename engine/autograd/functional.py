"""``engine.autograd.functional``: jacobian, hessian, vjp, jvp, hvp and vhp of a function, as PyTorch's.

NOTE [ Derivatives of a function ]
1. Every function takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors) and answers in
   the same structure: a Tensor for a Tensor, a tuple for a tuple (for jacobian and hessian,
   nested: outputs outside, inputs inside).
2. The inputs are never differentiated in place: each is replaced by a new tensor object (a
   detached leaf, or ``x.view_as(x)`` under ``create_graph=True`` so the result stays connected
   to the caller's graph). Tensors that ``func`` captures from outside are not differentiated.
3. vjp is one backward; jacobian is one backward per output element (row by row, with or
   without ``vectorize``: glassgrad has no vmap, so the rows are always computed one by one).
4. glassgrad has no forward-mode AD. jvp and hvp use the double-backward trick, as PyTorch's do:
   g -> (dout/dx)^T g is linear in g, so backpropagating its result against v with respect to
   g gives (dout/dx) v. ``jacobian(strategy="forward-mode", vectorize=True)`` gets its
   columns the same way (PyTorch refuses forward-mode without vectorize, and so does glassgrad);
   its nested results are tuples, where PyTorch's forward-mode path happens to return lists.
5. An input that the outputs do not depend on gets zeros, or PyTorch's error with
   ``strict=True``; without ``create_graph`` the results are detached.
"""
from __future__ import annotations

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _E():
    from .. import functional as E
    return E


def _is_tensor(x) -> bool:
    from ..core.tensor import Tensor
    return isinstance(x, Tensor)


def _as_tuple(inp, arg_name, fn_name):
    """(was it a tuple, the tuple of Tensors), with PyTorch's TypeError for anything else."""
    is_tuple = isinstance(inp, tuple)
    tup = inp if is_tuple else (inp,)
    for i, el in enumerate(tup):
        if not _is_tensor(el):
            where = f"the value at index {i} has type {type(el)}" if is_tuple else \
                f"the given {arg_name} has type {type(el)}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where}.")
    return is_tuple, tup


def _unpack(res, was_tuple):
    """Undo _as_tuple on a result: ``was_tuple`` is one flag, or (outer, inner) for nested results."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(el[0] for el in res)
        return res if outer else res[0]
    return res if was_tuple else res[0]


def _prepare(inputs, create_graph, need_graph):
    """New tensor objects for the inputs (NOTE [ Derivatives of a function ] rule 2)."""
    return tuple(t.view_as(t) if (create_graph and t.requires_grad) else t.detach().requires_grad_(need_graph)
                 for t in inputs)


def _finish(tensors, create_graph):
    if not tensors or _is_tensor(tensors[0]):
        return tuple(tensors) if create_graph else tuple(t.detach() for t in tensors)
    return tuple(_finish(t, create_graph) for t in tensors)


def _validate_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            prefix = f"Entry {idx} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


def _require_grad(tensors, kind, strict):
    """strict mode: PyTorch's errors for outputs / gradients / jacobians that are constants."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is independent "
                               "of the input. This is not allowed in strict mode. You should ensure that your "
                               "function is thrice differentiable and that the hessian depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided function "
                               f"with respect to input {i} is independent of the input. This is not allowed in "
                               "strict mode. You should ensure that your function is twice differentiable and that "
                               "the jacobian depends on the inputs (this would be violated by a linear function for "
                               "example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                               "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs must "
                           "be computed in a differentiable manner from the input when running in strict mode.")


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad (None for every input when none does)."""
    from . import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                create_graph=create_graph, allow_unused=True)


_STAGE_ERRORS = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    """Replace a missing gradient by zeros shaped like ``refs[i]`` (or raise, in strict mode)."""
    E = _E()
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_ERRORS[stage].format(i=i))
            g = E.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _prepare_v(v, other, other_is_tuple, create_graph, fn_name, none_msg, none_ok):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _validate_v(v, other, other_is_tuple)
        return v
    if not none_ok:
        raise RuntimeError(none_msg)
    return None


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product, shaped like the inputs."""
    from ..core import grad_mode
    with grad_mode.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _require_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, out_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns a single Tensor with "
                       "a single element.", len(outputs) == 1 and outputs[0].numel() == 1)
    with grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled()):
        res = _zeros_for_none(_grad(outputs, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                              "back")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)


def _jvp_trick(outputs, inputs, v, create_graph, strict):
    """J v through the double-backward trick (NOTE [ Derivatives of a function ] rule 4)."""
    E = _E()
    from ..core import grad_mode
    with grad_mode.enable_grad():
        # any finite value works: the gradient is linear in it, so it never reaches the result
        dummies = tuple(E.zeros_like(o, requires_grad=True) for o in outputs)
        g_in = _grad(outputs, inputs, dummies, create_graph=True)
        _require_grad(g_in, "grad_inputs", strict)
    with grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled()):
        res = _grad(g_in, dummies, v, create_graph=create_graph)
        return _zeros_for_none(res, outputs, strict, create_graph, "back_trick")


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, shaped like the outputs."""
    from ..core import grad_mode
    with grad_mode.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, in_tuple, create_graph, "jvp",
                       "The vector v can only be None if the input to the user-provided function is a single "
                       "Tensor with a single element.", len(inputs) == 1 and inputs[0].numel() == 1)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _require_grad(outputs, "outputs", strict)
    res = _jvp_trick(outputs, inputs, v, create_graph, strict)
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: ``out.shape + inp.shape`` per (output, input) pair.

    A Tensor for one input and one output; a tuple over inputs, over outputs, or a tuple of
    tuples (outputs outside) otherwise. ``vectorize`` is accepted and computes the same rows one
    by one; ``strategy="forward-mode"`` (with vectorize=True) builds columns with the
    double-backward trick, since glassgrad has no forward-mode AD.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_by_columns(func, inputs, strict, vectorize)
    from ..core import grad_mode
    E = _E()
    with grad_mode.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _require_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        result = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.numel()):
                row = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(row, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{k}. This is not allowed in strict mode.")
                        g = E.zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                           f"{i}. This is not allowed in strict mode when create_graph=True.")
                    rows[k].append(g)
            result.append(tuple(_stack_rows(r, tuple(out.shape) + tuple(inp.shape), inp)
                                for r, inp in zip(rows, inputs)))
        return _unpack(_finish(tuple(result), create_graph), (out_tuple, in_tuple))


def _stack_rows(rows, shape, like):
    E = _E()
    if not rows:   # an output with no elements
        return E.zeros(shape, dtype=like.dtype, device=like.device)
    return E.stack(rows, dim=0).view(shape)


def _jacobian_by_columns(func, inputs, strict, vectorize):
    """jacobian(strategy="forward-mode"): one J e_k per input element, by the double-backward trick."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    E = _E()
    from ..core import grad_mode
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    with grad_mode.enable_grad():
        prepared = _prepare(inputs, False, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*prepared), "outputs of the user-provided function", "jacobian")
    cols = [[[] for _ in inputs] for _ in outputs]   # [output][input] -> list of J e_k
    for k, inp in enumerate(prepared):
        for e in range(inp.numel()):
            with grad_mode.no_grad():
                tangent = tuple(E.zeros_like(x) for x in prepared)
                tangent[k].view(-1)[e] = 1.0
            with grad_mode.enable_grad():
                outputs = _as_tuple(func(*prepared), "outputs", "jacobian")[1]
            jv = _jvp_trick(outputs, prepared, tangent, False, False)
            for i, col in enumerate(jv):
                cols[i][k].append(col.detach())
    result = []
    for i, out in enumerate(outputs):
        per_input = []
        for k, inp in enumerate(prepared):
            shape = tuple(out.shape) + tuple(inp.shape)
            if not cols[i][k] or out.numel() == 0:
                per_input.append(E.zeros(shape, dtype=out.dtype, device=out.device))
            else:   # columns are indexed by input elements: stack on the last axis
                per_input.append(E.stack([c.reshape(-1) for c in cols[i][k]], dim=1).reshape(shape))
        result.append(tuple(per_input))
    return _unpack(tuple(result), (out_tuple, in_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: ``inp_i.shape + inp_j.shape`` blocks, nested tuples for tuple inputs."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        out_is_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _require_grad(t_out, "outputs", strict)
        if out_is_tuple or not _is_tensor(out):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _require_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (in_tuple, in_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _require_grad(outputs, "outputs", strict)
    if out_tuple or not _is_tensor(outputs[0]):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return out_tuple, outputs


_V_NONE_SCALAR_INPUT = ("The vector v can only be None if the input to the user-provided function is a single "
                        "Tensor with a single element.")


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func, shaped like the inputs."""
    from ..core import grad_mode
    with grad_mode.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, in_tuple, create_graph, "vhp", _V_NONE_SCALAR_INPUT,
                       len(inputs) == 1 and inputs[0].numel() == 1)
        out_tuple, outputs = _scalar_output(func, inputs, "vhp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _require_grad(jac, "jacobian", strict)
    with grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled()):
        res = _zeros_for_none(_grad(jac, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                              "double_back")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func, shaped like the inputs (the double-backward trick)."""
    E = _E()
    from ..core import grad_mode
    with grad_mode.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, in_tuple, create_graph, "hvp", _V_NONE_SCALAR_INPUT,
                       len(inputs) == 1 and inputs[0].numel() == 1)
        out_tuple, outputs = _scalar_output(func, inputs, "hvp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _require_grad(jac, "jacobian", strict)
        dummies = tuple(E.zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _require_grad(jac, "hessian", strict)
    with grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled()):
        res = _zeros_for_none(_grad(double_back, dummies, v, create_graph=create_graph), inputs, strict,
                              create_graph, "double_back_trick")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)
