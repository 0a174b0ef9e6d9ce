"""Secrets that a note's layout names rather than a word beside them: a Markdown table's or a CSV
export's password column, a Kubernetes Secret's data, a wallet's numbered recovery words; and
`note_context`, what of a note before a passage decides those in it (a table's header further up)."""

from __future__ import annotations

import re
from collections.abc import Callable

from .secret_rules import (
    PROSE_NAME,
    PROSE_VALUE,
    SHORT_COLUMNS,
    TABLE_SECRET_COLUMN,
    WORD_PASSPHRASE,
    is_placeholder,
    looks_like_a_credential,
    placeholder_word,
    secret_name,
)


def structure_spans(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every secret the layout of `text` names."""
    return _table_cells(text) + _csv_cells(text) + _kubernetes_secret(text) + _numbered_words(text) + _code_list(text)


_CODES_LABEL = re.compile(
    r"(?im)^[^\n]{0,40}\b(?:backup|recovery|scratch|one-time|2fa|mfa|emergency|záložní|obnovovací)[ -]?"
    r"(?:codes?|kódy|keys?)\b[^\n]{0,60}:?[ \t]*\n"
)
_CODE_LINE = re.compile(r"[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?([A-Za-z0-9]{3,8}(?:[- ][A-Za-z0-9]{3,8}){0,3})[ \t]*\n?")


def _code_list(text: str) -> list[tuple[str, int, int]]:
    """Backup or recovery codes one a line (or a list item) under a line that names them: three or more,
    each with a digit."""
    out: list[tuple[str, int, int]] = []
    low = text.lower()
    if "code" not in low and "kód" not in low and "key" not in low:
        return out
    for label in _CODES_LABEL.finditer(text):
        at = label.end()
        while True:  # blank lines and a code fence before the codes
            skip = re.match(r"[ \t]*(?:```[^\n]*|~~~[^\n]*)?\n", text[at:])
            if skip is None or skip.end() == 0:
                break
            at += skip.end()
        codes = []
        while at < len(text):
            m = _CODE_LINE.match(text, at)
            whole_line = m is not None and (m.end() == len(text) or text[m.end() - 1] == "\n")
            if m is None or not whole_line or not any(c.isdigit() for c in m.group(1)):
                break
            codes.append(m.span(1))
            at = m.end()
        if len(codes) >= 3:
            out += [("recovery code", a, b) for a, b in codes]
    return out


def joined_words(value: str) -> bool:
    """A password of words joined by one mark ("orange-tiger-maple-river"), not a placeholder."""
    return bool(WORD_PASSPHRASE.fullmatch(value)) and not placeholder_word(value)


def _table_cells(text: str) -> list[tuple[str, int, int]]:
    """Cells of a Markdown table's column whose header names a password, key or token."""
    out: list[tuple[str, int, int]] = []
    lines = text.split("\n")
    offset = 0
    columns: set[int] = set()
    header: set[int] = set()
    passwords: set[int] = set()  # of the columns, those named password (words joined count there)
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("|") and not set(stripped) <= set("|-:+= "):  # a row naming its secret first
            cells = stripped.strip("|").split("|")
            if len(cells) >= 2 and _secret_column(cells[0]) and not is_placeholder(cells[1].strip()):
                value = cells[1].strip()
                if looks_like_a_credential(value) and PROSE_VALUE.fullmatch(value):
                    start = offset + line.index("|") + 1 + len(cells[0]) + 1 + cells[1].index(value)
                    out.append(("password or secret", start, start + len(value)))
        if not stripped.startswith("|"):
            columns, header = set(), set()
        else:
            cells = stripped.strip("|").split("|")
            if set(stripped) <= set("|-: "):
                columns = header  # the row above was the header
            elif not columns:
                header = {i for i, c in enumerate(cells) if _secret_column(c)}
                passwords = {i for i in header if PROSE_NAME.fullmatch(cells[i].strip().strip("*"))}
            else:
                at = offset + line.index("|") + 1
                for i, cell in enumerate(cells):
                    value = cell.strip()
                    readable = i in passwords and joined_words(value)
                    if i in columns and len(value) >= 4 and (readable or not is_placeholder(value)):
                        start = at + cell.index(value)
                        out.append(("password or secret", start, start + len(value)))
                    at += len(cell) + 1
        offset += len(line) + 1
    return out


def _secret_column(header: str) -> bool:
    """A table's or CSV's column whose header names a password, PIN, secret or token ("Password",
    "login_password", "PW", "Heslo", "API key"), not something about one ("Password policy")."""
    name = header.strip().strip("*\"' ")
    if TABLE_SECRET_COLUMN.match(name) or name.lower() in SHORT_COLUMNS:
        return True
    words = re.split(r"[\s_.\-]+", name.lower())
    return len(name) <= 40 and len(words) <= 3 and bool(secret_name(name)) and any(
        PROSE_NAME.fullmatch(w) or w in ("secret", "token") for w in words
    )


_COLUMN_NAME = re.compile(r"[ \t]*\"?[\w][\w .\-/#()]{0,38}\"?[ \t]*")  # what a CSV header's fields look like


_CSV_SEPARATORS = ",;\t"


def _csv_cells(text: str) -> list[tuple[str, int, int]]:
    """Cells under a CSV header that names a password column (a password manager's export: Bitwarden's
    `login_password`, KeePass's "Password"), in the rows below it with as many fields."""
    out: list[tuple[str, int, int]] = []
    offset = 0
    columns: list[int] = []
    width, sep = 0, ","
    lines = text.split("\n")
    for n, line in enumerate(lines):
        fields = None
        if columns:
            fields = _fields(line, sep)
            if n == len(lines) - 1 and line:  # the passage ends inside this row: its first fields count
                if fields is None and line.rfind('"') > 0:
                    fields = _fields(line[: line.rfind('"')], sep)
                if fields is not None and len(fields) < width:
                    fields += [(len(line), len(line))] * (width - len(fields))
            if fields is None or len(fields) != width:
                columns = []
            else:
                for i in columns:
                    start, end = fields[i]
                    value = line[start:end]
                    if len(value) >= 4 and not placeholder_word(value):  # in its column, any word is one
                        out.append(("password or secret", offset + start, offset + end))
        if not columns:
            for sep in _CSV_SEPARATORS:
                fields = _fields(line, sep) if line.count(sep) >= 2 else None
                if fields and all(_COLUMN_NAME.fullmatch(line[a:b]) for a, b in fields):
                    named = [i for i, (a, b) in enumerate(fields) if _secret_column(line[a:b])]
                    if named:
                        columns, width = named, len(fields)
                        break
        offset += len(line) + 1
    return out


def _fields(line: str, sep: str) -> list[tuple[int, int]] | None:
    """Each field's span in a CSV line (inside its quotes when quoted), or None when it is not one."""
    spans = []
    at = 0
    while at <= len(line):
        if line.startswith('"', at):
            end = line.find('"', at + 1)
            while end >= 0 and line.startswith('""', end):
                end = line.find('"', end + 2)
            if end < 0:
                return None
            spans.append((at + 1, end))
            at = end + 1
            rest = line[at:].lstrip(" ")
            if rest and not rest.startswith(sep):
                return None
            at = len(line) - len(rest) + 1
        else:
            end = line.find(sep, at)
            end = len(line) if end < 0 else end
            spans.append((at, end))
            at = end + 1
    return spans


_KIND_SECRET = re.compile(r"(?m)^[ \t]*kind:[ \t]*Secret[ \t]*$")
_DATA_BLOCK = re.compile(r"(?m)^([ \t]*)(?:data|stringData):[ \t]*\n((?:\1[ \t]+[^\n]*\n?)+)")
_DATA_ENTRY = re.compile(r"(?m)^[ \t]+[\w.-]+:[ \t]*[\"']?([^\s\"'#][^\s\"']{3,})")


def _kubernetes_secret(text: str) -> list[tuple[str, int, int]]:
    """The values under `data:` and `stringData:` of a Kubernetes Secret (base64 or plain: each is one)."""
    if not _KIND_SECRET.search(text):
        return []
    out = []
    for block in _DATA_BLOCK.finditer(text):
        for m in _DATA_ENTRY.finditer(text, block.start(2), block.end(2)):
            out.append(("password or secret", *m.span(1)))
    return out


# A note's extension at the end of a file name's part: not part of a value ("password=Tr0ub4dor&3.md")
_SEED_WORDS = ("seed", "recovery", "mnemonic", "wallet", "bip39", "bip-39", "backup words")
_SEED_CONTEXT = re.compile(r"(?i)seed|recovery|mnemonic|wallet|bip-?39|backup words")
_NUMBERED_WORD = re.compile(r"(?<![\w.])(\d{1,2})[.):]?[ \t]*(?:\|[ \t]*)?([a-z]{3,8})\b")


def _numbered_words(text: str) -> list[tuple[str, int, int]]:
    """A wallet's recovery words written as a numbered list (1. orbit 2. maple …, a list or a table):
    12 to 24 single words numbered 1, 2, 3… in order, near a word that names a seed or recovery phrase."""
    low = text.lower()
    if not any(w in low for w in _SEED_WORDS) or not _NUMBERED_WORD.search(text):
        return []
    out: list[tuple[str, int, int]] = []
    run: list[tuple[int, int]] = []
    last_end = 0
    for m in _NUMBERED_WORD.finditer(text):
        n = int(m.group(1))
        if n == len(run) + 1 and (not run or m.start() - last_end <= 12):
            run.append(m.span(2))
        elif n == 1:
            run = [m.span(2)]
        else:
            run = []
            continue
        last_end = m.end()
        if len(run) in (12, 15, 18, 21, 24):
            lo, hi = run[0][0], run[-1][1]
            if _SEED_CONTEXT.search(text, max(0, lo - 300), min(len(text), hi + 300)):
                out = [o for o in out if o[1] < lo] + [("recovery phrase", a, b) for a, b in run]
    return out


NEAR_CHARS = 2_000  # read before every hit: its last lines, and most tables' headers
FAR_CHARS = 20_000  # read only when the hit starts in a table or CSV running past NEAR_CHARS


def context_of(read: Callable[[int], str], text: str) -> str:
    """`note_context` of a passage, reading NEAR_CHARS of its note before it (`read(n)`: the n
    characters before it) and FAR_CHARS only when it starts inside a table or CSV whose rows run
    back past those: a hit costs a 2 KB read, not a 20 KB one (searches at 180,000 chunks)."""
    before = read(NEAR_CHARS)
    if len(before) >= NEAR_CHARS:
        lines = before.split("\n")
        if _runs_to_top(lines, lines[-1] + text.split("\n", 1)[0]):
            before = read(FAR_CHARS)
    return note_context(before, text)


def _runs_to_top(lines: list[str], first: str) -> bool:
    """Whether `first` (the passage's first line) is a row of a table or CSV whose rows fill `lines`
    up to the first (so its header may lie further up)."""
    row = first.strip()
    if row.startswith("|"):
        return all(line.strip().startswith("|") for line in lines[1:-1]) and not any(
            set(line.strip()) <= set("|-: ") for line in lines[1:-1]
        )
    for sep in _CSV_SEPARATORS:
        width = len(_fields(row, sep) or ()) if row.count(sep) >= 2 else 0
        if width:
            return all(len(_fields(line, sep) or ()) == width for line in lines[1:-1])
    return False


def note_context(before: str, text: str) -> str:
    """What of a note before a passage (`before`, the note's text up to it) decides the passage's secrets:
    its last lines (a heading or a label naming the value below it, the start of a line cut mid-way) and,
    when the passage starts inside a Markdown table or a CSV whose header is further up, that header."""
    if not before:
        return ""
    lines = before.split("\n")
    tail = lines[-4:]
    header = _header_above(lines, lines[-1] + text.split("\n", 1)[0], len(lines) - len(tail))
    return "\n".join(header + tail)


def _header_above(lines: list[str], first: str, shown_from: int) -> list[str]:
    """The header (and a Markdown table's separator row) of the table or CSV that `first`, the passage's
    first line, belongs to, when it lies above `shown_from`; [] otherwise."""
    row = first.strip()
    if row.startswith("|"):
        i = len(lines) - 2
        while i >= 1 and lines[i].strip().startswith("|"):
            if set(lines[i].strip()) <= set("|-: "):
                return lines[i - 1 : i + 1] if i - 1 < shown_from else []
            i -= 1
        return []
    for sep in _CSV_SEPARATORS:
        width = len(_fields(row, sep) or ()) if row.count(sep) >= 2 else 0
        if width:
            i = len(lines) - 2
            while i >= 0 and len(_fields(lines[i], sep) or ()) == width:
                i -= 1
            return [lines[i + 1]] if i + 1 < shown_from and i + 1 < len(lines) - 1 else []
    return []


