"""The prompt pane: secrets redacted in what is copied unless allowed for one copy; XML format."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog

from ragdesk.app.window import MainWindow
from ragdesk.core.errors import NotIndexed

from ..conftest import write_notes
from .conftest import open_window, search


def test_secret_is_redacted_on_the_clipboard_unless_allowed_once(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "n", {"deploy.md": "# Deploy\n\nTo deploy, use the key AKIAIOSFODNN7EXAMPLE.\n"})
    w = open_window(make_window, qtbot, folder)
    search(qtbot, w, "deploy key")
    assert w.prompt_pane.allow_secrets_check.isVisible() and not w.prompt_pane.allow_secrets_check.isChecked()
    assert "1 secret(s) redacted ([1] line 3: AWS access key)" in w.prompt_pane.info.text()
    marks = w.prompt_pane.preview.extraSelections()
    assert [m.cursor.selectedText() for m in marks] == ["[REDACTED AWS access key]"]
    with qtbot.waitSignal(w.prompt_copied) as copied:
        qtbot.mouseClick(w.prompt_pane.copy_button, Qt.MouseButton.LeftButton)
    clip = QGuiApplication.clipboard().text()
    assert copied.args[0] == clip and "AKIAIOSFODNN7EXAMPLE" not in clip
    assert "> To deploy, use the key [REDACTED AWS access key]." in clip
    assert w.statusBar().currentMessage().endswith(", 1 secret(s) redacted")
    w.prompt_pane.allow_secrets_check.setChecked(True)  # this copy only
    assert "AKIAIOSFODNN7EXAMPLE" in w.prompt_pane.preview.toPlainText()
    with qtbot.waitSignal(w.prompt_copied):
        qtbot.mouseClick(w.prompt_pane.copy_button, Qt.MouseButton.LeftButton)
    assert "AKIAIOSFODNN7EXAMPLE" in QGuiApplication.clipboard().text()
    pane = w.prompt_pane
    assert not pane.allow_secrets_check.isChecked() and "AKIAIOSFODNN7EXAMPLE" not in pane.preview.toPlainText()


def test_xml_format_in_the_preview(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    window.prompt_pane.format_combo.setCurrentIndex(window.prompt_pane.format_combo.findData("xml"))
    text = window.prompt_pane.preview.toPlainText()
    assert '<excerpt n="1" source="git.md › Git › Rebase" lines="1-5">' in text and "</excerpts>" in text
    assert window.prompt is not None and window.prompt.format == "xml"


def test_why_not_picker_explains_the_expected_note(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt as QtKeys

    search(qtbot, window, "rebase history")
    dialog = window.dialogs.show_why_not()
    assert dialog is not None and dialog.proxy.rowCount() == 3  # the indexed notes (bin.md was skipped)
    qtbot.keyClicks(dialog.filter_edit, "indu")
    assert dialog.proxy.rowCount() == 1
    with qtbot.waitSignal(window.engine.searcher.why_not_found, timeout=10000) as found:
        qtbot.keyClick(dialog.filter_edit, QtKeys.Key.Key_Return)
    why = found.args[0]
    assert why.path == "cs/indukce.md" and why.rank is None and why.score == 0
    lib = window.library
    assert [r.to_json() for r in why.terms] == [
        r.to_json() for r in lib.searcher.explain("rebase history", why.chunk_id, window.current_analyzer())
    ]
    qtbot.waitUntil(lambda: dialog.table.rowCount() == len(why.terms), timeout=5000)
    assert dialog.table.item(0, 0).text() == why.terms[0].label
    assert "No query word is in it, so keywords do not rank it." in dialog.summary.text()
    assert "rebas (not in this chunk)" in dialog.summary.text()
    dialog.close()


def test_why_not_for_a_skipped_note_says_why_it_is_not_indexed(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    search(qtbot, window, "rebase history")
    dialog = window.dialogs.show_why_not()
    assert dialog is not None
    with qtbot.waitSignal(window.engine.searcher.why_not_failed, timeout=10000) as failed:
        dialog.note_chosen.emit("bin.md")  # skipped: the picker does not offer it, a stale list could
    assert isinstance(failed.args[0], NotIndexed)  # the exception itself, as every worker failure carries
    qtbot.waitUntil(lambda: dialog.summary.text() == str(failed.args[0]), timeout=5000)
    assert dialog.summary.text().startswith("bin.md is not indexed (it was skipped: ")
    assert dialog.table.rowCount() == 0
    dialog.close()


def test_index_report_dialog_lists_filters_and_exports(window: MainWindow, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import csv

    qtbot.mouseClick(window.index_status.index_button, Qt.MouseButton.LeftButton)
    dialog = window.findChild(QDialog, "indexReportDialog")
    assert dialog is not None and dialog.isVisible()
    assert dialog.totals_label.text().startswith("3 indexed, 0 decoded with a fallback, 1 skipped · ")
    assert [r["path"] for r in dialog.visible_rows()] == ["bin.md", "clip.md", "cs/indukce.md", "git.md"]
    dialog.status_combo.setCurrentIndex(dialog.status_combo.findData("skipped"))
    (skipped,) = dialog.visible_rows()
    assert skipped["path"] == "bin.md" and skipped["reason"].startswith("binary file")
    dialog.status_combo.setCurrentIndex(0)
    qtbot.keyClicks(dialog.filter_edit, "indukce")
    assert [r["path"] for r in dialog.visible_rows()] == ["cs/indukce.md"]
    out = tmp_path / "report.csv"
    assert dialog.export_csv(out) == 1
    (row,) = list(csv.DictReader(out.open(encoding="utf-8")))
    assert row["path"] == "cs/indukce.md" and row["status"] == "indexed" and int(row["chunks"]) == 1
    dialog.close()


def test_fold_accents_finds_a_query_typed_without_diacritics(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.search_bar.analyzer_combo.setCurrentText("stems")
    result = search(qtbot, window, "dukazova")
    assert result.hits == [] and result.reason == "none of the query terms occur in the notes"
    with qtbot.waitSignal(window.results_shown, timeout=20000) as shown_:
        window.search_bar.fold_accents_check.setChecked(True)
    assert shown_.args[0].hits[0].path == "cs/indukce.md"
    assert window.current_analyzer().fold_accents
    window.save_state()
    assert window.settings.analyzer().fold_accents


def test_instruction_templates_are_saved_and_used(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    from ragdesk.app.dialogs import InstructionsDialog

    search(qtbot, window, "rebase history")
    dialog = InstructionsDialog(window.settings.instructions, window.settings.instruction_templates(), window)
    dialog.editor.setPlainText("Answer in Czech, citing [n].")
    dialog.name_edit.setText("Czech")
    dialog.save_template()
    window.dialogs.apply_instructions(dialog)
    assert window.settings.instruction_templates() == {"Czech": "Answer in Czech, citing [n]."}
    assert window.prompt_pane.preview.toPlainText().startswith("Answer in Czech, citing [n].\n\nExcerpts:")
    again = InstructionsDialog(window.settings.instructions, window.settings.instruction_templates(), window)
    again.template_combo.setCurrentIndex(again.template_combo.findData("Default"))
    again._on_template_activated(again.template_combo.findData("Default"))
    assert again.editor.toPlainText().startswith("Answer the question using only")
    assert again.template_combo.findData("Czech") > 0


def test_overlapping_results_of_a_note_are_pasted_once(make_window, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Two neighbouring chunks of one note, both ticked: one excerpt in the clipboard, and the line
    under the preview says why there are fewer excerpts than ticked results."""
    words = " ".join(f"w{i:03d}" for i in range(200))
    w = open_window(make_window, qtbot, write_notes(tmp_path / "n", {"long.md": words}))
    result = search(qtbot, w, "w050 w070")
    n = len(result.hits)
    assert n >= 2 and {h.path for h in result.hits} == {"long.md"}  # its neighbouring chunks
    assert w.prompt_pane.info.text().startswith("1 excerpt, ")
    assert f" · {n - 1} result(s) joined to the overlapping excerpt of their note" in w.prompt_pane.info.text()
    assert w.prompt_pane.preview.toPlainText().count("w071") == 1  # in the overlap of two chunks: pasted once


