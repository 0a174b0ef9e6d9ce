"""On-disk index storage: versioned generations of .npy arrays, swapped in atomically.

Layout of an index folder (one per notes folder):
    CURRENT              name of the active generation (replaced atomically)
    LOCK                 held (an OS file lock) by the one process building this index
    LOCK-meaning         held by the one process writing meaning-index rows (embedding, or copying)
    gen-<n>/manifest.json, *.npy, *.blob, terms-<analyzer key>/...
A crash while writing leaves CURRENT pointing at the previous, complete generation.
Arrays are memory-mapped on load, so reopening reads only what queries touch.
Everything is private to its user (folders 0700, files 0600, whatever the umask): the index holds
the notes' whole text.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import re
import shutil
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import IndexBusy, IndexDamaged, IndexFolderRefused, IndexMissing  # noqa: F401 (re-exported)

# 4: markdown chunks end at the best break near `size` words; 5: delta segments; 6: min_fill;
# 7: note paths as a JSON list (a newline in a file name shifted every later path)
FORMAT_VERSION = 7
MANIFEST = "manifest.json"
CURRENT = "CURRENT"
LOCK = "LOCK"
MEANING_LOCK = "LOCK-meaning"
DIR_MODE, FILE_MODE = 0o700, 0o600
ROOT_MARKER, GENERATION_MARKER = "RAGDESK-INDEX", ".ragdesk-generation"  # what ragdesk may remove is marked
MARKER_TEXT = "This folder holds a ragdesk index; ragdesk only removes what it marked as its own.\n"
_GENERATION_NAME = re.compile(r"^gen-[0-9a-f]+-\d+$")
LOCK_POLL_S = 0.05
CRC_BLOCK = 1 << 22  # bytes read at a time when checksumming a file


def default_index_root() -> Path:
    import appdirs

    return Path(appdirs.user_cache_dir("ragdesk", appauthor=False)) / "indexes"


def index_dir_for(folder: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> Path:
    """The index folder of a notes folder: `root` when given (checked: see IndexFolderRefused), else
    a readable name plus a hash of its absolute path in the cache."""
    absolute = os.path.realpath(folder)
    if root is not None:
        return _checked_root(absolute, root)
    digest = hashlib.sha1(absolute.encode("utf-8")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in Path(absolute).name)[:40] or "root"
    return default_index_root() / f"{name}-{digest}"


def _checked_root(notes: str, root: str | os.PathLike[str]) -> Path:
    """An index folder given by the person (--index-dir): not empty text, not a file, not the notes
    folder or a folder inside it (the index would be walked as notes, and notes named gen-* pruned)."""
    if str(root).strip() == "":
        raise IndexFolderRefused("the index folder is empty text (an unset variable?): give a folder or leave it out")
    path = Path(root)
    if path.exists() and not path.is_dir():
        raise IndexFolderRefused(f"the index folder {path} is a file, not a folder")
    real = os.path.realpath(path)
    if real == notes or real.startswith(notes.rstrip(os.sep) + os.sep):
        raise IndexFolderRefused(f"the index folder {path} is inside the notes folder {notes}: choose one outside it")
    return path


def is_storage_error(exc: OSError) -> bool:
    """Errors of the index's storage (full, read-only, over quota, not writable), not of the notes."""
    return exc.errno in (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EFBIG)


def claim_root(root: Path) -> None:
    """Make `root` an index folder before anything is written in it: a new or empty folder gets the
    marker file; one with the marker (or an index of an earlier ragdesk) is ours; any other folder
    is refused, so ragdesk never writes into, prunes in or changes the mode of a folder of yours."""
    if (root / ROOT_MARKER).is_file():
        return
    if not root.exists():
        private_dir(root)
    elif any(root.iterdir()) and not _earlier_index(root):
        raise IndexFolderRefused(
            f"{root} is not empty and is not a ragdesk index folder: give an empty or new folder as the index folder"
        )
    with create_private(root / ROOT_MARKER) as fh:
        fh.write(MARKER_TEXT.encode("utf-8"))


def _earlier_index(root: Path) -> bool:
    """An index written before the marker files: CURRENT names a generation that has a manifest."""
    current = current_generation(root)
    return current is not None and _ours(current)


