"""Secrets in excerpts: found before anything leaves the machine, redacted unless allowed.

Notes hold API keys, passwords and private keys, and a prompt goes to a cloud chat tool. Three
families of rules, chosen by measurement on a labelled corpus (tests/data/secrets/positives.txt)
and on every chunk of ../shared/data as negatives (tests/benchmarks/secret_detectors.py; the
figures and the comparison with detect-secrets are in docs/reliability.md):

- known token formats (their fixed prefixes, as gitleaks' rules list them), found even when
  glued to a word;
- credentials in unmistakable places: a private key block, user:password@ in a URL, `curl -u`,
  `.netrc`, an Authorization header, a Docker `auth`, a table column named "password", a tool's
  password argument (`mysql -p`, `redis-cli -a`, `openssl -k`), a wallet's seed phrase, recovery codes;
- a name that says password, secret, token or key (any prefix or suffix, any case, the notes'
  languages) followed by a value that is not a placeholder, a path or code (after a password's
  name, words joined by one mark count although they read as a slug).

Findings carry where and what kind, never the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .secret_rules import (
    ASSIGNMENT_TAIL,
    CHANGE_PREPS,
    CHANGE_STEMS,
    FORMATS,
    KEY_WORDS,
    KEYWORDS,
    NAME_CHAR,
    OTHER_FIELDS,
    PLACES,
    PROSE_CONNECTORS,
    PROSE_NAME,
    PROSE_QUALIFIERS,
    PROSE_VALUE,
    SHORT_COLUMNS,
    TABLE_SECRET_COLUMN,
    WEAK_CONNECTORS,
    WORD_PASSPHRASE,
    is_placeholder,
    looks_like_a_credential,
    placeholder_word,
    secret_name,
)

REDACTED = "[REDACTED {kind}]"
REDACTION_MARK = re.compile(r"\[REDACTED [^\]]+\]")
MASK = "•"  # what the window shows in place of each character of a secret


@dataclass(frozen=True)
class Secret:
    """One secret in a text: what kind, where (character span, 1-based line), never its value."""

    kind: str
    start: int
    end: int
    line: int


def _assigned_value_ok(value: str, rest_of_line: str, phrase: bool, password: bool = False) -> bool:
    """An assigned value (after `=` or `:`) counts from 8 characters whatever they are, unless it is a
    placeholder, code or a path; a shorter one (6–7) only with a digit or a symbol in it. A message
    (two spaces or more, unless a pass-phrase) and a word that a sentence goes on after ("Token:
    Attempts to consume…") are not. After a name that says password, words joined by one mark are a
    password however much they read as a slug."""
    v = value.strip("\"'`")
    if password and _joined_words(v):
        return True
    if is_placeholder(v) or (not phrase and v.count(" ") >= 2):
        return False
    if v.rstrip("*_,;:.)`").isalpha() and rest_of_line.strip() and value[0] not in "\"'`":
        return False
    if re.match(r"\.[A-Za-z_]|[(\[]", rest_of_line):  # the value goes on as code: "((4))".split('')
        return False
    short = value[0] not in "\"'`" and len(v) >= 6 and not v.isalpha() and looks_like_a_credential(v + "xx")
    return len(v) >= 8 or short


def _joined_words(value: str) -> bool:
    """A password of words joined by one mark ("orange-tiger-maple-river"), not a placeholder."""
    return bool(WORD_PASSPHRASE.fullmatch(value)) and not placeholder_word(value)


def _keywords(text: str) -> list[tuple[int, int]]:
    """(position, length) of each name keyword in `text`, in order (found with str.find: a regular
    expression of ~30 alternatives costs more than everything else here together)."""
    low = text.lower()
    if len(low) != len(text):  # a letter whose lower case is longer ("İ"): positions would shift
        low = "".join(c.lower()[0] for c in text)
    found = []
    for word in KEYWORDS:
        at = low.find(word)
        while at >= 0:
            found.append((at, len(word)))
            at = low.find(word, at + 1)
    return sorted(found)


def _named(text: str) -> list[tuple[str, int, int]]:
    """Values after a name that says secret. Found from the name's keyword (cheap to look for) outward:
    the identifier around it (`DB_PASSWORD`, `clientSecret`, `WLAN-Schlüssel`), words up to three
    either side for a qualifier ("API klíč", "Clé API"), then either a separator and the value
    (`=`, `:`, `=>`; a pass-phrase runs to the line's end), or in prose a connector ("is", "est", "je",
    "è", "ist", "—") or nothing before a word that reads as a credential."""
    out: list[tuple[str, int, int]] = []
    done = -1
    for at, length in _keywords(text):
        if at < done:
            continue
        start, end = at, at + length
        while start > 0 and NAME_CHAR.match(text[start - 1]):
            start -= 1
        while end < len(text) and NAME_CHAR.match(text[end]):
            end += 1
        done = end
        if text[start:end].lower() == "passe" and not text[:start].lower().endswith(("mot de ", "mots de ")):
            continue  # French "se passe", not "mot de passe"
        line_start = text.rfind("\n", 0, start) + 1
        before = text[line_start:start].split()[-3:]
        tail = ASSIGNMENT_TAIL.match(text, end)
        if tail is not None and tail.group("words") and f"{tail.group('words').split()[-1].lower()}:" in OTHER_FIELDS:
            tail = None  # "access key for user: …" names the user, not the key
        what = secret_name(text[start:end], before + (tail.group("words").split() if tail else []))
        if what is None:
            continue
        if tail is not None:
            value = tail.group("value")
            v_start, v_end = tail.span("value")
            if what == "passphrase" and value[0] not in "\"'`":
                line_end = text.find("\n", v_start)
                value = text[v_start : len(text) if line_end < 0 else line_end].rstrip()
                v_end = v_start + len(value)
            line_end = text.find("\n", v_end)
            rest = text[v_end : len(text) if line_end < 0 else line_end]
            if _assigned_value_ok(value, rest, what == "passphrase", bool(PROSE_NAME.fullmatch(text[start:end]))):
                if len(value) > 2 and value[0] in "\"'`" and value[-1] == value[0]:  # the quotes stay
                    v_start, v_end = v_start + 1, v_end - 1
                out.append(("password or secret", v_start, v_end))
                done = v_end
            continue
        if text[:start].rstrip(" \t*").endswith(("=", ":")):  # the name is itself a value: keyformat=passphrase
            continue
        if what == "passphrase" or PROSE_NAME.fullmatch(text[start:end]) or _qualified_key(text[start:end], before):
            found = _prose_value(text, end, what == "passphrase", strict="_" not in text[start:end])
            if found is not None:
                out.append(("password or secret", *found))
                done = found[1]
    return out


def _qualified_key(name: str, before: list[str]) -> bool:
    """A key or token named with a qualifier that lets it stand in prose ("the API key is …", "secret
    access key …"); a bare "secret", "key" or "token" does not."""
    parts = re.split(r"[-_.]", name.lower())
    if not any(p in KEY_WORDS or p.endswith(("key", "token")) or p in ("token", "jeton", "токен") for p in parts):
        return False
    return any(p in PROSE_QUALIFIERS for w in [*before, name] for p in re.split(r"[-_.]", w.lower()))


PROSE_WORDS = 9  # how far after a password's name its value may come ("… heb ik veranderd in Fietsbel#19")


def _prose_value(text: str, at: int, phrase: bool = False, strict: bool = True) -> tuple[int, int] | None:
    """The first word within PROSE_WORDS after `at` on its line, right after the name or after a connector
    ("is", "est", "je", "è", "ist", "—", a word ending in ":"), that reads as a credential; for a
    pass-phrase, the rest of the line after the connector."""
    line_end = text.find("\n", at)
    rest = text[at : len(text) if line_end < 0 else line_end]
    words = list(re.finditer(r"\S+", rest))[:PROSE_WORDS]
    for i, w in enumerate(words):
        before = words[i - 1].group(0) if i else ""
        connected = i > 0 and (
            before.lower() in PROSE_CONNECTORS
            or (before.endswith((":", "=")) and not before.endswith("==") and before.lower() not in OTHER_FIELDS)
        )
        weak = i > 0 and not connected and _weakly_connected(words, i)
        if weak and PROSE_VALUE.fullmatch(w.group(0)) and looks_like_a_credential(w.group(0)):
            start = at + w.start()
            return start, start + len(w.group(0))
        if connected or (i == 0 and w.start() > 0):  # right after the name, a space between
            if phrase and i:
                value = rest[w.start() :].rstrip()
                if len(value.split()) >= 3 and looks_like_a_credential(value.replace(" ", "")):
                    return at + w.start(), at + w.start() + len(value)
            value = w.group(0)
            lenient = (connected or not strict) and not value.rstrip(".,;:!?").endswith("**") and value[0] not in "-*"
            quoted = re.fullmatch(r"([`\"'])[^`\"'\s]+\1[.,;:!?)]*", value)  # `…` in prose: taken whole
            plain = lenient or quoted or PROSE_VALUE.fullmatch(value)
            if plain and looks_like_a_credential(value):
                start = at + w.start()
                return start, start + len(value)  # a full stop or bracket after it goes too: harmless
        if i and w.group(0).endswith((".", ";")):  # the sentence ended
            return None
    return None


def _weakly_connected(words: list[re.Match[str]], i: int) -> bool:
    """The word before words[i] is a weak connector ("now", Polish "to"), or a preposition after a verb
    of changing within the two words before it ("changed it to", "geändert auf", "veranderd in")."""
    before = words[i - 1].group(0).lower()
    if before in WEAK_CONNECTORS:
        return True
    return before in CHANGE_PREPS and any(
        words[j].group(0).lower().startswith(CHANGE_STEMS) for j in range(max(0, i - 3), i - 1)
    )


def _spans(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every candidate, in rule order (the most specific first)."""
    out: list[tuple[str, int, int]] = []
    low = text.lower()
    for kind, needles, pattern in FORMATS:
        if any(n in low for n in needles):
            out += [(kind, *m.span()) for m in pattern.finditer(text)]
    for kind, needles, pattern, group, check in PLACES:
        if not any(n in low for n in needles):
            continue
        for m in pattern.finditer(text):
            if check(m.group(group)):
                out.append((kind, *m.span(group)))
    return out + _named(text) + _table_cells(text) + _csv_cells(text) + _kubernetes_secret(text)


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
                    readable = i in passwords and _joined_words(value)
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
    for line in text.split("\n"):
        fields = None
        if columns:
            fields = _fields(line, sep)
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


def find_secrets(text: str) -> list[Secret]:
    """Secrets in `text`, in order; overlapping findings keep the first rule's (most specific) kind and
    cover both spans."""
    found: list[list] = []  # [kind, start, end]
    for kind, start, end in _spans(text):
        if end <= start:
            continue
        for f in found:
            if f[1] < end and start < f[2]:
                f[1], f[2] = min(f[1], start), max(f[2], end)
                break
        else:
            found.append([kind, start, end])
    found.sort(key=lambda f: f[1])
    merged: list[list] = []
    for f in found:  # a widened finding may now overlap its neighbour
        if merged and f[1] < merged[-1][2]:
            merged[-1][2] = max(merged[-1][2], f[2])
        else:
            merged.append(f)
    return [Secret(kind, start, end, text.count("\n", 0, start) + 1) for kind, start, end in merged]


def redact(text: str, secrets: list[Secret] | None = None) -> str:
    """`text` with each secret replaced by [REDACTED kind]."""
    secrets = find_secrets(text) if secrets is None else secrets
    out: list[str] = []
    at = 0
    for s in sorted(secrets, key=lambda s: s.start):
        out.append(text[at : s.start])
        out.append(REDACTED.format(kind=s.kind))
        at = s.end
    out.append(text[at:])
    return "".join(out)


def mask(text: str, secrets: list[Secret] | None = None) -> str:
    """`text` with each secret's characters shown as • (line breaks kept): the same length, so
    highlight positions computed on the text still point at the same words."""
    secrets = find_secrets(text) if secrets is None else secrets
    if not secrets:
        return text
    chars = list(text)
    for s in secrets:
        for i in range(s.start, s.end):
            if chars[i] not in "\n\r":
                chars[i] = MASK
    return "".join(chars)


class Scrubber:
    """Redacts what leaves the machine in a search's output: the secrets in every string, and the
    pieces of a secret typed into the query itself (its terms, stems and trigrams in the explanation)."""

    def __init__(self, query: str = "") -> None:
        self.pieces = [query[s.start : s.end].lower() for s in find_secrets(query)]
        self.count = 0  # secrets redacted so far

    def text(self, s: str) -> str:
        found = find_secrets(s)
        self.count += len(found)
        out = redact(s, found) if found else s
        if self.pieces:
            low = out.lower()
            if len(low.strip("_ ")) >= 3 and any(low.strip("_ ") in p for p in self.pieces):
                self.count += 1
                return "[REDACTED]"
            for piece in self.pieces:
                at = low.find(piece)
                while at >= 0:
                    self.count += 1
                    out = out[:at] + "[REDACTED]" + out[at + len(piece) :]
                    low = out.lower()
                    at = low.find(piece)
        return out

    def json(self, data: object) -> object:
        """`data` (a search's JSON) with every string scrubbed; numbers and keys as they are."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, list):
            return [self.json(v) for v in data]
        if isinstance(data, dict):
            return {k: self.json(v) for k, v in data.items()}
        return data
