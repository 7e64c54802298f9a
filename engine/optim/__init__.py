"""``engine.optim``."""
