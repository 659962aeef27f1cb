"""Helpers shared by test packages (no tests here)."""
