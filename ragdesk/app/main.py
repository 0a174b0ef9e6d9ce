"""Starting the window: QApplication, settings, and which folder to open first."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from .. import __version__
from .resources import app_icon, sample_notes_folder
from .settings import AppSettings
from .stop_signals import close_on_stop_signals
from .window import MainWindow

BROKEN_BINDINGS = {"6.12.0"}  # drops a reference to None on every Python-side index.data() answered with None


def binding_problem() -> str | None:
    """Why this PySide6 cannot run ragdesk here, or None. The dependency range excludes the broken
    release; this catches an environment that has it anyway (a system package, a forced install)."""
    import PySide6

    major, minor = sys.version_info[:2]
    if PySide6.__version__ in BROKEN_BINDINGS and (major, minor) < (3, 12):
        return (
            f"PySide6 {PySide6.__version__} crashes Python {major}.{minor} "
            "after minutes of use (it releases None too often); install another release: "
            "python3 -m pip install 'PySide6-Essentials!=6.12.0'"
        )
    return None


def initial_folder(requested: str | None, settings: AppSettings) -> str:
    """The folder given, else the last one opened, else the bundled sample notes."""
    if requested:
        return requested
    last = settings.last_folder
    if last and Path(last).is_dir():
        return last
    return str(sample_notes_folder())


def smoke_test() -> int:
    """Open the sample notes in a throwaway profile, wait for the index and a query (and, where the
    model is installed, for the meaning index and a hybrid query), and exit.

    Proves a build (or a frozen bundle) starts and works end to end without touching user data.
    """
    import tempfile
    import time

    from ..core.dense import DenseUnavailable, load_embedder
    from ..core.modes import Mode

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory(prefix="ragdesk-smoke-") as tmp:
        window = MainWindow(AppSettings(str(Path(tmp) / "settings.ini")), str(Path(tmp) / "index"))
        meaning, why, engine = window.settings.meaning_index, "the meaning index is off", ""
        if meaning:
            try:
                engine = getattr(load_embedder(window.settings.embedder), "engine", "")  # as the build process will
            except DenseUnavailable as exc:
                meaning, why = False, str(exc)
        outcome: dict[str, object] = {}
        t0 = time.monotonic()

        def on_results(result: object) -> None:
            hits = getattr(result, "hits", [])
            if hits and "hits" not in outcome:
                outcome["hits"] = len(hits)
                outcome["top"] = hits[0].path
            if hits and getattr(result, "mode", "") == Mode.HYBRID:
                outcome["hybrid_s"] = time.monotonic() - t0
            if "hits" in outcome and (not meaning or "hybrid_s" in outcome):
                app.quit()

        window.results_shown.connect(on_results)
        window.build_state_changed.connect(lambda state: state == "failed" and app.quit())
        QTimer.singleShot(120_000, app.quit)
        window.show()
        window.search_bar.field.setText("undo a commit")  # a query, so the hybrid search after the meaning index shows
        window.open_folder(str(sample_notes_folder()))
        app.exec()
        window.close()
    if "hits" not in outcome or (meaning and "hybrid_s" not in outcome):
        what = "hybrid results after the meaning index" if "hits" in outcome else "results"
        print(f"smoke test failed: no {what} from the sample notes", file=sys.stderr)
        return 1
    from ..core.injection import look_alike_count
    from ..core.kernels import ranking_name, text_name

    by = f" ({engine})" if engine else ""
    hybrid = f"meaning index{by} and hybrid search in {outcome['hybrid_s']:.1f} s" if meaning else f"BM25 only ({why})"
    print(
        f"smoke test ok: ragdesk {__version__}, {outcome['hits']} results, top: {outcome['top']}, "
        f"ranking: {ranking_name()}, text: {text_name()}, {hybrid}, look-alike letters: {look_alike_count()}"
    )
    return 0


def run(
    folder: str | None = None,
    index_dir: str | None = None,
    settings_path: str | None = None,
    missing: str | None = None,
) -> int:
    """Open the window on `folder` (else the last one, else the samples); `missing`: a folder asked for
    that does not exist, said in the window (a launcher shows no terminal)."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("ragdesk")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("ragdesk")
    app.setDesktopFileName("io.github.ragdesk.ragdesk")
    app.setWindowIcon(app_icon())
    settings = AppSettings(settings_path)
    window = MainWindow(settings, index_dir)
    restore = close_on_stop_signals(window)  # first: a stop signal while a dialog is open closes it too
    window.show()
    window.open_folder(initial_folder(folder, settings))
    if missing is not None:  # said once the event loop runs, where a stop signal can reach its dialog
        QTimer.singleShot(0, lambda: window.show_missing_folder(missing))
    try:
        return app.exec()
    finally:
        restore()
