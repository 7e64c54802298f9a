"""THE Tensor-method table of the torch.* families: every Tensor method engine/functions/ gives, bound
in one place, each name once (the core's methods and dunders are bound by the core and
engine/_tensor_methods.py).

``bind_methods(Tensor)`` runs once, when engine/_tensor_methods.py is imported. It binds, in this order:
the math methods (unary, binary, reductions, diagonals, products) and their in-place ``_`` forms; the
index-along-a-dim methods, erfinv, sgn, the tests on values, new_empty and data_ptr; the gamma family;
the shape and index methods; the statistics, the random fills and what a tensor is; and the elementwise
aliases, in-place arithmetic and the operators ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` and ``//``.
A binding that reads an earlier one (``cls.clip_ = cls.clamp_``) relies on that order.
"""
from __future__ import annotations

from . import complex as _complex
from .arithmetic import ge, gt, isfinite, le, logical_xor, lt, ne
from .views import as_strided, transpose
from .build import diag, diag_embed, diagflat, diagonal, kron, trace
from .elementwise.binary import (addcdiv, addcmul, arctan2, atan2, copysign, float_power, floor_divide, fmax, fmin,
                                 fmod, heaviside, hypot, ldexp, lerp, logaddexp, logaddexp2, nextafter, remainder,
                                 xlogy)
from .elementwise.inplace import (_abs_check, _addc, _binary_inplace, _bitwise_not_, _cmp_, _copysign_,
                                  _div_, _float_power_, _inplace, _integer_, _ldexp_, _lerp_, _logical_, _logit_,
                                  _modulo_, _mul_, _nan_to_num_, _neg_check, _nextafter_, _pow_, _reflected,
                                  _square_, _sub_, _unary_, _unary_inplace)
from .elementwise.integer import (_invert, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or,
                                  bitwise_right_shift, bitwise_xor, gcd, lcm)
from .elementwise.unary import (absolute, acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, asin,
                                asinh, atan, atanh, conj, cosh, deg2rad, fix, frac, frexp, is_neg, isinf, isneginf,
                                isposinf, isreal, log10, log2, logit, nan_to_num, positive, rad2deg, resolve_neg,
                                signbit, sinc, sinh, tan, trunc)
from .factories import _new_empty
from .index import (diagonal_scatter, index_put, index_put_, index_reduce, index_reduce_, masked_scatter,
                    masked_scatter_, put, put_, select_scatter, slice_scatter, take, take_along_dim)
from .index_dim import (fill_diagonal_, index_add, index_add_, index_copy, index_copy_, index_fill, index_fill_,
                        scatter_add, scatter_add_, scatter_reduce, scatter_reduce_)
from .linalg import _product_, addbmm, addmv, addr, baddbmm, cross, dist, ger, inner, vdot
from .random import _cauchy_, _exponential_, _geometric_, _log_normal_, _random_
from .reduce import (_cumprod_, _renorm_, aminmax, count_nonzero, cummax, cummin, cumprod, diff, kthvalue,
                     logcumsumexp, median, mode, msort, nanmean, nanmedian, nanquantile, nansum, quantile, renorm)
from .search import argwhere, unique_consecutive
from .shape import (cumsum_, dsplit, fliplr, flipud, hsplit, is_same_size, movedim, narrow_copy, ravel,
                    repeat_interleave, rot90, select, split_with_sizes, squeeze_, t_, tensor_split, tile,
                    transpose_, tril_, triu_, unfold, unsafe_chunk, unsafe_split, unsqueeze_, vsplit)
from .special import (_digamma_, _erfinv_, _lgamma_, _mvlgamma_, _polygamma_, _polygamma_method, _sgn_, digamma,
                      erfinv, lgamma, mvlgamma, sgn)
from .stats import bincount, corrcoef, cov, histc, histogram
from .tensor_info import _data_ptr, _get_device, is_complex, is_nonzero, is_signed

