"""Closing the window on SIGTERM (a logout, `kill`) and SIGINT (Ctrl+C in the terminal that started
it), as its close button does: the layout is saved and the build process stopped, where the default
actions ended the process mid-stride (or, for Ctrl+C, did nothing until the next Python code ran).

Qt's event loop runs in C++, so a Python signal handler waits for the interpreter; the signal's
byte on `signal.set_wakeup_fd` wakes a QSocketNotifier at once, without a polling timer.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

from PySide6.QtCore import QSocketNotifier, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QWidget

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _close_all(window: QWidget) -> None:
    """Close the dialogs open over `window` (a modal one runs its own event loop, which would keep
    the process alive past the window), then the window."""
    while (modal := QApplication.activeModalWidget()) is not None and modal is not window:
        if isinstance(modal, QDialog):
            modal.reject()
        modal.close()
        if QApplication.activeModalWidget() is modal:  # refused to close: leave it, close the window
            break
    window.close()


def close_on_stop_signals(window: QWidget) -> Callable[[], None]:
    """Make SIGINT and SIGTERM close `window` from its event loop; returns what undoes it (the
    handlers and wake-up fd before). Call from the main thread (Python requires it)."""
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read, window)

    def drain() -> None:  # the handler itself ran as this Python code was entered
        try:
            reader.recv(64)
        except BlockingIOError:
            pass

    notifier.activated.connect(drain)

    def close(_sig: int, _frame: object) -> None:
        QTimer.singleShot(0, lambda: _close_all(window))

    previous = {sig: signal.signal(sig, close) for sig in STOP_SIGNALS}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        notifier.deleteLater()
        reader.close()
        writer.close()

    return restore