def _ours(generation: Path) -> bool:
    """A generation ragdesk wrote: it has the generation marker, or (written before markers) a
    generation's exact name and a manifest. Nothing else named gen-* is ever removed."""
    if (generation / GENERATION_MARKER).is_file():
        return True
    return _GENERATION_NAME.match(generation.name) is not None and (generation / MANIFEST).is_file()


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


def write_byte_array(path: Path, pieces: list[Any], total: int) -> dict[str, int]:
    """Write byte pieces as one uint8 .npy (so it memory-maps like the arrays); returns size and CRC."""
    header = _npy_header(np.dtype(np.uint8), (total,))
    crc = zlib.crc32(header)
    with create_private(path) as out:
        out.write(header)
        for piece in pieces:
            data = memoryview(piece).cast("B") if not isinstance(piece, bytes) else piece
            out.write(data)
            crc = zlib.crc32(data, crc)
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


def read_manifest(folder: Path) -> dict[str, Any]:
    try:
        with open(folder / MANIFEST, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError as exc:
        raise IndexDamaged(f"no manifest in {folder}") from exc
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"damaged manifest in {folder}: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION:
        raise IndexDamaged(
            f"index format {manifest.get('format') if isinstance(manifest, dict) else '?'} "
            f"is not {FORMAT_VERSION}: rebuild needed"
        )
    return manifest


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


def require(condition: Any, folder: Path, what: str) -> None:
    """A structural check of a stored index: raise IndexDamaged naming what does not hold."""
    if not condition:
        raise IndexDamaged(f"damaged index in {folder}: {what}")


def ascending(values: np.ndarray, first: int | None = None, last: int | None = None) -> bool:
    """Pointers that never decrease, starting at `first` and ending at `last` when given."""
    v = np.asarray(values)
    if not len(v):
        return first is None and last is None
    return (
        bool(np.all(v[1:] >= v[:-1])) and (first is None or int(v[0]) == first) and (last is None or int(v[-1]) == last)
    )


def load_array(folder: Path, name: str) -> np.ndarray:
    """A stored array, memory-mapped read-only; a plain ndarray view of the map, since np.memmap's
    Python-level indexing costs microseconds per access on the query path."""
    try:
        return np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False))
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"cannot read {name}.npy: {exc}") from exc


def load_blob(folder: Path, name: str) -> bytes:
    try:
        return (folder / f"{name}.blob").read_bytes()
    except OSError as exc:
        raise IndexDamaged(f"cannot read {name}.blob: {exc}") from exc


def new_generation(root: Path) -> Path:
    """A fresh, empty generation folder (not yet current)."""
    claim_root(root)
    path = root / f"gen-{time.time_ns():x}-{os.getpid()}"
    path.mkdir(mode=DIR_MODE)
    create_private(path / GENERATION_MARKER).close()
    return path


def _generation_time(name: str) -> int:
    """The creation time (ns) in a generation's name, gen-<time hex>-<pid>; -1 if it has none."""
    try:
        return int(name.split("-")[1], 16)
    except (IndexError, ValueError):
        return -1


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, or cannot tell: keep its files
    return True


_TEMPORARY = re.compile(r"^\.tmp-.*-(\d+)-[0-9a-f]+$|^\..*\.(\d+)-[0-9a-f]+\.tmp$")


def _temporary_pid(name: str) -> int | None:
    """The writer's pid in a temporary's name (.tmp-<name>-<pid>-<time hex> from publish_subdir,
    .<file>.<pid>-<time hex>.tmp from tmp_name); None for any other name."""
    m = _TEMPORARY.match(name)
    return int(m.group(1) or m.group(2)) if m else None


def remove_stale_temporaries(root: Path) -> None:
    """Remove what writers killed mid-way left behind: temporary files and folders (a derivation's
    .tmp-terms-*, a manifest's temporary) whose process is gone."""
    candidates = list(root.glob(".*.tmp"))
    for gen in root.glob("gen-*"):
        if not _ours(gen):
            continue
        try:
            candidates += [*gen.glob(".tmp-*"), *gen.glob(".*.tmp"), *gen.glob("delta/.*.tmp")]
            candidates += gen.glob("terms-*/.*.tmp")
        except FileNotFoundError:  # pruned by a concurrent build meanwhile (glob before 3.12 does not skip it)
            continue
    for path in candidates:
        pid = _temporary_pid(path.name)
        if pid is not None and not _pid_alive(pid):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def current_generation(root: Path) -> Path | None:
    try:
        name = (root / CURRENT).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    path = root / name
    return path if name and path.is_dir() else None


