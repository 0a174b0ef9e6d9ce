"""The window's status bar as the window speaks through it: a line answering the user stays a while
before build progress may cover it, and a note about the current query is cleared by the next query."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QStatusBar

NOTE_PREFIX = "Note: "  # status lines about the current query, cleared by the next one
SAID_HOLD_MS = 3000  # how long a line answering the user (Copied prompt: …) stays before progress lines


class StatusLine(QObject):
    """Says lines on a status bar; `say` holds its line against `progress` for SAID_HOLD_MS."""

    def __init__(self, bar: QStatusBar) -> None:
        super().__init__(bar)
        self.bar = bar
        self.hold = QTimer(self)  # while it runs, progress lines do not cover what was just said
        self.hold.setSingleShot(True)
        self.hold.setInterval(SAID_HOLD_MS)

    def show(self, line: str, ms: int = 0) -> None:
        """A line for `ms` milliseconds (0: until replaced)."""
        self.bar.showMessage(line, ms)

    def say(self, line: str, ms: int) -> None:
        """A line answering the user: build progress waits SAID_HOLD_MS before covering it."""
        self.bar.showMessage(line, ms)
        self.hold.start()

    def progress(self, line: str) -> None:
        """A build's progress line, unless what was just said is still being read."""
        if line and not self.hold.isActive():
            self.bar.showMessage(line)

    def note(self, line: str, ms: int) -> None:
        """A line about the current query's results (NOTE_PREFIX): the next query clears it."""
        self.bar.showMessage(NOTE_PREFIX + line, ms)

    def clear_note(self) -> None:
        if self.bar.currentMessage().startswith(NOTE_PREFIX):
            self.bar.clearMessage()
