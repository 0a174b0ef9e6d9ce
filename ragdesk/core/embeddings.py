"""Dense vectors of a segment's chunks ("the meaning index"): computed in batches, stored beside the
segment's arrays, resumed after a crash, reused on refresh.

Each segment stores its own rows (`dense-<model>.npy`, float16, one row per chunk), computed by
core.meaning_writer; a reader lays them out in its numbering (IndexReader.stored_meaning). While a
segment is being embedded its rows live in `dense-<model>.partial.npy` with a bit per chunk in
`dense-<model>.done` saying which rows are written: each batch is flushed before its bits are, so
a crash or a cancel loses at most the batch under way, and the next run continues where this one
stopped.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import fileio, locks, row_sums, store
from .dense import Embedder
from .errors import EmbeddingCancelled, GenerationReplaced, MeaningIndexUnwritable  # noqa: F401 (re-exported)
from .segment import Segment

ProgressFn = Callable[[int, int], None]  # chunks embedded, chunks to embed
Cancelled = Callable[[], bool]


@contextlib.contextmanager
def writing_rows(
    root: Path, cancelled: Cancelled | None = None, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the index's meaning lock (locks.meaning_lock) while rows are written: one process at a
    time. Cancelled while another process holds it: EmbeddingCancelled (that process computes them)."""
    try:
        with locks.meaning_lock(root, cancelled, waiting):
            yield
    except store.IndexBusy as exc:
        raise EmbeddingCancelled(str(exc)) from exc


def stored_path(segment: Segment, name: str) -> Path:
    return segment.generation / f"dense-{name}.npy"


def _partial_paths(segment: Segment, name: str) -> tuple[Path, Path]:
    return segment.generation / f"dense-{name}.partial.npy", segment.generation / f"dense-{name}.done"


def _sum_path(segment: Segment, name: str) -> Path:
    """Where a complete meaning index's size and CRC are kept (checked by `index --verify`)."""
    return segment.generation / f"dense-{name}.sum.json"


def load_rows(segment: Segment, name: str) -> np.ndarray | None:
    """The segment's stored embeddings from model `name` (memory-mapped), or None when there are none
    or they cannot be trusted (a truncated or altered file, a block whose checksum fails: see
    rows_damage, which says why)."""
    return _open_rows(segment, name)[0]


Salvageable = tuple[np.ndarray, np.ndarray]  # rows damaged in some blocks, and which rows are still trusted


def _open_rows(segment: Segment, name: str) -> tuple[np.ndarray | None, str | None, Salvageable | None]:
    """The stored rows (memory-mapped) when they can be used, else None and why ("" when there are none),
    and for rows damaged only in some blocks the rows with a mask of those still trusted: the one
    check behind load_rows, rows_damage and salvage, made before any search ranks with the rows."""
    path = stored_path(segment, name)
    try:
        matrix = np.load(path, mmap_mode="r")
    except FileNotFoundError:
        return None, "", None
    except (OSError, ValueError, EOFError):
        return None, "unreadable (truncated or not an array)", None
    if matrix.ndim != 2 or matrix.shape[0] != segment.n_chunks or matrix.shape[1] == 0 or matrix.dtype != np.float16:
        return None, f"not one float16 row per chunk ({matrix.dtype} {matrix.shape})", None
    recorded = _recorded(segment, name)
    dim = recorded.get("dim", matrix.shape[1])
    if matrix.shape[1] != dim:
        return None, f"{matrix.shape[1]} dimensions where it was written with {dim}", None
    bad = row_sums.checked_once(path, matrix, recorded)
    if not bad:
        return matrix, None, None
    trusted = np.ones(len(matrix), dtype=bool)
    size = row_sums.block_rows_of(recorded)
    for b in bad:
        trusted[b * size : (b + 1) * size] = False
    return None, row_sums.said(bad, len(matrix), recorded), (matrix, trusted)


def stored_problem(segment: Segment, name: str) -> str | None:
    """Why the segment's stored meaning index is not used (damaged), in a few words; None when it is
    used or there is none (not embedded yet is not damage)."""
    return _open_rows(segment, name)[1] or None


