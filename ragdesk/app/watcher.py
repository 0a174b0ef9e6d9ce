"""Watching the open notes folder so the index stays current without pressing F5.

Folders are always watched (notes added, removed, renamed); note files are watched too up to
a cap, since each watch costs a kernel handle. Bursts of events (a `git checkout`) coalesce
into one refresh after a quiet period.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

MAX_FILE_WATCHES = 4000
QUIET_MS = 50  # an editor's save is a burst of a few ms; a checkout's longer bursts queue one more build


class FolderWatcher(QObject):
    """Emits `folder_changed` once things on disk have been quiet for QUIET_MS after a change."""

    folder_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._on_path_changed)
        self._watcher.fileChanged.connect(self._on_path_changed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(QUIET_MS)
        self._timer.timeout.connect(self.folder_changed)
        self.enabled = True

    def watch(self, folder: str, note_paths: list[str]) -> None:
        """Watch `folder`, its sub-folders that hold notes, and (up to a cap) the note files.

        Only the difference from what is watched already is applied: after a refresh that is
        usually nothing, where re-adding some 900 folders of a large vault took over 100 ms.
        """
        root = str(Path(folder))
        wanted = {root} | {f"{root}/{p}".rsplit("/", 1)[0] for p in note_paths}
        if len(note_paths) <= MAX_FILE_WATCHES:
            wanted.update(f"{root}/{p}" for p in note_paths)
        watched = set(self._watched())
        gone, new = sorted(watched - wanted), sorted(wanted - watched)
        if gone:
            self._watcher.removePaths(gone)
        if new:
            self._watcher.addPaths(new)

    def clear(self) -> None:
        watched = self._watched()
        if watched:
            self._watcher.removePaths(watched)
        self._timer.stop()

    def watched_count(self) -> int:
        return len(self._watched())

    def _watched(self) -> list[str]:
        return self._watcher.files() + self._watcher.directories()

    def _on_path_changed(self, _path: str) -> None:
        if self.enabled:
            self._timer.start()  # restart: a burst of events becomes one refresh
