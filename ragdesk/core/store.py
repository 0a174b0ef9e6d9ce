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
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from .errors import IndexBusy, IndexDamaged, IndexFolderRefused, IndexMissing  # noqa: F401 (re-exported)
from .fileio import DIR_MODE, create_private, private_dir, replace_atomically, secure_tree

# 4: markdown chunks end at the best break near `size` words; 5: delta segments; 6: min_fill;
# 7: note paths as a JSON list (a newline in a file name shifted every later path)
FORMAT_VERSION = 7
MANIFEST = "manifest.json"
CURRENT = "CURRENT"
ROOT_MARKER, GENERATION_MARKER = "RAGDESK-INDEX", ".ragdesk-generation"  # what ragdesk may remove is marked
MARKER_TEXT = "This folder holds a ragdesk index; ragdesk only removes what it marked as its own.\n"
_GENERATION_NAME = re.compile(r"^gen-[0-9a-f]+-\d+$")


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


FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # no room: what was computed cannot be kept
READ_ONLY_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)  # not writable here: reading still works


def is_storage_error(exc: OSError) -> bool:
    """Errors of the index's storage (full, read-only, over quota, not writable), not of the notes."""
    return exc.errno in FULL_ERRNOS + READ_ONLY_ERRNOS


def is_full(exc: OSError) -> bool:
    """The storage is out of room (full disk, over quota, file too large), as against read-only: a run
    that goes on computing would lose everything it computes, so it stops and says so."""
    return exc.errno in FULL_ERRNOS


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
