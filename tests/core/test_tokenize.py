"""Word counting and chunk cuts of a build's workers: exact results, compiled and in Python alike."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from ragdesk.core import kernels
from ragdesk.core.build import _batches
from ragdesk.core.chunking import ChunkOptions, chunk_note
from ragdesk.core.loader import LoadOptions, read_note
from ragdesk.core.tokenize import count_words, intern_words, process_batch
from ragdesk.core.walk import walk_notes

SAMPLE_NOTES = Path(str(resources.files("ragdesk.resources").joinpath("sample_notes")))


def test_count_words_casefolds_unicode_words_per_chunk(text_kernel: str) -> None:
    """`\\w+` runs as re finds them (digits, superscripts, '_'; a combining accent splits a
    decomposed word), folded by str.casefold (ß -> ss, the fi ligature, dotted I, final sigma)."""
    pieces = ["Straße STRASSE straße x²³ snake_case ΣΊΣΥΦΟΣ", "ﬁle İ Café e\u0301 ٣٤ _", "hello world"]
    bounds = np.array([0, len(pieces[0]), 0, len(pieces[1]), 2, 8], np.int64)  # the last: "llo wo"
    vocab, row_len, ids, counts, n_tokens = count_words(pieces, bounds, np.array([0, 2, 2, 3], np.int64))
    assert vocab == ["strasse", "x²³", "snake_case", "σίσυφοσ", "file", "i\u0307", "café", "e", "٣٤", "_", "llo", "wo"]
    assert row_len.tolist() == [10, 0, 2]  # the middle chunk reads no piece
    assert ids.tolist() == list(range(12)) and counts.tolist() == [3] + [1] * 11
    assert n_tokens == 14
    assert (row_len.dtype, ids.dtype, counts.dtype) == (np.int64, np.int32, np.int32)


def test_count_words_rows_list_word_ids_ascending(text_kernel: str) -> None:
    vocab, row_len, ids, counts, _ = count_words(["b a", "c a b a"], np.array([0, 3, 0, 7], np.int64), np.arange(3))
    assert vocab == ["b", "a", "c"]
    assert row_len.tolist() == [2, 3] and ids.tolist() == [0, 1, 0, 1, 2] and counts.tolist() == [1, 1, 1, 2, 1]


def test_intern_words_adds_unseen_words_with_the_next_ids(text_kernel: str) -> None:
    vocab = {"a": 0}
    assert intern_words(vocab, ["b", "a", "b", "c"]).tolist() == [1, 0, 1, 2]
    assert vocab == {"a": 0, "b": 1, "c": 2} and intern_words(vocab, []).tolist() == []


def test_compiled_count_words_rejects_bad_bounds() -> None:
    if kernels.TEXT is None:
        pytest.skip("the compiled text kernel is not built here")
    with pytest.raises(ValueError, match="outside"):
        kernels.TEXT.count_words(["abc"], np.array([0, 4], np.int64), np.array([0, 1], np.int64))
    with pytest.raises(ValueError, match="chunk_ptr"):
        kernels.TEXT.count_words(["abc"], np.array([0, 3], np.int64), np.array([0, 2], np.int64))


def _compare_kernels(folder: Path, options: list[ChunkOptions], extensions: tuple[str, ...] = (".md",)) -> int:
    """Chunks and batch word counts of every note in `folder`, compiled against Python; returns chunks seen."""
    if kernels.TEXT is None:
        pytest.skip("the compiled text kernel is not built here")
    files, _ = walk_notes(folder, LoadOptions(extensions=extensions))
    notes = [n for n in (read_note(f)[0] for f in files) if n is not None]
    seen = 0
    for opts in options:
        compiled = [chunk_note(n, opts) for n in notes]
        batches = [process_batch(b, opts) for b in _batches(files)]
        with kernels.python_only():
            assert [chunk_note(n, opts) for n in notes] == compiled
            python = [process_batch(b, opts) for b in _batches(files)]
        for a, b in zip(batches, python):
            assert a.vocab.all() == b.vocab.all() and a.n_tokens == b.n_tokens and a.headings == b.headings
            for name in ("spans", "lines", "row_len", "word_ids", "counts"):
                assert np.array_equal(getattr(a, name), getattr(b, name)), name
        seen += sum(len(c) for c in compiled)
    return seen


OPTIONS = [
    ChunkOptions(),
    ChunkOptions(size=20, overlap=5, min_fill=0.5),
    ChunkOptions(size=160, overlap=0, min_fill=1.0, context=False),
    ChunkOptions(size=3, overlap=2, min_fill=0.1),
    ChunkOptions(chunker="words"),
]


def test_compiled_text_kernel_equals_python_on_the_sample_notes() -> None:
    assert _compare_kernels(SAMPLE_NOTES, OPTIONS, (".md", ".txt", ".org", ".rst")) > 500


def test_compiled_text_kernel_equals_python_on_real_notes_in_six_languages(shared_data: Path) -> None:
    """The Obsidian help in six languages (Czech, Ukrainian, Chinese among them) and the Czech tldr pages."""
    seen = _compare_kernels(shared_data / "obsidian-help", OPTIONS[:3])
    seen += _compare_kernels(shared_data / "tldr-pages" / "pages.cs", OPTIONS[:1])
    assert seen > 20_000
