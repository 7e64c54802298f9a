"""``engine.autograd.gradcheck``: autograd's derivatives against finite differences, as PyTorch's.

NOTE [ Gradcheck ]
1. Only tensor inputs with ``requires_grad=True`` are checked. One that is not float64 gets
   PyTorch's warning (a central difference with eps=1e-6 in float32 is mostly rounding error);
   an input with a zero stride in a dimension of size > 1 (``expand``) is refused, as PyTorch
   refuses it, since one memory cell would stand for several elements.
2. A Jacobian is a matrix per (input, output) pair laid out as PyTorch prints it: one row per
   input element, one column per output element (both flattened), so row k of the numerical
   matrix is d output / d x_k.
3. Numerical: row k is (f(x + eps e_k) - f(x - eps e_k)) / (2 eps). Each evaluation gets a new
   perturbed copy of the input (a leaf with the input's requires_grad, so a function that calls
   autograd.grad itself still works); the caller's tensors are never written.
4. Analytical: column j is one backward (``autograd.grad``) seeded with a one-hot cotangent for
   output element j. Everything is computed twice; the two must agree within ``nondet_tol``
   ("Backward is not reentrant").
5. ``fast_mode=True`` is PyTorch's random projection: unit vectors u (one per input) and v (one
   per output) from a private ``engine.Generator`` (the user's RNG is untouched); one central
   difference along u gives J u, one backward seeded with v gives v^T J, and v . (J u) must match
   (v^T J) . u with ``atol`` scaled by sum(u) * sum(v). On a mismatch the message adds the
   slow-mode Jacobians of the failing pair.
6. After the Jacobians (when some output is differentiable): zero cotangents must give zero
   gradients of the input's dtype and shape, and with ``check_undefined_grad`` a backward in
   which no gradient reaches the outputs (all, then one at a time) must give None or zeros.
7. ``gradgradcheck`` is gradcheck of (inputs, grad_outputs) -> autograd.grad(func(inputs),
   inputs, grad_outputs, create_graph=True): the second derivatives, and the derivative with
   respect to grad_outputs (when they require grad).
8. glassgrad has no forward-mode AD and no vmap: ``check_forward_ad``, ``check_batched_grad``,
   ``check_batched_forward_grad`` and ``check_fwd_over_rev`` raise NotImplementedError when True.
   There are no complex dtypes and no sparse layouts, so ``masked`` changes nothing.
"""
from __future__ import annotations

import warnings

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """A gradient check failed (raised by gradcheck/gradgradcheck unless raise_exception=False)."""


_FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_FAST_FAIL_SLOW_OK_MSG = """Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`"""


# ---- small helpers --------------------------------------------------------------------------------

def _E():
    from .. import functional as E
    return E


def _is_tensor(x) -> bool:
    from ..core.tensor import Tensor
    return isinstance(x, Tensor)


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float(t) -> bool:
    return _is_tensor(t) and t.dtype.is_floating_point


def _differentiable_outputs(out) -> tuple:
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.requires_grad)


def _checked_indices(inputs) -> list:
    """Positions of the inputs gradcheck differentiates (tensors that require grad)."""
    return [i for i, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]


def _mismatch_msg(analytical, numerical, output_idx: int, input_idx: int) -> str:
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


def _allclose(a, b, rtol, atol) -> bool:
    E = _E()
    from ..backend.dtypes import promote_types
    dt = promote_types(a.dtype, b.dtype)
    return bool(E.allclose(a.to(dtype=dt), b.to(device=a.device, dtype=dt), rtol, atol))


def _check_inputs(inputs) -> None:
    """NOTE [ Gradcheck ] rule 1."""
    E = _E()
    any_checked = False
    for idx, t in enumerate(inputs):
        if not (_is_tensor(t) and t.requires_grad):
            continue
        if t.dtype != E.float64:
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                          "complex. This check will likely fail if all the inputs are not of double precision "
                          "floating point or complex. ", stacklevel=4)
        if not all(st > 0 or sz <= 1 for st, sz in zip(t.stride(), t.shape)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                               "that are non-overlapping to be able to compute the numerical gradients correctly. "
                               "You should call .contiguous on the input before passing it to gradcheck.")
        any_checked = True
    if not any_checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them "
                         "have requires_grad=True.")


# ---- numerical side -------------------------------------------------------------------------------

def _shifted(t, direction):
    """A new leaf: ``t + direction`` (direction has t's shape), with t's requires_grad (NOTE rule 3)."""
    from ..core import grad_mode
    with grad_mode.no_grad():
        out = t.detach() + direction
    return out.requires_grad_(t.requires_grad)


