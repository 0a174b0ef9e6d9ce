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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .languages import STOP_WORDS
from .secret_layout import joined_words, structure_spans
from .secret_rules import (
    ASSIGNMENT_TAIL,
    CHANGE_PREPS,
    CHANGE_STEMS,
    FORMATS,
    KEY_WORDS,
    KEYWORDS,
    MARKUP,
    NAME_CHAR,
    OTHER_FIELDS,
    PLACES,
    PROSE_CONNECTORS,
    PROSE_NAME,
    PROSE_QUALIFIERS,
    PROSE_VALUE,
    SUBSTRING_WORDS,
    WEAK_CONNECTORS,
    is_placeholder,
    looks_like_a_credential,
    placeholder_word,
    secret_name,
    unmistakable,
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
    if password and joined_words(v):
        return True
    if password and value[0] in "\"'`" and _SLUG.fullmatch(v) and not placeholder_word(v):
        return True  # quoted after a password's name: `houby-v-lese` is the password, not a name in code
    quoted = len(value) > 2 and value[0] in "\"'" and value[-1] == value[0] and _QUOTED_VALUE.fullmatch(v) is not None
    if is_placeholder(v) or (not phrase and not quoted and v.count(" ") >= 2):
        return False
    if v.rstrip("*_,;:.)`").isalpha() and rest_of_line.strip() and value[0] not in "\"'`":
        return False
    if re.match(r"\.[A-Za-z_]|[(\[]", rest_of_line):  # the value goes on as code: "((4))".split('')
        return False
    short = value[0] not in "\"'`" and len(v) >= 6 and not v.isalpha() and looks_like_a_credential(v + "xx")
    return len(v) >= 8 or short


# A quoted value with spaces that is a value, not a message: no word naming a secret, no sentence's end
_QUOTED_VALUE = re.compile(r"(?i)(?!.*(?:passw|secret|token|heslo|парол|senha|mot de passe))[^\n]*[^\s.:!?]")
_GROUP = re.compile(r"(?=[A-Za-z]*\d)[A-Za-z0-9]{4,6}")
_GROUPS = re.compile(r"(?:[ ](?=[A-Za-z]*\d)[A-Za-z0-9]{4,6}){2,}(?=[ \t]*$)")
_SLUG = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)+")
_PHRASE = re.compile(r"[ \t]*([\"'`“„«]?)((?:[^\W\d_]{2,}[ \t]+){2,6}[^\W\d_]{2,})([\"'`”“»]?)(?=[ \t]*([.,;!)]|$|\n))")
_STOP_WORDS = frozenset().union(*STOP_WORDS.values())


