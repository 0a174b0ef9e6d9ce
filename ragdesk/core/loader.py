"""Loading notes: decode and split off front matter (finding them in a folder: core.walk).

Nothing disappears silently: every note-typed file that is not loaded, and every note
decoded with a fallback encoding, is reported as a `Skipped` with a human reason.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field

from . import pdf
from .analyzers import normalize

DEFAULT_EXTENSIONS = (".md", ".markdown", ".txt", ".rst", ".org", ".pdf")
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
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


UNREADABLE = "cannot be read: "  # a read that failed (the OS's reason follows)


@dataclass
class Skipped:
    """A file that was skipped, or loaded with a caveat (fallback decoding)."""

    path: str
    reason: str
    loaded: bool = False
    size: int = -1  # set for files that were read: an unchanged file is not read again
    mtime_ns: int = -1
    passing: bool = False  # failed for a reason that may pass (vanished, no permission, I/O): tried again
    tried_at: float = 0.0  # when it was last read or tried (time.time()); 0: at the build that stored it

    @property
    def may_pass(self) -> bool:
        """Tried again at each refresh whatever its modification time (records written before
        `passing` say so by their reason)."""
        return self.passing or (not self.loaded and self.reason.startswith(UNREADABLE))


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


_HASHTAG = re.compile(r"#([^\W\d_][\w/-]*|[\d_][\w/-]*[^\W\d_][\w/-]*)")  # a letter in it: not #123
_FENCE_LINE = re.compile(r"^(```|~~~)", re.M)
HASHTAGS = "hashtags"  # the note record's meta key: its #tags, found as it is read (query_mask's tag:)


def hashtags(text: str) -> list[str]:
    """The `#tags` of a note's text, as written, each once: after a space or at a line's start, with a
    letter in them, outside fenced code (Obsidian's rule; `[link](#anchor)` and `#123` are not tags).
    Fences are looked for only in a note with a tag (0.5 s of a 93 MB build otherwise)."""
    if "#" not in text:
        return []
    found = [m for m in _HASHTAG.finditer(text) if m.start() == 0 or text[m.start() - 1].isspace()]
    if not found:
        return []
    code, opened = [], None  # fenced blocks: from an opening line to the next line of the same fence
    for m in _FENCE_LINE.finditer(text):
        if opened is None:
            opened = m
        elif m.group(1) == opened.group(1):
            code.append((opened.start(), m.end()))
            opened = None
    return list(dict.fromkeys(m.group(1) for m in found if not any(a <= m.start() < b for a, b in code)))


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
    except OSError as exc:  # gone for a moment, no permission, an I/O error: tried again at each refresh
        why = f"{UNREADABLE}{exc.strerror or exc}"
        return None, Skipped(file.path, why, False, file.size, file.mtime_ns, passing=True, tried_at=time.time())
    if file.path.lower().endswith(pdf.PDF_SUFFIX):
        return _read_pdf(file, data)
    text, encoding, reason = decode(data)
    if text is None:
        why = reason or "cannot be decoded"
        return None, Skipped(file.path, why, False, file.size, file.mtime_ns, tried_at=time.time())
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
        return None, Skipped(file.path, str(exc), False, file.size, file.mtime_ns, tried_at=time.time())
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
