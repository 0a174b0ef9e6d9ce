"""Writing an index's meaning index: what a reader lacks is embedded (newest notes first) under the
index's meaning lock, in batches that survive a crash (core.embeddings), and the reader is handed the
rows. The reader only reads; `ragdesk index` and the build process share `complete_meaning`'s loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import embeddings
from .dense import DenseUnavailable, Embedder, embedder_name, load_embedder
from .errors import EmbeddingCancelled, GenerationReplaced

if TYPE_CHECKING:  # types only: the reader's search imports this module (dense asked for on first use)
    from .reader import IndexReader


def repair_meaning(reader: IndexReader, embedder: Embedder, verify: bool = False) -> list[str]:
    """Set each segment's meaning index that cannot be trusted to be embedded again (embeddings.
    rows_damage: unreadable, another dimension than the model's, a block's checksum, values not
    numbers, rows not unit vectors; with `verify` the whole file's checksum): only its damaged blocks
    when the checksums tell which (embeddings.salvage), else all of it. A line for each, saying why."""
    damaged = []
    dim = None
    for seg in reader.segments:
        if embeddings.stored_path(seg, embedder.name).is_file():
            if dim is None:
                dim = int(embedder.embed(["dimension"]).shape[1])
            why = embeddings.rows_damage(seg, embedder.name, dim, verify)
            if why is None:
                continue
            reader.forget_meaning(embedder.name)
            rows = embeddings.salvage(seg, embedder.name)
            if not rows:
                embeddings.discard_rows(seg, embedder.name)
            again = f"embedding those {rows:,} rows again" if rows else "embedding it again"
            damaged.append(f"the meaning index in {seg.generation} was damaged ({why}); {again}")
    return damaged


def embed_missing(
    reader: IndexReader,
    embedder: Embedder,
    progress: embeddings.ProgressFn | None = None,
    cancelled: embeddings.Cancelled | None = None,
    waiting: Callable[[], None] | None = None,
) -> list[np.ndarray]:
    """Each segment's embeddings (float16): the stored ones memory-mapped, the rest computed and
    stored, in batches that survive a crash (kept in memory when the cache is read-only), and given to
    `reader`. After a refresh, `meaning_keep.keep` has copied the rows of unchanged notes, so only new
    and changed chunks are embedded again. One process at a time computes them (another one waits:
    `waiting` is called once, `cancelled` polled, EmbeddingCancelled if it says so).
    GenerationReplaced when another process publishes a newer generation meanwhile."""
    name = embedder.name
    rows = reader.segment_rows(name)
    if any(row is None for row in rows):
        with embeddings.writing_rows(reader.root, cancelled, waiting):
            rows = reader.segment_rows(name)  # done meanwhile?
            todo = [seg for seg, row in zip(reader.segments, rows) if row is None]
            plans = [embeddings.plan_segment(seg, name) for seg in todo]
            filled = iter(embeddings.embed_plans(plans, embedder, progress, cancelled, replaced=reader.replaced))
        rows = [row if row is not None else next(filled) for row in rows]
    complete: list[np.ndarray] = [row for row in rows if row is not None]
    reader.adopt_meaning(name, complete)
    return complete


CATCH_UP_MAX = 64  # chunks: a refresh's few new ones are embedded before a command-line search (seconds)


def catch_up(reader: IndexReader, spec: str | None) -> bool:
    """Embed the few chunks a refresh added to a folder whose meaning index was complete (the rest
    were stored, or copied by the refresh), so an edit does not turn auto back to BM25 until the next
    `ragdesk index`. True when the meaning index is complete afterwards. Never waits: when another
    process holds the meaning lock, that process embeds them."""
    name = embedder_name(spec)
    if reader.has_meaning(name):
        return True
    if reader.meaning_progress(name)[0] == 0:
        return False  # never embedded: that is `ragdesk index`'s work (minutes to hours), not a search's
    try:
        with embeddings.writing_rows(reader.root, cancelled=lambda: True):
            missing = [s for s in reader.segments if embeddings.load_rows(s, name) is None]
            plans = [embeddings.plan_segment(s, name) for s in missing]
            if sum(len(p.todo) for p in plans) > CATCH_UP_MAX:
                return False
            embeddings.embed_plans(plans, load_embedder(spec))
    except (DenseUnavailable, OSError, EmbeddingCancelled):
        return False
    return reader.has_meaning(name)


def meaning_matrix(
    reader: IndexReader,
    embedder: Embedder,
    progress: embeddings.ProgressFn | None = None,
    cancelled: embeddings.Cancelled | None = None,
) -> np.ndarray:
    """The chunks' embeddings in the reader's merged numbering, computed first where missing (laying
    out a base and a delta copies them; the build and the search use each segment's own)."""
    embed_missing(reader, embedder, progress, cancelled)
    matrix = reader.stored_meaning(embedder.name)
    assert matrix is not None  # adopted just above
    return matrix


@dataclass
class MeaningRun:
    """Build, then embed: one run that completes an index's meaning index, followed across the
    generations other processes publish meanwhile. Its counts stay readable after an interruption."""

    reader: IndexReader  # the index embedded last (another process's newer one after a replacement)
    embedder: Embedder
    embedded: int = 0  # chunks embedded by this run, over every generation it worked on

    def complete(
        self,
        progress: embeddings.ProgressFn | None = None,
        cancelled: embeddings.Cancelled | None = None,
        waiting: Callable[[], None] | None = None,
        replaced: Callable[[IndexReader], IndexReader | None] | None = None,
    ) -> MeaningRun:
        """Compute what the meaning index lacks, `progress(done, total)` per generation. When another
        process publishes a newer generation meanwhile (a window's refresh, a terminal's `ragdesk
        index`), `replaced(reader)` gives the index to go on with (`ragdesk index` reopens it) or None
        to stop (the build process: the window refreshes, which starts its own); without `replaced`,
        GenerationReplaced propagates. EmbeddingCancelled when `cancelled` says so."""
        earlier = self.embedded  # chunks embedded into generations since replaced

        def counted(done: int, total: int) -> None:
            self.embedded = earlier + done
            if progress is not None:
                progress(done, total)

        while True:
            try:
                embed_missing(self.reader, self.embedder, counted, cancelled, waiting)
            except GenerationReplaced:
                following = replaced(self.reader) if replaced is not None else None
                if following is None:
                    raise
                self.reader, earlier = following, self.embedded
                continue
            return self
