"""A query's language and the words it does not search for: elided articles and stop words.

Query-side only: the index keeps every word, so nothing is rebuilt and a setting of "off" gives
exactly the old ranking. Measured on the eight question sets (tests/benchmarks/bench_languages.py):
a stop word that is rare in a small folder ("ai" in "j'ai") otherwise outweighs the words that matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Function words only (articles, pronouns, auxiliaries, prepositions, conjunctions, question
# words). Curated by hand: the maintained lists on PyPI (stopwordsiso, stop-words) drop content
# words a notes search needs ("file", "name", "system", "line", "run" in English; "valeur", "nome",
# "tempo"), and another list (`stopwords`) has Czech without diacritics and a mis-encoded Ukrainian.
STOP_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": """a about above after again against all am an and any are aren't as at be because been before
            being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
            don't down during each few for from further had hadn't has hasn't have haven't having he her here
            hers herself him himself his how i if in into is isn't it it's its itself let's me more most my
            myself no nor not of off on once only or other ought our ours ourselves out over own same she
            should shouldn't so some such than that the their theirs them themselves then there these they
            this those through to too under until up very was wasn't we were weren't what when where which
            while who whom why will with won't would wouldn't you your yours yourself yourselves""",
        "fr": """a à afin ai aie aient ait alors as au aucun aucune aussi autre autres aux avec avez avoir avons
            ayant c ça car ce ceci cela celle celles celui ces cet cette ceux chaque chez ci comme comment d
            dans de des donc dont du elle elles en encore es est et étaient était étant été être eu eux fait
            il ils j je jusqu l la le les leur leurs lui m ma mais me même mes moi mon n ne ni nos notre nous
            on ont ou où par parce pas peut peux pour pourquoi puis qu quand que quel quelle quelles quels qui
            quoi s sa sans se sera ses si soit son sont sous suis sur t ta te tes toi ton tous tout toute
            toutes tu un une vos votre vous y""",
        "it": """a ad agli ai al all alla alle allo anche avere c che chi ci coi col come con contro cosa cui da
            dagli dai dal dall dalla dalle dallo degli dei del dell della delle dello di dove dunque e è ed
            essere gli ha hai hanno ho i il in io l la le lei li lo loro lui ma mi mia mie miei mio ne negli
            nei nel nell nella nelle nello noi non nostra nostre nostri nostro o per perché più può quale
            quali quando quanto quella quelle quelli quello questa queste questi questo quindi se sei si sia
            siamo sono su sua sue sui sul sull sulla sulle sullo suo suoi ti tra tu tua tue tuo tuoi tutti
            tutto un una uno vi voi vostra vostro""",
        "cs": """a aby aj ale ani ať až bez by byl byla byli bylo byly být co což či do ho i jak jaký jaká jaké
            jako je jeho jej její jejich jen ještě ji jí jim jsem jsi jsme jsou jste k kam kde kdo kdy když
            ke kterou který která které kteří ku má mají mám máme máte mě mezi mi mít mu můj může můžu my
            na nad nám nás náš ne nebo nejsou není než o od on ona oni ono pak po pod podle pokud pro proč
            proto protože před přes při s se si sice svůj své svých ta tak také takže tam tato te tě tedy
            ten tento tím to tohle toho tom tu tuto ty tyto u už v vám vás váš ve však vy z za zda ze že""",
        "uk": """а але б без би був була були було бути в вам вас ви від він вона вони воно все всі де для до
            є з за і із її їх й яка яке які який коли ми мене мені на над нам нас не ні о об по під при про
            та так також те ти то тобто тут у хто це цей ця ці чи чого що щоб як якщо""",
        "de": """aber als am an auch auf aus bei bin bis bist da dann das dass dem den der des die dies diese
            dieser dieses doch dort du durch ein eine einem einen einer eines er es für hat hatte ich ihr
            ihre im in ist ja kann mit nach nicht noch nur ob oder sein sich sie sind so über um und uns
            unter vom von vor war was wenn wer wie wir wird wo zu zum zur""",
    }.items()
}
LANGUAGE_NAMES = {"en": "English", "fr": "French", "it": "Italian", "cs": "Czech", "uk": "Ukrainian", "de": "German"}
QUERY_LANGUAGES = ("auto", "off", *STOP_WORDS)  # "auto": detected per query; "off": every word searched
DEFAULT_QUERY_LANGUAGE = "auto"

# French and Italian elided articles, pronouns and prepositions: "l'index", "j'ai", "qu'il",
# "dell'app", "un'altra". Only whole words before an apostrophe and a letter, so "James' book" and
# "don't" are left alone.
ELISION_RE = re.compile(
    r"(?<!\w)(c|d|j|l|m|n|s|t|qu|jusqu|lorsqu|puisqu|quoiqu|all|dall|dell|nell|sull|coll|quell|quest|"
    r"un|nessun|buon|grand|sant|po)['’](?=\w)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class QueryFilter:
    """What the analyzer leaves out of a query: each left-out word with why, and the language seen."""

    language: str | None = None  # the stop-word list used (None: none applies)
    dropped: dict[str, str] = field(default_factory=dict)  # casefolded word -> "elided article" / "French stop word"

    def to_json(self) -> dict[str, Any]:
        return {"language": self.language, "dropped": [{"word": w, "why": why} for w, why in self.dropped.items()]}


def detect_language(words: list[str]) -> str | None:
    """The language whose stop words the query's (casefolded) words hold most of, or None when none
    holds any or two hold as many ("come on": Italian "come", English "on"). A query with no stop
    word needs no language: nothing would be left out.

    Measured beside py3langid (a maintained n-gram detector) on the eight question sets: the same
    figures to the third decimal, where py3langid held 48 MB more in the window and took 0.45 s to load."""
    counts = {lang: sum(w in stops for w in words) for lang, stops in STOP_WORDS.items()}
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    (best, n), (_, runner_up) = ranked[0], ranked[1]
    return best if n > 0 and n > runner_up else None


def query_filter(query: str, words: list[str], setting: str = DEFAULT_QUERY_LANGUAGE) -> QueryFilter:
    """Which of the query's (casefolded) `words` not to search for, under `setting` ("auto", "off" or
    a language code). Stop words are dropped only when a searched word remains."""
    if setting == "off" or not words:
        return QueryFilter()
    dropped = {m.group(1).casefold(): "elided article" for m in ELISION_RE.finditer(query)}
    lang = detect_language(words) if setting == "auto" else setting
    if lang is not None:
        stops = STOP_WORDS[lang]
        if any(w not in stops and w not in dropped for w in words):
            why = f"{LANGUAGE_NAMES[lang]} stop word"
            dropped.update((w, why) for w in words if w in stops and w not in dropped)
    if dropped and all(w in dropped for w in words):
        return QueryFilter(lang)  # nothing would be left: search every word
    return QueryFilter(lang, dropped)


def dropped_text(f: QueryFilter) -> str:
    """ "Not searched: j' (elided article); ai, une, que (French stop words)" or ""."""
    if not f.dropped:
        return ""
    by_why: dict[str, list[str]] = {}
    for word, why in f.dropped.items():
        by_why.setdefault(why, []).append(f"{word}'" if why == "elided article" else word)
    parts = [f"{', '.join(ws)} ({why}{'s' if len(ws) > 1 else ''})" for why, ws in by_why.items()]
    return "Not searched: " + "; ".join(parts)
