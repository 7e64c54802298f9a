"""Activation checkpointing (filled in by the checkpointing work)."""
