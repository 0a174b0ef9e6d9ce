"""The query language, parsed once: words that rank, phrases and words required or left out, and
filters on the note (docs/query.md).

A `Query` is what every entry point passes around (the window, `search`, `prompt`, `eval`, why-not,
the assistant): the analyzers see only `Query.text`, its words; the rest becomes a chunk mask
(core.query_mask). A question without operators parses to itself: `text == raw`, nothing else.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

FIELDS = ("path", "ext", "tag", "title", "after", "before")  # a contract: the spellings docs/query.md gives
OPERATORS = ("OR", "AND", "NOT")  # upper case only: "or" in a question is a word
QUOTES = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c", "\u00ab": "\u00bb"}  # "…" “…” „…“ «…»
# The language as the F1 help, the search field's tooltip and docs/query.md teach it (one home).
SYNTAX: tuple[tuple[str, str], ...] = (
    ('"exact phrase"', "the words next to each other, in this order (case and accents as the index compares them)"),
    ('-word  -"phrase"  NOT word', "leave out the chunks that hold it"),
    ("+word  a AND b", "only chunks that hold the word (both words)"),
    ("a OR b", "either one: with phrases or +words, a chunk must hold one of them"),
    ('path:vim  path:"my notes/work"', "notes in a folder of that name anywhere (subfolders too), or under that path"),
    ("-path:archive", "leave a folder's notes out (every filter can be negated with -)"),
    ("ext:pdf", "notes of one file type"),
    ("tag:name  tag:project/alpha", "notes tagged #name or in front matter's tags (tag:project finds project/alpha)"),
    ("title:word", "notes whose title or file name holds the word"),
    ("after:2025-11 before:2025", "notes dated after or before a year, month or day (front matter's date or modified)"),
)
_WORD = re.compile(r"\w")
_FIELD = re.compile(r"([a-z]+):")
_LETTER = re.compile(r"\w*[^\W\d_]")  # a word with a letter in it (not a number)
_DATE = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")
_NEEDS = {
    "path": "a folder name",
    "ext": "a file type such as pdf",
    "tag": "a tag name",
    "title": "a word of the title",
    "after": "a date like 2025, 2025-11 or 2025-11-03",
    "before": "a date like 2025, 2025-11 or 2025-11-03",
}


@dataclass(frozen=True)
class Clause:
    """A word or a quoted phrase of the query, as typed."""

    text: str
    phrase: bool = False

    def shown(self) -> str:
        return f'"{self.text}"' if self.phrase else self.text


@dataclass(frozen=True)
class Filter:
    """`field:value` on the note (negated: `-field:value`)."""

    field: str
    value: str
    negated: bool = False

    def shown(self) -> str:
        value = f'"{self.value}"' if any(c.isspace() for c in self.value) else self.value
        return f"{'-' if self.negated else ''}{self.field}:{value}"

    def period(self) -> tuple[float, float]:
        """after/before: the (start, end) of the day, month or year named, as local epoch seconds."""
        return date_period(self.value)


@dataclass(frozen=True)
class Query:
    """A parsed query. `required`: groups of which each chunk must hold at least one clause;
    `excluded`: clauses no chunk may hold; `filters`: on the note; `problems`: what did not parse
    (searched as words instead), one line each."""

    raw: str
    text: str  # the words that rank (what the analyzers see)
    question: str  # what a prompt asks: the raw question without filters, exclusions and operators
    required: tuple[tuple[Clause, ...], ...] = ()
    excluded: tuple[Clause, ...] = ()
    filters: tuple[Filter, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def plain(self) -> bool:
        """No operator, phrase or filter: ranked exactly as the words alone."""
        return not (self.required or self.excluded or self.filters)

    def searched_as(self) -> str:
        """The query in words, as the window's "Searched as" line and `search` show it."""
        parts = []
        if self.text.strip() and (not self.plain or self.text != self.raw):
            parts.append(f"words: {' '.join(self.text.split())}")
        for group in self.required:
            parts.append(("must hold: " if len(group) == 1 else "must hold one of: ") + " or ".join(
                c.shown() for c in group))
        if self.excluded:
            parts.append("left out: " + ", ".join(c.shown() for c in self.excluded))
        if self.filters:
            parts.append("only notes with " + " and ".join(_filter_words(f) for f in _grouped(self.filters)))
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """`search --json`'s `parsed` object."""
        return {
            "text": self.text,
            "question": self.question,
            "required": [[{"text": c.text, "phrase": c.phrase} for c in g] for g in self.required],
            "excluded": [{"text": c.text, "phrase": c.phrase} for c in self.excluded],
            "filters": [{"field": f.field, "value": f.value, "negated": f.negated} for f in self.filters],
            "problems": list(self.problems),
            "searched_as": self.searched_as(),
        }


