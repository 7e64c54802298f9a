"""``engine.utils``: checkpointing (``engine.utils.checkpoint``) and data loading (``engine.utils.data``)."""
from . import checkpoint  # noqa: F401
from . import data  # noqa: F401
