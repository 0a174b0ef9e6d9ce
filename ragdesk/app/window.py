"""The main window: lays out the panes and wires their signals to each other and to the session.

Each pane is its own widget (search_bar, results_pane, explanation_pane, prompt_pane, index_status);
the folder, its index and its builds live in `Session`; a query's way through the panes in
`SearchFlow`; the dialogs in `DialogLauncher`; the menus and the shortcut help come from one table in
`actions`; the HTML and lines shown are pure functions in `texts`.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices
from PySide6.QtWidgets import QFileDialog, QFrame, QMainWindow, QMenu, QMessageBox, QScrollArea, QSplitter

from ..core.analyzers import AnalyzerConfig
from ..core.dense import dense_available
from ..core.jobs import EmbeddingProgress, Progress
from ..core.prompt import Prompt
from ..core.reader import IndexReader
from ..core.results import Hit
from . import texts, window_state
from .actions import build_menus
from .dialog_launcher import DialogLauncher
from .evaluate import EvaluateDialog
from .explanation_pane import ExplanationPane
from .index_status import IndexStatus
from .note_opener import open_note
from .prompt_pane import PromptPane
from .resources import app_icon, sample_notes_folder
from .results_pane import ResultsPane
from .search_bar import SearchBar
from .search_flow import Panes, SearchFlow
from .session import ERROR_MS, NORMAL_MS, Session
from .settings import AppSettings
from .status_line import StatusLine

WELCOME_QUERY = "how do I undo a commit"


class MainWindow(QMainWindow):
    """ragdesk's window. Core work runs in the session's engine; this class lays out and wires."""

    library_loaded = Signal(object)  # IndexReader, after the first build/open of a folder or a rebuild
    results_shown = Signal(object)  # SearchResult, after the results view was updated
    prompt_copied = Signal(str)  # the exact text put on the clipboard
    build_state_changed = Signal(str)  # "building", "built", "cancelled", "failed"

    def __init__(self, settings: AppSettings | None = None, index_dir: str | None = None) -> None:
        super().__init__()
        self.settings = settings or AppSettings()
        self.setWindowTitle("ragdesk")
        self.setWindowIcon(app_icon())
        self._build_ui()
        self.status_line = StatusLine(self.statusBar())
        self.dialogs = DialogLauncher(self)
        # The session (and its worker threads) start after the panes, so a window whose panes fail to
        # build leaves no thread; the menus call into the flow, which needs the session's searcher.
        self.session = Session(self.settings, index_dir, lambda: self.flow.build_wants(), self)
        panes = Panes(self.search_bar, self.results_pane, self.explanation_pane, self.prompt_pane)
        self.flow = SearchFlow(panes, self.session, self.settings, self.status_line)
        self.menus = build_menus(self)
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.setObjectName("recentMenu")
        file_menu = self.menus["&File"]
        refresh = next(a for a in file_menu.actions() if a.objectName() == "refreshAction")
        file_menu.insertMenu(refresh, self.recent_menu)
        self._connect_signals()
        window_state.restore(self)
        self._refresh_recent_menu()

    def _build_ui(self) -> None:
        self.search_bar = SearchBar(dense_available(self.settings.embedder), self)
        self.addToolBar(self.search_bar)
        self.results_pane = ResultsPane(self)
        self.explanation_pane = ExplanationPane(self)
        self.prompt_pane = PromptPane(self)
        self.index_status = IndexStatus(self)
        self.statusBar().addPermanentWidget(self.index_status)
        self.why_scroll = why_scroll = QScrollArea(self)  # a small window scrolls the explanation instead
        why_scroll.setObjectName("whyScroll")
        why_scroll.setWidgetResizable(True)
        why_scroll.setFrameShape(QFrame.Shape.NoFrame)
        why_scroll.setWidget(self.explanation_pane)
        self.right_splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.right_splitter.setObjectName("rightSplitter")
        self.right_splitter.addWidget(why_scroll)
        self.right_splitter.addWidget(self.prompt_pane)
        self.main_splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.main_splitter.setObjectName("mainSplitter")
        self.main_splitter.addWidget(self.results_pane)
        self.main_splitter.addWidget(self.right_splitter)
        self.main_splitter.setStretchFactor(0, 3)
        self.main_splitter.setStretchFactor(1, 2)
        self.setCentralWidget(self.main_splitter)

    def _connect_signals(self) -> None:
        bar, results, why, prompt, flow = (
            self.search_bar,
            self.results_pane,
            self.explanation_pane,
            self.prompt_pane,
            self.flow,
        )
        bar.walk_requested.connect(results.walk)
        results.hit_activated.connect(self.open_current_note)
        why.pin_changed.connect(results.model.set_pinned)
        why.compare_shown.connect(self._on_compare_shown)
        prompt.instructions_requested.connect(self.dialogs.edit_instructions)
        prompt.prompt_copied.connect(self._on_prompt_copied)
        flow.results_shown.connect(self.results_shown)
        self.index_status.report_requested.connect(self.dialogs.show_index_report)
        self.index_status.cancel_requested.connect(self.cancel_build)
        session = self.session
        session.build_started.connect(self._on_build_started)
        session.build_progressed.connect(self._on_build_progressed)
        session.build_stopped.connect(self.index_status.show_idle)
        session.build_ended.connect(self._on_build_ended)
        session.meaning_indexed.connect(self._on_meaning_indexed)
        session.index_changed.connect(self._on_index_changed)
        session.status.connect(self.status_line.show)

    # ---- what the session and panes hold, under the names scripts and tests know ---------------------
    @property
    def folder(self) -> str | None:
        return self.session.folder

    @property
    def library(self) -> IndexReader | None:
        return self.session.library

    @property
    def engine(self):  # type: ignore[no-untyped-def]  # workers.Engine
        return self.session.engine

    @property
    def watcher(self):  # type: ignore[no-untyped-def]  # watcher.FolderWatcher
        return self.session.watcher

    @property
    def index_dir(self) -> str | None:
        return self.session.index_dir

    @property
    def pinned(self) -> Hit | None:
        return self.explanation_pane.pinned

    @property
    def prompt(self) -> Prompt | None:
        return self.prompt_pane.prompt

    def current_hit(self) -> Hit | None:
        return self.results_pane.current_hit()

    def current_analyzer(self) -> AnalyzerConfig:
        return self.flow.analyzer()

    def save_state(self) -> None:
        window_state.save(self)

    # ---- folders and building -----------------------------------------------------------------
    def open_folder(self, folder: str) -> None:
        """Open a notes folder: its stored index is shown at once (if any), then refreshed."""
        path = Path(folder)
        if not path.is_dir():
            self._show_error(f"The folder {folder} does not exist or cannot be read.")
            return
        self.flow.forget()
        self.setWindowTitle(f"ragdesk — {path.name}")
        field = self.search_bar.field
        if path.resolve() == sample_notes_folder().resolve() and not field.text():
            self.results_pane.welcome(texts.welcome_text(WELCOME_QUERY), WELCOME_QUERY)
            field.setText(WELCOME_QUERY)
        self.flow.update_prompt()
        self.session.open(folder)
        self._refresh_recent_menu()

    def refresh(self, verify: bool = False) -> None:
        """Re-read new and changed notes in the build process; the current index stays searchable."""
        self.session.refresh(verify)

    def cancel_build(self) -> None:
        self.session.cancel_build()

    def _on_build_started(self) -> None:
        self.index_status.show_building()
        self.status_line.show("Indexing…")
        self.build_state_changed.emit("building")

    def _on_build_progressed(self, msg: Progress | EmbeddingProgress) -> None:
        self.status_line.progress(self.index_status.show_progress(msg))  # the bar beside always moves

    def _on_build_ended(self, state: str, line: str) -> None:
        if state == "failed":
            self._show_error(line)
        self.build_state_changed.emit(state)

    def _on_meaning_indexed(self, _msg: object) -> None:
        self.index_status.show_idle()
        self.run_search()  # auto mode turns hybrid

    def _on_index_changed(self, library: IndexReader) -> None:
        moved = self.explanation_pane.follow_pin(library)
        if moved:
            self.status_line.show(moved, NORMAL_MS)
        self.index_status.show_index(library)
        self.library_loaded.emit(library)
        self.run_search()

    # ---- actions ------------------------------------------------------------------------------
    def run_search(self) -> None:
        self.flow.run()

    def toggle_pin(self) -> None:
        """Ctrl+P: pin the selected result; unpin when the selected one is the pinned one."""
        self.explanation_pane.toggle_pin()

    def _on_compare_shown(self) -> None:
        """The compare table appeared below the fold: scroll it into view once it is laid out."""
        compare_view = self.explanation_pane.compare_view
        for widget in (compare_view.parentWidget(), self.explanation_pane):
            if widget is not None and widget.layout() is not None:
                widget.layout().activate()  # its place is known before the scroll area is asked
        self.why_scroll.ensureWidgetVisible(compare_view, 0, 0)

    def copy_prompt(self) -> None:
        self.prompt_pane.copy()

    def _on_prompt_copied(self, text: str) -> None:
        copied = texts.copied_text(self.prompt, self.prompt_pane.secrets_allowed)
        self.status_line.say(copied, NORMAL_MS - 1000)  # progress was replacing it within a second
        self.prompt_copied.emit(text)

    def _note_path(self) -> tuple[Path, int, int] | None:
        """The selected result's file, line and page (1 for notes that have no pages)."""
        hit = self.current_hit()
        if hit is None or self.folder is None:
            return None
        return Path(self.folder) / hit.path, hit.start_line, hit.page or 1

    def open_current_note(self) -> None:
        target = self._note_path()
        if target is not None:
            open_note(self, *target)

    def reveal_current_note(self) -> None:
        target = self._note_path()
        if target is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(target[0].parent)))

    def focus_search(self) -> None:
        self.search_bar.focus()

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open notes folder", self.folder or str(Path.home()))
        if folder:
            self.open_folder(folder)

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        for folder in self.settings.recent_folders:
            act = self.recent_menu.addAction(folder)
            act.triggered.connect(lambda _=False, f=folder: self.open_folder(f))
        self.recent_menu.setEnabled(bool(self.settings.recent_folders))

    def index_root(self) -> Path:
        return self.session.index_root()

    def clear_index_cache(self) -> str:
        return self.session.clear_cache()

    def show_missing_folder(self, folder: str) -> None:
        """`ragdesk /nope` from a launcher: the window opens on the last folder and says what was wrong."""
        self._show_error(f"The folder {folder} does not exist or cannot be read; showing {self.folder} instead.")

    def _show_error(self, message: str) -> None:
        self.status_line.show(message, ERROR_MS)
        if not os.environ.get("RAGDESK_NO_DIALOGS"):
            QMessageBox.warning(self, "ragdesk", message)

    def focus_next_pane(self, backwards: bool = False) -> None:
        """F6 / Shift+F6: search field, results, explanation, prompt controls, prompt text, and round."""
        why, prompt = self.explanation_pane, self.prompt_pane
        panes = [self.search_bar.field, self.results_pane.view, why.breakdown_view, prompt.k_spin, prompt.preview]
        current = next((i for i, w in enumerate(panes) if w.hasFocus() or w.isAncestorOf(self.focusWidget())), -1)
        panes[(current + (-1 if backwards else 1)) % len(panes)].setFocus(Qt.FocusReason.TabFocusReason)

    def focus_previous_pane(self) -> None:
        self.focus_next_pane(backwards=True)

    def closeEvent(self, event: QCloseEvent) -> None:
        for dialog in self.findChildren(EvaluateDialog):
            dialog.close()  # stops its evaluation
        window_state.save(self)
        self.session.shutdown()
        super().closeEvent(event)
