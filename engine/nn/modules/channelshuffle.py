"""``ChannelShuffle`` (NOTE [ Shuffles ] in engine/ops/nn/shuffle.py)."""
from __future__ import annotations

from ..functional.shuffle import channel_shuffle
from .module import Module


class ChannelShuffle(Module):
    """``F.channel_shuffle`` as a module."""

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
