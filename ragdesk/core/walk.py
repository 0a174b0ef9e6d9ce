"""Finding a folder's notes: walk it (in C where compiled), skip what is ignored, too large, not a
file or a link out of the folder (each with a reason), and stat the rest for change detection.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pathspec

from . import kernels
from .errors import IgnoreFileUnreadable  # noqa: F401 (re-exported)
from .loader import LoadOptions, NoteFile, Skipped

IGNORE_FILE = ".ragdeskignore"
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})


MAX_DOUBLE_STARS = 6  # "a/**/" 14 times took 32 s a path in pathspec's regular expression (issue #37)


def _load_ignore_spec(root: Path, options: LoadOptions) -> pathspec.PathSpec | None:
    ignore_file = root / IGNORE_FILE
    try:
        from_file = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        from_file = []  # no ignore file: nothing excluded but the patterns in the settings
    except OSError as exc:
        raise IgnoreFileUnreadable(
            f"cannot read {ignore_file}: {exc.strerror or exc}; indexing stopped so that the notes it "
            "excludes are not indexed (fix or remove the file)"
        ) from exc
    sources = [(f"Settings › ignore patterns line {n}", line) for n, line in enumerate(options.ignore, start=1)]
    sources += [(f"{ignore_file} line {n}", line) for n, line in enumerate(from_file, start=1)]
    patterns = [p for where, line in sources for p in _compiled(where, line)]
    return pathspec.GitIgnoreSpec(patterns) if sources else None


def _compiled(where: str, line: str) -> list[Any]:
    """The line's pattern, compiled once (a spec of them all matches as one of all lines would), if
    pathspec can use it in bounded time; else IgnoreFileUnreadable naming its file and line."""
    problem = None
    if line.count("**") > MAX_DOUBLE_STARS:
        problem = f"has more than {MAX_DOUBLE_STARS} '**' (each one more can multiply the time to match a deep path)"
    else:
        try:
            return list(pathspec.GitIgnoreSpec.from_lines([line]).patterns)
        except ValueError as exc:  # GitIgnorePatternError: "!" alone, …
            problem = f"is not a valid pattern ({exc})"
    raise IgnoreFileUnreadable(f"{where}: {line.strip()!r} {problem}; indexing stopped (fix or remove it)")


def note_filter(root: Path, options: LoadOptions) -> NoteFilter:
    """Which files under `root` are notes to read, by `options` and the folder's .ragdeskignore."""
    spec = _load_ignore_spec(root, options)
    inside = _Inside(root, everywhere=options.follow_outside_links)
    return NoteFilter(tuple(e.lower() for e in options.extensions), spec, options.max_bytes, inside)


def never_entered(name: str) -> bool:
    """A name a walk never looks into or at: hidden (.git, .obsidian) or a tool's folder."""
    return name.startswith(".") or name in SKIP_DIRS


def walk_folder(root: str | os.PathLike[str], options: LoadOptions | None = None) -> Walk:
    """Find note files under `root` without following links back into the walk.

    A refresh walks the whole folder to see what changed, so this is lean: the compiled
    `_text.walk_tree` lists the folders and stats the notes without a Python object per entry
    (the Python twin, `_walk_python`, is used without a C compiler and on Windows; tested equal),
    and what it found stays in columns. Folders are entered in name order, so which of two links
    to the same folder counts as the loop does not depend on the file system's listing order.
    """
    options = options or LoadOptions()
    root_path = Path(root)
    if not root_path.is_dir():
        raise FileNotFoundError(f"notes folder not found: {root}")
    check = note_filter(root_path, options)
    prefix = os.path.join(str(root_path), "")
    with _collector_paused():
        walk = _walk_compiled if kernels.has_walk() else _walk_python
        stats, skipped = walk(root_path, check.exts, check.spec, check.inside)
        return _kept(stats, skipped, prefix, check)


def walk_notes(
    root: str | os.PathLike[str], options: LoadOptions | None = None
) -> tuple[list[NoteFile], list[Skipped]]:
    """`walk_folder` as a NoteFile per note, and what was skipped, both in path order."""
    found = walk_folder(root, options)
    return found.files(), found.skipped


@dataclass
class Walk:
    """What a walk found, in path order, as columns: a refresh compares every note's size and mtime
    with the index's and makes a NoteFile only for the notes it reads (an object per note was a
    third of a refresh's walk at 31,000 notes)."""

    prefix: str  # the folder's path and a separator: a note's path is prefix + its relative path
    paths: list[str]  # relative, '/'-separated
    sizes: np.ndarray  # int64
    mtimes: np.ndarray  # int64, ns
    skipped: list[Skipped]

    def __len__(self) -> int:
        return len(self.paths)

    def files(self, which: Iterable[int] | None = None) -> list[NoteFile]:
        """The notes at positions `which` (every note when None) as NoteFiles."""
        rows = range(len(self.paths)) if which is None else which
        p, s, m = self.paths, self.sizes, self.mtimes
        return [NoteFile(p[i], self.prefix + p[i], int(s[i]), int(m[i])) for i in rows]


