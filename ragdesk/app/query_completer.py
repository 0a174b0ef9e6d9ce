"""Completion of `path:` and `tag:` in the search field, from the folder names and tags of the index
(docs/query.md): the word under the cursor is completed, the rest of the query stays as typed."""

from __future__ import annotations

import re

from PySide6.QtCore import QObject, QStringListModel, Qt, Signal
from PySide6.QtWidgets import QCompleter, QLineEdit

_TOKEN = re.compile(r"(-?)(path|tag):(\S*)$")  # the filter being typed, up to the cursor


class QueryCompleter(QObject):
    """Offers the index's folder names after `path:` and its tags after `tag:`; asks for them
    (values_wanted) the first time either is typed, since tags are read from every note."""

    values_wanted = Signal()

    def __init__(self, field: QLineEdit) -> None:
        super().__init__(field)
        self.field = field
        self.values: dict[str, list[str]] | None = None
        self.model = QStringListModel(self)
        self.completer = QCompleter(self.model, self)
        self.completer.setObjectName("queryCompleter")
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.completer.setWidget(field)
        self.completer.activated[str].connect(self._on_completer_activated)
        field.textEdited.connect(self._on_field_text_edited)

    def set_values(self, values: dict[str, list[str]]) -> None:
        self.values = values
        self._on_field_text_edited(self.field.text())

    def forget(self) -> None:
        """Another folder: its folders and tags are asked for again when needed."""
        self.values = None

    def _token(self) -> re.Match[str] | None:
        return _TOKEN.search(self.field.text()[: self.field.cursorPosition()])

    def _on_field_text_edited(self, _text: str) -> None:
        m = self._token()
        if m is None:
            self.completer.popup().hide()
            return
        if self.values is None:
            self.values_wanted.emit()
            return
        field = m.group(2)
        self.model.setStringList([f"{field}:{v}" for v in self.values.get(field, [])])
        self.completer.setCompletionPrefix(f"{field}:{m.group(3)}")
        if self.completer.completionCount():
            self.completer.complete()
        else:
            self.completer.popup().hide()

    def _on_completer_activated(self, chosen: str) -> None:
        m = self._token()
        if m is None:
            return
        text, cursor = self.field.text(), self.field.cursorPosition()
        start = cursor - len(m.group(0)) + len(m.group(1))  # keep a leading "-"
        rest = text[cursor:]
        new = text[:start] + chosen + (" " if not rest.startswith(" ") else "")
        self.field.setText(new + rest)
        self.field.setCursorPosition(len(new))
