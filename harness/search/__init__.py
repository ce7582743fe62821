"""Helpers for search bots: hidden-world sampling and a fast play-phase rollout."""
