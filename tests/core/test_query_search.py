"""A query's filters, phrases and exclusions over a real index: exactly "keep the chunks that pass,
then rank them", computed here by brute force from what the notes were written with, on the
compiled kernel, the numpy path and a base + delta index."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import random
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdesk.cli import main
from ragdesk.core import build as build_mod
from ragdesk.core import kernels
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.build import build_index
from ragdesk.core.modes import resolve
from ragdesk.core.nearest import NearestRows, SegmentedNearest, exhaustive_top_k
from ragdesk.core.params import SearchParams
from ragdesk.core.prompt import prompt_from_search
from ragdesk.core.query import parse
from ragdesk.core.reader import IndexReader
from ragdesk.core.search import query_refs
from ragdesk.core.topk import score_all
from ragdesk.core.whynot import why_not

from ..conftest import write_notes

VOCAB = "rebase branch merge commit stash vim buffer window tmux pane shell alias python venv".split()
FOLDERS = ["git", "git/old", "Škola/Poznámky", "vim", "archive", ""]
TAGS = ["project/alpha", "project/beta", "python", "idea"]


def _note(rng: random.Random, i: int) -> tuple[str, str, dict[str, object]]:
    folder = rng.choice(FOLDERS)
    ext = rng.choice([".md", ".md", ".txt"])
    title = f"{rng.choice(VOCAB).title()} {rng.choice(VOCAB)} {i}"
    tags = sorted(set(rng.sample(TAGS, rng.randint(0, 2))))
    date = dt.datetime(2024 + rng.randint(0, 2), rng.randint(1, 12), rng.randint(1, 28))
    in_front = ext == ".md" and rng.random() < 0.5
    body = " ".join(rng.choices(VOCAB, k=rng.randint(20, 260)))
    if in_front:
        text = f"---\ntitle: {title}\ntags: [{', '.join(tags)}]\ndate: {date:%Y-%m-%d}\n---\n# {title}\n\n{body}\n"
    else:
        inline = " ".join("#" + t for t in tags)
        text = f"# {title}\n\n{body}\n\n{inline}\n" if ext == ".md" else f"{body}\n{inline}\n"
    path = f"{folder}/n{i:02d}{ext}".lstrip("/")
    shown = f"{title if in_front else ''} {Path(path).stem}"  # front matter's title, and the file name
    return path, text, {"title": shown, "tags": tags, "date": date, "front": in_front}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[IndexReader, dict[str, dict[str, object]], Path]:
    rng = random.Random(53)
    root = tmp_path_factory.mktemp("q53")
    notes = [_note(rng, i) for i in range(70)]
    write_notes(root / "notes", {p: t for p, t, _ in notes})
    facts = {p: f for p, _, f in notes}
    for p, _, f in notes:  # the modified time is the date of notes without one in front matter
        stamp = int(f["date"].timestamp()) * 10**9 + 12 * 3600 * 10**9  # type: ignore[union-attr]
        os.utime(root / "notes" / p, ns=(stamp, stamp))
    lib, _ = build_index(root / "notes", root / "idx", workers=1)
    return lib, facts, root


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text.casefold())
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def _words(text: str) -> list[str]:
    import re

    return [w.casefold() for w in re.findall(r"\w+", unicodedata.normalize("NFC", text))]


def _holds(text: str, phrase: str) -> bool:
    have, want = _words(text), _words(phrase)
    return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def _passes(lib: IndexReader, facts: dict[str, dict[str, object]], raw: str, chunk: int) -> bool:
    """The reference: the query's constraints checked one chunk at a time from what was written."""
    q = parse(raw)
    path = lib.note_paths[int(lib.chunk_note[chunk])]
    fact = facts[path]
    text = lib.chunk_texts([chunk])[0]
    by: dict[tuple[str, bool], bool] = {}
    for f in q.filters:
        v = _fold(f.value)
        if f.field == "path":
            dirs = _fold(path).split("/")[:-1]
            want = v.strip("/").split("/")
            ok = _fold(path).startswith(v) or any(dirs[i : i + len(want)] == want for i in range(len(dirs)))
        elif f.field == "ext":
            ok = _fold(path).endswith("." + v.lstrip("."))
        elif f.field == "tag":
            ok = any(t == v or t.startswith(v + "/") for t in fact["tags"])  # type: ignore[attr-defined]
        elif f.field == "title":
            ok = set(_words(v)) <= set(_words(_fold(str(fact["title"]))))
        else:
            start, end = f.period()
            when = fact["date"].timestamp() + (0 if fact["front"] else 12 * 3600)  # type: ignore[attr-defined]
            ok = when >= end if f.field == "after" else when < start
        key = (f.field, f.negated)
        by[key] = by.get(key, False) or ok
    if any(ok == negated for (_, negated), ok in by.items()):
        return False
    if any(not any(_holds(text, c.text) for c in group) for group in q.required):
        return False
    return not any(_holds(text, c.text) for c in q.excluded)


