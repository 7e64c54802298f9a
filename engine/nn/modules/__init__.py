"""``engine.nn.modules``: the module classes, one family per file, as ``torch.nn.modules``.

    module.py           Module (its hooks in _hooks.py, its state dict in _state_dict.py)
    container.py        Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
    linear.py           Identity, Linear, Bilinear
    activation.py       ReLU, GELU, Softmax ... Softmax2d
    conv.py             Conv1d/2d/3d, ConvTranspose1d/2d/3d
    pooling.py          max, average, unpooling, LP, adaptive and fractional pooling
    normalization.py    LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d
    batchnorm.py        BatchNorm1d/2d/3d
    instancenorm.py     InstanceNorm1d/2d/3d
    dropout.py          Dropout, Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout
    sparse.py           Embedding, EmbeddingBag
    loss.py             the loss modules
    rnn.py              RNN, LSTM, GRU (rnn_cell.py: their one-step cells)
    attention.py        MultiheadAttention, TransformerBlock
    transformer.py      Transformer, TransformerEncoder(Layer), TransformerDecoder(Layer)
    padding.py          the padding modules
    pixelshuffle.py     PixelShuffle, PixelUnshuffle      channelshuffle.py  ChannelShuffle
    upsampling.py       Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
    distance.py         CosineSimilarity, PairwiseDistance
    fold.py             Fold, Unfold                      flatten.py         Flatten, Unflatten
    lazy.py             the Lazy modules (NOTE [ Lazy modules ])

Each module holds its options and parameters and calls its function in ``engine.nn.functional``.
"""
from .module import Module
from ._hooks import register_module_forward_hook, register_module_forward_pre_hook
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, Linear
from .activation import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
                         LogSoftmax, Mish, PReLU, RReLU, ReLU, ReLU6, SELU, SiLU, Sigmoid, Softmax, Softmax2d, Softmin,
                         Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, FractionalMaxPool2d, LPPool1d, LPPool2d,
                      LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .normalization import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .sparse import Embedding, EmbeddingBag
from .loss import (BCELoss, BCEWithLogitsLoss, CTCLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss,
                   HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, MarginRankingLoss, MultiLabelMarginLoss,
                   MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, NLLLoss2d, PoissonNLLLoss, SmoothL1Loss,
                   SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from .rnn import GRU, LSTM, RNN, RNNBase
from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase
from .attention import MultiheadAttention, TransformerBlock
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .channelshuffle import ChannelShuffle
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .distance import CosineSimilarity, PairwiseDistance
from .fold import Fold, Unfold
from .flatten import Flatten, Unflatten
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d, LazyConv3d,
                   LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
                   LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)

__all__ = ["Module", "register_module_forward_hook", "register_module_forward_pre_hook", "ModuleDict", "ModuleList",
           "ParameterDict", "ParameterList", "Sequential", "Bilinear", "Identity", "Linear", "CELU", "ELU", "GELU",
           "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax",
           "Mish", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin",
           "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold", "Conv1d", "Conv2d", "Conv3d",
           "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d",
           "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d",
           "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "CrossMapLRN2d", "GroupNorm",
           "LayerNorm", "LocalResponseNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout", "Embedding", "EmbeddingBag", "BCELoss", "BCEWithLogitsLoss", "CTCLoss",
           "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss",
           "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "GRU", "LSTM", "RNN", "RNNBase", "GRUCell",
           "LSTMCell", "RNNCell", "RNNCellBase", "MultiheadAttention", "TransformerBlock", "Transformer",
           "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
           "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "PixelShuffle", "PixelUnshuffle",
           "ChannelShuffle", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "CosineSimilarity",
           "PairwiseDistance", "Fold", "Unfold", "Flatten", "Unflatten", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]
