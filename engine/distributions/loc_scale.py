"""The location-scale families' shared part (Normal, Laplace): parameters, ``expand``, mean and mode."""
from __future__ import annotations

from ..backend.size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class LocScale(Distribution):
    """Real-valued, with a real ``loc`` and a positive ``scale`` broadcast to the batch shape."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        family = next(c for c in type(self).__mro__ if LocScale in c.__bases__)   # Normal, Laplace, ...
        new = self._get_checked_instance(family, _instance)
        batch_shape = Size(batch_shape)
        new.loc, new.scale = self.loc.expand(batch_shape), self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc
