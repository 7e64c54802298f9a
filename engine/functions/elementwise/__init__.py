"""The elementwise family of torch.*: ``unary.py``, ``binary.py``, ``integer.py`` (paired with
engine/ops/elementwise/) and ``inplace.py``, the in-place ``_`` forms as Tensor methods and as
``torch.<name>_`` functions."""
from __future__ import annotations

from . import binary, inplace, integer, unary
from .binary import *  # noqa: F401,F403
from .inplace import *  # noqa: F401,F403
from .integer import *  # noqa: F401,F403
from .unary import *  # noqa: F401,F403

__all__ = unary.__all__ + binary.__all__ + integer.__all__ + inplace.__all__
