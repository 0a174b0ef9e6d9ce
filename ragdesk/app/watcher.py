"""Watching the open notes folder so the index stays current without pressing F5.

watchdog watches every folder of the tree (inotify on Linux, FSEvents on macOS, the Windows
change journal): a note saved in place is seen in a folder of any size. QFileSystemWatcher, used
before, needs one kernel handle per file to see a save in place, so past 4,000 notes edits went
unseen until F5. Bursts of events (a `git checkout`) coalesce into one refresh after a quiet period.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

QUIET_MS = 50  # an editor's save is a burst of a few ms; a checkout's longer bursts queue one more build
# What changes the notes: reading them (the build does) opens and closes files, which is no change.
CHANGES = (
    FileModifiedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
)


class _Changes(FileSystemEventHandler):
    """Runs on watchdog's thread: passes on changes to notes (by extension) and to folders, outside
    hidden folders (.git, .obsidian: busy, and never indexed), and collects the notes' paths so a
    refresh looks at them alone (a folder's change: at everything)."""

    def __init__(self, root: Path, extensions: tuple[str, ...], changed: Signal, ignore: Path | None) -> None:
        super().__init__()
        self.root = root
        self.ignore = ignore.resolve() if ignore is not None else None
        self.extensions = tuple(e.lower() for e in extensions)
        self.changed = changed
        self._lock = threading.Lock()
        self._paths: set[str] | None = set()  # None: a folder changed, the whole tree must be walked

    def on_any_event(self, event: FileSystemEvent) -> None:
        if not isinstance(event, CHANGES):
            return
        paths = [str(p) for p in (event.src_path, getattr(event, "dest_path", "")) if p]
        mattering = [p for p in paths if self._matters(p, event.is_directory)]
        if mattering:
            with self._lock:  # before the signal: a change the window has heard of is in `take`
                if event.is_directory:
                    self._paths = None
                elif self._paths is not None:
                    self._paths.update(paths)  # a move: where from and where to
            self.changed.emit()  # queued to the watcher's thread

    def take(self) -> frozenset[str] | None:
        """The note paths changed since the last call (None: look at the whole tree, as when none was
        named), and start anew."""
        with self._lock:
            paths, self._paths = self._paths, set()
        return frozenset(paths) if paths else None

    def _matters(self, path: str, is_dir: bool) -> bool:
        if self.ignore is not None and Path(path).is_relative_to(self.ignore):
            return False  # an index folder kept inside the notes: its generations come and go with each build
        try:
            parts = Path(path).relative_to(self.root).parts
        except ValueError:
            return False
        if any(part.startswith(".") for part in parts):
            return False
        return is_dir or path.lower().endswith(self.extensions)


class FolderWatcher(QObject):
    """Emits `folder_changed` once things on disk have been quiet for QUIET_MS after a change."""

    folder_changed = Signal()
    watch_started = Signal()  # the watches are in place (set up on a thread, see _start)
    watch_failed = Signal(str)  # why changes on disk are not seen (e.g. the system's watch limit)
    _path_changed = Signal()  # emitted on watchdog's thread
    _start_done = Signal(object, str)  # (observer, why it failed or ""), emitted on the starting thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(QUIET_MS)
        self._timer.timeout.connect(self.folder_changed)
        self._path_changed.connect(self._on_path_changed)
        self._start_done.connect(self._on_start_done)
        self._observer: Observer | None = None  # type: ignore[valid-type]
        self._changes: _Changes | None = None
        self._starting: threading.Thread | None = None
        self.ready = False  # the watches of the folder being watched are in place
        self._root: Path | None = None
        self._extensions: tuple[str, ...] = ()
        self.enabled = True
        self.last_change = 0.0  # time.monotonic() when the latest change reached this thread

    @property
    def watching(self) -> Path | None:
        """The folder whose tree is watched, if any."""
        return self._root if self._observer is not None else None

    def watch(self, folder: str, extensions: tuple[str, ...], ignore: Path | None = None) -> None:
        """Watch `folder`'s whole tree for changes to notes with these extensions (once: folders
        added later are watched as they appear), except under `ignore` (the index folder)."""
        root = Path(folder)
        if self._observer is not None and root == self._root and extensions == self._extensions:
            return
        self.clear()
        observer = Observer()
        self._changes = _Changes(root, extensions, self._path_changed, ignore)
        observer.schedule(self._changes, str(root), recursive=True)
        self._observer, self._root, self._extensions, self.ready = observer, root, extensions, False
        self._starting = threading.Thread(target=self._start, args=(observer,), name="ragdesk-watch", daemon=True)
        self._starting.start()

    def _start(self, observer: Observer) -> None:  # type: ignore[valid-type]
        """On a thread: watchdog adds one watch per folder as it starts, 77-167 ms for the scale corpus
        (31,000 notes), which stalled the window when it ran on the GUI thread."""
        try:
            observer.start()  # type: ignore[attr-defined]
        except OSError as exc:  # e.g. inotify's limit on watches (fs.inotify.max_user_watches)
            self._start_done.emit(observer, f"Changes on disk are not watched ({exc}); press F5 after editing notes.")
            return
        self._start_done.emit(observer, "")

    def _on_start_done(self, observer: Observer, failure: str) -> None:  # type: ignore[valid-type]
        if observer is not self._observer:
            return  # a folder left meanwhile
        if failure:
            self._observer, self._root = None, None
            self.watch_failed.emit(failure)
            return
        self.ready = True
        self.watch_started.emit()

    def clear(self) -> None:
        self._timer.stop()
        starting, self._starting = self._starting, None
        if starting is not None:
            starting.join()  # still adding watches (a folder changed within ~0.2 s of being opened)
        observer, self._observer, self._root, self.ready = self._observer, None, None, False
        self._changes = None
        if observer is not None:
            observer.stop()
            if observer.is_alive():
                observer.join()

    def take_changes(self) -> frozenset[str] | None:
        """The note paths (absolute) changed since the last call, for a refresh that looks at them
        alone; None when it must walk the whole folder (a folder changed, or nothing is watched)."""
        return self._changes.take() if self._changes is not None else None

    def _on_path_changed(self) -> None:
        if self.enabled:
            self.last_change = time.monotonic()  # the change itself happened before this
            self._timer.start()  # restart: a burst of events becomes one refresh