def _evaluate(func, inputs, idx, replacement) -> tuple:
    """func's outputs (detached copies) with ``inputs[idx]`` replaced."""
    from ..core import grad_mode
    args = list(inputs)
    args[idx] = replacement
    outs = _as_tuple(func(*args))
    with grad_mode.no_grad():
        return tuple(o.detach().clone() if _is_tensor(o) else o for o in outs)


def _same_kind(a, b, eps, where: str = "") -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are perturbed "
                             f"{where}by {eps}, but got: shapes {a.shape} and {b.shape}.")
    if a.dtype != b.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
                             f"{where}by {eps}, but got: dtypes {a.dtype} and {b.dtype}.")


def _directional(func, inputs, idx, direction, eps, where: str = "") -> list:
    """(f(x + d) - f(x - d)) / (2 eps), flattened, for each floating-point output of func."""
    from ..core import grad_mode
    x = inputs[idx]
    lo = _evaluate(func, inputs, idx, _shifted(x, -direction))
    hi = _evaluate(func, inputs, idx, _shifted(x, direction))
    cols = []
    with grad_mode.no_grad():
        for a, b in zip(lo, hi):
            if not _is_float(a):
                cols.append(None)
                continue
            _same_kind(a, b, eps, where)
            cols.append(((b - a) / (2 * eps)).reshape(-1))
    return cols


def _numerical_jacobians(func, inputs, idx, eps) -> list:
    """One (x.numel(), out.numel()) matrix per output of func (None for non-float outputs)."""
    E = _E()
    from ..core import grad_mode
    x = inputs[idx]
    n = x.numel()
    rows = []
    for k in range(n):
        with grad_mode.no_grad():
            step = E.zeros(n, dtype=x.dtype, device=x.device)
            step[k] = eps
            step = step.reshape(x.shape)
        where = f"on index {tuple(_unravel(k, tuple(x.shape)))} "
        rows.append(_directional(func, inputs, idx, step, eps, where))
    outs = _as_tuple(func(*inputs)) if n == 0 else None
    n_outs = len(rows[0]) if rows else len(outs)
    jacs = []
    with grad_mode.no_grad():
        for j in range(n_outs):
            if n == 0:
                o = outs[j]
                jacs.append(E.zeros((0, o.numel()), dtype=o.dtype, device=o.device) if _is_float(o) else None)
            elif rows[0][j] is None:
                jacs.append(None)
            else:
                jacs.append(E.stack([r[j] for r in rows], dim=0))
    return jacs


def _unravel(k: int, shape: tuple) -> list:
    idx = []
    for size in reversed(shape):
        idx.append(k % size)
        k //= size
    return list(reversed(idx))


# ---- analytical side ------------------------------------------------------------------------------

def _vjp(output, diff_inputs, cotangent) -> tuple:
    from . import grad
    return grad(output, diff_inputs, cotangent, retain_graph=True, allow_unused=True)


def _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes) -> list:
    """One (x.numel(), output.numel()) matrix per checked input (NOTE [ Gradcheck ] rule 4)."""
    E = _E()
    from ..core import grad_mode
    diff = [inputs[i] for i in _checked_indices(inputs)]
    m = output.numel()

    def once():
        cols = [[] for _ in diff]
        sizes_ok = types_ok = True
        for j in range(m):
            with grad_mode.no_grad():
                seed = E.zeros(m, dtype=output.dtype, device=output.device)
                seed[j] = 1.0
                seed = seed.reshape(output.shape)
            grads = _vjp(output, diff, seed)
            with grad_mode.no_grad():
                for c, g, x in zip(cols, grads, diff):
                    if g is None:
                        c.append(E.zeros(x.numel(), dtype=x.dtype, device=x.device))
                        continue
                    if tuple(g.shape) != tuple(x.shape):
                        sizes_ok = False
                    elif g.dtype != x.dtype:
                        types_ok = False
                    if g.numel() != x.numel():
                        raise GradcheckError("Analytical gradient has incorrect size")
                    c.append(g.detach().reshape(-1).to(dtype=x.dtype))
        with grad_mode.no_grad():
            jacs = [E.stack(c, dim=1) if c else E.zeros((x.numel(), 0), dtype=x.dtype, device=x.device)
                    for c, x in zip(cols, diff)]
        return jacs, sizes_ok, types_ok

    first, sizes_ok, types_ok = once()
    second, _, _ = once()
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for a, b in zip(first, second):
        if a.numel() and float((a - b).abs().max()) > nondet_tol:
            raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and "
                                 "grad_output multiple times gives different values, although analytical gradient "
                                 f"matches numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
                                 + _FAILED_NONDET_MSG)
    return first


