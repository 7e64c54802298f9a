"""``engine.nn.utils``: gradient clipping, parameter/vector conversion and sequence padding, as
``torch.nn.utils``."""
from . import rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]
from . import parametrizations, parametrize  # noqa: E402
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402
__all__ += ["parametrizations", "parametrize", "remove_spectral_norm", "spectral_norm", "remove_weight_norm",
            "weight_norm"]
from . import stateless  # noqa: E402
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: E402
from .init import skip_init  # noqa: E402
__all__ += ["stateless", "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
            "skip_init"]
