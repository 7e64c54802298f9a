"""``engine.nn``: modules, parameters and initializers, as ``torch.nn``."""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from .parameter import Buffer, Parameter
from .module import Module, register_module_forward_hook, register_module_forward_pre_hook
from .linear import Identity, Linear
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .flatten import Flatten
from .normalization import LayerNorm
from .dropout import Dropout
from .sparse import Embedding
from .conv import Conv2d
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .attention import MultiheadAttention, TransformerBlock
from . import utils  # noqa: F401

__all__ = ["Buffer", "Parameter", "Module", "Identity", "Linear", "GELU", "LogSoftmax", "ReLU", "Sigmoid",
           "Softmax", "Tanh", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential",
           "Flatten", "LayerNorm", "Dropout", "Embedding", "Conv2d", "BCELoss", "BCEWithLogitsLoss",
           "CrossEntropyLoss", "MSELoss", "NLLLoss", "MultiheadAttention", "TransformerBlock", "functional",
           "init", "utils", "register_module_forward_hook", "register_module_forward_pre_hook"]

from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: E402
__all__ += ["BatchNorm1d", "BatchNorm2d"]
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: E402
__all__ += ["AdaptiveAvgPool2d", "AvgPool2d", "MaxPool2d"]
from .activation import ELU, SELU, Hardtanh, LeakyReLU, Mish, ReLU6, SiLU, Softplus  # noqa: E402
__all__ += ["ELU", "SELU", "Hardtanh", "LeakyReLU", "Mish", "ReLU6", "SiLU", "Softplus"]
from .activation import (CELU, GLU, Hardshrink, Hardsigmoid, Hardswish, LogSigmoid, PReLU, RReLU,  # noqa: E402
                         Softmax2d, Softmin, Softshrink, Softsign, Tanhshrink, Threshold)
__all__ += ["CELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid", "PReLU", "RReLU", "Softmax2d",
            "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold"]
from .loss import HuberLoss, L1Loss, SmoothL1Loss  # noqa: E402
__all__ += ["HuberLoss", "L1Loss", "SmoothL1Loss"]
from .loss import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, KLDivLoss, MarginRankingLoss,  # noqa: E402
                   MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss,
                   TripletMarginLoss, TripletMarginWithDistanceLoss)
__all__ += ["CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "KLDivLoss", "MarginRankingLoss",
            "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "SoftMarginLoss",
            "TripletMarginLoss", "TripletMarginWithDistanceLoss"]
from .conv1d import Conv1d  # noqa: E402
from .distance import CosineSimilarity  # noqa: E402
__all__ += ["Conv1d", "CosineSimilarity"]
from .distance import PairwiseDistance  # noqa: E402
__all__ += ["PairwiseDistance"]
from .pooling import AdaptiveAvgPool1d, AvgPool1d, MaxPool1d  # noqa: E402
__all__ += ["AdaptiveAvgPool1d", "AvgPool1d", "MaxPool1d"]
from .channel_dropout import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: E402
__all__ += ["AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]
from .pooling import AdaptiveMaxPool2d  # noqa: E402
from .batchnorm import BatchNorm3d  # noqa: E402
__all__ += ["AdaptiveMaxPool2d", "BatchNorm3d"]
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: E402
__all__ += ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]
from .transformer import Transformer, TransformerEncoder, TransformerEncoderLayer  # noqa: E402
__all__ += ["Transformer", "TransformerEncoder", "TransformerEncoderLayer"]
from .transformer import TransformerDecoder, TransformerDecoderLayer  # noqa: E402
__all__ += ["TransformerDecoder", "TransformerDecoderLayer"]
from .upsample import Upsample  # noqa: E402
__all__ += ["Upsample"]
from .conv import ConvTranspose1d, ConvTranspose2d  # noqa: E402
from .group_norm import GroupNorm  # noqa: E402
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: E402
from .normalization import LocalResponseNorm, RMSNorm  # noqa: E402
__all__ += ["ConvTranspose1d", "ConvTranspose2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "LocalResponseNorm", "RMSNorm"]
from .flatten import Unflatten  # noqa: E402
from .pixel_shuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle  # noqa: E402
from .padding import (CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ConstantPad3d,  # noqa: E402
                      ReflectionPad1d, ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, ZeroPad1d, ZeroPad2d)
from .fold import Fold, Unfold  # noqa: E402
from .bilinear import Bilinear  # noqa: E402
__all__ += ["Unflatten", "ChannelShuffle", "PixelShuffle", "PixelUnshuffle", "CircularPad1d", "CircularPad2d",
            "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
            "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d", "Fold", "Unfold", "Bilinear"]
from .conv import Conv3d  # noqa: E402
__all__ += ["Conv3d"]
from .pool3d import AvgPool3d, MaxPool3d  # noqa: E402
__all__ += ["AvgPool3d", "MaxPool3d"]
from .conv import ConvTranspose3d  # noqa: E402
__all__ += ["ConvTranspose3d"]
from .pool_more import (AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool3d, LPPool1d, LPPool2d,  # noqa: E402
                        LPPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .padding import CircularPad3d, ReflectionPad3d, ReplicationPad3d, ZeroPad3d  # noqa: E402
from .upsample import UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402
from .loss import NLLLoss2d  # noqa: E402
__all__ += ["AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
            "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "CircularPad3d", "ReflectionPad3d", "ReplicationPad3d",
            "ZeroPad3d", "UpsamplingBilinear2d", "UpsamplingNearest2d", "NLLLoss2d"]
from .embedding_bag import EmbeddingBag  # noqa: E402
__all__ += ["EmbeddingBag"]
from .uninitialized import UninitializedBuffer, UninitializedParameter  # noqa: E402
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d,  # noqa: E402
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
                   LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)
__all__ += ["UninitializedBuffer", "UninitializedParameter", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
            "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
            "LazyConvTranspose3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]
from .ctc import CTCLoss  # noqa: E402
__all__ += ["CTCLoss"]
from .pool_more import FractionalMaxPool2d  # noqa: E402
__all__ += ["FractionalMaxPool2d"]
from .cross_map_lrn import CrossMapLRN2d  # noqa: E402
__all__ += ["CrossMapLRN2d"]
