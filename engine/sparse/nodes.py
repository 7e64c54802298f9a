"""The graph nodes of the sparse ops, and how a sparse tensor's gradient travels.

NOTE [ Sparse gradients in flight ]
1. The gradient of a sparse tensor S travels through backward as a dense tensor shaped like
   S's values, ``(nnz, *dense_shape)``: entry k is the gradient at S's index k. It is a sparse
   gradient with S's own pattern, carried without its indices, so the engine adds two of them
   as it adds any two gradients, and a node that made S maps it to its inputs with no search:
   ``sparse_coo_tensor``'s node hands it on as the values' gradient, ``coalesce``'s node
   gathers it back to the uncoalesced entries.
2. Where PyTorch's formula gives a dense gradient to a sparse operand (``torch.mm``'s
   MmBackward0), the node sends that dense gradient to a leaf (its ``.grad`` is dense, as in
   PyTorch) and the entries at S's indices to a node (what that node keeps of it anyway).
3. A sparse leaf that requires grad has its own sink node, named AccumulateGrad as PyTorch's:
   it builds the sparse ``.grad`` from rule 1's entries (the leaf's distinct indices, in a new
   indices tensor, as PyTorch makes it), or takes rule 2's dense gradient; a second gradient
   adds in (sparse + sparse stays sparse; anything with a dense one is dense).
4. The nodes compute in arrays; ``create_graph=True`` through them is refused.
5. A node saving a sparse tensor keeps its two storages: ``<name>`` (values) and
   ``<name>_indices``; ``grad_fn._saved_<name>`` gives the sparse tensor back.
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import events as _events
from ..core.graph import Node, NodeTypes, edge_of, node_info
from ..core.tensor import Tensor, tensor_info
from . import kernels as K
from .tensor import SparseCooTensor

_TYPES: dict = {}    # a SparseNode class -> its NodeTypes


class SparseNode(Node):
    """A node of a sparse op: handed gradient tensors, computing in arrays (NOTE 4)."""

    takes_tensors = True

    def __init__(self, name: str, inputs):
        super().__init__()
        self._name = name
        self.__class__ = _TYPES.setdefault(type(self), NodeTypes(type(self)))[name]   # NOTE [ Node types ] (core/graph.py)
        self.next_functions = tuple(sparse_edge(t) if isinstance(t, Tensor) else (None, 0) for t in inputs)
        self._sparse_saved = ()

    def save_sparse(self, name: str, sp: SparseCooTensor):
        """NOTE 5."""
        self.save(name, sp._values_t)
        self.save(name + "_indices", sp._indices_t)
        self._sparse_saved += ((name, sp._data.shape, sp._coalesced),)

    def __getattr__(self, item):
        for name, shape, coalesced in self.__dict__.get("_sparse_saved", ()):
            if item == "_saved_" + name:
                return SparseCooTensor._make(self.saved(name + "_indices"), self.saved(name), shape, coalesced)
        return super().__getattr__(item)

    def apply(self, grads, F=None):
        if F is not None:
            raise NotImplementedError("glassgrad does not implement create_graph=True through sparse ops yet")
        g = grads[0]
        return self.backward(g._data if isinstance(g, Tensor) else g)


def sparse_edge(t):
    """``edge_of`` for any tensor; a sparse leaf that requires grad gets its own sink (NOTE 3)."""
    if not isinstance(t, SparseCooTensor):
        return edge_of(t)
    if t._grad_fn is not None or not t._requires_grad:
        return (t._grad_fn, t._output_nr)
    sink = t._sink() if t._sink is not None else None
    if sink is None:
        sink = SparseAccumulateGrad(t)
        t._sink = weakref.ref(sink)
        if _events.active:
            _events.emit("leaf", node=sink.id, name="AccumulateGrad", tensor=tensor_info(t))
    return (sink, 0)


class SparseAccumulateGrad(Node):
    """The sink of a sparse leaf: makes and adds into its ``.grad`` (NOTE 3)."""

    _name = "AccumulateGrad"     # name() is PyTorch's qualified one, as the dense one's
    takes_tensors = True

    def __init__(self, variable):
        super().__init__()
        self.variable = variable

    def apply(self, grads, F=None):
        g = grads[0]
        if g is None:
            return []
        var = self.variable
        arr = g._data
        if arr.shape == tuple(var.shape) and arr.ndim != var._values_t.ndim:   # rule 2's dense gradient
            new = Tensor._wrap(np.array(arr), base="gradient")
        else:
            new = _sparse_grad(var, arr)
        old = var._grad
        if old is not None:
            if isinstance(old, SparseCooTensor) and isinstance(new, SparseCooTensor):
                new = _sum_sparse(old, new)
            else:
                new = Tensor._wrap(_dense(old) + _dense(new), base="gradient")
        var._grad = new
        if _events.active:
            _events.emit("accumulate", node=self.id, tensor=var._id, storage=new._storage.id,
                         bytes=new._storage.nbytes)
        return []


def _dense(t) -> np.ndarray:
    if isinstance(t, SparseCooTensor):
        return K.to_dense_array(t._indices_t._data, t._values_t._data, t.shape)
    return t._data


def _sparse_grad(var, entries):
    """Rule 3: the gradient at ``var``'s distinct indices, in new indices and values tensors."""
    idx = var._indices_t._data
    keep = K.first_of_each(idx, var.shape[:idx.shape[0]])
    indices = Tensor._wrap(np.ascontiguousarray(idx[:, keep]), base="gradient")
    values = Tensor._wrap(np.ascontiguousarray(entries[keep]), base="gradient")
    return SparseCooTensor._make(indices, values, var.shape, False)


def _sum_sparse(a, b):
    """``a + b`` of two sparse gradients: the entries of both, coalesced (sums repeats)."""
    idx = np.concatenate([a._indices_t._data, b._indices_t._data], axis=1)
    val = np.concatenate([a._values_t._data, b._values_t._data], axis=0)
    idx, val, _ = K.coalesce_arrays(idx, val, a.shape)
    return SparseCooTensor._make(Tensor._wrap(idx, base="gradient"), Tensor._wrap(val, base="gradient"),
                                 a.shape, True)


def _info(t) -> dict:
    """``tensor_info``; a sparse tensor's ``bytes`` are its indices' and values' (not its dense size)."""
    info = tensor_info(t)
    if isinstance(t, SparseCooTensor):
        info["bytes"] = t._indices_t.nbytes + t._values_t.nbytes
    return info


def record_op(op: str, inputs, output, node) -> None:
    """The ``op`` event of a sparse op, as every op has one (the inputs name the indices' storages)."""
    if _events.active:
        f, line = _events.user_frame()
        _events.emit("op", op=op, inputs=[_info(a) for a in inputs], output=_info(output),
                     node=node_info(node) if node is not None else None, file=f, line=line,
                     region=_events.region())


# NOTE [ Node types ] 1 (core/graph.py): a sparse leaf's sink is PyTorch's <class 'AccumulateGrad'> too
SparseAccumulateGrad.__name__ = SparseAccumulateGrad.__qualname__ = "AccumulateGrad"
SparseAccumulateGrad.__module__ = "builtins"