def _expected(lib: IndexReader, facts: dict[str, dict[str, object]], raw: str, k: int) -> list[tuple[int, float]]:
    q = parse(raw)
    cfg = AnalyzerConfig()
    docs, scores = score_all(query_refs(lib.searcher.prepare(q.text, cfg)), lib.n_chunks, 1.2, 0.75)
    kept = [(d, s) for d, s in zip(docs.tolist(), scores.tolist()) if _passes(lib, facts, raw, d)]
    return sorted(kept, key=lambda x: (-x[1], x[0]))[:k]


FILTERS = [
    "path:git", "-path:old", "path:skola", 'path:"Škola/Poznámky"', "path:git/old/n", "ext:txt", "-ext:md",
    "tag:project", "tag:project/alpha", "-tag:idea", "title:rebase", "after:2025", "before:2025-06",
    "after:2024-03-15", "-before:2026",
]  # fmt: skip


@st.composite
def queries(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4))
    if draw(st.booleans()):
        parts.append('"' + " ".join(draw(st.lists(st.sampled_from(VOCAB), min_size=2, max_size=2))) + '"')
    if draw(st.booleans()):
        parts.append("-" + draw(st.sampled_from(VOCAB)))
    if draw(st.booleans()):
        parts.append("+" + draw(st.sampled_from(VOCAB)))
    parts += draw(st.lists(st.sampled_from(FILTERS), max_size=3))
    return " ".join(draw(st.permutations(parts)))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=queries(), k=st.sampled_from([1, 5, 30]))
def test_a_filtered_top_k_is_filter_everything_then_rank(corpus, raw: str, k: int) -> None:  # type: ignore[no-untyped-def]
    lib, facts, _ = corpus
    want = _expected(lib, facts, raw, k)
    for compiled in (True, False):
        ctx = kernels.python_only(text=False) if not compiled else contextlib.nullcontext()
        with ctx:
            got = lib.search(raw, k=k, mode="bm25")
        assert [(h.chunk_id, h.score) for h in got.hits] == want, (raw, compiled)
        assert (got.reason is None) == bool(want) or not parse(raw).text.strip()


def test_filters_only_list_the_matching_notes_newest_first(corpus) -> None:  # type: ignore[no-untyped-def]
    lib, facts, _ = corpus
    result = lib.search("path:git -path:old", k=100, mode="bm25")
    want = sorted(
        (p for p in facts if p.startswith("git/") and not p.startswith("git/old/")),
        key=lambda p: (-facts[p]["date"].timestamp() - (0 if facts[p]["front"] else 43200), p),  # type: ignore[attr-defined]
    )
    assert [h.path for h in result.hits] == want and result.listed and result.reason is None
    assert [h.chunk_id for h in result.hits] == [lib.note_first_chunk[lib.note_index(p)] for p in want]
    dates = [h.note_date for h in result.hits]
    assert dates == sorted(dates, reverse=True)
    assert lib.searcher.count_matches("path:git -path:old") == sum(
        len(lib.chunks_of_note(lib.note_index(p))) for p in want
    )
    empty = lib.search("path:nowhere", mode="bm25")
    assert empty.hits == [] and empty.reason == "nothing matches: only notes with folder nowhere"


def test_tags_come_from_front_matter_and_the_text_not_from_links_or_code(tmp_path: Path) -> None:
    notes = {
        "a.md": "---\ntags: [Projekt/Alfa]\n---\n# A\n\nplan\n",
        "b.md": "# B\n\nplan #projekt/beta and #idea\n",
        "c.md": "# C\n\nplan [see](#projekt) and issue #123 and x#projekt\n\n```\n#projekt in code\n```\n",
        "d.md": "---\ntags: idea, projekt\n---\n# D\n\nplan\n",
    }
    lib, _ = build_index(write_notes(tmp_path / "n", notes), tmp_path / "i", workers=1)
    paths = lambda q: sorted(h.path for h in lib.search(q, mode="bm25").hits)  # noqa: E731
    assert paths("plan tag:projekt") == ["a.md", "b.md", "d.md"]
    assert paths("plan tag:projekt/alfa") == ["a.md"]
    assert paths("plan tag:IDEA") == ["b.md", "d.md"]
    assert paths("plan -tag:projekt") == ["c.md"]
    # found as each note was read: tag: reads the note table, not every note's text again
    from ragdesk.core.query_mask import NoteFacts

    assert lib.notes[lib.note_index("b.md")].meta["hashtags"] == ["projekt/beta", "idea"]
    fresh = IndexReader.open(tmp_path / "n", tmp_path / "i")
    fresh.note_text = lambda i: pytest.fail("a note's text read for its #tags")  # type: ignore[method-assign]
    assert NoteFacts(fresh).tags()[fresh.note_index("c.md")] == frozenset()


