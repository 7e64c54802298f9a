"""``engine.nn`` (modules are added by the nn work)."""
from . import functional  # noqa: F401
