"""Kept only as a name: the app's event lines are ``replay.words.event_line`` (tests/engine/test_compile.py
still imports it from here; the app itself imports replay.words)."""
from replay.words import event_line  # noqa: F401
