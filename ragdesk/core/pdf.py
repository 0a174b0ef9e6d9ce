"""PDFs as notes: their text layer, page by page, cleaned for search, with the pages kept.

pypdf reads them (pure Python, BSD-licensed, maintained by py-pdf, no native libraries to bundle;
PyMuPDF is faster but AGPL and a large binary). Extraction runs in the build's worker processes.
The note's text is the pages' text in order, with the PDF's outline entries as headings at the
pages they point to (so chunks carry a section heading), and `meta["page_starts"]` records where
each page begins, so a chunk knows its page. Nothing fails silently: no text layer, encryption,
damage and a time-out each become a stated reason.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import re
import signal
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import PdfUnavailable  # noqa: F401 (re-exported)

PDF_SUFFIX = ".pdf"
EXTRACT_TIMEOUT_S = 60.0  # one PDF's extraction; past it the PDF is reported and the build goes on
# What one PDF's extraction may add to the process's address space (Linux): a 143 KB file whose
# ToUnicode map inflates to 70 MB peaked at 1.65 GB; past it the PDF is skipped with the reason.
EXTRACT_MEMORY_MB = 256  # the 31 sample PDFs grow it by 45 MB at most (GeoTopo, 117 pages)
NO_TEXT = "no text: scanned pages? OCR is not built in"
ENCRYPTED = "encrypted (password-protected): cannot be read"
LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
_HYPHENATED = re.compile(r"(\w)[-\u00ad]\n(\w)")  # a word broken at a line end
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(r"^\s*(page\s+|p\.\s*|seite\s+|strana\s+|стор\.\s*)?\d+(\s*(/|of|z|von|из)\s*\d+)?\s*$", re.I)
EDGE_LINES = 2  # lines at the top and at the bottom of a page that may be running headers or footers


class ExtractionTimeout(BaseException):
    """A PDF took longer than EXTRACT_TIMEOUT_S to read. A BaseException, so that the reader's own
    `except Exception` blocks (pypdf recovers from many errors) do not swallow it. Its own __init__
    keeps Python 3.10/3.11 from re-wrapping it with another message when it lands inside a codec."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"reading took longer than {seconds:g} s")


@dataclass
class PdfText:
    """A PDF's text as a note: cleaned pages joined, outline headings inserted, where pages start."""

    text: str
    pages: int
    page_starts: list[int] = field(default_factory=list)  # character offset of each page in `text`
    empty_pages: int = 0
    removed_lines: int = 0  # running headers, footers and page numbers left out

    @property
    def meta(self) -> dict[str, object]:
        return {"pages": self.pages, "page_starts": self.page_starts}


def page_of(meta: dict[str, Any], offset: int) -> int | None:
    """The 1-based page of a character offset in a PDF note (None for other notes)."""
    starts = meta.get("page_starts")
    if not starts:
        return None
    return max(1, bisect.bisect_right(starts, offset))


def extract(data: bytes, timeout_s: float | None = None, clean: bool = True) -> PdfText:
    """The text of a PDF's bytes. Raises ValueError with a person's reason when it has none to give
    (encrypted, damaged, no text layer), ExtractionTimeout, or PdfUnavailable."""
    try:
        import pypdf
        from pypdf.errors import PdfReadError, PyPdfError
    except ImportError as exc:  # pragma: no cover - pypdf is a dependency
        raise PdfUnavailable('PDFs need pypdf: python3 -m pip install "pypdf>=5"') from exc
    import io
    import logging

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings about odd files are not ours to print
    with _time_limit(EXTRACT_TIMEOUT_S if timeout_s is None else timeout_s), _memory_limit(EXTRACT_MEMORY_MB):
        try:
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted:
                try:
                    opened = reader.decrypt("")  # many PDFs are encrypted with an empty user password
                except Exception as exc:  # unsupported algorithms raise their own errors
                    raise ValueError(f"{ENCRYPTED} ({exc})") from exc
                if not opened:
                    raise ValueError(ENCRYPTED)
            pages = [clean_page_text(p.extract_text() or "") for p in reader.pages]
            outline = _outline(reader)
        except (PdfReadError, KeyError, TypeError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
            raise ValueError(f"damaged PDF: {type(exc).__name__}: {exc}"[:300]) from exc
        except MemoryError as exc:
            raise ValueError(f"needs more than {EXTRACT_MEMORY_MB} MB of memory to read; skipped") from exc
        except PyPdfError as exc:  # pypdf's own limits (LimitReachedError: a /ToUnicode map too large, …)
            raise ValueError(f"cannot be read within pypdf's limits: {type(exc).__name__}: {exc}"[:300]) from exc
    if not pages:
        raise ValueError("damaged PDF: no pages")
    empty = sum(1 for p in pages if not p.strip())
    if empty == len(pages):
        raise ValueError(NO_TEXT)
    removed = 0
    if clean:
        cleaned, removed = _drop_running_lines(pages)
        if any(p.strip() for p in cleaned):  # else it was all lines alike (a form, a log): kept as it is
            pages = cleaned
        else:
            removed = 0
    return _assemble(pages, outline, empty, removed)


def clean_page_text(text: str) -> str:
    """A page's extracted text as search needs it: ligatures folded (ﬁ -> fi), words hyphenated at a
    line end joined ("informa-\ntion" -> "information"), NFC, one kind of line break."""
    text = unicodedata.normalize("NFC", text.translate(LIGATURES)).replace("\r\n", "\n").replace("\r", "\n")
    return _HYPHENATED.sub(r"\1\2", text)


def _outline(reader: Any) -> list[tuple[int, int, str]]:
    """(page index, depth, title) of the outline's entries, in order; [] when it has none or it is broken."""
    out: list[tuple[int, int, str]] = []

    def walk(items: Any, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            with contextlib.suppress(Exception):
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title).split())
                if title and page is not None and page >= 0:
                    out.append((page, depth, title))

    with contextlib.suppress(Exception):
        walk(reader.outline, 1)
    return out