def test_result_cards_and_the_explanation_show_secrets_masked_until_revealed(  # type: ignore[no-untyped-def]
    make_window, tmp_path: Path, qtbot
) -> None:
    """The window shows a chunk's secrets as ••• (its title line and file name too) until the person
    clicks "Reveal secrets" for that chunk; the prompt stays redacted either way."""
    token = "ghp_" + "Zq8" * 12
    folder = write_notes(
        tmp_path / "n",
        {
            f"keys/{token}.md": "# Deploy\n\nThe deploy bot's token is in this file's name.\n",
            "db.md": "# Deploy database\n\nDeploy with DB_PASSWORD=Tr0ub4dor&3xyz and restart.\n",
            "plain.md": "# Deploy notes\n\nNothing secret about how we deploy.\n",
        },
    )
    w = open_window(make_window, qtbot, folder)
    search(qtbot, w, "deploy")
    model, view = w.results_pane.model, w.results_pane.view
    rows = {model.hit_at(r).path: r for r in range(model.rowCount())}  # type: ignore[union-attr]
    shown = {path: model.snippet_html(row) or "" for path, row in rows.items()}
    assert "Tr0ub4dor" not in shown["db.md"] and "DB_PASSWORD=" + "•" * 14 in shown["db.md"]
    assert token not in shown[f"keys/{token}.md"] and "•" * 40 in shown[f"keys/{token}.md"]
    assert model.title_text(rows["db.md"]).startswith("••• db.md") and "•" not in shown["plain.md"]
    view.selectRow(rows["db.md"])
    reveal = w.explanation_pane.reveal_button
    assert reveal.isVisibleTo(w) and reveal.objectName() == "revealSecretsButton"
    assert "Tr0ub4dor" not in w.explanation_pane.chunk_view.toPlainText()
    qtbot.mouseClick(reveal, Qt.MouseButton.LeftButton)
    assert "DB_PASSWORD=Tr0ub4dor&3xyz" in w.explanation_pane.chunk_view.toPlainText()
    assert "Tr0ub4dor" in (model.snippet_html(rows["db.md"]) or "") and not reveal.isVisibleTo(w)
    assert token not in (model.snippet_html(rows[f"keys/{token}.md"]) or "")  # that chunk only
    assert "Tr0ub4dor" not in w.prompt_pane.preview.toPlainText() and token not in w.prompt_pane.preview.toPlainText()
    view.selectRow(rows[f"keys/{token}.md"])
    assert token not in w.explanation_pane.chunk_title.text() and reveal.isVisibleTo(w)
    qtbot.mouseClick(w.explanation_pane.copy_explanation_button, Qt.MouseButton.LeftButton)
    assert token not in QGuiApplication.clipboard().text() and "[REDACTED GitHub token]" in (
        QGuiApplication.clipboard().text()
    )
