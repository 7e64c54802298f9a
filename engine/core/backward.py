"""The backward engine: a ready queue ordered by dependency counts, as PyTorch's.

NOTE [ Backward execution ]
1. From the roots, count for every reachable node how many edges point at it.
2. A node is ready when all its producers have delivered; among ready nodes the one
   created last runs first (PyTorch orders by sequence number the same way).
3. Before a node runs: its pre-hooks, the tensor hooks of its outputs and retain_grad
   see (and may replace) the incoming gradient; for ``autograd.grad`` the gradient of
   a requested non-leaf is captured here.
4. After it runs: post-hooks, then its saved tensors are released unless
   ``retain_graph``; each produced gradient is added into its consumer's buffer.
5. ``create_graph=True`` runs the formulas on Tensors (NOTE [ One formula, two
   currencies ]) so the gradients themselves have a graph.
6. AccumulateGrad adds into ``.grad`` (a new tensor when none, else in place unless
   create_graph); with ``autograd.grad`` the leaf's gradient is captured instead.
7. Gradients in flight are tensors with storages (category "other"), as in PyTorch's
   input buffers, so memory_allocated counts them: a node's outputs get new storages
   unless they share memory with its incoming gradient (then they share its storage);
   the incoming gradient is dropped right after the node ran. A new ``.grad`` takes
   over (steals) a gradient storage the engine made, when the gradient is that storage's
   whole memory, C-contiguous (the array itself, or a view of all of it such as the
   transpose of Linear's transposed weight gradient), no other leaf took it and no
   retained gradient holds it; anything else is copied, C-contiguous.
8. The direct path: a node runs with only the steps it needs (its formula on the arrays,
   rule 7's storages, rule 4's release and delivery) when the backward has no ``inputs``,
   no create_graph and no trace recorded, and the node is a plain OpNode (one output; not
   AccumulateGrad, a custom Function's, a several-output or an in-place node) with no hook
   and no retain_grad, whose incoming gradient is a tensor over a NumPy array. The order,
   the storages and every accounting call are the general path's.
"""
from __future__ import annotations

import heapq

import numpy as np

from .. import events as _events
from ..backend.device import _numpy
from ..backend.gaps import contiguous_copy, is_whole_view, owns_memory, shares_memory
from ..memory import oom as _oom
from . import grad_mode
from .dispatch import OpNode as _OpNode
from .fns import array_fns, tensor_fns
from .graph import AccumulateGrad, _task, _task_ids, edge_of
from .tensor import Tensor, _xp_of

_ndarray = np.ndarray
_may_share = np.may_share_memory
_np_xp = _np_fns = None   # NumPy's namespace and its ArrayFns, once first asked for


def _numpy_xp():
    global _np_xp, _np_fns
    _np_xp = _numpy()
    _np_fns = array_fns(_np_xp)
    return _np_xp


def _as_grad(g):
    """A gradient array as a tensor with its own storage (None and tensors as they are)."""
    return g if g is None or isinstance(g, Tensor) else Tensor._wrap(g)


def run_backward(roots, grads, retain_graph: bool, create_graph: bool, inputs=None,
                 accumulate: bool = True, allow_unused: bool = False):
    """Run backward from ``roots`` (tensors) seeded with ``grads``; returns captured input grads."""

    root_edges = []
    for t, g in zip(roots, grads):
        node, nr = edge_of(t)
        if node is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        root_edges.append((node, nr, g))

    # capture targets for autograd.grad / backward(inputs=...)
    capture = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            node, nr = edge_of(t)
            if node is not None:
                capture.setdefault((node, nr), []).append(i)

    deps, seen, needed = _plan(root_edges, capture if inputs is not None else None)

    buffers: dict = {}
    made: set = set()   # ids of gradient storages this backward created (NOTE 7)
    for node, nr, g in root_edges:
        buf = buffers.setdefault(node, {})
        buf[nr] = g if nr not in buf else _add_grads(buf[nr], g, create_graph, made)
    root_nodes = {n for n, _, _ in root_edges}
    buf = g = root_edges = None

    captured = [None] * (len(inputs) if inputs is not None else 0)
    claimed: set = set()
    ready = [(-n.id, n) for n in root_nodes if deps.get(n, 0) == 0]
    heapq.heapify(ready)
    F_tensor = tensor_fns() if create_graph else None
    phase = _events.phase() if _events.phase() == "recompute" else "backward"
    direct = needed is None and not capture and not create_graph   # NOTE 8
    if _events.active:
        _events.emit("backward_begin", roots=[t._id for t in roots], retain_graph=retain_graph,
                     create_graph=create_graph)
    task = _enter_task(inputs is not None, retain_graph, seen, needed)
    try:
        _drain(ready, buffers, deps, needed, capture, captured, claimed, accumulate, inputs,
               retain_graph, create_graph, F_tensor, phase, made, direct)
    finally:
        for lst in task:
            lst.pop()
    if _events.active:
        with _events.phase_scope(phase):
            _events.emit("backward_end", roots=[t._id for t in roots])
    if inputs is not None and not allow_unused:
        for i, c in enumerate(captured):
            if c is None and accumulate is False:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
    return captured


