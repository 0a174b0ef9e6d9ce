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
import uuid
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


_MARKER_CONTENT = re.compile(re.escape(MARKER_TEXT) + r"(?:id ([0-9a-f]{32})\n)?\Z")
MARKER_MAX = 4096  # bytes read of a marker: ragdesk's are under 200


def _read_small(path: Path) -> str | None:
    """A small file's text (None when it cannot be read or is not UTF-8)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(MARKER_MAX).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _root_marker(root: Path) -> str | None:
    """The index id in `root`'s marker: "" for the marker an earlier ragdesk wrote without one, None
    when there is no marker of ragdesk's (none, or a file of that name with other content)."""
    text = _read_small(root / ROOT_MARKER)
    found = _MARKER_CONTENT.match(text) if text is not None else None
    return None if found is None else (found.group(1) or "")


def index_id(root: Path) -> str | None:
    """The id of the index in `root` (in its marker, each generation's marker and its manifests), or
    None when `root` is not (yet) a ragdesk index folder."""
    return _root_marker(root) or None


def claim_root(root: Path) -> str:
    """Make `root` an index folder before anything is written in it and return its id: a new or empty
    folder gets a marker holding a new id; a folder whose marker holds ragdesk's own content (or an
    index of an earlier ragdesk, checked by its manifest) is ours; any other folder is refused, so
    ragdesk never writes into, prunes in or changes the mode of a folder of yours. A file merely
    named like the marker is not the marker."""
    found = _root_marker(root)
    if found:
        return found
    if found is None:
        if (root / ROOT_MARKER).exists():
            raise IndexFolderRefused(
                f"{root} holds a file named {ROOT_MARKER} that ragdesk did not write: it is not a ragdesk index "
                "folder; give an empty or new folder as the index folder"
            )
        if not root.exists():
            private_dir(root)
        elif any(root.iterdir()) and not _earlier_index(root):
            raise IndexFolderRefused(
                f"{root} is not empty and is not a ragdesk index folder: "
                "give an empty or new folder as the index folder"
            )
    new_id = uuid.uuid4().hex
    _stamp_generations(root, new_id, legacy=found == "")
    text = f"{MARKER_TEXT}id {new_id}\n".encode()
    if found == "":
        replace_atomically(root / ROOT_MARKER, text)
        return new_id
    tmp = root / f".{ROOT_MARKER}.{os.getpid()}-{time.time_ns():x}.tmp"
    with create_private(tmp) as fh:
        fh.write(text)
    try:
        os.link(tmp, root / ROOT_MARKER)  # atomic and exclusive: two first builds agree on one id
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    claimed = _root_marker(root)
    if not claimed:
        raise IndexFolderRefused(f"{root}: another program wrote {ROOT_MARKER} meanwhile; not a ragdesk index folder")
    return claimed


def _stamp_generations(root: Path, index: str, legacy: bool) -> None:
    """Give the generations of an index that an earlier ragdesk wrote the new id: those whose marker it
    left empty (markers before ids) and, for an index from before markers, the current one."""
    if legacy:
        for gen in root.glob("gen-*"):
            with contextlib.suppress(OSError):
                marker = gen / GENERATION_MARKER
                if marker.is_file() and marker.stat().st_size == 0:
                    replace_atomically(marker, index.encode())
    current = current_generation(root)
    if current is not None and _earlier_generation(current) and not (current / GENERATION_MARKER).exists():
        replace_atomically(current / GENERATION_MARKER, index.encode())


def _earlier_index(root: Path) -> bool:
    """An index written before the marker files: CURRENT names a generation with ragdesk's manifest."""
    current = current_generation(root)
    return current is not None and _earlier_generation(current)


def _earlier_generation(generation: Path) -> bool:
    """A generation of ragdesk's from before markers: its exact name, and a manifest of ragdesk's
    format whose every file is there with the size it records (a web app's manifest.json is not)."""
    if _GENERATION_NAME.match(generation.name) is None:
        return False
    try:
        manifest = read_manifest(generation)
        files = manifest["files"]
        return bool(files) and all((generation / n).stat().st_size == int(f["size"]) for n, f in files.items())
    except (IndexDamaged, OSError, KeyError, TypeError, ValueError, AttributeError):
        return False


def mark_generation(generation: Path, index: str) -> None:
    """Mark `generation` as the index `index`'s own (its marker holds the id): only such are pruned."""
    with create_private(generation / GENERATION_MARKER) as fh:
        fh.write(index.encode())


def _ours(generation: Path, index: str | None) -> bool:
    """A generation of the index `index`: its marker holds that id. Nothing else named gen-* is
    ever removed (a folder of yours, another index's generation, a hand-made marker)."""
    return index is not None and _read_small(generation / GENERATION_MARKER) == index


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
    index = claim_root(root)
    path = root / f"gen-{time.time_ns():x}-{os.getpid()}"
    path.mkdir(mode=DIR_MODE)
    mark_generation(path, index)
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
    index = index_id(root)
    for gen in root.glob("gen-*"):
        if not _ours(gen, index):
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
    index = index_id(root)
    for path in root.glob("gen-*"):
        if path.name not in names and (not keep or _generation_time(path.name) < newest) and _ours(path, index):
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
