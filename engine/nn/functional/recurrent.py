"""The recurrent kernels PyTorch's CPU layers call: one fused LSTM layer (``mkldnn_rnn_layer``,
NOTE [ Fused LSTM layer ]) and ``unsafe_chunk`` (NOTE [ Unsafe split ]), both in engine/ops/nn/rnn_fused.py."""
from __future__ import annotations

from ...core.dispatch import apply_multi
from ...core.table import OPS
from ...core.tensor import VersionCounter


def mkldnn_rnn_layer(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse: bool, hidden_size: int, num_layers: int,
                     bidirectional: bool, train: bool):
    """One LSTM layer in one direction over time-major ``input`` (T, N, F): ``(output, h_T, c_T)``."""
    out, hy, cy, _work = apply_multi(
        OPS["mkldnn_rnn_layer"], [input, w_ih, w_hh, b_ih, b_hh, hx, cx],
        {"reverse": bool(reverse), "mode": 2, "hidden_size": hidden_size, "num_layers": num_layers,
         "has_biases": True, "bidirectional": bool(bidirectional), "batch_first": False, "train": bool(train),
         "batch_sizes": ()},
        ("result0", "result1", "result2", "result3"))
    return out, hy, cy


def unsafe_chunk(input, chunks: int, dim: int = 0):
    """``input`` cut in ``chunks`` pieces along ``dim`` that share its storage but are not views: each has
    its own version counter and may be written in place (NOTE [ Unsafe split ] 1)."""
    n = input.shape[dim]
    size = -(-n // chunks)
    pieces = apply_multi(OPS["unsafe_split"], [input], {"split_size": size, "dim": dim}, (), views=True)
    for p in pieces:
        p._base = None
        p._vc = VersionCounter()
    node = pieces[0].grad_fn
    if node is not None:
        node.multi_view = False
    return pieces
