"""Stored words and terms: decoded one at a time, looked up by binary search (no dict per index)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdesk.core import kernels
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.build import build_index
from ragdesk.core.lexicon import Lexicon, Words, sorted_ids, word_list
from ragdesk.core.reader import IndexReader

from ..conftest import write_notes

TERM = st.text(alphabet=st.sampled_from("ab_žčłі€𝄞"), min_size=1, max_size=6)


def test_stored_words_are_decoded_one_at_a_time_until_all_are_walked() -> None:
    """A refresh looks up the words of a few edited chunks: one word id, one word decoded."""
    words = ["alpha", "žluťoučký", "", "omega"]
    stored = Words("\n".join(words).encode("utf-8"))
    assert len(stored) == 4 and [stored[i] for i in range(4)] == words and stored[-1] == "omega"
    assert stored._all is None  # nothing decoded as a whole yet
    with pytest.raises(IndexError):
        stored[4]
    assert list(stored) == words and word_list(stored) is stored.all()
    assert len(Words(b"")) == 0 and list(Words(b"")) == []


@settings(max_examples=200, deadline=None)
@given(terms=st.lists(TERM, unique=True, max_size=40), probes=st.lists(TERM, max_size=20))
def test_a_term_is_found_by_its_sorted_order_exactly_as_a_dict_finds_it(terms: list[str], probes: list[str]) -> None:
    """Compiled and Python look-ups agree with a dict, for present terms, absent ones, prefixes of
    present ones and astral characters (sorted by UTF-8 bytes = by code points)."""
    blob = "\n".join(terms).encode("utf-8")
    ids = {t: i for i, t in enumerate(terms)}
    asked = [*terms, *probes, *(t[:-1] for t in terms if len(t) > 1), *(t + "a" for t in terms)]
    expected = [ids.get(t) for t in asked]
    stored = Lexicon(blob, sorted_ids(terms))
    assert [stored.find(t) for t in asked] == expected
    with kernels.python_only(ranking=False):
        assert [Lexicon(blob, sorted_ids(terms)).find(t) for t in asked] == expected
    assert [Lexicon(blob).find(t) for t in asked] == expected  # order computed when not stored


@pytest.mark.skipif(kernels.TEXT is None, reason="the compiled text kernel is not built")
def test_a_damaged_order_is_refused_not_read_out_of_bounds() -> None:
    blob = b"a\nb\nc"
    starts = Words(blob)._offsets()
    with pytest.raises(ValueError, match="order"):
        kernels.TEXT.find_term(blob, starts, np.array([0, 7, 2], np.int32), "c")
    with pytest.raises(ValueError, match="order"):
        kernels.TEXT.find_term(blob, starts[:-1], np.array([0, 1, 2], np.int32), "c")


def test_an_opened_index_looks_terms_up_without_a_dict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The stored index keeps its terms' sorted order; one written before that still answers."""
    folder = tmp_path / "notes"
    write_notes(folder, {"a.md": "# Indukce\n\nmatematická indukce a její důkaz\n", "b.md": "# Other\n\nzebra\n"})
    build_index(folder, tmp_path / "idx", workers=1, warm=AnalyzerConfig())
    reader = IndexReader.open(folder, tmp_path / "idx")
    assert [h.path for h in reader.search("indukci").hits] == ["a.md"]
    for name in ("stems", "trigrams"):
        ti = reader.segments[0].term_index(AnalyzerConfig(name))
        assert isinstance(ti.terms, Lexicon) and ti._ids is None
    # an index from before: no order.npy; it is sorted on the first look-up and answers the same
    sub = next(reader.generation.glob("terms-stems_5"))
    (sub / "order.npy").unlink()
    manifest = json.loads((sub / "manifest.json").read_text())
    del manifest["files"]["order.npy"]
    (sub / "manifest.json").write_text(json.dumps(manifest))
    again = IndexReader.open(folder, tmp_path / "idx")
    assert [h.path for h in again.search("indukci", analyzer=AnalyzerConfig("stems")).hits] == ["a.md"]
