"""``engine.distributions``: PyTorch's ``torch.distributions`` on glassgrad's tensors.

Every density, moment and ``rsample`` is built from engine ops, so gradients reach the parameters and the
graph shows each step. Draws use the engine's generator (``engine.manual_seed`` makes them reproducible;
the numbers differ from PyTorch's stream).
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform, Transform
from .uniform import Uniform

__all__ = ["AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "ComposeTransform", "Dirichlet",
           "Distribution", "ExpTransform", "Exponential", "Gamma", "Independent", "Laplace", "LogNormal",
           "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "SigmoidTransform", "Transform",
           "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl", "transforms"]
