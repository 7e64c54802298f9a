"""A view's grad_fn after its base, or another view of it, changed in place: rebuilt when read, as
PyTorch's (``Tensor.grad_fn`` in core/tensor.py calls :func:`view_grad_fn` for such a view).

NOTE [ A view's grad_fn after an in-place op ]
1. A view keeps the version of its storage at which its node was made (``_view_version``, set
   when the view is made and whenever its ``grad_fn`` is set) and whether it was made in no_grad
   mode (``_no_grad_view``).
2. Reading ``grad_fn`` (as an op taking the view as input, ``backward`` and ``is_leaf`` do)
   compares that version with the current one. Once an in-place op changed the base or another
   view of it, the view's node is out of date: after ``y = x * 1; v = y[0]; y.mul_(2)``, v's
   SelectBackward0 would send v's gradient into y's history from before the ``mul_``.
3. So the node is rebuilt from the base's current history: an AsStridedBackward0 (NOTE [ Strided
   views ] 3-4 in strided.py) with the base's edge, reading the view's elements out of the base
   by their storage positions. The gradient then flows through the in-place op: ``x.grad`` is
   ``[2., 0.]`` above, and after ``y.sub_(w)`` the gradient reaches ``w`` through the view.
4. Nothing to rebuild: a view that is not floating point (``view(torch.int64)``) and a view
   without a node whose base does not require grad.
5. Refused, with PyTorch's errors, once grad mode is on: a view made in no_grad mode of a base
   that requires grad, and an output of split/chunk/unbind (NOTE [ Several outputs ] 4 in
   core/dispatch.py). With grad mode off such a view keeps its node, as PyTorch's ops without
   grad never ask for it.
6. retain_grad follows the view to its new node.
7. An in-place op's node takes its edges after the write (core/dispatch.py), so an input that is
   a view of the written tensor (``y[:1] = y[1:]``, ``y.add_(y.t())``) would look out of date
   there. As in PyTorch, where edges are taken before the write, such an input keeps its node:
   core/inplace.py remembers the last write (``writing``), and a view that was current just
   before it is left as it is while the base still has the node it had then.
"""
from __future__ import annotations

from ...core import grad_mode, inplace
from ...core.dispatch import OP_TYPES
from ...core.inplace import _move_retain_grad
from ...core.tensor import Tensor, version_counter
from .strided import AS_STRIDED, geometry

_REFUSED_MODIFIED = "its base or another view of its base has been modified inplace"


def _refusal(view, fn) -> str:
    if fn is None:
        return (f"A view was created in no_grad mode and {_REFUSED_MODIFIED} with grad mode enabled. Given that "
                "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
                "both the view and the inplace either both inside the no_grad block (if you don't want the inplace "
                "to be tracked) or both outside (if you want the inplace to be tracked).")
    return (f"Output {view._output_nr} of {fn.name()[:-len('Backward0')]} is a view and {_REFUSED_MODIFIED}. This "
            "view is the output of a function that returns multiple views. Such functions do not allow the output "
            "views to be modified inplace. You should replace the inplace operation by an out-of-place one.")


def view_grad_fn(view):
    """``view.grad_fn`` once its storage's version moved past its node's (the NOTE above)."""
    fn, base = view._grad_fn, view._base
    if inplace.writing is not None:                                                    # rule 7
        (counter, version), before = inplace.writing
        vc = version_counter(view)
        if (id(vc) == counter and vc.version == version and view._view_version == version - 1
                and (before() if before is not None else None) is base._grad_fn):
            return fn
    if not view.dtype.is_floating_point or (fn is None and not base.requires_grad):     # rule 4
        view._view_version = version_counter(view).version
        return fn
    if (fn is None and view._no_grad_view) or getattr(fn, "multi_view", False):         # rule 5
        if not grad_mode.is_grad_enabled():
            return fn
        raise RuntimeError(_refusal(view, fn))
    size, stride, offset = geometry(view)
    node = OP_TYPES[AS_STRIDED.node](AS_STRIDED, [base], (base.requires_grad,),
                                     {"size": size, "stride": stride, "storage_offset": offset, "self_geometry": geometry(base)})
    old_nr = view._output_nr
    view.grad_fn, view._output_nr = node, 0          # stamps the version (rule 1)
    _move_retain_grad(view, fn, old_nr)              # rule 6
    return node


Tensor._view_history = view_grad_fn
