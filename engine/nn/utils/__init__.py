"""``engine.nn.utils``: gradient clipping, parameter/vector conversion, sequence packing and padding,
parametrizations, weight and spectral norm, stateless calls, conv/linear-bn fusion and ``skip_init``, as
``torch.nn.utils``."""
from . import parametrizations, parametrize, stateless
from . import rnn  # noqa: F401  (engine.nn.utils.rnn, as torch.nn.utils.rnn)
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "parametrizations", "parametrize", "remove_spectral_norm",
           "spectral_norm", "remove_weight_norm", "weight_norm", "stateless", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init"]
