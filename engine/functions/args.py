"""Argument checks the torch.* signatures share, in PyTorch's words."""
from __future__ import annotations

from ..core.tensor import Tensor


def need_tensor(fn, x, arg="input", pos=1) -> None:
    """PyTorch's TypeError when argument ``arg`` (position ``pos``) of ``fn`` is not a tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def host(t):
    """``t``'s values as a NumPy array, from any device."""
    return t.detach().numpy(force=True)


def invalid_combination(fn, args, signatures) -> TypeError:
    """PyTorch's TypeError for arguments no signature of ``fn`` accepts, listing ``signatures``."""
    got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    listed = "".join(f" * ({sig})\n" for sig in signatures)
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f"{listed}")