def _plan(root_edges, capture):
    """Dependency counts of every node reachable from the roots; with ``capture`` (the inputs of
    autograd.grad / backward(inputs=...)) also the nodes that lead to one of them."""
    deps: dict = {}
    seen = set()
    stack = [n for n, _, _ in root_edges]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for nxt, _ in n.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    stack.append(nxt)
    needed = None
    if capture is not None:
        targets = {n for (n, _) in capture}
        needed = set()
        for n in _topo(seen):  # children before parents
            if n in targets or any(nx in needed for nx, _ in n.next_functions if nx is not None):
                needed.add(n)
    return deps, seen, needed


def _enter_task(has_inputs, retain_graph, seen, needed):
    """Push this backward onto the thread's task stacks (read by core/graph.py's queries)."""
    lists = []
    for attr, item in (("stack", has_inputs), ("ids", (next(_task_ids), retain_graph)), ("plans", (seen, needed))):
        lst = getattr(_task, attr, None)
        if lst is None:
            lst = []
            setattr(_task, attr, lst)
        lst.append(item)
        lists.append(lst)
    return lists


def _drain(ready, buffers, deps, needed, capture, captured, claimed, accumulate, inputs,
           retain_graph, create_graph, F_tensor, phase, made, direct=False):
    with grad_mode.set_grad_enabled(create_graph), _events.phase_scope(phase):
        while ready:
            buf = outs = gin = g = None   # drop the last node's incoming gradients (NOTE 7)
            _, node = heapq.heappop(ready)
            buf = buffers.pop(node, {})
            if (direct and type(node).__base__ is _OpNode and not _events.active and not (node._pre_hooks or node._post_hooks
                                                                                 or node._tensor_pre_hooks or node._retain_grad)):
                outs = buf.get(0)                                   # NOTE 8: the direct path
                if isinstance(outs, Tensor) and type(outs._data) is _ndarray and _np_fns is not None:
                    gin = _own(node.apply([outs._data], _np_fns), (outs,), made)
                    _release(node, retain_graph)
                    _deliver(node, gin, buffers, deps, ready, False, made)
                    continue
            n_out = node.num_outputs
            outs = [buf.get(0)] if n_out <= 1 else [buf.get(i) for i in range(n_out)]
            if needed is not None and node not in needed:
                _release(node, retain_graph)
                continue
            if (node._pre_hooks or node._tensor_pre_hooks or node._retain_grad
                    or isinstance(node, AccumulateGrad)):   # _pre_hooks' own test, without the call
                outs = _pre_hooks(node, outs, create_graph)
            key_hits = [(nr, idx) for (n, nr), idxs in capture.items() if n is node for idx in idxs] \
                if capture else ()
            for nr, idx in key_hits:
                g = outs[nr]
                captured[idx] = _as_grad(g)
            if key_hits and not isinstance(node, AccumulateGrad) and not any(nx in needed for nx, _ in node.next_functions if nx):
                continue      # as PyTorch's: a requested input's node runs only if it leads to another one
            if isinstance(node, AccumulateGrad):
                if accumulate and (inputs is None or key_hits):
                    _accumulate(node, outs[0], create_graph, claimed, made)
                continue
            if (outs[0] is None) if n_out <= 1 else all(o is None for o in outs):
                _release(node, retain_graph)
                _pass_on_nothing(node, deps, ready)
                continue
            if _events.active:
                _events.emit("execute", node=node.id, name=node._name)
            gin = _own(_call(node, outs, F_tensor), outs, made)
            if node._post_hooks:
                gin = _post_hooks(node, gin, outs)
            _release(node, retain_graph)
            _deliver(node, gin, buffers, deps, ready, create_graph, made)
        buf = outs = gin = g = None