# ---- the two modes --------------------------------------------------------------------------------

def _slow_check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol) -> bool:
    checked = _checked_indices(inputs)
    all_out = _as_tuple(func_out)
    diff_pos = [k for k, o in enumerate(all_out) if _is_tensor(o) and o.requires_grad]
    numerical = [_numerical_jacobians(func, inputs, i, eps) for i in checked]   # [input][any output]
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if jac is not None and bool((jac != 0).sum() > 0):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    for j, (o, pos) in enumerate(zip(outputs, diff_pos)):
        analytical = _analytical_jacobians(inputs, o, nondet_tol, check_grad_dtypes)
        for i, a in enumerate(analytical):
            n = numerical[i][pos]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_msg(a, n, j, i))
    return True


def _unit_vector(t, generator):
    """A random non-negative vector of norm 1 with t.numel() elements, t's dtype and device."""
    E = _E()
    vec = E.rand(t.numel(), generator=generator).to(device=t.device, dtype=t.dtype)
    return vec / vec.norm()


def _fast_check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol) -> bool:
    """NOTE [ Gradcheck ] rule 5."""
    from ..random import Generator
    from ..core import grad_mode
    checked = _checked_indices(inputs)
    all_out = _as_tuple(func_out)
    diff_pos = [k for k, o in enumerate(all_out) if _is_tensor(o) and o.requires_grad]
    gen = Generator()
    us = [_unit_vector(inputs[i], gen) for i in checked]
    vs = [_unit_vector(o, gen) for o in outputs]
    ju = [_directional(func, inputs, i, (eps * u).reshape(inputs[i].shape), eps) for i, u in zip(checked, us)]
    if not outputs:
        for per_input in ju:
            for col in per_input:
                if col is not None and col.numel() and float(col.abs().max()) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    diff = [inputs[i] for i in checked]
    for j, (o, v, pos) in enumerate(zip(outputs, vs, diff_pos)):
        seed = v.reshape(o.shape)
        first = _vjp(o, diff, seed)
        second = _vjp(o, diff, seed)
        with grad_mode.no_grad():
            for g, g2, x in zip(first, second, diff):
                if g is None:
                    continue
                if g.numel() != x.numel():
                    raise GradcheckError("Analytical gradient has incorrect size")
                if g.dtype != x.dtype and check_grad_dtypes:
                    raise GradcheckError("Gradient has dtype mismatch")
                if g.numel() and float((g - g2).abs().max()) > nondet_tol:
                    raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and "
                                         "grad_output multiple times gives different values, although analytical "
                                         "gradient matches numerical gradient.The tolerance for nondeterminism was "
                                         f"{nondet_tol}." + _FAILED_NONDET_MSG)
        for i, (g, u, x) in enumerate(zip(first, us, diff)):
            with grad_mode.no_grad():
                a = (g.detach().reshape(-1).to(dtype=u.dtype) * u).sum() if g is not None else (u * 0).sum()
                n = (v.to(dtype=ju[i][pos].dtype) * ju[i][pos]).sum()
                tol = atol * float(u.sum()) * float(v.sum())
            if not _allclose(a, n, rtol, tol):
                raise GradcheckError(_mismatch_msg(a, n, j, i) + _slow_details(func, inputs, outputs, diff_pos,
                                                                               i, j, rtol, atol, eps))
    return True