# the math functions that are Tensor methods under their own names (diagonal and aminmax are bound in
# bind_methods with their keyword forms; meshgrid, bucketize, cdist, searchsorted, tensordot and isin are not methods)
_MATH_METHODS = {
    "asin": asin, "arcsin": arcsin, "acos": acos, "arccos": arccos, "atan": atan, "arctan": arctan, "sinh": sinh,
    "cosh": cosh, "asinh": asinh, "arcsinh": arcsinh, "acosh": acosh, "arccosh": arccosh, "atanh": atanh,
    "arctanh": arctanh, "atan2": atan2, "arctan2": arctan2, "hypot": hypot, "logaddexp": logaddexp, "log2": log2,
    "log10": log10, "trunc": trunc, "fix": fix, "frac": frac, "floor_divide": floor_divide, "deg2rad": deg2rad,
    "rad2deg": rad2deg, "logit": logit, "xlogy": xlogy, "lerp": lerp, "addcmul": addcmul, "addcdiv": addcdiv,
    "sinc": sinc, "heaviside": heaviside, "nan_to_num": nan_to_num, "cumprod": cumprod,
    "logcumsumexp": logcumsumexp, "nansum": nansum, "nanmean": nanmean, "median": median, "nanmedian": nanmedian,
    "kthvalue": kthvalue, "mode": mode, "count_nonzero": count_nonzero, "diff": diff, "diag": diag, "kron": kron,
    "cross": cross, "rot90": rot90, "repeat_interleave": repeat_interleave, "tile": tile,
    "tensor_split": tensor_split, "argwhere": argwhere, "histc": histc, "baddbmm": baddbmm, "addbmm": addbmm,
    "addmv": addmv, "addr": addr, "dist": dist, "bincount": bincount,
    "trace": trace,   # engine.trace itself is the module (NOTE [ engine.trace is also torch.trace ])
}


def _aminmax_method(self, *args, dim=None, keepdim=False):
    """``Tensor.aminmax``: ``dim`` and ``keepdim`` are keyword-only, as PyTorch's."""
    if args:
        raise TypeError(f"aminmax() takes 0 positional arguments but {len(args)} "
                        f"{'was' if len(args) == 1 else 'were'} given")
    return aminmax(self, dim=dim, keepdim=keepdim)