OUTSIDE_LINK = "links outside the notes folder (not followed; Settings or --follow-outside-links to follow)"


NEVER_WALKED = "the whole machine, the home folder, system or ragdesk's own folders are never walked: {}"
_SYSTEM_TREES = ("/proc", "/sys", "/dev", "/run")


class _Inside:
    """Whether a link may be followed: its real path stays inside the notes folder; or, when links out
    of it are followed (`everywhere`), it does not lead to `/`, the home folder, /proc, /sys, /dev,
    /run or ragdesk's cache (a link to / once walked 109,525 files of the whole machine)."""

    def __init__(self, root: Path, everywhere: bool = False) -> None:
        self.root = os.path.realpath(root)
        self.prefix = os.path.join(self.root, "")
        self.everywhere = everywhere
        home = os.path.realpath(os.path.expanduser("~"))
        self.forbidden = {"/", home}
        self.trees = (*_SYSTEM_TREES, os.path.realpath(_cache_root()))

    def why(self, path: str) -> str:
        """The reason a link may not be followed ("" when it may): also what the compiled walk calls."""
        real = os.path.realpath(path)
        if real == self.root or real.startswith(self.prefix):
            return ""
        if not self.everywhere:
            return OUTSIDE_LINK
        if real in self.forbidden or any(real == t or real.startswith(t + os.sep) for t in self.trees):
            return NEVER_WALKED.format(real)
        return ""


