"""The main window: lays out the panes and wires their signals to each other and to the session.

Each pane is its own widget (search_bar, results_pane, explanation_pane, prompt_pane, index_status);
the folder, its index and its builds live in `Session`; the HTML and lines shown are pure functions
in `texts`; the menus and the shortcut help come from one table in `actions`.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QFileDialog, QFrame, QMainWindow, QMenu, QMessageBox, QScrollArea, QSplitter

from ..core.analyzers import AnalyzerConfig
from ..core.dense import dense_available, embedder_name
from ..core.explain import explanation_text
from ..core.jobs import EmbeddingProgress, Progress
from ..core.languages import dropped_text
from ..core.modes import Mode
from ..core.params import IndexSettings, SearchParams
from ..core.paths import shown
from ..core.prompt import Prompt
from ..core.reader import IndexReader
from ..core.results import Hit
from ..core.secrets import Scrubber
from . import texts
from .actions import build_menus, shortcuts_html
from .child_process import describe
from .dialogs import AboutDialog, InstructionsDialog, SettingsDialog
from .evaluate import EvaluateDialog
from .explanation_pane import ExplanationPane
from .index_status import IndexStatus
from .note_opener import open_note
from .prompt_pane import PromptPane
from .report_dialog import IndexReportDialog
from .resources import app_icon, sample_notes_folder
from .results_pane import RESULTS_K, ResultsPane
from .search_bar import SearchBar
from .search_worker import SearchOutcome, SearchRequest
from .session import ERROR_MS, LONG_MS, NORMAL_MS, SHORT_MS, Session
from .settings import AppSettings
from .whynot_dialog import WhyNotDialog

WELCOME_QUERY = "how do I undo a commit"
NOTE_PREFIX = "Note: "  # status lines about the current query, cleared by the next one
# The selected result's ranks under each analyzer are asked for once the selection has rested this
# long: not while new results are laid out and drawn (the search thread's Python would make the
# window's thread wait for the GIL), nor for every row passed while holding Down.
RANKS_DELAY_MS = 60
# A new result set's explanation and prompt wait this long: past the list's own paint (a posted event),
# so the two layouts are two events of the loop, not one (each 10-15 ms; together they stalled 25-40).
EXPLAIN_DELAY_MS = 5
SAID_HOLD_MS = 3000  # how long a line answering the user (Copied prompt: …) stays before progress lines


class MainWindow(QMainWindow):
    """ragdesk's window. Core work runs in the session's engine; this class lays out and wires."""

    library_loaded = Signal(object)  # IndexReader, after the first build/open of a folder or a rebuild
    results_shown = Signal(object)  # SearchResult, after the results view was updated
    prompt_copied = Signal(str)  # the exact text put on the clipboard
    build_state_changed = Signal(str)  # "building", "built", "cancelled", "failed"

    def __init__(self, settings: AppSettings | None = None, index_dir: str | None = None) -> None:
        super().__init__()
        self.settings = settings or AppSettings()
        self.last_request: SearchRequest | None = None
        self._explain_later = False  # a new result set is being laid out: its explanation waits
        self._ran: tuple[str, str] | None = None  # the last search's (chosen, ran) modes: a change is said
        self.results_k = RESULTS_K  # how many results the list shows ("Show more" adds a page)
        self.setWindowTitle("ragdesk")
        self.setWindowIcon(app_icon())
        self._build_ui()
        self._ranks_timer = QTimer(self)
        self._ranks_timer.setSingleShot(True)
        self._ranks_timer.setInterval(RANKS_DELAY_MS)
        self._explain_timer = QTimer(self)  # a new result set's explanation and prompt, after its list
        self._explain_timer.setSingleShot(True)
        self._explain_timer.setInterval(EXPLAIN_DELAY_MS)
        self._drawn_outcome: SearchOutcome | None = None
        self._said_timer = QTimer(self)  # while it runs, progress lines do not cover what was just said
        self._said_timer.setSingleShot(True)
        self._said_timer.setInterval(SAID_HOLD_MS)
        self.menus = build_menus(self)
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.setObjectName("recentMenu")
        file_menu = self.menus["&File"]
        refresh = next(a for a in file_menu.actions() if a.objectName() == "refreshAction")
        file_menu.insertMenu(refresh, self.recent_menu)
        # The session (and its worker threads) start last, so a window that fails to build leaves no thread.
        self.session = Session(self.settings, index_dir, self._build_wants, self)
        self._connect_signals()
        self._restore_state()

    # ---- construction -------------------------------------------------------------------------
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
        self.why_splitter = self.explanation_pane.splitter
        self.setCentralWidget(self.main_splitter)
        # The panes' widgets under the names scripts and tests know them by.
        bar, results, why, prompt = self.search_bar, self.results_pane, self.explanation_pane, self.prompt_pane
        self.search_field, self.analyzer_combo, self.mode_combo = bar.field, bar.analyzer_combo, bar.mode_combo
        self.fold_accents_check, self.k1_spin, self.b_spin = bar.fold_accents_check, bar.k1_spin, bar.b_spin
        self.results_model, self.results_view, self.empty_label = results.model, results.view, results.empty_label
        self.match_count_label, self.show_more_button = results.match_count_label, results.show_more_button
        self.group_check = results.group_check
        self.chunk_title, self.ranks_label, self.fusion_label = why.chunk_title, why.ranks_label, why.fusion_label
        self.chunk_view, self.stats_label, self.formula_label = why.chunk_view, why.stats_label, why.formula_label
        self.breakdown_model, self.breakdown_view = why.breakdown_model, why.breakdown_view
        self.pin_button, self.copy_explanation_button = why.pin_button, why.copy_explanation_button
        self.compare_view, self.compare_label = why.compare_view, why.compare_label
        self.topk_radio, self.k_spin, self.budget_radio = prompt.topk_radio, prompt.k_spin, prompt.budget_radio
        self.budget_spin, self.order_combo = prompt.budget_spin, prompt.order_combo
        self.format_combo = prompt.format_combo
        self.prompt_preview, self.prompt_info = prompt.preview, prompt.info
        self.copy_prompt_button, self.allow_secrets_check = prompt.copy_button, prompt.allow_secrets_check
        self.index_button, self.progress = self.index_status.index_button, self.index_status.progress
        self.cancel_button = self.index_status.cancel_button

    def _connect_signals(self) -> None:
        bar, results, why, prompt = self.search_bar, self.results_pane, self.explanation_pane, self.prompt_pane
        bar.search_requested.connect(self.run_search)
        bar.query_edited.connect(self._on_query_edited)
        bar.mode_changed.connect(self._on_mode_changed)
        bar.walk_requested.connect(results.walk)
        results.hit_selected.connect(self._on_hit_selected)
        results.hit_activated.connect(self.open_current_note)
        results.more_requested.connect(self.show_more)
        results.grouping_changed.connect(self._update_prompt)
        results.model.inclusion_changed.connect(self._update_prompt)
        why.copy_explanation_button.clicked.connect(self.copy_explanation)
        why.secrets_reveal_requested.connect(self._on_secrets_reveal_requested)
        why.pin_changed.connect(results.model.set_pinned)
        why.compare_shown.connect(self._on_compare_shown)
        prompt.settings_changed.connect(self._update_prompt)
        prompt.instructions_requested.connect(self.edit_instructions)
        prompt.prompt_copied.connect(self._on_prompt_copied)
        self.index_status.report_requested.connect(self.show_index_report)
        self.index_status.cancel_requested.connect(self.cancel_build)
        session = self.session
        session.build_started.connect(self._on_build_started)
        session.build_progressed.connect(self._on_build_progressed)
        session.build_stopped.connect(self.index_status.show_idle)
        session.build_ended.connect(self._on_build_ended)
        session.meaning_indexed.connect(self._on_meaning_indexed)
        session.index_changed.connect(self._on_index_changed)
        session.status.connect(self.statusBar().showMessage)
        searcher = session.engine.searcher
        searcher.search_finished.connect(self._on_search_finished)
        self._ranks_timer.timeout.connect(self._on_ranks_timer_timeout)
        self._explain_timer.timeout.connect(self._on_explain_timer_timeout)
        searcher.ranks_found.connect(self._on_ranks_found)
        searcher.ranks_failed.connect(self._on_ranks_failed)
        searcher.search_failed.connect(self._on_search_failed)

    # ---- what the session owns, under the names scripts and tests know ----------------------------
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

    def _build_wants(self) -> tuple[AnalyzerConfig, bool]:
        """What a build must prepare: the analyzer searched with, and the meaning index (unless turned
        off in the settings and not asked for by the dense or hybrid mode)."""
        return self.current_analyzer(), self.settings.meaning_index or self.search_bar.mode in (Mode.DENSE, Mode.HYBRID)

    def _restore_state(self) -> None:
        s = self.settings
        self.search_bar.restore(s)
        self.prompt_pane.restore(s)
        self.results_pane.restore(s)
        geometry = s.get("window/geometry", None, QByteArray)
        if geometry is None or not self.restoreGeometry(geometry):
            screen = QGuiApplication.primaryScreen()
            area = screen.availableGeometry() if screen is not None else None
            width = min(1400, int(area.width() * 0.9)) if area is not None else 1280  # suits the screen
            height = min(900, int(area.height() * 0.9)) if area is not None else 800
            self.resize(width, height)
            self.main_splitter.setSizes([width * 11 // 20, width * 9 // 20])  # the results win space
            self.right_splitter.setSizes([520, 280])
            self.why_splitter.setSizes([150, 370])
        for key, splitter in self._splitters():
            state = s.get(key, None, QByteArray)
            if state is not None:
                splitter.restoreState(state)
        self._refresh_recent_menu()

    def _splitters(self) -> tuple[tuple[str, QSplitter], ...]:
        return (
            ("window/main_splitter", self.main_splitter),
            ("window/right_splitter", self.right_splitter),
            ("window/why_splitter", self.why_splitter),
        )

    def save_state(self) -> None:
        s = self.settings
        self.search_bar.save(s)
        self.prompt_pane.save(s)
        self.results_pane.save(s)
        s.set("window/geometry", self.saveGeometry())
        for key, splitter in self._splitters():
            s.set(key, splitter.saveState())
        s.sync()

    # ---- folders and building -----------------------------------------------------------------
    def open_folder(self, folder: str) -> None:
        """Open a notes folder: its stored index is shown at once (if any), then refreshed."""
        path = Path(folder)
        if not path.is_dir():
            self._show_error(f"The folder {folder} does not exist or cannot be read.")
            return
        self.explanation_pane.set_pinned(None)  # chunk ids, pins and unticks belong to the folder that was open
        self._ran = None
        self.results_pane.clear()
        self.explanation_pane.show_hit(None)
        self.setWindowTitle(f"ragdesk — {path.name}")
        if self.statusBar().currentMessage().startswith(NOTE_PREFIX):
            self.statusBar().clearMessage()
        if path.resolve() == sample_notes_folder().resolve() and not self.search_field.text():
            self.results_pane.welcome(
                "Welcome! These are ragdesk's sample notes. Try a question such as "
                f"“{WELCOME_QUERY}”. Select a result to see why it ranked (right), "
                "and press Copy prompt (Ctrl+Shift+C) to paste a ready prompt into your chat assistant.",
                WELCOME_QUERY,
            )
            self.search_field.setText(WELCOME_QUERY)
        self._update_prompt()
        self.session.open(folder)
        self._refresh_recent_menu()

    def refresh(self, verify: bool = False) -> None:
        """Re-read new and changed notes in the build process; the current index stays searchable."""
        self.session.refresh(verify)

    def cancel_build(self) -> None:
        self.session.cancel_build()

    def _on_build_started(self) -> None:
        self.index_status.show_building()
        self.statusBar().showMessage("Indexing…")
        self.build_state_changed.emit("building")

    def _on_build_progressed(self, msg: Progress | EmbeddingProgress) -> None:
        line = self.index_status.show_progress(msg)  # the bar beside always moves
        if line and not self._said_timer.isActive():
            self.statusBar().showMessage(line)

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
            self.statusBar().showMessage(moved, NORMAL_MS)
        self.index_status.show_index(library)
        self.library_loaded.emit(library)
        self.run_search()

    # ---- searching ----------------------------------------------------------------------------
    def current_analyzer(self) -> AnalyzerConfig:
        return self.search_bar.analyzer(self.settings.analyzer())

    def _on_query_edited(self, _text: str) -> None:
        self.results_k = RESULTS_K  # a new query starts with one page of results

    def show_more(self) -> None:
        """The next page of results (the list holds the first RESULTS_K; this adds as many)."""
        self.results_k += RESULTS_K
        self.run_search()

    def _on_mode_changed(self, mode: str) -> None:
        library = self.library
        wanted = mode in (Mode.DENSE, Mode.HYBRID) and not self.session.embedding
        if wanted and library is not None and not library.has_dense(embedder_name(self.settings.embedder)):
            self.refresh()  # the build process embeds the chunks (said after its "Indexing…")
            self.statusBar().showMessage(
                "Computing the meaning index (once per folder, newest notes first); until it is complete, "
                f"{mode} search covers the chunks embedded so far"
            )
        self.run_search()

    def run_search(self) -> None:
        self.search_bar.settle()
        if self.library is None:
            return
        pinned = self.pinned
        bar = self.search_bar
        params = SearchParams(self.current_analyzer(), bar.k1, bar.b, self.results_k, fusion=bar.fusion, group=False)
        pinned_id = pinned.chunk_id if pinned is not None else None
        request = SearchRequest(
            self.engine.next_serial(), bar.query, params, pinned_id, bar.mode, self.settings.embedder
        )
        self.last_request = request
        self.engine.search(request)

    def _empty_text(self, outcome: SearchOutcome) -> str:
        library = self.library
        if library is not None and not library.note_paths:
            extensions = library.settings.load.extensions
            skipped = len(library.skipped)
            return texts.no_notes_text(extensions, outcome.other_files, skipped)
        return texts.no_results_text(outcome.result)

    def _on_search_finished(self, outcome: SearchOutcome) -> None:
        if self.last_request is None or outcome.request.serial != self.last_request.serial:
            return  # overtaken by a newer query
        if outcome.library is not self.library:
            return
        result = outcome.result
        if self.pinned is not None and outcome.pinned_rows:
            self.explanation_pane.update_pinned(outcome.pinned_score, outcome.pinned_rows)
        # The list is drawn first; the selected result's explanation and the prompt follow in the next
        # event, so the event loop never waits for both layouts at once (#38: 42-72 ms stalls).
        self._explain_later = True
        try:
            self.results_pane.show_outcome(outcome, "" if result.hits else self._empty_text(outcome))
        finally:
            self._explain_later = False
        self._drawn_outcome = outcome
        self._explain_timer.start()
        self.search_bar.show_mode_reason(result.mode, result.mode_reason, outcome.meaning)
        ran = (outcome.request.mode, result.mode)
        if self._ran is not None and self._ran[0] == ran[0] == "auto" and self._ran[1] != ran[1]:
            self.statusBar().showMessage(  # under the user's eyes: scores jump from 0.13 to 32
                f"Auto now searches by {result.mode}: {result.mode_reason}. Scores of different modes "
                "are on different scales.",
                NORMAL_MS,
            )
            self._said_timer.start()  # not covered by the build's progress at once
        self._ran = ran
        if result.reason and result.hits:
            self.statusBar().showMessage(NOTE_PREFIX + result.reason, NORMAL_MS - 1000)
        elif self.statusBar().currentMessage().startswith(NOTE_PREFIX):
            self.statusBar().clearMessage()  # the previous query's note is not about this one

    def _on_explain_timer_timeout(self) -> None:
        """The second half of showing a result: the selected hit's explanation and the prompt."""
        outcome = self._drawn_outcome
        if outcome is None or self.last_request is None or outcome.request.serial != self.last_request.serial:
            return  # a newer result is on its way
        self._on_hit_selected(self.current_hit())
        self._update_prompt()
        self.results_shown.emit(outcome.result)

    def _on_search_failed(self, error: Exception) -> None:
        if not self.session.recover(error):
            self.statusBar().showMessage(f"Search failed: {describe(error)}", LONG_MS)

    # ---- selection and explanation ---------------------------------------------------------------
    def current_hit(self) -> Hit | None:
        return self.results_pane.current_hit()

    def _on_hit_selected(self, hit: Hit | None) -> None:
        if self._explain_later:
            return  # a new result set: explained once its list is drawn (_on_explain_timer_timeout)
        model = self.results_model
        if hit is None:
            self._ranks_timer.stop()
            self.explanation_pane.show_hit(None)
            return
        self.explanation_pane.show_hit(
            hit,
            model.result,
            shown=model.shown(hit) if model.is_masked(hit) else None,
            spans=model.highlights.get(hit.chunk_id, []),
            findings=model.findings.get(hit.chunk_id, []),  # found once, when the results arrived
            stale=hit.chunk_id in model.stale,
            context=self.library.chunk_context_parts(hit.chunk_id) if self.library is not None else [],
        )
        self.explanation_pane.ranks_pending()
        self._ranks_timer.start()

    def _on_secrets_reveal_requested(self, chunk_id: int) -> None:
        self.results_model.reveal(chunk_id)
        self._on_hit_selected(self.current_hit())

    def _on_ranks_timer_timeout(self) -> None:
        hit = self.current_hit()
        if hit is not None and self.last_request is not None:
            self.engine.find_ranks(self.last_request, hit.chunk_id)

    def _about_selection(self, serial: int, chunk_id: int) -> bool:
        """Whether a worker's answer is about the selected result of the current query."""
        hit = self.current_hit()
        request = self.last_request
        return hit is not None and hit.chunk_id == chunk_id and request is not None and serial == request.serial

    def _on_ranks_failed(self, serial: int, chunk_id: int, error: Exception) -> None:
        if self._about_selection(serial, chunk_id):
            self.explanation_pane.show_ranks_unavailable(str(error))

    def _on_ranks_found(self, serial: int, chunk_id: int, ranks: dict[str, int | None]) -> None:
        if self._about_selection(serial, chunk_id):
            self.explanation_pane.show_ranks(ranks)

    def _on_compare_shown(self) -> None:
        """The compare table appeared below the fold: scroll it into view once it is laid out."""
        for widget in (self.compare_view.parentWidget(), self.explanation_pane):
            if widget is not None and widget.layout() is not None:
                widget.layout().activate()  # its place is known before the scroll area is asked
        self.why_scroll.ensureWidgetVisible(self.compare_view, 0, 0)

    def toggle_pin(self) -> None:
        """Ctrl+P: pin the selected result; unpin when the selected one is the pinned one."""
        self.explanation_pane.toggle_pin()

    def copy_explanation(self) -> None:
        hit = self.current_hit()
        if hit is None:
            return
        header = f"Why “{self.search_field.text()}” ranked {hit.shown_path} › {shown(hit.heading)} #{hit.rank}:"
        result = self.results_model.result
        if result is not None and result.left_out.dropped:
            header += "\n" + dropped_text(result.left_out)
        scrub = Scrubber(self.search_field.text())  # the clipboard leaves the machine: no secret on it
        text = explanation_text(hit.explain, hit.score, header)
        QGuiApplication.clipboard().setText("\n".join(scrub.text(line) for line in text.split("\n")))
        self.statusBar().showMessage("Copied explanation", SHORT_MS)
        self._said_timer.start()

    # ---- prompt ------------------------------------------------------------------------------
    def _update_prompt(self, *_args: object) -> None:
        model = self.results_model
        prompt = self.prompt_pane.show_prompt(
            self.search_field.text(),
            model.included_hits(),
            model.findings,
            self.settings.instructions,
            model.ticked,
            model.unticked_count(),
        )
        model.set_in_prompt(prompt.ranks())

    def copy_prompt(self) -> None:
        self.prompt_pane.copy()

    def _on_prompt_copied(self, text: str) -> None:
        self.statusBar().showMessage(texts.copied_text(self.prompt, self.prompt_pane.secrets_allowed), NORMAL_MS - 1000)
        self._said_timer.start()  # progress was replacing "Copied prompt: …" within a second
        self.prompt_copied.emit(text)

    def edit_instructions(self) -> None:
        dialog = InstructionsDialog(self.settings.instructions, self.settings.instruction_templates(), self)
        if dialog.exec():
            self.apply_instructions(dialog)

    def apply_instructions(self, dialog: InstructionsDialog) -> None:
        """Keep what the instructions dialog says: the text in use and the named templates."""
        self.settings.set("prompt/instructions", dialog.editor.toPlainText())
        self.settings.set_instruction_templates(dialog.user_templates())
        self._update_prompt()

    # ---- notes --------------------------------------------------------------------------------
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

    # ---- dialogs and misc ---------------------------------------------------------------------
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

    def show_index_report(self) -> IndexReportDialog | None:
        """What was indexed: every file with its status, chunks, tokens, pages, and why for the rest."""
        if self.library is None:
            return None
        dialog = IndexReportDialog(self.library.report(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def edit_settings(self) -> None:
        s = self.settings
        dialog = SettingsDialog(s.index_settings(), s.editor_command, s.embedder, self, s.meaning_index)
        if dialog.exec() and dialog.result_settings is not None:
            s.set("editor/command", dialog.editor.text().strip())
            s.set("dense/embedder", dialog.embedder.text().strip())
            wanted = dialog.meaning_index.isChecked() and not s.meaning_index
            s.set("dense/meaning_index", dialog.meaning_index.isChecked())
            changed = self.apply_index_settings(dialog.result_settings)
            if wanted and not changed:
                self.refresh()  # the build process computes what the meaning index lacks

    def apply_index_settings(self, new: IndexSettings) -> bool:
        """Store new index settings; rebuild when they changed (returns whether they did)."""
        changed = new != self.settings.index_settings()
        self.settings.set_index_settings(new)
        if changed:
            self.refresh()
        return changed

    def show_evaluation(self) -> EvaluateDialog | None:
        """Open the Evaluate dialog on the current index (non-modal, so searching goes on)."""
        if self.library is None:
            self.statusBar().showMessage("Open a folder first: evaluation runs on its index.", NORMAL_MS - 1000)
            return None
        bar = self.search_bar
        dialog = EvaluateDialog(self.library, SearchParams(self.current_analyzer(), bar.k1, bar.b), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_shortcuts(self) -> None:
        QMessageBox.information(self, "Keyboard shortcuts", shortcuts_html())

    def show_why_not(self) -> WhyNotDialog | None:
        """Ctrl+J: pick the note you expected for the current query; the search worker explains it."""
        if self.library is None or self.last_request is None or not self.search_field.text().strip():
            self.statusBar().showMessage(
                "Search first, then ask why a note you expected is not higher.", NORMAL_MS - 1000
            )
            return None
        dialog = WhyNotDialog(self.library.note_paths, self.search_field.text(), self)
        request = self.last_request
        searcher = self.engine.searcher
        dialog.note_chosen.connect(lambda path: self.engine.explain_note(request, path))
        searcher.why_not_found.connect(dialog.show_answer)
        searcher.why_not_failed.connect(dialog.show_error)

        def disconnect(_result: int) -> None:
            searcher.why_not_found.disconnect(dialog.show_answer)
            searcher.why_not_failed.disconnect(dialog.show_error)

        dialog.finished.connect(disconnect)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        dialog.filter_edit.setFocus()
        return dialog

    def index_root(self) -> Path:
        return self.session.index_root()

    def clear_index_cache(self) -> str:
        return self.session.clear_cache()

    def show_about(self) -> None:
        AboutDialog(str(self.index_root()), self.settings.file_name, self.clear_index_cache, self).exec()

    def show_missing_folder(self, folder: str) -> None:
        """`ragdesk /nope` from a launcher: the window opens on the last folder and says what was wrong."""
        self._show_error(f"The folder {folder} does not exist or cannot be read; showing {self.folder} instead.")

    def _show_error(self, message: str) -> None:
        self.statusBar().showMessage(message, ERROR_MS)
        if not os.environ.get("RAGDESK_NO_DIALOGS"):
            QMessageBox.warning(self, "ragdesk", message)

    def focus_next_pane(self, backwards: bool = False) -> None:
        """F6 / Shift+F6: search field, results, explanation, prompt controls, prompt text, and round."""
        panes = [self.search_field, self.results_view, self.breakdown_view, self.k_spin, self.prompt_preview]
        current = next((i for i, w in enumerate(panes) if w.hasFocus() or w.isAncestorOf(self.focusWidget())), -1)
        panes[(current + (-1 if backwards else 1)) % len(panes)].setFocus(Qt.FocusReason.TabFocusReason)

    def focus_previous_pane(self) -> None:
        self.focus_next_pane(backwards=True)

    def closeEvent(self, event: QCloseEvent) -> None:
        for dialog in self.findChildren(EvaluateDialog):
            dialog.close()  # stops its evaluation
        self.save_state()
        self.session.shutdown()
        super().closeEvent(event)
