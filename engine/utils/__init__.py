"""``engine.utils``: checkpointing (``engine.utils.checkpoint``)."""
from . import checkpoint  # noqa: F401
