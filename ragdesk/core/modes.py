"""Which search runs: BM25, dense (meaning only) or hybrid, and why, decided in one place.

`auto` (the default) is hybrid once the meaning index has its first batch, over the chunks embedded
so far; dense and hybrid are what they say when the model is installed. `resolve` reads the meaning
index's state once and returns the mode, the reason the window and `--json` show, the model it
needs and whether the meaning index is searched as it is (unfinished); the CLI and the window's
search worker both call it, and `search` carries its reason into the result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from . import dense
from .dense import DenseUnavailable, Embedder, dense_available, embedder_name
from .fusion import QUERY_TIME_EMBED


class Mode(str, Enum):
    """What a search ranks by: BM25 alone, meaning (dense) alone, or both fused. A str, so the JSON,
    the settings file and comparisons with "bm25" read it as its value."""

    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"

    def __str__(self) -> str:
        return self.value

    def __hash__(self) -> int:  # as its value's: a dict keyed by "bm25" finds Mode.BM25 (Enum hashes the name)
        return str.__hash__(self)

    @property
    def uses_meaning(self) -> bool:
        """Whether the search needs an embedder and the meaning index."""
        return self is not Mode.BM25


MODES = tuple(m.value for m in Mode)
AUTO = "auto"  # a request, not a mode: hybrid once the meaning index has its first chunks (decide), BM25 before
MODE_CHOICES = (AUTO, *MODES)


def asks_meaning(requested: str) -> bool:
    """Whether a requested mode needs the meaning index computed (auto does not: BM25 until there is one)."""
    return requested != AUTO and Mode(requested).uses_meaning


class HasMeaningIndex(Protocol):
    def has_meaning(self, name: str) -> bool: ...

    def meaning_progress(self, name: str) -> tuple[int, int]: ...

    def meaning_damage(self, name: str) -> str | None: ...


@dataclass(frozen=True)
class Resolved:
    """The search a request runs: `mode`, `reason` (said to the user), the `embedder` it needs (None
    for BM25), whether an unfinished meaning index is searched as it is (`partial`), and for auto over
    an unfinished one the chunks embedded so far and all (`meaning`, the Mode box's count)."""

    mode: Mode
    reason: str
    embedder: Embedder | None = None
    partial: bool = False
    meaning: tuple[int, int] | None = None


@dataclass(frozen=True)
class MeaningState:
    """The meaning index of one model, read once: why it cannot be used (None when it can), whether
    it is complete, how many chunks are embedded of all, and why a stored one is not used (damaged)."""

    name: str
    unavailable: str | None
    complete: bool
    done: int
    total: int
    damaged: str | None = None


def meaning_state(lib: HasMeaningIndex, spec: str | None) -> MeaningState:
    name = embedder_name(spec)
    if not dense_available(spec):
        try:
            dense.load_embedder(spec)
        except DenseUnavailable as exc:
            return MeaningState(name, str(exc), False, 0, 0)
    if lib.has_meaning(name):
        return MeaningState(name, None, True, 0, 0)
    return MeaningState(name, None, False, *lib.meaning_progress(name), damaged=lib.meaning_damage(name))


def resolve(
    lib: HasMeaningIndex,
    requested: str,
    spec: str | None = None,
    partial: bool = True,
    compute_unstarted: bool = False,
    load: Callable[[str | None], Embedder] | None = None,
) -> Resolved:
    """The search `requested` runs on `lib`, with model `spec` loaded by `load` (the window's worker
    keeps one per model). `partial`: an unfinished meaning index is searched as it is (the window;
    the meaning index is computed by the build process, never by a search). `compute_unstarted` (the
    CLI): an index never embedded is not searched as it is; dense and hybrid asked for compute it on
    first use. `partial=False` (eval: a measurement) keeps auto on BM25 until the meaning index is
    complete, and dense and hybrid compute the rest first."""
    if requested == Mode.BM25:
        return Resolved(*decide(requested, None, partial))
    state = meaning_state(lib, spec)
    unfinished = state.unavailable is None and not state.complete
    as_is = partial and unfinished and (state.done > 0 or not compute_unstarted)
    mode, reason = decide(requested, state, as_is)
    embedder = (load or dense.load_embedder)(spec) if mode.uses_meaning else None
    meaning = (state.done, state.total) if requested == AUTO and unfinished else None
    return Resolved(mode, reason, embedder, as_is and mode.uses_meaning, meaning)


def choose_mode(
    lib: HasMeaningIndex, requested: str, spec: str | None = None, partial: bool = False
) -> tuple[Mode, str]:
    """`decide` on `lib`'s meaning index as it is now."""
    return decide(requested, None if requested == Mode.BM25 else meaning_state(lib, spec), partial)


def decide(requested: str, state: MeaningState | None, partial: bool) -> tuple[Mode, str]:
    """The mode a search runs in for `requested` (auto, bm25, dense or hybrid), and why: auto is
    hybrid once the index holds every chunk's embedding; dense and hybrid are what they say when the
    model is installed (their embeddings are computed on first use). With `partial`, as the window
    asks, an unfinished meaning index is searched as it is (IndexReader.partial_nearest): auto and
    hybrid are hybrid over the chunks embedded so far, with BM25's top chunks embedded for the
    search, from the first batch on (it beats BM25 from 1% embedded: see QUERY_TIME_EMBED)."""
    if requested == Mode.BM25 or state is None:
        return Mode.BM25, "BM25 was asked for"
    if state.unavailable is not None:
        return Mode.BM25, f"BM25 only: {state.unavailable}"
    if state.complete:
        if requested == AUTO:
            return Mode.HYBRID, f"hybrid: the meaning index ({state.name}) is complete"
        return Mode(requested), f"{requested} was asked for"
    if not partial and requested != AUTO:
        return Mode(requested), f"{requested} was asked for"
    done, total = state.done, state.total
    if state.damaged is not None and (not partial or not done):
        return Mode.BM25, (
            f"BM25: the meaning index is damaged ({state.damaged}); not ranked with it until "
            "`ragdesk index` (or a refresh) embeds the damaged rows again"
        )
    if not partial:
        return Mode.BM25, f"BM25 until the meaning index is complete ({done:,} of {total:,} chunks embedded)"
    if not done:
        return Mode.BM25, f"BM25 until the first chunks are embedded (0 of {total:,})"
    so_far = f"over {done:,} of {total:,} chunks embedded so far (newest notes first)"
    if requested == Mode.DENSE:
        return Mode.DENSE, f"dense {so_far}; the others are not searched"
    return Mode.HYBRID, (
        f"hybrid {so_far}, BM25's top {QUERY_TIME_EMBED} embedded for this search; "
        "the others count half their BM25 share for meaning"
    )