def test_a_delta_segment_filters_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0)
    rng = random.Random(5)
    notes = dict(_note(rng, i)[:2] for i in range(30))
    folder = write_notes(tmp_path / "notes", notes)
    build_index(folder, tmp_path / "idx", workers=1)
    for p in list(notes)[:4]:
        f = folder / p
        f.write_text(f.read_text() + " rebase branch rebase")
        os.utime(f, ns=(f.stat().st_mtime_ns + 10**9,) * 2)
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert len(lib.segments) == 2
    full, _ = build_index(folder, tmp_path / "full", workers=1)
    for raw in ("rebase path:git", 'rebase branch -"merge commit" ext:md', '"rebase branch" -path:vim',
                "commit tag:python"):  # fmt: skip
        for ctx in (contextlib.nullcontext(), kernels.python_only(text=False)):
            with ctx:
                got = [(h.path, h.span, h.score) for h in lib.search(raw, k=8, mode="bm25").hits]
                want = [(h.path, h.span, h.score) for h in full.search(raw, k=8, mode="bm25").hits]
            assert got == want and got, raw


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("share", [0.0, 0.002, 0.05, 0.6, 1.0])
def test_dense_top_k_within_a_mask_is_the_exhaustive_ranking_of_the_kept_rows(seed: int, share: float) -> None:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((3000, 32)).astype(np.float16)
    rows[rng.integers(3000, size=300)] = rows[0]  # ties: ranked by id
    mask = rng.random(3000) < share
    kept = np.flatnonzero(mask)
    # two segments, as a base and a delta: the base's chunks 2000.. replaced by the delta's
    remaps = (np.concatenate([np.arange(2000), -np.ones(500, np.int64)]), np.arange(2000, 3000))
    base = rows[:2500].copy()
    base[2000:] = rows[0]  # what a replaced chunk held must not matter
    parts = [NearestRows(base), NearestRows(rows[2000:].copy())]
    for _ in range(3):
        query = rng.standard_normal(32).astype(np.float32)
        for k in (1, 10, 100, 5000):
            ids, cos = exhaustive_top_k(rows[kept], query, k)
            want = (kept[ids].tolist(), cos.tolist())
            for ctx in (contextlib.nullcontext(), kernels.python_only()):
                with ctx:
                    got = SegmentedNearest(parts, remaps).top_k_within(query, k, mask)
                assert (got[0].tolist(), got[1].tolist()) == want, (k, share)


def test_why_not_names_the_filter_or_exclusion_that_left_the_note_out(corpus) -> None:  # type: ignore[no-untyped-def]
    lib, facts, _ = corpus
    vim = next(p for p in facts if p.startswith("vim/"))
    why = why_not(lib, "rebase branch path:git", vim, SearchParams(k=3))
    assert why.left_out_by == ["path:git leaves its note out"]
    assert why.summary() == "The query leaves it out: path:git leaves its note out."
    assert why.rank is None and why.bm25_rank is None
    every = [
        p
        for p in facts
        if all("rebase" in _words(t) for t in lib.chunk_texts(list(lib.chunks_of_note(lib.note_index(p)))))
    ]
    assert every
    why = why_not(lib, "branch -rebase", every[0], SearchParams(k=3))
    assert why.left_out_by == ["every chunk of it holds rebase, which -rebase leaves out"]


def test_prompt_asks_the_question_without_its_filters_and_excerpts_pass_them(corpus) -> None:  # type: ignore[no-untyped-def]
    lib, _, _ = corpus
    resolved = resolve(lib, "bm25")
    question = 'how to rebase a branch path:git -"merge commit"'
    prompt, result = prompt_from_search(lib, question, SearchParams(), resolved, k=4)
    assert "how to rebase a branch" in prompt.text
    assert "path:git" not in prompt.text and "merge commit" not in prompt.text
    assert result.hits and all(h.path.startswith("git/") for h in result.hits)
    assert all("merge commit" not in " ".join(h.text.lower().split()) for h in result.hits)


