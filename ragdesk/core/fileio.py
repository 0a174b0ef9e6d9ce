"""An index's files: private (folders 0700, files 0600, whatever the umask: the index holds the
notes' whole text), written through a temporary name, checksummed as the manifest records them,
and arrays memory-mapped on load."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import mmap
import os
import shutil
import sys
import time
import zlib
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import IndexDamaged

DIR_MODE, FILE_MODE = 0o700, 0o600
CRC_BLOCK = 1 << 22  # bytes read at a time when checksumming a file


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while block := fh.read(CRC_BLOCK):
            crc = zlib.crc32(block, crc)
    return crc


def file_info(path: Path) -> dict[str, int]:
    """A written file's size and CRC, as the manifest records them."""
    return {"size": path.stat().st_size, "crc32": _crc(path)}


def create_private(path: Path) -> IO[bytes]:
    """Open a new file for writing, readable by its owner only (0600, whatever the umask)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), FILE_MODE)
    if hasattr(os, "fchmod"):  # an existing file keeps its mode through O_CREAT
        with contextlib.suppress(OSError):
            os.fchmod(fd, FILE_MODE)
    return os.fdopen(fd, "wb")


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) as folders only their owner can enter (0700)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    for p in missing:  # a folder that was there keeps its mode
        with contextlib.suppress(OSError):
            os.chmod(p, DIR_MODE)
    return path


def secure_tree(folder: Path) -> None:
    """Make a written folder private before it is published: folders 0700, files 0600 (arrays that
    numpy created itself, such as the derivation's memory-mapped postings, got the umask's mode)."""
    os.chmod(folder, DIR_MODE)
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), DIR_MODE)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), FILE_MODE)


def save_array(path: Path, arr: np.ndarray) -> None:
    try:
        with create_private(path) as fh:
            np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)
    except OSError as exc:
        if exc.errno is not None:
            raise
        # numpy reports a short write ("N requested and M written") without an errno: a full disk
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} ({exc})", str(path)) from exc


def preallocated_array(path: Path, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A new .npy file of `shape`, memory-mapped for writing, its space reserved first: writing into a
    sparse map on a full disk kills the process with SIGBUS; reserving fails with ENOSPC instead."""
    dt = np.dtype(dtype)
    header = _npy_header(dt, shape)
    n_bytes = int(np.prod(shape)) * dt.itemsize
    size = len(header) + n_bytes
    with create_private(path) as fh:
        fh.write(header)
        fh.flush()
        try:
            os.posix_fallocate(fh.fileno(), 0, size)
        except (AttributeError, OSError) as exc:  # not on this system or file system: sparse, as numpy does
            if isinstance(exc, OSError) and exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
            fh.truncate(size)
    if not n_bytes:
        return np.zeros(shape, dt)
    return np.memmap(path, dtype=dt, mode="r+", offset=len(header), shape=shape)


def write_rows(rows: np.memmap, ids: np.ndarray, values: np.ndarray) -> None:
    """Store `values` as rows `ids` of the memory-mapped .npy file `rows` through the file (pwrite,
    then fdatasync), not through the map: a run that writes every row of a large file once would keep
    each page it touched resident in this process (139 MB at 180,000 chunks of the meaning index).
    The map sees the rows at once (one page cache). Where pwrite is missing (Windows), through the map."""
    if not hasattr(os, "pwrite"):
        rows[ids] = values
        rows.flush()
        return
    order = np.argsort(ids, kind="stable")
    ids = np.asarray(ids)[order]
    values = np.ascontiguousarray(np.asarray(values)[order], dtype=rows.dtype)
    row_bytes = values[0].nbytes if len(values) else 0
    breaks = np.flatnonzero(np.diff(ids) != 1) + 1  # one write per run of consecutive rows
    fd = os.open(rows.filename, os.O_WRONLY)
    try:
        for run_ids, run in zip(np.split(ids, breaks), np.split(values, breaks)):
            data = memoryview(run.tobytes())
            at = rows.offset + int(run_ids[0]) * row_bytes
            while data:
                n = os.pwrite(fd, data, at)
                data, at = data[n:], at + n
        getattr(os, "fdatasync", os.fsync)(fd)  # durable before the bits that say they are there
    finally:
        os.close(fd)


def _npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The .npy header (format 1.0) of a C-ordered array of `dtype` and `shape`."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    )
    return header.getvalue()


def tmp_name(path: Path) -> Path:
    """A temporary name beside `path` that no other process or thread uses."""
    return path.with_name(f".{path.name}.{os.getpid()}-{time.time_ns():x}.tmp")


def write_arrays(folder: Path, arrays: dict[str, np.ndarray], blobs: dict[str, bytes]) -> dict[str, dict[str, int]]:
    """Write arrays and blobs into `folder`; returns their sizes and CRCs for the manifest."""
    files: dict[str, dict[str, int]] = {}
    for name, arr in arrays.items():
        path = folder / f"{name}.npy"
        save_array(path, arr)
        files[path.name] = file_info(path)
    for name, data in blobs.items():
        files[f"{name}.blob"] = write_blob(folder / f"{name}.blob", data)
    return files


