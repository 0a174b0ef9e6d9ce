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

from . import fileio, locks, store
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
    or they are not a (chunks, dim) float16 matrix (a truncated or altered file: see rows_damage)."""
    return _open_rows(segment, name)[0]


def _open_rows(segment: Segment, name: str) -> tuple[np.ndarray | None, str | None]:
    """The stored rows (memory-mapped) when they can be used, else None and why ("" when there are none):
    the one structural check behind load_rows and rows_damage."""
    path = stored_path(segment, name)
    try:
        matrix = np.load(path, mmap_mode="r")
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError, EOFError):
        return None, "unreadable"
    if matrix.ndim != 2 or matrix.shape[0] != segment.n_chunks or matrix.shape[1] == 0 or matrix.dtype != np.float16:
        return None, f"not one float16 row per chunk ({matrix.dtype} {matrix.shape})"
    dim = _recorded(segment, name).get("dim", matrix.shape[1])
    if matrix.shape[1] != dim:
        return None, f"{matrix.shape[1]} dimensions where it was written with {dim}"
    if not _all_numbers(path, matrix):
        return None, "values that are not numbers (NaN or infinite)"
    return matrix, None


_NUMBERS: dict[tuple[str, int, int], bool] = {}  # (path, mtime, size) -> every value finite: once per file


def _all_numbers(path: Path, matrix: np.ndarray) -> bool:
    """No NaN or infinity in the stored rows (one would break every search that ranks by meaning):
    checked once per file and process, on the bits (~50 ms at 160,000 chunks)."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _NUMBERS:
        bits = matrix.view(np.uint16)
        finite = True
        for i in range(0, len(bits), 16384):
            finite = not ((bits[i : i + 16384] & 0x7C00) == 0x7C00).any()  # exponent all ones: inf or NaN
            fileio.release_pages(matrix)  # read once here: not kept resident (139 MB at the scale corpus)
            if not finite:
                break
        _NUMBERS[key] = finite
    return _NUMBERS[key]


def _recorded(segment: Segment, name: str) -> dict[str, int]:
    """The size, CRC and dimension recorded when the segment's meaning index was completed ({} before
    they were kept)."""
    try:
        return json.loads(_sum_path(segment, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


UNIT_TOLERANCE = 0.02  # float16 rows of unit vectors have lengths within ~0.002 of 1


def rows_damage(segment: Segment, name: str, dim: int | None, verify: bool = False) -> str | None:
    """Why the segment's stored meaning index cannot be trusted, in a few words; None when it can (or
    there is none). Checked: it reads as a (chunks, `dim`) float16 matrix, every value is finite and
    every row of unit length; with `verify`, its size and CRC as stored when it was completed."""
    rows, problem = _open_rows(segment, name)
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


def _record_sum(segment: Segment, name: str, dim: int) -> None:
    with contextlib.suppress(OSError):
        fileio.write_json(_sum_path(segment, name), {**fileio.file_info(stored_path(segment, name)), "dim": dim})


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
    rows = load_rows(segment, name)
    if rows is not None:
        return rows, np.ones(segment.n_chunks, dtype=bool)
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
            _record_sum(self.segment, self.name, dim)
            rows = load_rows(self.segment, self.name)
            assert rows is not None
            return rows
        rows = self.rows
        path = stored_path(self.segment, self.name)
        tmp = fileio.tmp_name(path)
        try:
            fileio.save_array(tmp, rows)
            os.replace(tmp, path)
            _record_sum(self.segment, self.name, int(rows.shape[1]))
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
