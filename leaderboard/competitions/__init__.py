"""Competitions and their hidden test sets (labels stay on the server)."""