def write_pieces(path: Path, pieces: list[Any], dtype: Any) -> dict[str, int]:
    """Write pieces (bytes, or arrays of `dtype`) one after another as one 1-D .npy of `dtype`, which
    memory-maps like the arrays, never joining them in memory; returns size and CRC."""
    dt = np.dtype(dtype)
    total = sum(len(piece) for piece in pieces)
    header = _npy_header(dt, (total,))
    crc = zlib.crc32(header)
    with create_private(path) as out:
        out.write(header)
        for piece in pieces:
            if not isinstance(piece, bytes):
                piece = memoryview(np.ascontiguousarray(piece, dt)).cast("B")
            out.write(piece)
            crc = zlib.crc32(piece, crc)
    return {"size": path.stat().st_size, "crc32": crc}


def write_blob(path: Path, data: bytes) -> dict[str, int]:
    with create_private(path) as fh:
        fh.write(data)
    return {"size": len(data), "crc32": zlib.crc32(data)}


def discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def remove_tree(path: Path) -> list[str]:
    """Remove a folder and everything in it; returns what could not be removed ("path: reason"),
    so a caller never reports a cache as cleared when part of it is still there."""
    failures: list[str] = []

    def failed(_func: Any, name: str, exc_info: Any) -> None:
        exc = exc_info[1] if isinstance(exc_info, tuple) else exc_info
        failures.append(f"{name}: {getattr(exc, 'strerror', None) or exc}")

    if path.exists():
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=failed)
        else:
            shutil.rmtree(path, onerror=failed)
    return failures


def replace_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically: through a temporary name of this process's own, synced,
    then renamed over it (the temporary goes whatever happens)."""
    tmp = tmp_name(path)
    try:
        with create_private(tmp) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    """Write a JSON file atomically."""
    replace_atomically(path, json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii"))  # C encoder


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> dict[str, int]:
    """One JSON object per line. Encoding record by record lets other threads run in between
    (one json.dumps of a large list holds the GIL for its whole run and stalls the window)."""
    crc = 0
    size = 0
    with create_private(path) as fh:
        for record in records:
            # surrogatepass: a file name that is not valid UTF-8 keeps its escaped bytes (read back alike)
            text = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            line = text.encode("utf-8", "surrogatepass")
            fh.write(line)
            crc = zlib.crc32(line, crc)
            size += len(line)
    return {"size": size, "crc32": crc}


def read_jsonl(path: Path) -> list[Any]:
    try:
        with open(path, encoding="utf-8", errors="surrogatepass") as fh:
            return [json.loads(line) for line in fh]
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"cannot read {path.name}: {exc}") from exc


# Files up to this size are checksummed every time an index is opened (the per-chunk and per-term
# arrays: lengths, score bounds, pointers; ~10 ms at 180,000 chunks); larger ones (postings, texts)
# are checked for their structure on open and their values as queries read them, and in full by verify.
CRC_ON_OPEN_BYTES = 8 << 20


def check_files(
    folder: Path, files: dict[str, dict[str, int]], verify_crc: bool = False, crc_below: int | None = None
) -> None:
    """Raise IndexDamaged when a listed file is missing, truncated or altered (checksums: every file
    with verify_crc, else the files smaller than `crc_below` bytes, by default CRC_ON_OPEN_BYTES)."""
    limit = CRC_ON_OPEN_BYTES if crc_below is None else crc_below
    for name, info in files.items():
        path = folder / name
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise IndexDamaged(f"index file missing: {name}") from exc
        if size != info["size"]:
            raise IndexDamaged(f"index file {name} has {size} bytes, expected {info['size']} (truncated?)")
        if (verify_crc or size < limit) and _crc(path) != info["crc32"]:
            raise IndexDamaged(f"index file {name} fails its checksum")


def load_array(folder: Path, name: str) -> np.ndarray:
    """A stored array, memory-mapped read-only; a plain ndarray view of the map, since np.memmap's
    Python-level indexing costs microseconds per access on the query path."""
    try:
        return np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False))
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"cannot read {name}.npy: {exc}") from exc


def release_pages(arr: np.ndarray) -> None:
    """Drop a memory-mapped array's pages from this process's resident memory: they stay in the page
    cache and are mapped again when read. A run that reads every note's text once (the meaning index)
    would otherwise keep all of them resident (96 MB at the scale corpus). No-op for other arrays."""
    base: Any = arr
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    if base is not None and hasattr(mmap, "MADV_DONTNEED"):
        with contextlib.suppress(OSError, ValueError):  # a closed map, or one madvise refuses
            base.madvise(mmap.MADV_DONTNEED)


def load_blob(folder: Path, name: str) -> bytes:
    try:
        return (folder / f"{name}.blob").read_bytes()
    except OSError as exc:
        raise IndexDamaged(f"cannot read {name}.blob: {exc}") from exc