def _deliver(node, gin, buffers, deps, ready, create_graph, made):
    """Add each produced gradient into its consumer's buffer; a consumer whose producers all
    delivered is ready (rules 2 and 4)."""
    for (nxt, nr), g in zip(node.next_functions, gin):
        if nxt is not None:
            if g is not None:
                b = buffers.setdefault(nxt, {})
                b[nr] = g if b.get(nr) is None else _add_grads(b[nr], g, create_graph, made)
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt.id, nxt))


def _own(gin, outs, made):
    """Give each array a node produced a storage: its incoming gradient's when they share memory."""
    incoming = [o for o in outs if isinstance(o, Tensor)]
    seen: dict = {}
    res = []
    for r in gin:
        if r is None or isinstance(r, Tensor):
            res.append(r)
            continue
        t = seen.get(id(r))
        if t is None:
            st = None
            for o in incoming:
                od = o._data
                if r is od or (((r.base is not None or od.base is not None) and _may_share(r, od))
                                 # two distinct NumPy arrays that own their memory never overlap
                                 if type(r) is _ndarray and type(od) is _ndarray
                                 else shares_memory(o._storage.xp, r, od)):
                    st = o._storage
                    break
            t = Tensor._wrap(r, st)
            if st is None:
                made.add(t._storage.id)
            seen[id(r)] = t
        res.append(t)
    return res


def _add_grads(a, b, create_graph, made):
    """Sum two gradients meant for one input (a new storage, as PyTorch's buffer add)."""
    if create_graph:
        return a + b
    t = Tensor._wrap((a._data if isinstance(a, Tensor) else a) + (b._data if isinstance(b, Tensor) else b))
    made.add(t._storage.id)
    return t


def _pass_on_nothing(node, deps, ready):
    """A node that got no gradient sends none, yet its consumers must count the edge as
    delivered, or a leaf also reached another way would never become ready."""
    for nxt, _ in node.next_functions:
        if nxt is not None:
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt.id, nxt))


def _topo(nodes):
    """Nodes ordered so every node comes after all nodes it points to."""
    order, visited = [], set()
    for start in nodes:
        if start in visited:
            continue
        stack = [(start, iter([n for n, _ in start.next_functions if n is not None]))]
        visited.add(start)
        while stack:
            n, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                order.append(n)
            elif nxt not in visited:
                visited.add(nxt)
                stack.append((nxt, iter([m for m, _ in nxt.next_functions if m is not None])))
    return order


def _call(node, outs, F_tensor):
    if F_tensor is None:
        if getattr(node, "takes_tensors", False):
            # a custom Function's backward gets the gradient tensors themselves: wrapping their
            # arrays again would count the same bytes under a second storage
            return node.apply(list(outs), None)
        # array currency: unwrap any tensor a hook returned
        outs = [o._data if isinstance(o, Tensor) else o for o in outs]
        first = outs[0] if outs and outs[0] is not None else next((o for o in outs if o is not None), None)
        if first is None:
            return node.apply(outs, None)
        if type(first) is _ndarray and _np_fns is not None:
            return node.apply(outs, _np_fns)
        return node.apply(outs, array_fns((_np_xp or _numpy_xp()) if type(first) is _ndarray else _xp_of(first)))
    outs = [_as_grad(o) for o in outs]
    return node.apply(outs, F_tensor)


def _pre_hooks(node, outs, create_graph):
    if not (node._pre_hooks or node._tensor_pre_hooks or node._retain_grad or
            (isinstance(node, AccumulateGrad) and node.variable._hooks)):
        return outs
    outs = list(outs)
    tensor_hooks = dict(node._tensor_pre_hooks)
    if isinstance(node, AccumulateGrad) and node.variable._hooks:
        tensor_hooks[0] = node.variable._hooks
    for nr, hooks in tensor_hooks.items():
        if outs[nr] is None:
            continue
        for h in list(hooks):
            g = _as_grad(outs[nr])
            if _events.active:
                _events.emit("hook", node=node.id, hook_kind="tensor", hook=getattr(h, "__name__", "hook"))
            r = h(g)
            outs[nr] = r if r is not None else g
    for h in list(node._pre_hooks):
        wrapped = tuple(_as_grad(o) for o in outs)
        if _events.active:
            _events.emit("hook", node=node.id, hook_kind="pre", hook=getattr(h, "__name__", "hook"))
        r = h(wrapped)
        if r is not None:
            outs = list(r)
    for nr, ref in node._retain_grad.items():
        t = ref()
        if t is not None and outs[nr] is not None:
            g = _as_grad(outs[nr])
            if t._grad is None:
                t._grad = g.detach() if not create_graph else g
                t._grad._storage.set_base("gradient")
            else:
                t._grad = t._grad + g
    return outs


