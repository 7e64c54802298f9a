"""The neural-network rows: what torch.nn.functional runs as one node each.

``activation.py`` softmax, log_softmax and the activations (NOTE [ Activation gradients at NaN ]);
``norm.py`` batch, group and layer norm; ``dropout.py`` the fused dropout; ``embedding.py`` embedding
and embedding_bag; ``loss.py`` nll, mse, binary cross-entropy and the margin and smooth losses;
``conv.py`` im2col, the convolutions, fold and unfold (NOTE [ Convolution ]); ``pool.py``,
``pool3d.py``, ``unpool.py`` pooling (NOTE [ Pooling ]); ``pad.py``, ``upsample.py``,
``sampling.py`` (grid sample, affine grids), ``shuffle.py``, ``bilinear.py``, ``pdist.py``,
``ctc.py``, ``weight_norm.py``, ``rnn.py`` (packing a padded batch), ``sdpa.py`` (fused attention) and ``rnn_fused.py`` (PyTorch's
CPU LSTM layer node and GRU's unsafe split).

The functions are in engine/nn/functional/; the modules in engine/nn/modules/.
"""
from __future__ import annotations

from . import (activation, norm, dropout, embedding, loss, conv, pool, pool3d, unpool, pad,  # noqa: F401
               upsample, sampling, shuffle, bilinear, pdist, ctc, weight_norm, rnn, sdpa,
               rnn_fused)
