"""Rearranging ops for the op table: pixel_shuffle / pixel_unshuffle (PixelShuffleBackward0,
PixelUnshuffleBackward0) and channel_shuffle (ChannelShuffleBackward0).

NOTE [ Shuffles ]
1. Each is one reshape, one permutation of axes and one reshape back; nothing is saved, only the
   factor (as PyTorch's nodes show ``upscale_factor``, ``downscale_factor``, ``groups``).
2. pixel_shuffle and pixel_unshuffle with the same factor are inverse permutations of the elements,
   so each one's backward is the other; channel_shuffle by g is undone by channel_shuffle by C/g.
3. Leading batch dims (any number) are folded into one for the kernel and restored after.
"""
from __future__ import annotations

from ...core.table import op


def _lead(shape, k):
    b = 1
    for s in shape[:len(shape) - k]:
        b *= s
    return b


def pixel_shuffle_with(reshape, permute, x, shape, r):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r); ``reshape``/``permute`` from xp or F."""
    c, h, w = shape[-3:]
    b, oc = _lead(shape, 3), c // (r * r)
    y = permute(reshape(x, (b, oc, r, r, h, w)), (0, 1, 4, 2, 5, 3))
    return reshape(y, tuple(shape[:-3]) + (oc, h * r, w * r))


def pixel_unshuffle_with(reshape, permute, x, shape, r):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    c, h, w = shape[-3:]
    b, oh, ow = _lead(shape, 3), h // r, w // r
    y = permute(reshape(x, (b, c, oh, r, ow, r)), (0, 1, 3, 5, 2, 4))
    return reshape(y, tuple(shape[:-3]) + (c * r * r, oh, ow))


def channel_shuffle_with(reshape, permute, x, shape, groups):
    """(N, C, *) -> (N, C, *): channel j*(C/g)+i moves to i*g+j."""
    n, c = shape[0], shape[1]
    rest = 1
    for d in shape[2:]:
        rest *= d
    y = permute(reshape(x, (n, groups, c // groups, rest)), (0, 2, 1, 3))
    return reshape(y, tuple(shape))


def _ps_fwd(xp, a, upscale_factor):
    return pixel_shuffle_with(xp.reshape, xp.permute_dims, a, tuple(a.shape), upscale_factor)


def _pu_fwd(xp, a, downscale_factor):
    return pixel_unshuffle_with(xp.reshape, xp.permute_dims, a, tuple(a.shape), downscale_factor)


def _cs_fwd(xp, a, groups):
    return channel_shuffle_with(xp.reshape, xp.permute_dims, a, tuple(a.shape), groups)


op("pixel_shuffle", "PixelShuffleBackward0", ("self",), _ps_fwd,
   lambda F, g, s: (pixel_unshuffle_with(F.reshape, F.permute, g, F.shape(g), s.upscale_factor),), promote=False)
op("pixel_unshuffle", "PixelUnshuffleBackward0", ("self",), _pu_fwd,
   lambda F, g, s: (pixel_shuffle_with(F.reshape, F.permute, g, F.shape(g), s.downscale_factor),), promote=False)
op("channel_shuffle", "ChannelShuffleBackward0", ("self",), _cs_fwd,
   lambda F, g, s: (channel_shuffle_with(F.reshape, F.permute, g, F.shape(g), s.shapes[0][1] // s.groups),),
   promote=False)