def as_query(query: str | Query) -> Query:
    """`query` as parsed: a Query is passed on as it is, text is parsed (the entry points' one door)."""
    return query if isinstance(query, Query) else parse(query)


def _grouped(filters: tuple[Filter, ...]) -> list[tuple[Filter, ...]]:
    by: dict[tuple[str, bool], list[Filter]] = {}
    for f in filters:
        by.setdefault((f.field, f.negated), []).append(f)
    return [tuple(fs) for fs in by.values()]


def _filter_words(fs: tuple[Filter, ...]) -> str:
    """One field's filters in words: repeated values of a field are alternatives."""
    f = fs[0]
    values = " or ".join(x.value for x in fs)
    if f.field in ("after", "before"):
        return f"date {'not ' if f.negated else ''}{f.field} {values}"
    what = {"path": "folder", "ext": "type", "tag": "tag", "title": "title word"}[f.field]
    return f"{what} {'not ' if f.negated else ''}{values}"


def date_period(value: str) -> tuple[float, float]:
    """(start, end) in local epoch seconds of "2025", "2025-11" or "2025-11-03"; ValueError otherwise."""
    m = _DATE.match(value)
    if not m:
        raise ValueError(value)
    year, month, day = int(m.group(1)), m.group(2), m.group(3)
    if day is not None:
        start = dt.datetime(year, int(month), int(day))
        end = start + dt.timedelta(days=1)
    elif month is not None:
        start = dt.datetime(year, int(month), 1)
        end = dt.datetime(year + (start.month == 12), start.month % 12 + 1, 1)
    else:
        start, end = dt.datetime(year, 1, 1), dt.datetime(year + 1, 1, 1)
    return start.timestamp(), end.timestamp()


@dataclass
class _Token:
    start: int
    end: int
    sign: str = ""  # "", "+" or "-"
    clause: Clause | None = None
    filter: Filter | None = None
    operator: str = ""


@dataclass
class _Scan:
    raw: str
    tokens: list[_Token] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _read_value(raw: str, i: int) -> tuple[str, int, bool]:
    """A filter's value at `i`: quoted (may hold spaces) or up to the next space."""
    if i < len(raw) and raw[i] in QUOTES:
        close = raw.find(QUOTES[raw[i]], i + 1)
        end = len(raw) if close < 0 else close
        return raw[i + 1 : end], min(len(raw), end + 1), True
    j = i
    while j < len(raw) and not raw[j].isspace():
        j += 1
    return raw[i:j], j, False


def _scan(raw: str) -> _Scan:
    scan = _Scan(raw)
    i, n = 0, len(raw)
    while i < n:
        if raw[i].isspace() or raw[i] in "()":
            i += 1
            continue
        start, sign = i, ""
        if raw[i] in "+-" and i + 1 < n and (raw[i + 1] in QUOTES or _LETTER.match(_word_at(raw, i + 1))):
            sign, i = raw[i], i + 1  # "-2" and "+1" are numbers, not operators
        if raw[i] in QUOTES:
            close = raw.find(QUOTES[raw[i]], i + 1)
            end = n if close < 0 else close
            text = raw[i + 1 : end].strip()
            if close < 0:
                scan.problems.append("a quote was not closed: the phrase runs to the end")
            i = min(n, end + 1)
            if re.search(r"\w", text):
                scan.tokens.append(_Token(start, i, sign, Clause(text, phrase=True)))
            continue
        m = _FIELD.match(raw, i)
        if m and m.group(1) in FIELDS and sign != "+":
            name = m.group(1)
            value, end, quoted = _read_value(raw, m.end())
            value = value.strip()
            problem = _check(name, value)
            if problem is None and (value or quoted):
                scan.tokens.append(_Token(start, end, filter=Filter(name, value, sign == "-")))
                i = end
                continue
            if m.end() >= n or raw[m.end()].isspace() or problem:
                scan.problems.append(f"{name}: needs {_NEEDS[name]}" + (f' ("{value}" is not one)' if value else ""))
                sign = ""  # searched as words, none of them left out
        j = i
        while j < n and not raw[j].isspace() and raw[j] not in QUOTES:
            j += 1
        word = raw[i:j].rstrip(")")  # "(vim OR emacs)": parentheses only group (read as spaces)
        if not sign and word in OPERATORS:
            scan.tokens.append(_Token(start, j, operator=word))
        elif word:
            scan.tokens.append(_Token(start, j, sign, Clause(word)))
        i = max(j, i + 1)
    return scan


