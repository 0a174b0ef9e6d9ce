"""Analyzers: turn text into index terms (words, prefix stems, character trigrams).

Every analyzer is defined on top of the word tokenizer: a word maps to zero or more
terms. That lets the index tokenize the corpus once and derive the stems and trigrams
indexes from the word vocabulary, instead of re-reading every note per analyzer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace
from functools import lru_cache

from .languages import DEFAULT_QUERY_LANGUAGE, QUERY_LANGUAGES, STOP_WORDS, QueryFilter, query_filter

WORD_RE = re.compile(r"\w+")
BASE_ANALYZERS = ("words", "stems", "trigrams")
ANALYZERS = (*BASE_ANALYZERS, "combined")  # combined = stems + trigram_weight x trigrams (one score)
DEFAULT_ANALYZER = "combined"
DEFAULT_TRIGRAM_WEIGHT = 0.3


def normalize(text: str) -> str:
    """Unicode NFC, so that composed and decomposed accents index the same."""
    return unicodedata.normalize("NFC", text)


def fold_accents(word: str) -> str:
    """Strip combining marks ("indukcí" -> "indukci")."""
    decomposed = unicodedata.normalize("NFD", word)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def casefold_all(words: list[str]) -> list[str]:
    """Casefold many tokens in one call (same result as casefolding each one)."""
    if not words:
        return []
    return "\x00".join(words).casefold().split("\x00")


def word_tokens(text: str) -> list[str]:
    """The word tokens of already-normalized text: `\\w+` runs, casefolded."""
    return casefold_all(WORD_RE.findall(text))


@dataclass(frozen=True)
class AnalyzerConfig:
    """Which analyzer and its options; `key` names the index built with it."""

    name: str = DEFAULT_ANALYZER
    stem_length: int = 5
    fold_accents: bool = False
    stop_words: tuple[str, ...] = field(default_factory=tuple)
    trigram_weight: float = DEFAULT_TRIGRAM_WEIGHT  # only for "combined"
    # Query side only, so not in `key`: "auto" leaves out elided articles and the detected
    # language's stop words (core.languages); "off" searches every word; or a language code.
    query_language: str = DEFAULT_QUERY_LANGUAGE

    def __post_init__(self) -> None:
        if self.name not in ANALYZERS:
            raise ValueError(f"unknown analyzer {self.name!r}; choose one of {', '.join(ANALYZERS)}")
        if self.stem_length < 1:
            raise ValueError("stem length must be at least 1")
        unknown = [lang for lang in self.stop_words if lang not in STOP_WORDS]
        if unknown:
            raise ValueError(f"no stop-word list for {', '.join(unknown)}; have {', '.join(STOP_WORDS)}")
        if self.query_language not in QUERY_LANGUAGES:
            choices = ", ".join(QUERY_LANGUAGES)
            raise ValueError(f"unknown query language {self.query_language!r}; choose one of {choices}")

    @property
    def key(self) -> str:
        parts = [self.name]
        if self.name in ("stems", "combined"):
            parts.append(str(self.stem_length))
        if self.name == "combined":
            parts.append(f"t{self.trigram_weight:g}")
        if self.fold_accents:
            parts.append("fold")
        if self.stop_words:
            parts.append("stop-" + "-".join(sorted(self.stop_words)))
        return "_".join(parts)

    def with_name(self, name: str) -> AnalyzerConfig:
        return replace(self, name=name)

    def parts(self) -> list[tuple[AnalyzerConfig, float]]:
        """The single-index analyzers whose weighted BM25 scores add up to this one's."""
        if self.name != "combined":
            return [(self, 1.0)]
        return [(self.with_name("stems"), 1.0), (self.with_name("trigrams"), self.trigram_weight)]


@dataclass(frozen=True)
class Token:
    """One analyzed term with the character span of the word it came from."""

    term: str
    start: int
    end: int
    word: str


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, casefolded word) of each word of `text` (NFC-normalized first, as indexed)."""
    text = normalize(text)
    matches = list(WORD_RE.finditer(text))
    words = casefold_all([m.group() for m in matches])
    return [(m.start(), m.end(), word) for m, word in zip(matches, words)]


def _trigrams(word: str) -> list[str]:
    padded = f"_{word}_"
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


class Analyzer:
    """Maps words to terms for one configuration; results are memoized per word."""

    def __init__(self, config: AnalyzerConfig | None = None) -> None:
        self.config = config or AnalyzerConfig()
        stops: set[str] = set()
        for lang in self.config.stop_words:
            stops |= STOP_WORDS[lang]
        self._stops = frozenset(fold_accents(s) for s in stops) if self.config.fold_accents else frozenset(stops)
        self.terms_of_word = lru_cache(maxsize=200_000)(self._terms_of_word)
        self.query_words = lru_cache(maxsize=64)(self._query_words)  # each part of a search asks
        self.query_filter = lru_cache(maxsize=64)(self._query_filter)

    def normalized_word(self, word: str) -> str:
        """The word as the analyzer sees it (accents folded if asked), or "" for a stop word."""
        if self.config.fold_accents:
            word = fold_accents(word)
        return "" if word in self._stops else word

    def _terms_of_word(self, word: str) -> tuple[str, ...]:
        word = self.normalized_word(word)
        if not word:
            return ()
        name = self.config.name
        if name == "words":
            return (word,)
        if name == "stems":
            return (word[: self.config.stem_length],)
        if name == "combined":  # for display and highlighting; indexes are per part
            return (word[: self.config.stem_length], *_trigrams(word))
        return tuple(_trigrams(word))

    def tokens(self, text: str) -> list[Token]:
        """Terms of `text` with their offsets in `text` (what `ragdesk analyze` shows)."""
        return [Token(term, s, e, word) for s, e, word in word_spans(text) for term in self.terms_of_word(word)]

    def terms(self, text: str) -> list[str]:
        return [t for w in word_tokens(normalize(text)) for t in self.terms_of_word(w)]

    def _query_words(self, query: str) -> tuple[str, ...]:
        return tuple(word_tokens(normalize(query)))

    def _query_filter(self, query: str) -> QueryFilter:
        """The query's words left out of the search, and why (see core.languages)."""
        return query_filter(query, list(self.query_words(query)), self.config.query_language)

    def query_terms(self, query: str) -> list[tuple[str, list[str]]]:
        """Distinct terms of a query in first-seen order, each with the query words it came from
        (the words `query_filter` leaves out give none)."""
        dropped = self.query_filter(query).dropped
        seen: dict[str, list[str]] = {}
        for word in self.query_words(query):
            if word in dropped:
                continue
            for term in self.terms_of_word(word):
                sources = seen.setdefault(term, [])
                if word not in sources:
                    sources.append(word)
        return list(seen.items())