def _slow_details(func, inputs, outputs, diff_pos, i, j, rtol, atol, eps) -> str:
    """The slow-mode Jacobians of the failing (output j, input i) pair, for the fast-mode message."""
    idx = _checked_indices(inputs)[i]
    n = _numerical_jacobians(func, inputs, idx, eps)[diff_pos[j]]
    a = _analytical_jacobians(inputs, outputs[j], float("inf"), False)[i]
    max_diff = (n - a.to(dtype=n.dtype)).abs().max()
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
           "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
           "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {n}\nAnalytical:\n{a}\n\n"
           f"The max per-element difference (slow mode) is: {max_diff}.\n")
    if _allclose(a, n, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK_MSG
    return msg


# ---- the checks that follow the Jacobians ---------------------------------------------------------

def _check_backward_scales_with_grad_output(outputs, inputs) -> None:
    """Zero cotangents must give zero gradients of the input's dtype and shape (NOTE rule 6)."""
    E = _E()
    from . import grad
    diff = [inputs[i] for i in _checked_indices(inputs)]
    grads = grad(outputs, diff, [E.zeros_like(o) for o in outputs], allow_unused=True)
    for g, x in zip(grads, diff):
        if g is None:
            continue
        if not bool((g == 0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.device != x.device:
            raise GradcheckError("grad is incorrect device")
        if tuple(g.shape) != tuple(x.shape):
            raise GradcheckError("grad is incorrect size")


def _undefined_grad_fn():
    """A Function that passes its input through and sends back no gradient at all (undefined)."""
    from .function import Function

    class UndefinedGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    return UndefinedGrad.apply


def _check_undefined_grad(func, inputs) -> None:
    """Backward must cope when no gradient arrives for the outputs (NOTE rule 6)."""
    E = _E()
    from . import grad
    diff = [inputs[i] for i in _checked_indices(inputs)]
    undefined = _undefined_grad_fn()

    def bc_warning():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by "
                      "default, but it may break existing callers of this function. If this is true for you, you "
                      'can call this function with "check_undefined_grad=False" to disable the feature',
                      stacklevel=4)

    def check(outs):
        try:
            grads = grad(outs, diff, [E.zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            bc_warning()
            raise GradcheckError('Expected backward function to handle undefined output grads. Please look at '
                                 '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"') from e
        for g in grads:
            if g is not None and not bool((g == 0).all()):
                bc_warning()
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                     'undefined or zero. Please look at "Notes about undefined output gradients" in '
                                     '"tools/autograd/derivatives.yaml"')

    first = [undefined(o) for o in _differentiable_outputs(func(*inputs))]
    check(first)
    if len(first) > 1:
        for k in range(len(first)):
            outs = _differentiable_outputs(func(*inputs))
            check([undefined(o) if i == k else o for i, o in enumerate(outs)])


# ---- public API -----------------------------------------------------------------------------------

def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked=None) -> bool:
    """Check autograd's gradients of ``func`` at ``inputs`` against central finite differences.

    Returns True when every (output, input) Jacobian matches within ``allclose(rtol, atol)``;
    otherwise raises ``GradcheckError`` ("Jacobian mismatch for output j with respect to input i,
    numerical:... analytical:...") or returns False with ``raise_exception=False``. See
    NOTE [ Gradcheck ]: ``fast_mode`` is PyTorch's random projection; forward-mode and vmap
    checks are not available in glassgrad.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck(check_forward_ad=True): glassgrad has no forward-mode AD; check the "
                                  "backward (reverse) mode with check_backward_ad=True")
    if check_batched_grad:
        raise NotImplementedError("gradcheck(check_batched_grad=True): glassgrad has no vmap, so there are no "
                                  "batched gradients to check; call gradcheck with check_batched_grad=False")
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                          fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               fast_mode) -> bool:
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    check = _fast_check if fast_mode else _slow_check
    check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if outputs:
        _check_backward_scales_with_grad_output(outputs, inputs)
        if check_undefined_grad:
            _check_undefined_grad(func, inputs)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of autograd.grad(func(inputs), inputs, grad_outputs,
    create_graph=True) with respect to the inputs and the grad_outputs (NOTE [ Gradcheck ] rule 7).

    Without ``grad_outputs``, random ones in [-1, 1) (requiring grad) are drawn from a private
    generator; ``gen_non_contig_grad_outputs`` has no effect (glassgrad's gradients are contiguous).
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    if check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck(check_fwd_over_rev=True): glassgrad has no forward-mode AD; "
                                  "check reverse-over-reverse with check_rev_over_rev=True")
    E = _E()
    from ..random import Generator
    from . import grad
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        gen = Generator()
        made = []
        for o in _differentiable_outputs(func(*tupled)):
            dt = o.dtype if o.dtype.is_floating_point else E.float64
            r = E.rand(tuple(o.shape), generator=gen).to(device=o.device, dtype=dt) * 2 - 1
            made.append(r.requires_grad_(True))
        grad_outs = tuple(made)
    else:
        grad_outs = _as_tuple(grad_outputs)
    n_go = len(grad_outs)
    wants_input = {i for i, x in enumerate(tupled) if _is_tensor(x) and x.requires_grad}
    wants_go = {i for i, x in enumerate(grad_outs) if _is_tensor(x) and x.requires_grad}

    def first_derivative(*args):
        ins = tuple(x.requires_grad_() if i in wants_input else x for i, x in enumerate(args[:len(args) - n_go]))
        outs = _differentiable_outputs(func(*ins))
        gos = tuple(x.requires_grad_() if i in wants_go else x for i, x in enumerate(args[len(args) - n_go:]))
        diff_ins = tuple(x for i, x in enumerate(ins) if i in wants_input)
        grads = grad(outs, diff_ins, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, tupled + grad_outs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_backward_ad=check_rev_over_rev, masked=masked)


gradcheck.GradcheckError = GradcheckError   # engine.autograd.gradcheck is the function, as in PyTorch
