"""File names and text as stored and as shown (no heavy imports: the CLI uses it before numpy is loaded)."""

from __future__ import annotations

from functools import lru_cache

# Terminal control characters (C0 but tab and newline, DEL, C1): in a note's text, `ESC]0;…BEL` retitles
# a terminal and `ESC[2J` clears it. Shown as backslash-u-00NN, which inside a JSON string (where
# ensure_ascii=False leaves DEL and C1 raw) reads back as the same character.
_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]


@lru_cache(maxsize=4)
def _control_table(keep: str) -> dict[int, str]:
    return {c: f"\\u{c:04x}" for c in _CONTROLS if chr(c) not in keep}


def visible_controls(text: str, keep: str = "\t\n") -> str:
    """`text` with every control character (but those in `keep`) written as visible `\\u00NN`: what
    ragdesk prints or hands an assistant never drives a terminal."""
    return text.translate(_control_table(keep))


def shown(name: str) -> str:
    """A file name as a person sees it: bytes that were not UTF-8 (kept in the index as escaped
    surrogates, so the file can still be opened) become the replacement character U+FFFD."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name