def _words_phrase(text: str, at: int, assigned: bool = False) -> tuple[int, int] | None:
    """Three to seven words after a password's name: quoted ("seven purple kites at dawn"), or lower-case
    words that build no sentence ("correct horse battery staple"; not "see the wiki", "same as above")
    that end the line (or, after `:`, a clause: "is therefore never stored, as…" is a sentence)."""
    m = _PHRASE.match(text, at)
    if m is None or m.group(1) and not m.group(3) or m.group(3) and not m.group(1):
        return None
    words = m.group(2).split()
    if any(k in w.lower() for w in words for k in SUBSTRING_WORDS):
        return None
    if m.group(1):
        return m.span(2)
    if any(not w.islower() or len(w) < 3 or w in _STOP_WORDS for w in words):
        return None
    return m.span(2) if m.group(4) in ("", "\n") or (assigned and m.group(4) == ",") else None


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
        if what == "credential":
            if tail is not None and unmistakable(tail.group("value").strip("\"'`")):
                v_start, v_end = tail.span("value")
                quoted = tail.group("value")[0] in "\"'`" and v_end - v_start > 2
                out.append(("password or secret", v_start + quoted, v_end - quoted))
                done = v_end
            continue
        block = _block_scalar(text, end)
        if block is not None:  # `password: |` with the value indented on the next line
            out.append(("password or secret", *block))
            done = block[1]
            continue
        value_m = _CONFIG_LINE.match(text, end) if tail is None and not text[line_start:start].strip() else None
        if value_m is not None and not text[start:end].isupper():  # `bindpw Nslcd#Bind-2024`; not "PASS t/a"
            if "/" not in value_m.group(1) and looks_like_a_credential(value_m.group(1)):
                out.append(("password or secret", *value_m.span(1)))
                done = value_m.end(1)
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
            password = bool(PROSE_NAME.fullmatch(text[start:end]))
            groups = _GROUPS.match(rest) if _GROUP.fullmatch(value) else None
            if groups is not None:  # a key printed in groups: "4F8A 2C9D 7E1B 5A3F"
                value, v_end, rest = text[v_start : v_end + groups.end()], v_end + groups.end(), ""
            if _assigned_value_ok(value, rest, what == "passphrase" or groups is not None, password):
                if len(value) > 2 and value[0] in "\"'`" and value[-1] == value[0]:  # the quotes stay
                    v_start, v_end = v_start + 1, v_end - 1
                out.append(("password or secret", v_start, v_end))
                done = v_end
                continue
            found = _words_phrase(text, v_start, assigned=True) if password else None
            found = found or (_value_below(text, start, end) if not rest.strip() and len(value) <= 2 else None)
            if found is not None:
                out.append(("password or secret", *found))
                done = found[1]
            continue
        if text[:start].rstrip(" \t*").endswith(("=", ":")):  # the name is itself a value: keyformat=passphrase
            continue
        below = _value_below(text, start, end) if text[start:end].lower() != "pass" else None
        if below is not None:
            out.append(("password or secret", *below))
            done = below[1]
            continue
        if text[start:end].lower() == "pass":  # "login ota pass Lipa-Kvet-2024": only a value that is nothing else
            after = re.match(r"[ \t]+(\S+)", text[end:])
            if after is not None and unmistakable(after.group(1)):
                out.append(("password or secret", end + after.start(1), end + after.end(1)))
            continue
        after = text[end : end + 40].split()[:2]  # "clave de API": the qualifier may follow
        qualified = _qualified_key(text[start:end], before + after)
        if what == "passphrase" or PROSE_NAME.fullmatch(text[start:end]) or qualified:
            password = bool(PROSE_NAME.fullmatch(text[start:end]))
            found = _prose_value(text, end, what == "passphrase", strict="_" not in text[start:end], password=password)
            if found is None and PROSE_NAME.fullmatch(text[start:end]):
                found = _value_before(text, line_start, start)
            if found is not None:
                out.append(("password or secret", *found))
                done = max(done, found[1])
    return out


def _value_before(text: str, line_start: int, start: int) -> tuple[int, int] | None:
    """A value a sentence gives before the password's name ("Modry-Slon-84 is the new Wi-Fi password"):
    within eight words before it in the same sentence, a word that can be nothing but a credential."""
    words = list(re.finditer(r"\S+", text[line_start:start]))[-8:]
    for w in reversed(words):
        if w is not words[-1] and w.group(0).endswith((".", ";", "!", "?")):
            break
        if unmistakable(w.group(0)):
            return line_start + w.start(), line_start + w.start() + len(w.group(0).rstrip(".,;:!?)"))
    return None


_LABEL_END = re.compile(r"(?:[ \t]+[^\W_][\w'’\-]{0,29}){0,4}[ \t]*[*_]*[ \t]*[:：?？]?[ \t]*[*_]*[ \t]*(?=\n)")
_LABEL_START = re.compile(
    r"[ \t]*(?:#{1,6}[ \t]+|[-*+>][ \t]+|\d+[.)][ \t]+|(?:Q|Question|Otázka)[ \t]*:[ \t]*)?[*_]*"
    r"(?:[^\W_][\w'’\-]*[ \t]+){0,5}"
)
_VALUE_LINE = re.compile(
    r"\n(?:[ \t]*(?:```|~~~)[^\n]*\n|[ \t]*\n){0,3}[ \t]*(?:[-*+>:][ \t]+|(?:A|Answer|Odpověď)[ \t]*:[ \t]*)?"
    r"([`\"'*_]*)([^\s:/@()\[\]{}]+?)\1[ \t]*(?=\n|$)"
)


_CONFIG_LINE = re.compile(r"[ \t]+([^\s\"'`]+)[ \t]*(?=\n|$)")
_BLOCK_START = re.compile(r"[\"']?[ \t]*:[ \t]*[|>][-+]?\d?[ \t]*(?:#[^\n]*)?(?=\n)")
_BLOCK_VALUE = re.compile(r"[ \t]*\n([ \t]+)(\S[^\n]*?)[ \t]*(?=\n|$)")


