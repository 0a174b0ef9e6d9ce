"""Run by test_window_trust: ragdesk started for a folder that does not exist (its dialog opens over
the window), then SIGTERM, as a logout sends it, once the dialog is up.

Arguments: notes folder, index folder, settings file, the missing folder."""

from __future__ import annotations

import os
import signal
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication


def main() -> int:
    from ragdesk.app.main import run

    app = QApplication(sys.argv[:1])  # noqa: F841 - kept alive while run() uses it

    def poll() -> None:
        if QApplication.activeModalWidget() is not None:
            print("dialog up", flush=True)
            os.kill(os.getpid(), signal.SIGTERM)
        else:
            QTimer.singleShot(20, poll)

    QTimer.singleShot(0, poll)
    return run(sys.argv[1], sys.argv[2], sys.argv[3], missing=sys.argv[4])


if __name__ == "__main__":
    sys.exit(main())
