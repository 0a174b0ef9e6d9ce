"""The meaning index in the real window: event-loop stalls while it is computed, an edit during it,
resumption, throughput and the build process's memory.

Opens the window offscreen on a copy of FOLDER (default: the Czech Obsidian help) with a fresh index,
ticks a 2 ms timer, and records: when BM25 results first show; the event-loop gaps while the build
process embeds chunks; then (after `--edit-after` seconds of embedding) appends a word to one note and
presses F5: how long until a search shows it (the embedding stops, its batches kept, and resumes after
the refresh), how many chunks the resumed run still had to embed, and the time to a complete meaning
index and a hybrid search. Peak resident memory of the build process is sampled every 0.2 s. With
`--hybrid`, Hybrid is picked in the Mode switch as the embedding starts and a query is searched every
2 s meanwhile (hybrid over the chunks embedded so far, quantized again as they grow).

    python tests/benchmarks/bench_meaning.py [FOLDER] [--edit-after 30] [--hybrid]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("RAGDESK_NO_DIALOGS", "1")
os.environ.pop("RAGDESK_MEANING_INDEX", None)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_gui_stall import DATA, report  # noqa: E402
from PySide6.QtCore import QElapsedTimer, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ragdesk.app.settings import AppSettings  # noqa: E402
from ragdesk.app.window import MainWindow  # noqa: E402
from ragdesk.core.jobs import EmbeddingProgress  # noqa: E402


def child_rss_peak(stop: threading.Event, out: dict[str, float]) -> None:
    """Peak resident memory (MB) of this process's children (the build process and the one kept for the
    next build) together, of the largest of them alone, and of this process (the window)."""
    me = os.getpid()
    while not stop.is_set():
        total = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().split()
                if int(stat[3]) == me:
                    rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
                    total += rss
                    out["process_mb"] = max(out.get("process_mb", 0.0), rss / 1e6)
            except (OSError, IndexError, ValueError):
                continue
        out["peak_mb"] = max(out.get("peak_mb", 0.0), total / 1e6)
        out["window_mb"] = max(
            out.get("window_mb", 0.0),
            int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6,
        )
        time.sleep(0.2)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", nargs="?", default=str(DATA / "obsidian-help" / "cs"))
    p.add_argument("--edit-after", type=float, default=30.0, help="seconds of embedding before the edit")
    p.add_argument("--hybrid", action="store_true", help="search hybrid every 2 s while embedding")
    args = p.parse_args()
    app = QApplication(sys.argv[:1])
    gaps: list[float] = []
    t: dict[str, float] = {}
    counts: dict[str, int] = {}
    memory: dict[str, float] = {}
    stop = threading.Event()
    threading.Thread(target=child_rss_peak, args=(stop, memory), daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "notes"
        shutil.copytree(args.folder, folder, ignore=shutil.ignore_patterns(".*"))
        window = MainWindow(AppSettings(str(Path(tmp) / "settings.ini")), str(Path(tmp) / "index"))
        window.show()
        clock, total = QElapsedTimer(), QElapsedTimer()
        ticker = QTimer()
        ticker.setInterval(2)
        when: list[float] = []

        def tick() -> None:
            gap = clock.restart()
            if "embedding" in t:
                gaps.append(gap)
                when.append(total.elapsed() / 1000)

        ticker.timeout.connect(tick)
        edited: list[str] = []
        partial: list[str] = []  # the mode reasons of hybrid searches over an unfinished index
        searcher = QTimer()
        searcher.setInterval(2000)
        asked = ["jak synchronizovat poznámky mezi zařízeními", "synchronizace mezi zařízeními"]
        searcher.timeout.connect(lambda: window.search_bar.field.setText(asked[len(partial) % 2]))

        def edit() -> None:
            lib = window.library
            assert lib is not None
            edited.append(lib.notes[len(lib.notes) // 2].path)
            with open(folder / edited[0], "a", encoding="utf-8") as fh:
                fh.write("\nan edit: zyxwvutsr\n")
            t["edit"] = total.elapsed() / 1000
            searcher.stop()  # until the edit shows
            window.refresh()  # F5

        def on_progress(msg: object) -> None:
            if not isinstance(msg, EmbeddingProgress):
                return
            if "embedding" not in t:
                t["embedding"] = total.elapsed() / 1000
                counts["chunks"] = msg.chunks
                QTimer.singleShot(int(args.edit_after * 1000), edit)
                if args.hybrid:
                    window.search_bar.mode_combo.setCurrentText("hybrid")
                    searcher.start()
            elif "edit" in t and "resumed_total" not in counts and msg.done == 0:
                counts["resumed_total"], counts["stored_before"] = msg.total, msg.embedded

        def on_results(result: object) -> None:
            hits = getattr(result, "hits", [])
            reason = getattr(result, "mode_reason", "")
            if "embedded so far" in reason:
                partial.append(reason)
            if "bm25" not in t and hits:
                t["bm25"] = total.elapsed() / 1000
            if edited and "edit_shown" not in t and any(h.path == edited[0] for h in hits):
                t["edit_shown"] = total.elapsed() / 1000 - t["edit"]
                window.search_bar.field.setText("jak synchronizovat poznámky mezi zařízeními")
                if args.hybrid:
                    searcher.start()
            if (
                getattr(result, "mode", "") == "hybrid"
                and hits
                and "edit_shown" in t
                and not reason.startswith("hybrid over")
            ):
                t["hybrid"] = total.elapsed() / 1000
                ticker.stop()
                searcher.stop()
                app.quit()

        def on_state(state: str) -> None:
            if state == "built" and edited and "edit_shown" not in t:
                window.search_bar.field.setText("zyxwvutsr")

        window.session.build_progressed.connect(on_progress)
        window.build_state_changed.connect(on_state)
        window.results_shown.connect(on_results)
        window.search_bar.field.setText("synchronizace")
        clock.start()
        total.start()
        ticker.start()
        window.open_folder(str(folder))
        app.exec()
        window.close()
    stop.set()
    worst = sorted(zip(gaps, when), reverse=True)[:3]
    embed_s = t["hybrid"] - t["embedding"]
    print(f"folder: {args.folder} ({counts['chunks']} chunks)")
    print(f"BM25 results after {t['bm25']:.1f} s; the meaning index started at {t['embedding']:.1f} s")
    print(
        f"edit after {args.edit_after:.0f} s of embedding: shown {t['edit_shown']:.2f} s after F5; the resumed run "
        f"had {counts.get('resumed_total', 0)} chunks left ({counts.get('stored_before', 0)} kept from before)"
    )
    print(
        f"meaning index complete and a hybrid search shown at {t['hybrid']:.1f} s "
        f"({counts['chunks'] / embed_s:.2f} chunks/s over the embedding phase, refresh included)"
    )
    report("event loop while embedding", gaps)
    if args.hybrid:
        print(
            f"  {len(partial)} hybrid searches over the unfinished index, the last: {partial[-1] if partial else '-'}"
        )
    events = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(t.items(), key=lambda kv: kv[1]))
    print("  the longest three end at " + ", ".join(f"{at:.2f} s ({gap:.0f} ms)" for gap, at in worst) + f"; {events}")
    print(
        f"peak resident memory: build processes together {memory.get('peak_mb', 0):.0f} MB, the largest alone "
        f"{memory.get('process_mb', 0):.0f} MB, the window {memory.get('window_mb', 0):.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
