"""Loading notes from a folder: walk, filter, decode and split off front matter.

Nothing disappears silently: every note-typed file that is not loaded, and every note
decoded with a fallback encoding, is reported as a `Skipped` with a human reason.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import re
import stat
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from . import kernels, pdf
from .analyzers import normalize

DEFAULT_EXTENSIONS = (".md", ".markdown", ".txt", ".rst", ".org", ".pdf")
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
IGNORE_FILE = ".ragdeskignore"
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})
BINARY_MAGIC = (b"%PDF", b"\x89PNG", b"PK\x03\x04", b"GIF8", b"\xff\xd8\xff", b"\x7fELF", b"\x1f\x8b")


@dataclass(frozen=True)
class LoadOptions:
    """What counts as a note and what is too big to read."""

    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    max_bytes: int = DEFAULT_MAX_BYTES
    ignore: tuple[str, ...] = ()  # extra gitignore-style patterns besides .ragdeskignore
    # A cloned or shared vault can carry a link to / or to ~/.ssh: links whose real path is outside
    # the notes folder are skipped unless this is set (Settings, --follow-outside-links).
    follow_outside_links: bool = False


@dataclass
class Skipped:
    """A file that was skipped, or loaded with a caveat (fallback decoding)."""

    path: str
    reason: str
    loaded: bool = False
    size: int = -1  # set for files that were read: an unchanged file is not read again
    mtime_ns: int = -1


@dataclass
class NoteFile:
    """A candidate note found by the walk, with the stat data used to detect changes."""

    path: str  # relative, '/'-separated
    abspath: str
    size: int
    mtime_ns: int


@dataclass
class Note:
    """A decoded note: full text (NFC) plus where the body starts after front matter."""

    path: str
    text: str
    body_start: int = 0
    meta: dict[str, object] = field(default_factory=dict)
    encoding: str = "utf-8"
    size: int = 0
    mtime_ns: int = 0
    sha1: str = ""


class IgnoreFileUnreadable(Exception):
    """The folder's .ragdeskignore exists but cannot be read: indexing stops rather than index the
    notes it excludes."""


def _load_ignore_spec(root: Path, options: LoadOptions) -> pathspec.PathSpec | None:
    lines = list(options.ignore)
    ignore_file = root / IGNORE_FILE
    try:
        lines += ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        pass  # no ignore file: nothing excluded but the patterns in the settings
    except OSError as exc:
        raise IgnoreFileUnreadable(
            f"cannot read {ignore_file}: {exc.strerror or exc}; indexing stopped so that the notes it "
            "excludes are not indexed (fix or remove the file)"
        ) from exc
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def walk_notes(
    root: str | os.PathLike[str], options: LoadOptions | None = None
) -> tuple[list[NoteFile], list[Skipped]]:
    """Find note files under `root` without following links back into the walk.

    A refresh walks the whole folder to see what changed, so this is lean: the compiled
    `_text.walk_tree` lists the folders and stats the notes without a Python object per entry
    (the Python twin, `_walk_python`, is used without a C compiler and on Windows; tested equal).
    Folders are entered in name order, so which of two links to the same folder counts as the
    loop does not depend on the file system's listing order.
    """
    options = options or LoadOptions()
    root_path = Path(root)
    if not root_path.is_dir():
        raise FileNotFoundError(f"notes folder not found: {root}")
    exts = tuple(e.lower() for e in options.extensions)
    spec = _load_ignore_spec(root_path, options)
    inside = None if options.follow_outside_links else _Inside(root_path)
    with _collector_paused():
        if kernels.has_walk():
            notes, skipped = _walk_compiled(root_path, exts, spec, inside)
        else:
            notes, skipped = _walk_python(root_path, exts, spec, inside)
        return _note_files(notes, skipped, spec, options.max_bytes, inside)


OUTSIDE_LINK = "links outside the notes folder (not followed; Settings or --follow-outside-links to follow)"


class _Inside:
    """Whether a link's real path stays inside the notes folder."""

    def __init__(self, root: Path) -> None:
        self.root = os.path.realpath(root)
        self.prefix = os.path.join(self.root, "")

    def __call__(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.prefix)

    def outside(self, path: str) -> bool:
        return not self(path)


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