def publish(root: Path, generation: Path, also_keep: Path | None = None) -> None:
    """Make `generation` current atomically, then remove older generations (but `also_keep`,
    the base a delta generation builds on). Called with the index's build lock held."""
    secure_tree(generation)
    replace_atomically(root / CURRENT, generation.name.encode("utf-8"))
    prune(root, keep=[generation] + ([also_keep] if also_keep is not None else []))


def prune(root: Path, keep: list[Path]) -> None:
    """Delete generations older than the newest one in `keep` and not in it (open memory maps stay
    valid on POSIX). A newer generation is never touched: it belongs to a writer still at work."""
    names = {k.name for k in keep}
    newest = max((_generation_time(k.name) for k in keep), default=-1)
    for path in root.glob("gen-*"):
        if path.name not in names and (not keep or _generation_time(path.name) < newest) and _ours(path):
            shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def build_lock(
    root: Path, cancelled: Callable[[], bool] | None = None, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the index's build lock (an OS lock on root/LOCK, released by the OS if the process dies):
    builds of one index run one after the other. `waiting` is called once if another process holds
    it; `cancelled` is polled meanwhile (raises IndexBusy when it says so). Refuses a folder that is not
    an index folder (claim_root)."""
    claim_root(root)
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, FILE_MODE)
    with _holding(fd, cancelled, waiting, f"another process is building the index in {root}"):
        yield


@contextlib.contextmanager
def meaning_lock(
    root: Path, cancelled: Callable[[], bool] | None = None, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold root/LOCK-meaning while writing meaning-index rows: a second process creating the same
    partial file truncated the one the first had mapped, which killed the first with SIGBUS (a
    terminal's `ragdesk index` while the window embeds). Where the lock file cannot be made (a
    read-only cache) nothing is written to the index either, so nothing is held."""
    try:
        fd = os.open(root / MEANING_LOCK, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError:
        fd = -1  # not inside the handler: an error of the block must not read as raised during this one
    if fd < 0:
        yield
        return
    with _holding(fd, cancelled, waiting, f"another process is computing the meaning index in {root}"):
        yield


@contextlib.contextmanager
def _holding(
    fd: int, cancelled: Callable[[], bool] | None, waiting: Callable[[], None] | None, busy: str
) -> Iterator[None]:
    """Lock `fd` (polling; see build_lock), hold it for the block, then unlock and close it."""
    try:
        told = False
        while not _try_lock(fd):
            if not told and waiting is not None:
                waiting()
            told = True
            if cancelled is not None and cancelled():
                raise IndexBusy(busy)
            time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        if os.name == "nt":  # pragma: no cover - Windows
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    except OSError:
        if os.name == "nt":  # pragma: no cover - msvcrt says "deadlock avoided" for a held lock
            return False
        raise
    return True


def _unlock(fd: int) -> None:
    if os.name == "nt":  # pragma: no cover - Windows
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)


def publish_subdir(parent: Path, name: str, build: Any, replace: bool = False) -> Path:
    """Write a sub-folder through a temporary name and rename it into place (atomic).
    `replace`: an existing folder of that name is damaged: move it aside and put this one in."""
    final = parent / name
    tmp = parent / f".tmp-{name}-{os.getpid()}-{time.time_ns():x}"
    tmp.mkdir(mode=DIR_MODE)
    try:
        build(tmp)
        secure_tree(tmp)
        if replace and final.exists():
            trash = parent / f".tmp-old-{name}-{os.getpid()}-{time.time_ns():x}"
            with contextlib.suppress(OSError):
                os.rename(final, trash)
                shutil.rmtree(trash, ignore_errors=True)
        try:
            os.rename(tmp, final)
        except OSError:  # another writer won the race: theirs is as good as ours
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
