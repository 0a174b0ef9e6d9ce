"""The window's dialogs, opened with what each needs and applied when they are accepted: settings,
prompt instructions, the index report, evaluation, why-not, connecting an assistant, about and the
shortcut help."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QMessageBox

from ..core.params import IndexSettings, SearchParams
from .actions import shortcuts_html
from .assistant_dialog import ConnectAssistantDialog
from .dialogs import AboutDialog, InstructionsDialog, SettingsDialog
from .evaluate import EvaluateDialog
from .report_dialog import IndexReportDialog
from .session import NORMAL_MS
from .whynot_dialog import WhyNotDialog

if TYPE_CHECKING:
    from .window import MainWindow


class DialogLauncher(QObject):
    """Opens the window's dialogs (menu actions name these methods as `dialogs.<method>`)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window

    def edit_settings(self) -> None:
        s = self.window.settings
        dialog = SettingsDialog(s.index_settings(), s.editor_command, s.embedder, self.window, s.meaning_index)
        if dialog.exec() and dialog.result_settings is not None:
            s.set("editor/command", dialog.editor.text().strip())
            s.set("dense/embedder", dialog.embedder.text().strip())
            s.set("dense/meaning_index", dialog.meaning_index.isChecked())
            if not self.apply_index_settings(dialog.result_settings) and s.meaning_index:
                self.window.session.compute_meaning()  # turned on (or still on): what it lacks is computed

    def apply_index_settings(self, new: IndexSettings) -> bool:
        """Store new index settings; rebuild when they changed (returns whether they did)."""
        settings = self.window.settings
        changed = new != settings.index_settings()
        settings.set_index_settings(new)
        if changed:
            self.window.refresh()
        return changed

    def edit_instructions(self) -> None:
        settings = self.window.settings
        dialog = InstructionsDialog(settings.instructions, settings.instruction_templates(), self.window)
        if dialog.exec():
            self.apply_instructions(dialog)

    def apply_instructions(self, dialog: InstructionsDialog) -> None:
        """Keep what the instructions dialog says: the text in use and the named templates."""
        self.window.settings.set("prompt/instructions", dialog.editor.toPlainText())
        self.window.settings.set_instruction_templates(dialog.user_templates())
        self.window.flow.update_prompt()

    def show_index_report(self) -> IndexReportDialog | None:
        """What was indexed: every file with its status, chunks, tokens, pages, and why for the rest."""
        library = self.window.library
        if library is None:
            return None
        dialog = IndexReportDialog(library.report(), self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_evaluation(self) -> EvaluateDialog | None:
        """Open the Evaluate dialog on the current index (non-modal, so searching goes on)."""
        window = self.window
        if window.library is None:
            window.status_line.show("Open a folder first: evaluation runs on its index.", NORMAL_MS - 1000)
            return None
        bar = window.search_bar
        dialog = EvaluateDialog(window.library, SearchParams(window.flow.analyzer(), bar.k1, bar.b), window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_why_not(self) -> WhyNotDialog | None:
        """Ctrl+J: pick the note you expected for the current query; the search worker explains it."""
        window = self.window
        request, query = window.flow.last_request, window.search_bar.query
        if window.library is None or request is None or not query.strip():
            window.status_line.show("Search first, then ask why a note you expected is not higher.", NORMAL_MS - 1000)
            return None
        dialog = WhyNotDialog(window.library.note_paths, query, window)
        engine = window.engine
        searcher = engine.searcher
        dialog.note_chosen.connect(lambda path: engine.explain_note(request, path))
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

    def show_connect_assistant(self) -> ConnectAssistantDialog:
        """Help › Connect an assistant…: the configuration that serves the open folder (`ragdesk mcp`)."""
        window = self.window
        dialog = ConnectAssistantDialog(window.folder or "NOTES-FOLDER", window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_about(self) -> None:
        session = self.window.session
        settings_file = self.window.settings.file_name
        AboutDialog(str(session.index_root()), settings_file, session.clear_cache, self.window).exec()

    def show_shortcuts(self) -> None:
        QMessageBox.information(self.window, "Keyboard shortcuts", shortcuts_html())