def _note_files(
    notes: list[_NoteStat],
    skipped: list[Skipped],
    spec: pathspec.PathSpec | None,
    max_bytes: int,
    inside: _Inside | None,
) -> tuple[list[NoteFile], list[Skipped]]:
    """The notes to read, and why the others are skipped, both in path order."""
    found: list[NoteFile] = []
    for relpath, path, size, mtime, kind, is_link in notes:
        if kind < 0:
            skipped.append(Skipped(relpath, "dangling symbolic link" if is_link else "cannot be read (stat failed)"))
        elif spec is not None and spec.match_file(relpath):
            continue
        elif is_link and inside is not None and not inside(path):
            skipped.append(Skipped(relpath, OUTSIDE_LINK))
        elif kind != 0:
            skipped.append(Skipped(relpath, "not a regular file (pipe, socket or device)"))
        elif size > max_bytes:
            mb = f"{size / 1e6:.1f} MB over the {max_bytes / 1e6:.0f} MB limit"
            skipped.append(Skipped(relpath, f"too large: {mb}"))
        else:
            found.append(NoteFile(relpath, path, size, mtime))
    found.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    return found, skipped


_FOLDER_EVENTS = (
    "folder cannot be read: {}",
    "folder named like a note (link loop)",
    "is a folder, not a note file",
    OUTSIDE_LINK,
)
_NoteStat = tuple[str, str, int, int, int, bool]  # relative path, path, size, mtime (ns), kind, is a link


def _walk_compiled(
    root_path: Path, exts: tuple[str, ...], spec: pathspec.PathSpec | None, inside: _Inside | None
) -> tuple[list[_NoteStat], list[Skipped]]:
    """`_walk_python` by `_text.walk_tree` (which leaves names that are not ASCII to Python)."""
    skip_dir = spec.match_file if spec is not None else None
    outside = inside.outside if inside is not None else None
    assert kernels.TEXT is not None
    rels, sizes, mtimes, kinds, links, events = kernels.TEXT.walk_tree(
        str(root_path), exts, tuple(SKIP_DIRS), skip_dir, outside
    )
    prefix = os.path.join(str(root_path), "")
    stats = zip(rels, array("q", sizes), array("q", mtimes), array("b", kinds), array("b", links))
    notes = [
        (rel, prefix + rel, size, mtime, kind, bool(link & 1))
        for rel, size, mtime, kind, link in stats
        if not link & 2 or rel.rsplit("/", 1)[-1].lower().endswith(exts)
    ]
    return notes, [Skipped(rel, _FOLDER_EVENTS[code].format(text)) for rel, code, text in events]


def _walk_python(
    root_path: Path, exts: tuple[str, ...], spec: pathspec.PathSpec | None, inside: _Inside | None
) -> tuple[list[_NoteStat], list[Skipped]]:
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
            if name.startswith(".") or name in SKIP_DIRS:
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
            if linked and inside is not None and not inside(entry.path):
                skipped.append(Skipped(relpath, OUTSIDE_LINK))
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
    out: list[_NoteStat] = []
    for relpath, path, is_link in notes:
        try:
            st = os.stat(path)  # follows links
        except OSError:
            out.append((relpath, path, 0, 0, -1, is_link))
            continue
        kind = 0 if stat.S_ISREG(st.st_mode) else 1 if stat.S_ISDIR(st.st_mode) else 2
        out.append((relpath, path, st.st_size, st.st_mtime_ns, kind, is_link))
    return out, skipped


