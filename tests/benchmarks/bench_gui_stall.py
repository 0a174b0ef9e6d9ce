"""How long does the window's event loop stall while a large folder is indexed, and refreshed?

Opens the real window offscreen on a copy of a folder (default: the scale corpus), ticks a 2 ms
timer during the whole build, and prints the longest gap between ticks (goal: < 50 ms). Then
appends a word to one note, refreshes (F5) and measures the same during the refresh, until a
search for the new word shows the edited note.

    python tests/benchmarks/bench_gui_stall.py [FOLDER]
"""

from __future__ import annotations

import os
import shutil
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


def report(label: str, gaps: list[float]) -> None:
    gaps = sorted(gaps)
    print(
        f"{label}: {len(gaps)} ticks, median {gaps[len(gaps) // 2]:.0f} ms, "
        f"p99 {gaps[int(len(gaps) * 0.99)]:.0f} ms, longest stall {gaps[-1]:.0f} ms (goal < 50 ms)"
    )


def main() -> int:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DATA
    app = QApplication(sys.argv[:1])
    gaps: dict[str, list[float]] = {"build": [], "refresh": []}
    phase = ["build"]
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "notes"  # a copy, so that one note can be edited
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns(".*"))
        settings = AppSettings(str(Path(tmp) / "settings.ini"))
        settings.set("index/extensions", [".md", ".texy"])
        window = MainWindow(settings, str(Path(tmp) / "index"))
        window.show()
        clock, total = QElapsedTimer(), QElapsedTimer()
        ticker = QTimer()
        ticker.setInterval(2)
        ticker.timeout.connect(lambda: gaps[phase[0]].append(clock.restart()))
        edited: list[str] = []

        def on_state(state: str) -> None:
            if state != "built":
                return
            if phase[0] == "build":  # built: edit one note and refresh (F5), all inside the event loop
                timings["build"] = total.elapsed() / 1000
                lib = window.library
                assert lib is not None
                timings["notes"], timings["chunks"] = len(lib.notes), lib.n_chunks
                edited.append(lib.notes[len(lib.notes) // 2].path)
                with open(folder / edited[0], "a", encoding="utf-8") as fh:
                    fh.write("\nan edit: zyxwvutsr\n")
                phase[0] = "refresh"
                clock.restart()
                total.restart()
                window.refresh()
            else:
                window.search_field.setText("zyxwvutsr")

        def on_results(result: object) -> None:
            if phase[0] == "refresh" and any(h.path == edited[0] for h in getattr(result, "hits", [])):
                timings["refresh"] = total.elapsed() / 1000
                ticker.stop()
                app.quit()

        window.build_state_changed.connect(on_state)
        window.results_shown.connect(on_results)
        clock.start()
        total.start()
        ticker.start()
        window.open_folder(str(folder))
        app.exec()
        window.close()
    print(f"folder: {source}")
    print(
        f"indexed {timings['notes']:.0f} notes, {timings['chunks']:.0f} chunks in {timings['build']:.1f} s "
        "(includes deriving the default analyzer's indexes)"
    )
    report("build: event-loop gaps", gaps["build"])
    print(f"refresh: the edited note shows in the results {timings['refresh']:.2f} s after F5")
    report("refresh: event-loop gaps", gaps["refresh"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