def bind_methods(cls):
    """Bind every method of the torch.* families on ``cls`` (Tensor), each name once."""
    # ---- math: unary, binary, reductions, diagonals, products, and their in-place forms --------------------
    for name, fn in _MATH_METHODS.items():
        setattr(cls, name, fn)
    cls.diagonal = lambda self, offset=0, dim1=0, dim2=1: diagonal(self, offset, dim1, dim2)
    cls.aminmax = _aminmax_method
    for name in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10", "trunc",
                 "frac", "deg2rad", "rad2deg", "sinc"):
        setattr(cls, name + "_", _unary_inplace(name))
    for alias, name in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
                        ("arccosh", "acosh"), ("arctanh", "atanh"), ("fix", "trunc")):
        setattr(cls, alias + "_", getattr(cls, name + "_"))
    for name in ("atan2", "hypot", "xlogy", "floor_divide"):
        setattr(cls, name + "_", _binary_inplace(name))
    cls.arctan2_ = cls.atan2_
    cls.heaviside_ = lambda self, values: _inplace("heaviside", self, [self, values])
    cls.logit_ = _logit_
    cls.nan_to_num_ = _nan_to_num_
    cls.lerp_ = _lerp_
    cls.addcmul_ = _addc("addcmul")
    cls.addcdiv_ = _addc("addcdiv")
    cls.cumprod_ = _cumprod_
    for name in ("baddbmm", "addbmm", "addmv", "addr"):
        setattr(cls, name + "_", _product_(name))
    # ---- index along a dim, erfinv, sgn, tests on values, new_empty, data_ptr ----------------------------
    for name, fn in (("scatter_add", scatter_add), ("scatter_add_", scatter_add_), ("scatter_reduce", scatter_reduce),
                     ("scatter_reduce_", scatter_reduce_), ("index_add", index_add),
                     ("index_add_", index_add_), ("index_fill", index_fill), ("index_fill_", index_fill_),
                     ("index_copy", index_copy), ("index_copy_", index_copy_), ("fill_diagonal_", fill_diagonal_),
                     ("erfinv", erfinv), ("erfinv_", _erfinv_), ("sgn", sgn), ("sgn_", _sgn_), ("isinf", isinf),
                     ("isposinf", isposinf), ("isneginf", isneginf), ("isreal", isreal), ("signbit", signbit),
                     ("new_empty", _new_empty), ("data_ptr", _data_ptr)):
        setattr(cls, name, fn)
    cls.ndimension = lambda self: self.ndim
    # ---- lgamma, digamma, polygamma, mvlgamma and their in-place forms -----------------------------------
    for name, fn in (("lgamma", lgamma), ("lgamma_", _lgamma_), ("digamma", digamma), ("digamma_", _digamma_),
                     ("polygamma", _polygamma_method), ("polygamma_", _polygamma_), ("mvlgamma", mvlgamma),
                     ("mvlgamma_", _mvlgamma_)):
        setattr(cls, name, fn)
    # ---- shape and index: ravel, select, movedim, unfold, t_/transpose_/squeeze_/unsqueeze_, take, ... ------
    for name, fn in (("ravel", ravel), ("select", select), ("movedim", movedim), ("moveaxis", movedim),
                     ("swapdims", transpose), ("swapaxes_", transpose_), ("swapdims_", transpose_),
                     ("unfold", unfold), ("vsplit", vsplit), ("hsplit", hsplit), ("dsplit", dsplit),
                     ("fliplr", fliplr), ("flipud", flipud), ("narrow_copy", narrow_copy),
                     ("split_with_sizes", split_with_sizes), ("unsafe_split", unsafe_split),
                     ("unsafe_chunk", unsafe_chunk), ("t_", t_), ("transpose_", transpose_), ("squeeze_", squeeze_),
                     ("unsqueeze_", unsqueeze_), ("tril_", tril_), ("triu_", triu_), ("cumsum_", cumsum_),
                     ("is_same_size", is_same_size), ("diag_embed", diag_embed), ("diagflat", diagflat),
                     ("unique_consecutive", unique_consecutive), ("take", take), ("take_along_dim", take_along_dim),
                     ("index_put", index_put), ("index_put_", index_put_), ("put", put), ("put_", put_),
                     ("masked_scatter", masked_scatter), ("masked_scatter_", masked_scatter_),
                     ("select_scatter", select_scatter), ("slice_scatter", slice_scatter),
                     ("diagonal_scatter", diagonal_scatter)):
        setattr(cls, name, fn)
    cls.index_reduce, cls.index_reduce_ = index_reduce, index_reduce_
    cls.as_strided = as_strided
    # ---- statistics, random fills, what a tensor is --------------------------------------------------------
    for name, fn in (("quantile", quantile), ("nanquantile", nanquantile), ("cummax", cummax), ("cummin", cummin),
                     ("msort", msort), ("cov", cov), ("corrcoef", corrcoef), ("histogram", histogram),
                     ("inner", inner), ("ger", ger), ("vdot", vdot), ("renorm", renorm), ("renorm_", _renorm_),
                     ("random_", _random_), ("exponential_", _exponential_), ("geometric_", _geometric_),
                     ("cauchy_", _cauchy_), ("log_normal_", _log_normal_), ("is_nonzero", is_nonzero),
                     ("is_signed", is_signed), ("is_complex", is_complex), ("get_device", _get_device)):
        setattr(cls, name, fn)
    cls.is_cpu = property(lambda self: self.device.type == "cpu")
    # ---- elementwise: aliases, in-place arithmetic, comparisons, operators --------------------------------
    for name, fn in (("tan", tan), ("positive", positive), ("absolute", absolute), ("fmax", fmax), ("fmin", fmin),
                     ("copysign", copysign), ("float_power", float_power), ("logaddexp2", logaddexp2),
                     ("ldexp", ldexp), ("nextafter", nextafter), ("gcd", gcd), ("lcm", lcm),
                     ("bitwise_and", bitwise_and), ("bitwise_or", bitwise_or), ("bitwise_xor", bitwise_xor),
                     ("bitwise_not", bitwise_not), ("bitwise_left_shift", bitwise_left_shift),
                     ("bitwise_right_shift", bitwise_right_shift)):
        setattr(cls, name, fn)
    # aliases PyTorch has as methods
    cls.greater, cls.greater_equal, cls.less, cls.less_equal, cls.not_equal = gt, ge, lt, le, ne
    cls.logical_xor = logical_xor
    cls.isfinite = isfinite
    # in-place arithmetic under every name PyTorch gives it
    cls.mul_ = cls.multiply_ = cls.__imul__ = _mul_
    cls.sub_ = cls.subtract_ = _sub_
    cls.__isub__ = lambda self, other: _sub_(self, other)
    cls.div_ = cls.divide_ = cls.true_divide_ = _div_
    cls.__itruediv__ = lambda self, other: _div_(self, other)
    cls.pow_ = cls.__ipow__ = _pow_
    cls.square_ = _square_
    cls.neg_ = cls.negative_ = _unary_("neg", _neg_check)
    cls.abs_ = cls.absolute_ = _unary_("abs", _abs_check)
    cls.clip_ = cls.clamp_
    for row in ("tan", "exp2", "expm1", "log1p", "rsqrt", "reciprocal", "sign", "erf", "erfc", "i0"):
        setattr(cls, row + "_", _unary_(row))
    # comparisons and logical ops in place
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(cls, name + "_", _cmp_(name))
    cls.greater_, cls.greater_equal_, cls.less_, cls.less_equal_, cls.not_equal_ = (
        cls.gt_, cls.ge_, cls.lt_, cls.le_, cls.ne_)
    for name in ("logical_and", "logical_or", "logical_xor", "logical_not"):
        setattr(cls, name + "_", _logical_(name))
    # the new binary ops in place
    cls.copysign_ = _copysign_
    cls.float_power_ = _float_power_
    cls.ldexp_ = _ldexp_
    cls.nextafter_ = _nextafter_
    for name, bool_ok in (("gcd", False), ("lcm", False), ("bitwise_and", True), ("bitwise_or", True),
                          ("bitwise_xor", True), ("bitwise_left_shift", False), ("bitwise_right_shift", False)):
        setattr(cls, name + "_", _integer_(name, bool_ok))
    cls.bitwise_not_ = _bitwise_not_
    cls.fmod, cls.remainder = fmod, remainder
    cls.angle, cls.frexp = _complex.angle, frexp
    for name, fn in (("conj", _complex.conj), ("conj_physical", _complex.conj_physical),
                     ("resolve_conj", _complex.resolve_conj), ("resolve_neg", resolve_neg),
                     ("is_conj", _complex.is_conj), ("is_neg", is_neg)):
        setattr(cls, name, fn)
    cls.conj_physical_ = conj
    cls.real = property(_complex.real)
    cls.imag = property(_complex.imag)
    cls.fmod_ = _modulo_("fmod")
    cls.remainder_ = cls.__imod__ = _modulo_("remainder")
    cls.__ifloordiv__ = lambda self, other: self.floor_divide_(other)
    # ``//`` is floor_divide, as in PyTorch (a NotImplemented node); div(rounding_mode=) is DivBackward2
    cls.__floordiv__ = floor_divide
    cls.__rfloordiv__ = _reflected(floor_divide)
    # operators: & | ^ ~ << >> are bitwise (logical on bool tensors), as in PyTorch
    cls.__pos__ = positive
    cls.__and__ = cls.__rand__ = bitwise_and
    cls.__or__ = cls.__ror__ = bitwise_or
    cls.__xor__ = cls.__rxor__ = bitwise_xor
    cls.__invert__ = _invert
    cls.__lshift__ = bitwise_left_shift
    cls.__rshift__ = bitwise_right_shift
    cls.__rlshift__ = _reflected(bitwise_left_shift)
    cls.__rrshift__ = _reflected(bitwise_right_shift)
    cls.__iand__ = cls.bitwise_and_
    cls.__ior__ = cls.bitwise_or_
    cls.__ixor__ = cls.bitwise_xor_
    cls.__ilshift__ = cls.bitwise_left_shift_
    cls.__irshift__ = cls.bitwise_right_shift_

