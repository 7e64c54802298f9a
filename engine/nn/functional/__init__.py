"""``engine.nn.functional``: the neural-network functions, as ``torch.nn.functional``, one family per file.

    activation.py       softmax, log_softmax, relu ... softmin, gumbel_softmax (and their in-place forms)
    linear_maps.py      linear, bilinear
    conv.py             conv1d/2d/3d, conv_transpose1d/2d/3d
    im2col.py           unfold, fold
    pooling.py          max, average, adaptive and LP pooling in 1-D and 2-D; fractional max pooling
    pooling3d.py        max, average, adaptive and LP pooling in 3-D
    unpooling.py        max_unpool1d/2d/3d
    normalization.py    batch_norm, layer_norm, group_norm, instance_norm, rms_norm, local_response_norm
    dropouts.py         dropout, dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout
    sparse.py           embedding, one_hot, embedding_bag
    distance.py         cosine_similarity, pairwise_distance, normalize, pdist
    loss.py             nll_loss, cross_entropy, mse_loss, binary_cross_entropy(_with_logits), l1, smooth_l1, huber
    margin_loss.py      the ranking, embedding and margin losses
    likelihood_loss.py  kl_div, poisson_nll_loss, gaussian_nll_loss, ctc_loss
    attention.py        scaled_dot_product_attention
    mha.py              multi_head_attention_forward
    padding.py          pad
    shuffle.py          pixel_shuffle, pixel_unshuffle, channel_shuffle
    upsampling.py       interpolate
    sampling.py         grid_sample, affine_grid

The module classes of ``engine.nn`` (engine/nn/modules/) call these; nothing here imports a module class.
"""
from __future__ import annotations

# np, E, _dtype, _backend, apply, Tensor, _wrap_dim, OPS, generator_for and the private names at the end are
# the names F has had since it was one file (so dir(F) stays what it was)
import numpy as np  # noqa: F401

from ... import functional as E  # noqa: F401
from ...backend import dtypes as _dtype, gaps as _backend  # noqa: F401
from ...core.dispatch import apply  # noqa: F401
from ...core.tensor import Tensor  # noqa: F401
from ...functions.dims import wrap_dim as _wrap_dim  # noqa: F401
from ...core.table import OPS  # noqa: F401
from ...random import generator_for  # noqa: F401
from .activation import (celu, celu_, elu, elu_, gelu, glu, gumbel_softmax, hardshrink, hardsigmoid, hardswish,  # noqa: F401
                         hardtanh, hardtanh_, leaky_relu, leaky_relu_, log_softmax, logsigmoid, mish, prelu, relu,
                         relu6, relu_, rrelu, rrelu_, selu, selu_, sigmoid, silu, softmax, softmin, softplus,
                         softshrink, softsign, tanh, tanhshrink, threshold, threshold_)
from .linear_maps import bilinear, linear  # noqa: F401
from .conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d  # noqa: F401
from .im2col import fold, unfold  # noqa: F401
from .pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool1d_with_indices,  # noqa: F401
                      adaptive_max_pool2d, adaptive_max_pool2d_with_indices, avg_pool1d, avg_pool2d,
                      fractional_max_pool2d, fractional_max_pool2d_with_indices, lp_pool1d, lp_pool2d, max_pool1d,
                      max_pool1d_with_indices, max_pool2d, max_pool2d_with_indices)
from .pooling3d import (adaptive_avg_pool3d, adaptive_max_pool3d, adaptive_max_pool3d_with_indices, avg_pool3d,  # noqa: F401
                        lp_pool3d, max_pool3d, max_pool3d_with_indices)
from .unpooling import max_unpool1d, max_unpool2d, max_unpool3d  # noqa: F401
from .normalization import batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, rms_norm  # noqa: F401
from .dropouts import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout  # noqa: F401
from .sparse import embedding, embedding_bag, one_hot  # noqa: F401
from .distance import cosine_similarity, normalize, pairwise_distance, pdist  # noqa: F401
from .loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, huber_loss, l1_loss,  # noqa: F401
                   mse_loss, nll_loss, smooth_l1_loss)
from .margin_loss import (cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,  # noqa: F401
                          multilabel_margin_loss, multilabel_soft_margin_loss, soft_margin_loss, triplet_margin_loss,
                          triplet_margin_with_distance_loss)
from .likelihood_loss import ctc_loss, gaussian_nll_loss, kl_div, poisson_nll_loss  # noqa: F401
from .attention import scaled_dot_product_attention  # noqa: F401
from .mha import multi_head_attention_forward  # noqa: F401
from .padding import pad  # noqa: F401
from .shuffle import channel_shuffle, pixel_shuffle, pixel_unshuffle  # noqa: F401
from .upsampling import interpolate  # noqa: F401
from .sampling import affine_grid, grid_sample  # noqa: F401

# (see above: the names F has had since it was one file)
from .conv import _pair  # noqa: F401
from .dropouts import _np  # noqa: F401
from .loss import (_REDUCTIONS, _broadcast_shape, _check_targets, _class_view, _class_weight_check,  # noqa: F401
                   _cross_entropy_general, _cross_entropy_probs, _infer_size_error, _mul_number, _nll_loss_nd,
                   _no_grad_arg, _np_max, _np_min, _reduction, _type_name)


def __getattr__(name):
    from ...missing import missing
    raise missing("torch.nn.functional", name)   # NOTE [ Missing names ] in engine/missing.py
