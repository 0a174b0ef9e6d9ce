"""How long does the window's event loop stall while a large folder is indexed?

Opens the real window offscreen on a folder (default: the scale corpus), ticks a 2 ms
timer during the whole build, and prints the longest gap between ticks (goal: < 50 ms).

    python tests/benchmarks/bench_gui_stall.py [FOLDER]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RAGDESK_NO_DIALOGS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtCore import QElapsedTimer, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ragdesk.app.settings import AppSettings  # noqa: E402
from ragdesk.app.window import MainWindow  # noqa: E402

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else DATA
    app = QApplication(sys.argv[:1])
    gaps: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = AppSettings(str(Path(tmp) / "settings.ini"))
        settings.set("index/extensions", [".md", ".texy"])
        window = MainWindow(settings, str(Path(tmp) / "index"))
        window.show()
        clock = QElapsedTimer()
        ticker = QTimer()
        ticker.setInterval(2)

        def tick() -> None:
            gaps.append(clock.restart())

        ticker.timeout.connect(tick)
        total = QElapsedTimer()

        def done(state: str) -> None:
            if state != "building":
                ticker.stop()
                app.quit()

        window.build_state_changed.connect(done)
        clock.start()
        total.start()
        ticker.start()
        window.open_folder(str(folder))
        app.exec()
        elapsed = total.elapsed() / 1000
        lib = window.library
        window.close()
    gaps.sort()
    print(f"folder: {folder}")
    print(
        f"indexed {len(lib.notes) if lib else 0} notes, {lib.n_chunks if lib else 0} chunks in {elapsed:.1f} s "
        "(includes deriving the default analyzer's indexes)"
    )
    print(
        f"event-loop gaps: {len(gaps)} ticks, median {gaps[len(gaps) // 2]:.0f} ms, "
        f"p99 {gaps[int(len(gaps) * 0.99)]:.0f} ms, longest stall {gaps[-1]:.0f} ms (goal < 50 ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