def _post_hooks(node, gin, outs):
    w_in = tuple(_as_grad(g) for g in gin)
    w_out = tuple(_as_grad(g) for g in outs)
    for h in list(node._post_hooks):
        if _events.active:
            _events.emit("hook", node=node.id, hook_kind="post", hook=getattr(h, "__name__", "hook"))
        r = h(w_in, w_out)
        if r is not None:
            w_in = tuple(r)
    return list(w_in)


def _release(node, retain_graph):
    if not retain_graph and node._saved:
        node.release_saved()


def _accumulate(node, g, create_graph, claimed, made=()):
    if g is None:
        return
    var = node.variable
    if var._grad is None:
        if create_graph:
            new = g if isinstance(g, Tensor) else Tensor._wrap(g)
            new._storage.set_base("gradient")
        else:
            arr = g._data if isinstance(g, Tensor) else g
            xp = var._storage.xp
            st = g._storage if isinstance(g, Tensor) else None
            if (st is not None and st.id in made and ("storage", st.id) not in claimed
                    and ((arr is st.array and (owns_memory(xp, arr) or not hasattr(arr, "flags")))
                         or is_whole_view(xp, arr, st.array))):
                claimed.add(("storage", st.id))      # steal the buffer (NOTE 7)
                new = Tensor._wrap(arr, st)
                st.set_base("gradient")
            else:
                if isinstance(g, Tensor) or id(arr) in claimed or not owns_memory(xp, arr):
                    arr = contiguous_copy(xp, arr)   # .grad is laid out as its variable, as in PyTorch
                claimed.add(id(arr))
                new = Tensor._wrap(arr, base="gradient")
        var._grad = new
    elif create_graph:
        var._grad = var._grad + g
        var._grad._storage.set_base("gradient")
    else:
        arr = g._data if isinstance(g, Tensor) else g
        var._grad._data[...] = var._grad._data + arr
        var._grad._storage.version += 1
    if _events.active:
        _events.emit("accumulate", node=node.id, tensor=var._id, storage=var._grad._storage.id,
                     bytes=var._grad._storage.nbytes)
    if var._post_acc_hooks:   # register_post_accumulate_grad_hook
        for h in list(var._post_acc_hooks):
            h(var)


run_backward = _oom.translated(run_backward)   # NOTE [ Out of memory ] 3: backward's arrays too


# ---- torch.autograd.backward (Tensor.backward calls it: core/operators.py) -----------------------
def _as_list(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _make_grads(outputs, grad_outputs, create_graph):
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None and i < len(grad_outputs) else None
        if g is None:
            if out.requires_grad and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype!r}")
            g = out._wrap(out._storage.xp.ones_like(out._data))   # a temporary, not an "input"
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradient must be a Tensor, got {type(g).__name__}")
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_fmt(g.shape)} and "
                               f"output[{i}] has a shape of {_fmt(out.shape)}.")
        grads.append(g)
    return grads


def _fmt(shape) -> str:
    return f"torch.Size([{', '.join(map(str, shape))}])"


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the leaves' ``.grad`` (see Tensor.backward)."""
    outs = _as_list(tensors)
    for i, t in enumerate(outs):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    # held until backward returns, so the implicit seed lives that long, as in PyTorch
    grads = _make_grads(outs, _as_list(grad_tensors), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    ins = _as_list(inputs)
    if ins is not None and len(ins) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    captured = run_backward(outs, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=ins,
                            accumulate=True, allow_unused=True)
    for t, g in zip(ins or (), captured):
        if t.grad_fn is not None and g is not None:  # a non-leaf named in inputs gets its .grad, as in PyTorch
            if not create_graph:
                with grad_mode.no_grad():
                    g = g.detach().clone()
            t._grad = g if t._grad is None else t._grad + g
            t._grad._storage.set_base("gradient")