def _cache_root() -> str:
    from .store import default_index_root

    return str(default_index_root().parent)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: a walk makes tens of thousands of small objects, none in
    a cycle, and each collection they trigger traverses everything the process holds (in a window
    with an index open, a third of a refresh's walk)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class NoteFilter:
    """Which walked files are notes to read: the rest are ignored or skipped with a reason."""

    exts: tuple[str, ...]
    spec: pathspec.PathSpec | None
    max_bytes: int
    inside: _Inside | None

    def reason(self, rel: str, path: str, size: int, kind: int, link: int) -> str | None:
        """Why the file is not read ("" when ignored without a word), None when it is a note."""
        if link & 2 and not rel.rsplit("/", 1)[-1].lower().endswith(self.exts):
            return ""  # a name the compiled walk left to Python: not a note's
        if kind < 0:
            return "dangling symbolic link" if link & 1 else "cannot be read (stat failed)"
        if self.spec is not None and self.spec.match_file(rel):
            return ""
        if link & 1 and self.inside is not None and (why := self.inside.why(path)):
            return why
        if kind != 0:
            return "not a regular file (pipe, socket or device)"
        if size > self.max_bytes:
            return f"too large: {size / 1e6:.1f} MB over the {self.max_bytes / 1e6:.0f} MB limit"
        return None


def _kept(stats: _Stats, skipped: list[Skipped], prefix: str, check: NoteFilter) -> Walk:
    """The notes to read, in path order, and why the others are skipped (also in path order). The
    common file (regular, not a link, within the size limit) is told apart in numpy; only the others
    and, with ignore patterns, every file, go through `check` one at a time."""
    rels = stats[0]
    sizes, mtimes, kinds, links = (np.asarray(a) for a in stats[1:])
    keep = (kinds == 0) & (links == 0) & (sizes <= check.max_bytes)
    rows = range(len(rels)) if check.spec is not None else np.flatnonzero(~keep).tolist()
    for i in rows:
        reason = check.reason(rels[i], prefix + rels[i], int(sizes[i]), int(kinds[i]), int(links[i]))
        keep[i] = reason is None
        if reason:
            skipped.append(Skipped(rels[i], reason))
    found = np.flatnonzero(keep).tolist()
    order = sorted(found, key=rels.__getitem__)
    if check.inside is not None and check.inside.everywhere and len(order) > MAX_NOTES_FOLLOWING_LINKS:
        cut = MAX_NOTES_FOLLOWING_LINKS
        skipped += [Skipped(rels[i], TOO_MANY.format(cut)) for i in order[cut:]]
        order = order[:cut]
    skipped.sort(key=lambda s: s.path)
    return Walk(prefix, [rels[i] for i in order], sizes[order], mtimes[order], skipped)


# Following links out of the folder can reach far more than a notes folder holds (the scale corpus of
# every shared collection is 31,301 notes): past this many, the rest (by path) are skipped, and say so.
MAX_NOTES_FOLLOWING_LINKS = 200_000
TOO_MANY = "more than {:,} notes while following links out of the folder: the first by path are indexed"


_FOLDER_EVENTS = (
    "folder cannot be read: {}",
    "folder named like a note (link loop)",
    "is a folder, not a note file",
    "{}",  # a linked folder not entered: the reason _Inside.why gave, or OUTSIDE_LINK
)
# relative paths, sizes, mtimes (ns), kinds (0 file, 1 folder, 2 other, -1 no stat), link flags (1 a
# link, 2 a name the compiled walk left to Python to match)
_Stats = tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _walk_compiled(
    root_path: Path, exts: tuple[str, ...], spec: pathspec.PathSpec | None, inside: _Inside | None
) -> tuple[_Stats, list[Skipped]]:
    """`_walk_python` by `_text.walk_tree` (which leaves names that are not ASCII to Python)."""
    skip_dir = spec.match_file if spec is not None else None
    outside = inside.why if inside is not None else None
    assert kernels.TEXT is not None
    rels, sizes, mtimes, kinds, links, events = kernels.TEXT.walk_tree(
        str(root_path), exts, tuple(SKIP_DIRS), skip_dir, outside
    )
    stats = (
        rels,
        np.frombuffer(sizes, np.int64),
        np.frombuffer(mtimes, np.int64),
        np.frombuffer(kinds, np.int8),
        np.frombuffer(links, np.int8),
    )
    return stats, [Skipped(rel, _FOLDER_EVENTS[code].format(text or OUTSIDE_LINK)) for rel, code, text in events]


def _walk_python(
    root_path: Path, exts: tuple[str, ...], spec: pathspec.PathSpec | None, inside: _Inside | None
) -> tuple[_Stats, list[Skipped]]:
    """The note-named files under `root_path` with their stat (kind 0 file, 1 folder, 2 other,
    -1 no stat), and what is reported about folders on the way."""
    skipped: list[Skipped] = []
    notes: list[tuple[str, str, bool]] = []  # relative path, path, is a link: stat'ed below
    root_real = os.path.realpath(root_path)
    visited = {root_real}
    stack: list[tuple[str, str, str]] = [(str(root_path), "", root_real)]  # path, relative path, real path
    while stack:
        dirpath, rel, real_dir = stack.pop()
        try:
            entries = list(os.scandir(dirpath))
        except OSError as exc:
            skipped.append(Skipped(rel or ".", _FOLDER_EVENTS[0].format(exc.strerror or exc)))
            continue
        folders: list[os.DirEntry[str]] = []
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in SKIP_DIRS:  # never_entered, inline: once per entry
                continue
            try:
                is_dir = entry.is_dir()  # follows links; no system call unless it is one
            except OSError:
                is_dir = False
            if is_dir:
                folders.append(entry)
            elif name.lower().endswith(exts):
                notes.append((f"{rel}/{name}" if rel else name, entry.path, entry.is_symlink()))
        subdirs: list[tuple[str, str, str]] = []
        for entry in sorted(folders, key=lambda e: e.name):
            relpath = f"{rel}/{entry.name}" if rel else entry.name
            if spec is not None and spec.match_file(relpath + "/"):
                continue
            linked = entry.is_symlink()
            if linked and inside is not None and (why := inside.why(entry.path)):
                skipped.append(Skipped(relpath, why))
                continue
            real = os.path.realpath(entry.path) if linked else os.path.join(real_dir, entry.name)
            is_note_name = entry.name.lower().endswith(exts)
            if real in visited:
                if is_note_name:
                    skipped.append(Skipped(relpath, _FOLDER_EVENTS[1]))
                continue
            visited.add(real)
            if is_note_name:
                skipped.append(Skipped(relpath, _FOLDER_EVENTS[2]))
            subdirs.append((entry.path, relpath, real))
        stack.extend(reversed(subdirs))
    rels: list[str] = []
    columns: list[list[int]] = [[], [], [], []]  # size, mtime, kind, link
    for relpath, path, is_link in notes:
        try:
            st = os.stat(path)  # follows links
        except OSError:
            row = (0, 0, -1, int(is_link))
        else:
            kind = 0 if stat.S_ISREG(st.st_mode) else 1 if stat.S_ISDIR(st.st_mode) else 2
            row = (st.st_size, st.st_mtime_ns, kind, int(is_link))
        rels.append(relpath)
        for column, value in zip(columns, row):
            column.append(value)
    sizes, mtimes, kinds, links = (np.array(c, np.int64) for c in columns)
    return (rels, sizes, mtimes, kinds, links), skipped


OTHER_FILES_MAX = 100_000  # counting stops past this many


def count_other_files(folder: str | os.PathLike[str], extensions: tuple[str, ...]) -> int:
    """How many files of `folder` are not notes (hidden files and folders left out; counting stops
    past OTHER_FILES_MAX), for the line that says why a folder has no notes."""
    other = 0
    for _dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        other += sum(1 for f in filenames if not f.startswith(".") and not f.lower().endswith(extensions))
        if other > OTHER_FILES_MAX:
            break
    return other
