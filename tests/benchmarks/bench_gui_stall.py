"""How long does the window's event loop stall while a large folder is indexed, and refreshed?

Opens the real window offscreen on a copy of a folder (default: the scale corpus), ticks a 2 ms
timer during the whole build, and prints the longest gap between ticks (goal: < 50 ms). Then
waits PAUSE_S (3 s; RAGDESK_BENCH_PAUSE_S), appends a word to one note, refreshes (F5) and
measures the same until a search for the new word (typed before) shows the edited note; then,
after another pause, saves one more word and waits for the folder watcher to show it (no F5), and
ticks CHECK_S more (the whole-folder walk that follows a watched refresh, session.CHECK_DELAY_MS).

    python tests/benchmarks/bench_gui_stall.py [FOLDER]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RAGDESK_NO_DIALOGS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtCore import QElapsedTimer, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ragdesk.app.settings import AppSettings  # noqa: E402
from ragdesk.app.window import MainWindow  # noqa: E402

PAUSE_S = float(os.environ.get("RAGDESK_BENCH_PAUSE_S", "3"))  # a person edits a while after the build
WORDS = {"refresh": "zyxwvutsr", "watch": "qponmlkji"}  # found in no note before the edit
CHECK_S = 3.0
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
    gaps: dict[str, list[float]] = {"build": [], "pause": [], "refresh": [], "watch": [], "check": []}
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
        trace = bool(os.environ.get("RAGDESK_BENCH_TRACE"))

        def tick() -> None:
            gap = clock.restart()
            gaps[phase[0]].append(gap)
            if trace and gap > 40:
                print(f"  {phase[0]} stall {gap} ms ending {time.time()}", flush=True)

        ticker.timeout.connect(tick)
        edited: list[str] = []

        def on_state(state: str) -> None:
            if os.environ.get("RAGDESK_BENCH_TRACE"):
                print(f"  {phase[0]} {total.elapsed()} ms: {state} {time.time()}", flush=True)
            if state != "built":
                return
            if phase[0] == "build":  # built: a while later, edit one note and refresh (F5)
                timings["build"] = total.elapsed() / 1000
                lib = window.library
                assert lib is not None
                timings["notes"], timings["chunks"] = len(lib.notes), lib.n_chunks
                edited.append(lib.notes[len(lib.notes) // 2].path)
                phase[0] = "pause"
                QTimer.singleShot(int(PAUSE_S * 1000), lambda: edit("refresh"))

        def edit(next_phase: str) -> None:
            """Save an edit with a new word typed in the search field; F5 in the refresh phase, and in
            the watch phase nothing (the folder watcher notices the save)."""
            word = WORDS[next_phase]
            window.search_bar.field.setText(word)  # typed before: no result until the edit is indexed
            with open(folder / edited[0], "a", encoding="utf-8") as fh:
                fh.write(f"\nan edit: {word}\n")
            phase[0] = next_phase
            clock.restart()
            total.restart()
            if trace:
                print(f"  saved, {next_phase} {time.time()}", flush=True)
            if next_phase == "refresh":
                window.refresh()

        def on_results(result: object) -> None:
            current = phase[0]
            if current not in WORDS or getattr(result, "query", "") != WORDS[current]:
                return
            if any(h.path == edited[0] for h in getattr(result, "hits", [])):
                timings[current] = total.elapsed() / 1000
                if current == "refresh":  # a while later, the same through the folder watcher
                    phase[0] = "pause"
                    QTimer.singleShot(int(PAUSE_S * 1000), lambda: edit("watch"))
                else:
                    phase[0] = "check"

                    def done() -> None:
                        ticker.stop()
                        app.quit()

                    QTimer.singleShot(int(CHECK_S * 1000), done)

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
    report(f"the {PAUSE_S:.0f} s pauses after the build and the refresh: event-loop gaps", gaps["pause"])
    print(f"refresh: the edited note shows in the results {timings['refresh']:.2f} s after F5")
    report("refresh: event-loop gaps", gaps["refresh"])
    print(f"watcher: the next edit shows {timings['watch']:.2f} s after it is saved (no F5)")
    report("watcher: event-loop gaps", gaps["watch"])
    report(f"the {CHECK_S:.0f} s after it (the whole-folder check follows): event-loop gaps", gaps["check"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
