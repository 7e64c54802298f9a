"""Lazy modules: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d``, whose input size is read from the first
batch, as PyTorch's.

NOTE [ Lazy modules ]
1. Until the first forward the module holds ``UninitializedParameter``/``UninitializedBuffer``
   placeholders (NOTE [ Uninitialized tensors ]) and its size field (``in_features``,
   ``in_channels``, ``num_features``) reads 0.
2. A forward pre-hook (``_infer_parameters``) sees the first input, materializes every placeholder
   in place, runs the layer's usual ``reset_parameters`` (so the draws are the ones the eager
   layer would make), removes itself and switches the module's class to ``cls_to_become``
   (``LazyLinear`` becomes ``Linear``).
3. Since the placeholders become the parameters in place, an optimizer built before the first
   forward trains them.
4. ``load_state_dict`` into a lazy module materializes each placeholder to the loaded shape
   (_state_dict.py); the class changes on the next forward, as PyTorch's.
"""
from __future__ import annotations

from ...backend import dtypes as _dtype
from ... import functional as E
from ...core.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _NormBase
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear


class LazyModuleMixin:
    """What every Lazy module shares (NOTE [ Lazy modules ])."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        """NOTE [ Lazy modules ] 2."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


def _factory(device, dtype):
    return {"device": device, "dtype": dtype}


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(**_factory(device, dtype))
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(**_factory(device, dtype))

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        no_batch = self._dims + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def _lazy_placeholders(self, bias, device, dtype):
        self.weight = UninitializedParameter(**_factory(device, dtype))
        if bias:
            self.bias = UninitializedParameter(**_factory(device, dtype))


def _lazy_conv(name, base):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                      **_factory(device, dtype))
        self._lazy_placeholders(bias, device, dtype)
        self.out_channels = out_channels
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    doc = f"A ``{base.__name__}`` whose ``in_channels`` is read from its first input."
    return type(name, (_LazyConvXdMixin, base), {"cls_to_become": base, "__init__": __init__, "__doc__": doc,
                                                 "__module__": __name__})


def _lazy_conv_transpose(name, base):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                      padding_mode, **_factory(device, dtype))
        self._lazy_placeholders(bias, device, dtype)
        self.out_channels = out_channels
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    doc = f"A ``{base.__name__}`` whose ``in_channels`` is read from its first input."
    return type(name, (_LazyConvXdMixin, base), {"cls_to_become": base, "__init__": __init__, "__doc__": doc,
                                                 "__module__": __name__})


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose("LazyConvTranspose1d", ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose("LazyConvTranspose2d", ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose("LazyConvTranspose3d", ConvTranspose3d)


class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(**_factory(device, dtype))
            self.bias = UninitializedParameter(**_factory(device, dtype))
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**_factory(device, dtype))
            self.running_var = UninitializedBuffer(**_factory(device, dtype))
            self.num_batches_tracked = E.tensor(0, dtype=_dtype.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(name, base, what):
    return type(name, (_LazyNormBase, base), {"cls_to_become": base, "__module__": __name__,
                                               "__doc__": f"A ``{base.__name__}`` whose ``num_features`` is the "
                                                          f"channel count of its first input ({what})."})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d, "dim 1")
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d, "dim 1")
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d, "dim 1")
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d, "dim 1, as PyTorch, even unbatched")
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d, "dim 1, as PyTorch, even unbatched")
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d, "dim 1, as PyTorch, even unbatched")