def decode(data: bytes) -> tuple[str | None, str, str | None]:
    """Decode note bytes: (text or None, encoding, reason when not plain UTF-8 or not text)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16", "decoded as UTF-16 (byte order mark)"
        except UnicodeDecodeError:
            return None, "", "binary or undecodable (bad UTF-16)"
    if data.startswith(BINARY_MAGIC) or b"\x00" in data[:8192]:
        return None, "", "binary file (NUL bytes or a known binary signature)"
    try:
        return data.decode("utf-8-sig"), "utf-8", None
    except UnicodeDecodeError as exc:
        where = exc.start
    try:
        text, enc = data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:  # cp1252 leaves five bytes undefined; latin-1 decodes every byte
        text, enc = data.decode("latin-1"), "latin-1"
    return text, enc, f"not valid UTF-8 (byte {where}); decoded as {enc}"


_FM_KEY = re.compile(r"^([A-Za-z_][\w\- ]*):(?:\s+(.*))?\s*$")


def _fm_scalar(value: str) -> object:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if value.startswith("[") and value.endswith("]"):
        return [str(_fm_scalar(v)) for v in value[1:-1].split(",") if v.strip()]
    return value


def parse_front_matter(text: str) -> tuple[dict[str, object], int]:
    """Split YAML front matter: (metadata, body offset). Broken front matter yields ({}, 0)."""
    if not text.startswith("---"):
        return {}, 0
    lines = text.splitlines(keepends=True)
    if lines[0].rstrip() != "---":
        return {}, 0
    meta: dict[str, object] = {}
    offset = len(lines[0])
    current: str | None = None
    for line in lines[1:]:
        offset += len(line)
        stripped = line.rstrip("\r\n")
        if stripped.rstrip() in ("---", "..."):
            return {k: v for k, v in meta.items() if k in ("title", "aliases", "tags")} | {
                "_keys": sorted(meta)
            }, offset
        if not stripped.strip() or stripped.lstrip().startswith("#"):
            continue
        if stripped[0] in " \t-":
            item = stripped.strip()
            if item.startswith("- ") and current is not None:
                existing = meta.get(current)
                items = existing if isinstance(existing, list) else []
                items.append(str(_fm_scalar(item[2:])))
                meta[current] = items
            continue  # nested structures are tolerated and ignored
        m = _FM_KEY.match(stripped)
        if not m:
            return {}, 0
        current = m.group(1).strip()
        meta[current] = _fm_scalar(m.group(2) or "") if m.group(2) else []
    return {}, 0  # no closing fence: treat it all as text


def read_note(file: NoteFile) -> tuple[Note | None, Skipped | None]:
    """Read and decode one note (a PDF: its text layer); a problem becomes a Skipped, never an exception."""
    try:
        with open(file.abspath, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, Skipped(file.path, f"cannot be read: {exc.strerror or exc}", False, file.size, file.mtime_ns)
    if file.path.lower().endswith(pdf.PDF_SUFFIX):
        return _read_pdf(file, data)
    text, encoding, reason = decode(data)
    if text is None:
        return None, Skipped(file.path, reason or "cannot be decoded", False, file.size, file.mtime_ns)
    text = normalize(text.replace("\r\n", "\n").replace("\r", "\n"))
    meta: dict[str, object] = {}
    body_start = 0
    if file.path.lower().endswith((".md", ".markdown")):
        meta, body_start = parse_front_matter(text)
    note = Note(
        path=file.path,
        text=text,
        body_start=body_start,
        meta=meta,
        encoding=encoding,
        size=file.size,
        mtime_ns=file.mtime_ns,
        sha1=hashlib.sha1(data).hexdigest(),
    )
    return note, (Skipped(file.path, reason, True, file.size, file.mtime_ns) if reason else None)


def _read_pdf(file: NoteFile, data: bytes) -> tuple[Note | None, Skipped | None]:
    """A PDF's text layer as a note (see core.pdf); why not, when it has none to give."""
    try:
        extracted = pdf.extract(data)
    except (ValueError, pdf.ExtractionTimeout, pdf.PdfUnavailable) as exc:
        return None, Skipped(file.path, str(exc), False, file.size, file.mtime_ns)
    note = Note(
        path=file.path,
        text=normalize(extracted.text),
        meta=extracted.meta,
        encoding="pdf",
        size=file.size,
        mtime_ns=file.mtime_ns,
        sha1=hashlib.sha1(data).hexdigest(),
    )
    caveat = None
    if extracted.empty_pages:
        caveat = Skipped(
            file.path,
            f"{extracted.empty_pages} of {extracted.pages} pages have no text (scanned? OCR is not built in)",
            True,
            file.size,
            file.mtime_ns,
        )
    return note, caveat
