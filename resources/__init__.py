"""Bundled resources (icons, sample notes), loaded through importlib.resources."""
