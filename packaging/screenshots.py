"""Regenerate the README screenshots from the real window (offscreen grab of the live widgets).

Usage: python packaging/screenshots.py [OUT_DIR]   (default: docs/)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RAGDESK_NO_DIALOGS", "1")

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ragdesk.app.resources import app_icon, sample_notes_folder  # noqa: E402
from ragdesk.app.settings import AppSettings  # noqa: E402
from ragdesk.app.window import MainWindow  # noqa: E402


def wait_for(signal: object, timeout_ms: int = 30000) -> None:
    loop = QEventLoop()
    signal.connect(loop.quit)  # type: ignore[attr-defined]
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()


def settle(ms: int = 300) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs"
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv[:1])
    app.setWindowIcon(app_icon())
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(AppSettings(str(Path(tmp) / "settings.ini")), str(Path(tmp) / "index"))
        window.resize(1280, 800)
        window.main_splitter.setSizes([704, 576])
        window.show()
        window.open_folder(str(sample_notes_folder()))
        while window.engine.building or window.library is None:
            wait_for(window.build_state_changed)
        window.search_bar.field.setText("how do I undo a commit")
        window.run_search()
        wait_for(window.results_shown)
        window.results_pane.view.selectRow(0)
        settle()
        window.grab().save(str(out / "window.png"))
        window.search_bar.field.setText("travel insurance medical evacuation")
        window.run_search()
        wait_for(window.results_shown)
        settle()
        window.right_splitter.grab().save(str(out / "prompt.png"))
        window.close()
    print(f"wrote {out / 'window.png'} and {out / 'prompt.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
