"""File names as stored and as shown (no heavy imports: the CLI uses it before numpy is loaded)."""

from __future__ import annotations


def shown(name: str) -> str:
    """A file name as a person sees it: bytes that were not UTF-8 (kept in the index as escaped
    surrogates, so the file can still be opened) become the replacement character U+FFFD."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name
