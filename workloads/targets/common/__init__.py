"""Helpers shared by several targets (Arrow frames, bars, caches, files, turns)."""
