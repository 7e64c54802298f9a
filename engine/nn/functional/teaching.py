"""The teaching view: an opt-in, labelled, op-by-op graph of attention and recurrent layers.

NOTE [ Teaching view ]
1. By default ``F.scaled_dot_product_attention``, ``MultiheadAttention``, ``TransformerEncoderLayer``,
   ``LSTM`` and ``GRU`` build PyTorch's CPU graph: the fused nodes where PyTorch has them
   (ScaledDotProductFlashAttentionForCpuBackward0, MkldnnRnnLayerBackward0), with what they save.
2. ``with engine.nn.teaching_view():`` builds the unfused graph instead: attention written out
   (``q k^T``, scale, mask, softmax, ``@ v``: the (L, S) attention matrix is saved, by the softmax),
   an LSTM's gates one node each per time step. It is a picture of the mathematics, never what
   PyTorch records.
3. Every node made inside the block carries ``node.teaching_view == LABEL`` (``"teaching view, not
   PyTorch's graph"``); a node of PyTorch's graph has none (``getattr(node, "teaching_view", None)``).
4. The switch is per thread and nests; values and gradients are the same mathematics either way
   (equal to rounding).
"""
from __future__ import annotations

import threading

from ...core.hooks import push_op_hook

LABEL = "teaching view, not PyTorch's graph"


class _State(threading.local):
    depth = 0


_state = _State()


def is_teaching_view() -> bool:
    """Whether this thread is inside ``teaching_view()`` (NOTE [ Teaching view ] 4)."""
    return _state.depth > 0


class _Label:
    """The op hook that labels each node made in the block (rule 3)."""

    def before(self, op, inputs, attrs, inplace):
        return None

    def after(self, op, inputs, attrs, result):
        node = getattr(result, "grad_fn", None)
        if node is not None:
            node.teaching_view = LABEL


class teaching_view:
    """Build attention and recurrent layers op by op, each node labelled (NOTE [ Teaching view ]).

    ``with engine.nn.teaching_view(): out, _ = mha(x, x, x)`` records the attention matrix as a
    softmax's saved result; outside the block the same module records PyTorch's fused graph.
    """

    def __enter__(self):
        self._push = push_op_hook(_Label())
        self._push.__enter__()
        _state.depth += 1
        return self

    def __exit__(self, *exc):
        _state.depth -= 1
        self._push.__exit__(*exc)
        return False