def _block_scalar(text: str, end: int) -> tuple[int, int] | None:
    """A YAML block scalar's first line after a secret's name (`password: |`, `token: >-`)."""
    start = _BLOCK_START.match(text, end)
    if start is None:
        return None
    m = _BLOCK_VALUE.match(text, start.end())
    if m is None or is_placeholder(m.group(2)):
        return None
    return m.span(2)


def _value_below(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A short label line that a secret's name ends ("**Wi-Fi password:**", "## API token", "Heslo k
    routeru") and the value alone on the next line with text (past blank lines, a code fence, a list
    marker or quotes): a word with a digit or a mark, not a sentence's end."""
    line_start = text.rfind("\n", 0, start) + 1
    label = _LABEL_END.match(text, end)
    if label is None or not _LABEL_START.fullmatch(text, line_start, start):
        return None
    m = _VALUE_LINE.match(text, label.end())
    if m is None:
        return None
    value = m.group(2)
    if value.strip(MARKUP).isalpha() or value.endswith((".", ",", ";")) or not any(c.isalnum() for c in value):
        return None
    if any(k in value.lower() for k in SUBSTRING_WORDS):
        return None
    password = bool(PROSE_NAME.fullmatch(text[start:end]))
    return m.span(2) if _assigned_value_ok(value, "", False, password) else None


def _qualified_key(name: str, before: list[str]) -> bool:
    """A key or token named with a qualifier that lets it stand in prose ("the API key is …", "secret
    access key …"); a bare "secret", "key" or "token" does not."""
    parts = re.split(r"[-_.]", name.lower())
    if not any(p in KEY_WORDS or p.endswith(("key", "token")) or p in ("token", "jeton", "токен") for p in parts):
        return False
    return any(p in PROSE_QUALIFIERS for w in [*before, name] for p in re.split(r"[-_.]", w.lower()))


PROSE_WORDS = 9  # how far after a password's name its value may come ("… heb ik veranderd in Fietsbel#19")


def _prose_value(
    text: str, at: int, phrase: bool = False, strict: bool = True, password: bool = False
) -> tuple[int, int] | None:
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
            words_phrase = _words_phrase(text, at + w.start()) if connected and password else None
            if words_phrase is not None:
                return words_phrase
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
        if i and w.group(0).endswith((".", ";")):  # the sentence ended: only an unmistakable value further on
            break
    for w in words[1:]:
        if unmistakable(w.group(0)):
            start = at + w.start()
            return start, start + len(w.group(0))
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
    return out + _named(text) + structure_spans(text)


_NOTE_EXTENSION = re.compile(
    r"\.(?:md|markdown|mdown|txt|text|rst|org|adoc|tex|pdf|html?)(?=$|[\s/\\:)\]\"'])", re.IGNORECASE
)
# A control character as a file name's source line shows it (`\x0a`), or as a person escapes it
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[nrt])")


def _name_reading(name: str) -> str | None:
    """A file name or heading trail read as a person would, the same length as `name` (so spans carry
    over): note extensions blanked, escaped line breaks made line breaks again; None when nothing changes."""
    reading = _NOTE_EXTENSION.sub(lambda m: " " * len(m.group(0)), name)
    if "\\" in reading:
        reading = _ESCAPE.sub(lambda m: "\n" + " " * (len(m.group(0)) - 1), reading)
    return None if reading == name else reading


def find_secrets(text: str, name: bool = False, context: str = "") -> list[Secret]:
    """Secrets in `text`, in order; overlapping findings keep the first rule's (most specific) kind and
    cover both spans. `name`: `text` is a file name or a source line, read also as in _name_reading.
    `context`: what of its note comes before it (secret_layout.note_context), read with it and never reported."""
    found: list[list] = []  # [kind, start, end]
    spans = _spans(text)
    if context:
        offset = len(context)
        spans += [(kind, max(s, offset) - offset, e - offset) for kind, s, e in _spans(context + text) if e > offset]
    reading = _name_reading(text) if name else None
    if reading is not None:
        spans += _spans(reading)
    for kind, start, end in spans:
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

    def __init__(self, query: str = "", hits: Sequence[Any] = ()) -> None:
        self.pieces = [query[s.start : s.end].lower() for s in find_secrets(query)]
        self.count = 0  # secrets redacted so far
        self.contexts = {h.text: h.context for h in hits if h.context}  # a hit's text is read with its note's

    def text(self, s: str) -> str:
        found = find_secrets(s, name=True, context=self.contexts.get(s, ""))  # read as a file name too
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