def _drop_running_lines(pages: list[str]) -> tuple[list[str], int]:
    """Leave out running headers and footers (a line at a page's top or bottom that recurs, digits
    aside, on at least half of the pages, three at least) and page numbers at a page's edges; never
    most of a page's text (a statement or a log whose every page has the same layout lost all its
    text to this, and was then called scanned)."""
    edges = [_edge_lines(p) for p in pages]
    seen = Counter(key for lines in edges for key in {_DIGITS.sub("#", line.strip()) for line in lines})
    repeated = {key for key, n in seen.items() if key and n >= max(3, len(pages) / 2)}
    out: list[str] = []
    removed = 0
    for page in pages:
        lines = page.split("\n")
        keep = [True] * len(lines)
        nonblank = [i for i, line in enumerate(lines) if line.strip()]
        for i in nonblank[:EDGE_LINES] + nonblank[-EDGE_LINES:]:
            line = lines[i].strip()
            if _PAGE_NUMBER.match(line) or _DIGITS.sub("#", line) in repeated:
                keep[i] = False
        dropped = sum(len(line) for line, k in zip(lines, keep) if not k)
        if dropped * 2 > sum(len(line) for line in lines):  # most of the page: its text, not its margins
            keep = [True] * len(lines)
        removed += keep.count(False)
        out.append("\n".join(line for line, k in zip(lines, keep) if k))
    return out, removed


def _edge_lines(page: str) -> list[str]:
    lines = [line for line in page.split("\n") if line.strip()]
    return lines[:EDGE_LINES] + lines[-EDGE_LINES:]


def _assemble(pages: list[str], outline: list[tuple[int, int, str]], empty: int, removed: int) -> PdfText:
    by_page: dict[int, list[tuple[int, str]]] = {}
    for page, depth, title in outline:
        by_page.setdefault(page, []).append((depth, title))
    parts: list[str] = []
    starts: list[int] = []
    at = 0
    for i, page in enumerate(pages):
        starts.append(at)
        headings = "".join(f"{'#' * min(depth, 6)} {title}\n\n" for depth, title in by_page.get(i, []))
        piece = headings + page.strip("\n") + "\n\n"
        parts.append(piece)
        at += len(piece)
    return PdfText("".join(parts), len(pages), starts, empty, removed)


def digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _importing(frame: Any) -> bool:
    """Whether `frame` runs inside Python's import machinery (a module half executed when the alarm
    came would stay broken for the rest of the process)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def _memory_limit(mb: int) -> Iterator[None]:
    """Let this process's address space grow by at most `mb` MB for the block (Linux, main thread: a
    build worker's; elsewhere no limit): past it allocations raise MemoryError."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        resource = None  # type: ignore[assignment]
    used = _address_space()
    if resource is None or used is None or mb <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = used + mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft <= limit:  # already as tight
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _address_space() -> int | None:
    """This process's address space in bytes (/proc/self/statm), None where it cannot be read."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise ExtractionTimeout in this (main) thread after `seconds` (POSIX; elsewhere no limit)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or seconds <= 0:
        yield
        return

    def expired(_signum: int, frame: Any) -> None:
        if _importing(frame):  # never inside an import: the alarm comes again 0.1 s later
            return
        raise ExtractionTimeout(seconds)

    previous = signal.signal(signal.SIGALRM, expired)
    # and again every 0.1 s until the extraction ends: a reader's bare `except:` may swallow one
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