def _recorded(segment: Segment, name: str) -> dict:
    """The size, CRC, dimension and per-block CRCs recorded when the segment's meaning index was
    completed ({} before they were kept)."""
    try:
        found = json.loads(_sum_path(segment, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


UNIT_TOLERANCE = 0.02  # float16 rows of unit vectors have lengths within ~0.002 of 1


def rows_damage(segment: Segment, name: str, dim: int | None, verify: bool = False) -> str | None:
    """Why the segment's stored meaning index cannot be trusted, in a few words; None when it can (or
    there is none). Checked: it reads as a (chunks, `dim`) float16 matrix, every block's CRC as
    recorded, every value finite and every row of unit length; with `verify`, the whole file's size
    and CRC as stored when it was completed."""
    rows, problem, _ = _open_rows(segment, name)
    if rows is None:
        return problem or None
    if dim is not None and rows.shape[1] != dim:
        return f"{rows.shape[1]} dimensions where the model gives {dim}"
    for start in range(0, len(rows), 8192):
        lengths = np.linalg.norm(np.asarray(rows[start : start + 8192], dtype=np.float32), axis=1)
        if (np.abs(lengths - 1) > UNIT_TOLERANCE).any():
            return "rows that are not unit vectors (zeroed or altered)"
    path = stored_path(segment, name)
    want = _recorded(segment, name)
    if verify and want:  # (an index written before checksums were kept: the checks above are all there is)
        if fileio.file_info(path) != {"size": want["size"], "crc32": want["crc32"]}:
            return "a checksum that does not match (altered bytes)"
    return None


def discard_rows(segment: Segment, name: str) -> None:
    """Remove a damaged meaning index of a segment so that the next `ragdesk index` embeds it again."""
    for path in (stored_path(segment, name), _sum_path(segment, name)):
        path.unlink(missing_ok=True)


def _record_sum(segment: Segment, name: str, dim: int, rows: np.ndarray) -> None:
    """Record the complete rows' size, CRC, dimension and per-block CRCs (row_sums), checked at open."""
    sums = {"block_rows": row_sums.BLOCK_ROWS, "blocks": row_sums.block_sums(rows)}
    with contextlib.suppress(OSError):
        info = fileio.file_info(stored_path(segment, name))
        fileio.write_json(_sum_path(segment, name), {**info, "dim": dim, **sums})


def salvage(segment: Segment, name: str) -> int:
    """Turn a stored meaning index damaged in some blocks back into a partial run that lacks just those
    blocks, so the next run embeds them alone (not the whole segment: hours at scale). Returns the
    rows to embed again (0 when there is nothing to salvage)."""
    found = _open_rows(segment, name)[2]
    if found is None:
        return 0
    trusted = found[1]
    del found
    partial, done_path = _partial_paths(segment, name)
    fileio.replace_atomically(done_path, np.packbits(trusted).tobytes())
    os.replace(stored_path(segment, name), partial)
    _sum_path(segment, name).unlink(missing_ok=True)
    return int(np.count_nonzero(~trusted))


def _load_done(path: Path, n: int) -> np.ndarray | None:
    try:
        bits = np.fromfile(path, dtype=np.uint8)
    except OSError:
        return None
    return np.unpackbits(bits, count=n).astype(bool) if len(bits) == (n + 7) // 8 else None


def written(segment: Segment, name: str) -> np.ndarray | None:
    """Which of the segment's chunks have their embedding from `name` written (all of a complete
    one), or None when none are (a stored file that is not a matrix of the segment's rows counts as
    none: see rows_damage)."""
    if load_rows(segment, name) is not None:
        return np.ones(segment.n_chunks, dtype=bool)
    return _load_done(_partial_paths(segment, name)[1], segment.n_chunks)


def embedded_count(segment: Segment, name: str) -> int:
    """How many of the segment's chunks have their embedding written (all, once it is complete)."""
    done = written(segment, name)
    return int(np.count_nonzero(done)) if done is not None else 0


def _load_partial(segment: Segment, name: str, mode: str = "r") -> tuple[np.ndarray, np.ndarray] | None:
    """An unfinished run's rows (memory-mapped in `mode`) and its done-bits, or None."""
    partial, done_path = _partial_paths(segment, name)
    done = _load_done(done_path, segment.n_chunks)
    if done is None:
        return None
    try:
        rows = np.load(partial, mmap_mode=mode)
    except (OSError, ValueError):
        return None
    return (rows, done) if rows.shape[0] == segment.n_chunks else None


def embedded_rows(segment: Segment, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The segment's rows from model `name` (memory-mapped) and which are written: all of a complete
    one, the written ones of a partial one; None when it has none."""
    rows, _, damaged = _open_rows(segment, name)
    if rows is not None:
        return rows, np.ones(segment.n_chunks, dtype=bool)
    if damaged is not None:  # the blocks that passed their checksums
        return damaged
    return _load_partial(segment, name)


@dataclass
class Plan:
    """One segment's embedding under way: its rows (a file when the cache is writable, else memory)
    and which are written."""

    segment: Segment
    name: str
    rows: np.ndarray | None  # None until the first batch tells the dimension (nothing to reuse)
    done: np.ndarray
    on_disk: bool

    def _left(self) -> tuple[np.ndarray, np.ndarray]:
        """The chunks left to embed and their notes' modification times (ns)."""
        ids = np.flatnonzero(~self.done)
        return ids, np.asarray(self.segment.note_mtime, np.int64)[np.asarray(self.segment.chunk_note)[ids]]

    @property
    def todo(self) -> np.ndarray:
        """The chunks left, newest notes first (by modification time; ties in chunk order): hours
        into a large folder's meaning index, what a person wrote lately is what is searchable."""
        ids, mtimes = self._left()
        return ids[np.argsort(-mtimes, kind="stable")]

    @property
    def newest(self) -> int:
        """The modification time of the newest note left to embed (plans go newest first)."""
        return int(self._left()[1].max(initial=np.iinfo(np.int64).min))

    def _create(self, dim: int) -> None:
        path = _partial_paths(self.segment, self.name)[0]
        try:
            self.rows = fileio.preallocated_array(path, np.float16, (self.segment.n_chunks, dim))
            self.on_disk = True
        except OSError as exc:
            path.unlink(missing_ok=True)  # a full disk leaves the header it could write
            if store.is_full(exc):  # no room: hours computed in memory would be thrown away
                self._unwritable(exc)
            # a read-only cache still searches: the rows stay in memory, unstored (`stored` says so)
            self.rows = np.zeros((self.segment.n_chunks, dim), np.float16)
            self.on_disk = False

    def write(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Store one batch: the rows first, then the bits that say they are there."""
        if self.rows is None:
            self._create(vectors.shape[1])
        assert self.rows is not None
        try:
            if self.on_disk and isinstance(self.rows, np.memmap):
                fileio.write_rows(self.rows, ids, vectors.astype(np.float16))  # durable, not left resident
            else:
                self.rows[ids] = vectors.astype(np.float16)
        except OSError as exc:
            self._unwritable(exc)  # not a full disk: the map stays valid (an unlinked file's too)
            self.rows[ids] = vectors.astype(np.float16)
        self.done[ids] = True
        if self.on_disk:
            try:
                fileio.replace_atomically(_partial_paths(self.segment, self.name)[1], np.packbits(self.done).tobytes())
            except OSError as exc:
                self._unwritable(exc)

    def _unwritable(self, exc: OSError) -> None:
        """A write failed: a full or read-only disk stops the run (MeaningIndexUnwritable); anything
        else, e.g. the generation replaced and pruned meanwhile, finishes in memory (embed_plans then
        stops: GenerationReplaced)."""
        if not store.is_storage_error(exc):
            self.on_disk = False
            return
        where = _partial_paths(self.segment, self.name)[0].parent
        kept = "the batches embedded before are kept" if self.on_disk and self.done.any() else "nothing was stored"
        raise MeaningIndexUnwritable(
            f"cannot store the meaning index in {where}: {exc.strerror or exc}; {kept} and the next run continues"
        ) from exc

    def finish(self) -> np.ndarray:
        """The complete rows, stored under their final name when the cache is writable."""
        partial, done_path = _partial_paths(self.segment, self.name)
        if self.rows is None:  # a segment without chunks
            self.rows = np.zeros((self.segment.n_chunks, 1), np.float16)
        if self.on_disk and isinstance(self.rows, np.memmap):
            self.rows.flush()
            dim = int(self.rows.shape[1])
            del self.rows
            os.replace(partial, stored_path(self.segment, self.name))
            done_path.unlink(missing_ok=True)
            _record_sum(self.segment, self.name, dim, np.load(stored_path(self.segment, self.name), mmap_mode="r"))
            rows = load_rows(self.segment, self.name)
            assert rows is not None
            return rows
        rows = self.rows
        path = stored_path(self.segment, self.name)
        tmp = fileio.tmp_name(path)
        try:
            fileio.save_array(tmp, rows)
            os.replace(tmp, path)
            _record_sum(self.segment, self.name, int(rows.shape[1]), rows)
            partial.unlink(missing_ok=True)
            done_path.unlink(missing_ok=True)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            if store.is_full(exc):  # never a success said over rows nothing stored
                self._unwritable(exc)
            # a read-only cache still searches, it just embeds again (`stored` says so)
        return rows


def plan_segment(segment: Segment, name: str) -> Plan:
    """What is left to embed of `segment`: the partial rows of an earlier run (or of the rows `keep`
    copied from the index this one refreshed) when there are some, else everything."""
    salvage(segment, name)  # damaged in some blocks: embed those alone
    resumed = _load_partial(segment, name, "r+")
    if resumed is not None:
        return Plan(segment, name, *resumed, on_disk=True)
    return Plan(segment, name, None, np.zeros(segment.n_chunks, dtype=bool), False)


def embed_plans(
    plans: list[Plan],
    embedder: Embedder,
    progress: ProgressFn | None = None,
    cancelled: Cancelled | None = None,
    batch: int | None = None,
    replaced: Cancelled | None = None,
) -> list[np.ndarray]:
    """Embed what each plan lacks, `batch` chunks at a time (the embedder's own size by default), the
    plan with the newest note first and newest notes first within each (see Plan.todo), reporting
    chunks done of chunks to do over all plans; before each batch EmbeddingCancelled if `cancelled`
    says so, GenerationReplaced if `replaced` does. The finished rows come back in the order of
    `plans`."""
    size = batch or embedder.batch
    total = sum(int(np.count_nonzero(~p.done)) for p in plans)
    done = 0
    for plan in sorted(plans, key=lambda p: -p.newest):  # a refresh's delta holds the latest edits
        ids = plan.todo
        for start in range(0, len(ids), size):
            if cancelled is not None and cancelled():
                raise EmbeddingCancelled
            if replaced is not None and replaced():
                raise GenerationReplaced("another process published a newer generation of the index")
            part = ids[start : start + size]
            plan.write(part, embedder.embed(plan.segment.chunk_texts(part.tolist())))
            plan.segment.release_texts()  # every note is read once or twice: none kept resident
            done += len(part)
            if progress is not None:
                progress(done, total)
    return [plan.finish() for plan in plans]