def test_cli_search_json_has_the_parsed_query_and_text_says_it(corpus, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    lib, _, root = corpus
    notes, args = str(root / "notes"), ["--index-dir", str(root / "idx"), "--mode", "bm25", "--no-refresh"]
    assert main(["search", notes, 'rebase "branch merge" -tmux path:git after:2024', *args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["parsed"]["filters"] == [
        {"field": "path", "value": "git", "negated": False},
        {"field": "after", "value": "2024", "negated": False},
    ]
    assert data["parsed"]["excluded"] == [{"text": "tmux", "phrase": False}]
    assert data["parsed"]["text"] == "rebase branch merge"
    assert all(h["path"].startswith("git/") for h in data["hits"])
    assert main(["search", notes, "rebase path: x", *args]) == 0
    out = capsys.readouterr().out
    assert "(path: needs a folder name: searched as words)" in out
    assert main(["search", *args, notes, "--", "-path:git"]) == 0  # "--": a query that starts with "-"
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "(searched as: only notes with folder not git)"
    assert all(line.split()[1].count("-") == 2 for line in out[1:-1:2])  # a date in the score's place


def test_cli_batch_queries_parse_each_line(corpus, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    lib, _, root = corpus
    queries = tmp_path / "q.jsonl"
    lines = [{"id": 1, "query": "rebase path:vim"}, {"id": 2, "query": "rebase"}, {"id": 3, "query": "tag:idea"}]
    queries.write_text("\n".join(json.dumps(line) for line in lines))
    args = ["--index-dir", str(root / "idx"), "--mode", "bm25", "--no-refresh", "--queries", str(queries)]
    assert main(["search", str(root / "notes"), *args]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == [1, 2, 3]
    assert out[0]["hits"] and all(h["path"].startswith("vim/") for h in out[0]["hits"])
    assert out[1]["parsed"]["filters"] == [] and not out[1]["listed"]
    dates = [h["date"] for h in out[2]["hits"]]
    assert out[2]["listed"] and dates == sorted(dates, reverse=True) and all(len(d) == 10 for d in dates)


@pytest.mark.parametrize("raw", ["rebase", "branch path:git", 'stash "vim buffer"'])
def test_newest_first_is_every_match_by_its_notes_date(corpus, raw: str) -> None:  # type: ignore[no-untyped-def]
    lib, facts, _ = corpus
    ranked = _expected(lib, facts, raw, lib.n_chunks)
    when = {p: f["date"].timestamp() + (0 if f["front"] else 43200) for p, f in facts.items()}  # type: ignore[attr-defined]
    want = sorted(ranked, key=lambda x: (-when[lib.note_paths[int(lib.chunk_note[x[0]])]], -x[1], x[0]))[:7]
    got = lib.search(raw, k=7, mode="bm25", sort="newest")
    assert [(h.chunk_id, h.score) for h in got.hits] == want and got.sort == "newest" and want


@pytest.fixture(scope="module")
def ranged(tmp_path_factory: pytest.TempPathFactory) -> tuple[IndexReader, dict[str, dict[str, object]]]:
    """400 notes (about 900 chunks): enough 64-chunk ranges for the range bounds a filter tightens."""
    rng = random.Random(7)
    root = tmp_path_factory.mktemp("ranged")
    notes = [_note(rng, i) for i in range(400)]
    write_notes(root / "notes", {p: t for p, t, _ in notes})
    for p, _, f in notes:
        stamp = int(f["date"].timestamp()) * 10**9 + 12 * 3600 * 10**9  # type: ignore[union-attr]
        os.utime(root / "notes" / p, ns=(stamp, stamp))
    lib, _ = build_index(root / "notes", root / "idx", workers=1)
    return lib, {p: f for p, _, f in notes}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=queries(), k=st.sampled_from([1, 10]))
def test_range_bounds_under_a_filter_keep_the_top_k_exact(ranged, raw: str, k: int) -> None:  # type: ignore[no-untyped-def]
    """Every term with range bounds (RANGE_MIN_DF lowered), over 15 ranges of 64 chunks."""
    from ragdesk.core import topk

    lib, facts = ranged
    want = _expected(lib, facts, raw, k)
    saved = topk.RANGE_MIN_DF
    topk.RANGE_MIN_DF = 1
    try:
        got = lib.search(raw, k=k, mode="bm25")
    finally:
        topk.RANGE_MIN_DF = saved
    assert [(h.chunk_id, h.score) for h in got.hits] == want, raw
