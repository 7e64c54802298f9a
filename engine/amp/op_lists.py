"""Which ops autocast casts, and to what: PyTorch's lists (aten/src/ATen/autocast_mode.cpp and
autocast_mode.h, PyTorch 2.13) written with the engine's op-table names.

A policy is one of:

- ``"lower"``: every floating argument but float64 runs in the autocast dtype (bfloat16 on the CPU by
  default, float16 on CUDA);
- ``"fp32"``: every floating argument but float64 runs in float32;
- ``"promote"``: every floating argument runs in the widest floating dtype among them;
- ``"banned"``: the op refuses to run under autocast (CUDA's binary_cross_entropy).

The CPU and CUDA lists differ: CUDA keeps softmax, log_softmax, layer_norm, sum, exp, log and pow in
float32, the CPU lets them run in whatever dtype their input has. Names that are not rows of the op
table (``matmul``, ``linear``, ``cross_entropy``, ``l1_loss``, ``kl_div``, ``margin_ranking_loss``) are
the composite functions that ask autocast themselves before they lower to rows, as PyTorch casts at
the composite op. CUDA's "fp32_set_opt_dtype" ops (``sum``, ``softmax``, ``cumsum``...) are cast here
like the other float32 ones: PyTorch passes them ``dtype=torch.float32`` instead, so its graph has no
ToCopyBackward0 before them; the result and its dtype are the same.
"""
from __future__ import annotations

_CONV = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
_SDPA = ("_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention_for_cpu_masked",
         "scaled_dot_product_attention")

# PyTorch's CPU lower_precision_fp list; einsum is not on it, but PyTorch's einsum lowers to bmm, which is
CPU_LOWER = _CONV + _SDPA + ("mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear", "prelu", "einsum",
                             "einsum_one", "einsum_two", "mkldnn_rnn_layer")
CPU_FP32 = ("prod", "prod_dim", "trace", "cdist", "mse_loss", "nll_loss", "nll_loss2d", "nll_loss_weighted",
            "nll_loss2d_weighted", "cross_entropy", "smooth_l1_loss", "huber_loss", "l1_loss", "kl_div",
            "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss", "multi_margin_loss",
            "multilabel_margin_loss", "margin_ranking_loss", "hinge_embedding_loss", "poisson_nll_loss",
            "cosine_embedding_loss", "triplet_margin_loss", "ctc_loss",
            "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool2d", "max_unpool3d",
            "fractional_max_pool2d", "reflect_pad1d", "reflect_pad2d", "replicate_pad1d", "replicate_pad2d",
            "replicate_pad3d", "grid_sampler_2d", "grid_sampler_3d",
            "linalg_inv", "linalg_cholesky", "linalg_qr", "linalg_svd", "linalg_eigh", "linalg_lstsq", "linalg_solve")
CPU_PROMOTE = ("cat", "stack", "index_copy")

CUDA_LOWER = _CONV + _SDPA + ("mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "addr", "matmul", "einsum",
                              "einsum_one", "einsum_two", "mv", "linear", "prelu")
CUDA_FP32 = ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal",
             "rsqrt", "sinh", "tan", "pow_scalar", "pow_tensor", "pow_number_base", "softplus", "layer_norm",
             "group_norm", "norm", "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss",
             "nll_loss2d", "nll_loss_weighted", "nll_loss2d_weighted", "hinge_embedding_loss", "kl_div", "l1_loss",
             "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
             "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits",
             "dist", "pdist", "cdist", "renorm", "logsumexp",
             "upsample_nearest1d", "upsample_nearest_exact1d", "upsample_nearest2d", "upsample_nearest_exact2d",
             "upsample_linear1d", "upsample_bilinear2d", "upsample_bicubic2d",
             # fp32_set_opt_dtype: run in float32 unless the call names a dtype
             "prod", "prod_dim", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm", "sum")
CUDA_PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "linalg_cross", "dot", "vdot", "grid_sampler_2d",
                "grid_sampler_3d", "index_put", "tensordot", "scatter_add")
CUDA_BANNED = ("binary_cross_entropy",)

BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")


def _policy(lower, fp32, promote, banned=()):
    table = {}
    for names, p in ((lower, "lower"), (fp32, "fp32"), (promote, "promote"), (banned, "banned")):
        for n in names:
            table[n] = p
    return table


POLICY = {"cpu": _policy(CPU_LOWER, CPU_FP32, CPU_PROMOTE),
          "cuda": _policy(CUDA_LOWER, CUDA_FP32, CUDA_PROMOTE, CUDA_BANNED)}
