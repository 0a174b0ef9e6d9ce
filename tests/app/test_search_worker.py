"""The window's search worker: every slot's failure reaches its failure signal (issue 58)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdesk.app.search_worker import SearchRequest, SearchWorker
from ragdesk.core.build import build_index
from ragdesk.core.params import SearchParams

from ..conftest import write_notes


@pytest.mark.parametrize("slot", ["search", "explain_note", "find_ranks", "find_completions"])
def test_every_failure_of_a_slot_reaches_its_signal(slot: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An OSError while explaining a note ended nowhere and the why-not dialog waited forever (issue
    58): each slot reports any exception on its failure signal, with the request's serial and chunk
    where that signal carries them."""
    import ragdesk.app.search_worker as worker_mod

    lib, _ = build_index(write_notes(tmp_path / "n", {"a.md": "# A\n\napples\n"}), tmp_path / "idx", workers=1)
    worker = SearchWorker()
    worker.set_library(lib)
    failed: list = []
    for name in ("search_failed", "why_not_failed", "ranks_failed"):
        getattr(worker, name).connect(lambda *args, name=name: failed.append((name, *args)))
    gone = OSError(5, "Input/output error")

    def broken(*_args: object, **_kwargs: object) -> None:
        raise gone

    monkeypatch.setattr(worker_mod, "why_not", broken)
    monkeypatch.setattr(type(lib), "search", broken)
    monkeypatch.setattr(type(lib), "note_facts", broken)
    monkeypatch.setattr(type(lib), "ready", broken)
    request = SearchRequest(7, "apples", SearchParams(), mode="bm25")
    args = {"search": (request,), "explain_note": (request, "a.md"), "find_ranks": (request, 0), "find_completions": ()}
    getattr(worker, slot)(*args[slot])
    signal = {"search": "search_failed", "explain_note": "why_not_failed", "find_ranks": "ranks_failed"}
    want = (signal.get(slot, "search_failed"), *((7, 0) if slot == "find_ranks" else ()), gone)
    assert failed == [want]