def _word_at(raw: str, i: int) -> str:
    j = i
    while j < len(raw) and not raw[j].isspace():
        j += 1
    return raw[i:j]


def _check(name: str, value: str) -> str | None:
    """Why `value` cannot be `name`'s (None: it can)."""
    if not value:
        return "empty"
    if name in ("after", "before"):
        try:
            date_period(value)
        except ValueError:
            return "not a date"
    if name in ("path", "tag", "title", "ext") and not _WORD.search(value):
        return "no word"
    return None


def parse(raw: str) -> Query:
    """Parse `raw` (never raises: what does not parse is searched as words, and said in `problems`)."""
    scan = _scan(raw)
    tokens = scan.tokens
    if not any(t.sign or t.filter or t.operator or (t.clause and _quoted(raw, t)) for t in tokens):
        return Query(raw, raw, raw, problems=tuple(scan.problems))
    # NOT x is -x; AND makes both its sides required; OR joins clauses into one group of alternatives
    items: list[_Token] = []
    pending_not = pending_and = pending_or = False
    for t in tokens:
        if t.operator:
            if t.operator == "NOT":
                pending_not = True
            elif t.operator == "AND":
                pending_and = bool(items and items[-1].clause)
                if pending_and and items[-1].sign == "":
                    items[-1].sign = "+"
            else:
                pending_or = bool(items and items[-1].clause and items[-1].sign != "-")
            continue
        if t.clause is not None:
            if pending_not:
                t.sign = "-"
            elif pending_and and t.sign == "":
                t.sign = "+"
            if pending_or and t.sign != "-":
                t.operator = "OR"  # joined to the clause before
        pending_not = pending_and = pending_or = False
        items.append(t)
    required: list[tuple[Clause, ...]] = []
    groups: list[list[_Token]] = []
    for t in items:
        if t.clause is None or t.sign == "-":
            continue
        if t.operator == "OR" and groups:
            groups[-1].append(t)
        else:
            groups.append([t])
    for g in groups:
        if any(t.sign == "+" or t.clause.phrase for t in g):  # type: ignore[union-attr]
            required.append(tuple(t.clause for t in g))  # type: ignore[misc]
    excluded = tuple(t.clause for t in items if t.clause is not None and t.sign == "-")
    ranked = [t for t in items if t.clause is not None and t.sign != "-"]
    text = " ".join(t.clause.text for t in ranked)  # type: ignore[union-attr]
    question = _question(raw, ranked)
    filters = tuple(t.filter for t in items if t.filter is not None)
    return Query(raw, text, question, tuple(required), excluded, filters, tuple(scan.problems))


def _quoted(raw: str, t: _Token) -> bool:
    return raw[t.start] in QUOTES or (t.sign != "" and raw[t.start + 1] in QUOTES)


def _question(raw: str, ranked: list[_Token]) -> str:
    """The clauses that rank, as typed (phrases keep their quotes), joined by OR where they were."""
    out: list[str] = []
    for t in ranked:
        piece = raw[t.start : t.end].lstrip("+")
        if t.operator == "OR" and out:
            out.append("OR")
        out.append(piece)
    return " ".join(out)
