"""The autodiff core: everything between ``a * b`` and ``x.grad``, in one folder.

Read it in this order (follow ``mul`` from ``a * b`` to ``x.grad``):

1. ``tensor.py``      what a tensor is: an array in a Storage, plus grad_fn, output_nr, requires_grad.
2. ``operators.py``   where ``a * b`` and ``loss.backward()`` land: one-line calls into the table.
3. ``table.py``       the row schema, PyTorch's derivatives.yaml made executable.
4. ``primitives.py``  the rows: ``mul``'s kernel, what it saves, ``grad * other``; ``exp`` saves its result.
5. ``dispatch.py``    ``apply``: promotion, the kernel, when a node is made and what it keeps (NOTE [ Dispatch ]).
6. ``graph.py``       Node, OpNode's edges, SavedTensor (NOTE [ Saved tensors ]), AccumulateGrad.
7. ``backward.py``    dependency counts, the ready heap, release, accumulation (NOTE [ Backward execution ]).
8. ``fns.py``         one formula, two currencies: how ``create_graph=True`` comes for free.

Then ``storage.py`` with ``engine/events.py``: where the bytes and the recorded events come from.
For a second reading: ``inplace.py`` (version counters, NOTE [ In-place on a view ]),
``hooks.py`` (tensor and op hooks, NOTE [ Op hooks ]) and ``grad_mode.py``.

The layer rule: the core imports only ``engine/backend/``, ``engine/memory/`` and
``engine/events.py``, at the top of each file; inside it the order is
tensor < table < graph < hooks, inplace < dispatch < fns < backward < primitives, operators.
The rest of the op table lives in ``engine/ops/`` and registers into ``table.OPS``.
"""
