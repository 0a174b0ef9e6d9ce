"""Every menu action and shortcut in one table, which builds the menus and the F1 shortcut help alike
(the help used to repeat the menus by hand and could drift from them)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from operator import attrgetter

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from ..core.query import SYNTAX

Key = QKeySequence.StandardKey | str | None


@dataclass(frozen=True)
class ActionSpec:
    menu: str
    text: str
    slot: str  # the window's method the action calls, by its name or dotted path ("dialogs.show_about")
    shortcut: Key
    name: str  # the action's objectName (a contract: scripts find actions by it)
    help: str  # the line in the shortcut help; "" leaves it out


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "&File",
        "&Open Folder…",
        "choose_folder",
        QKeySequence.StandardKey.Open,
        "openFolderAction",
        "Open a notes folder",
    ),
    ActionSpec("&File", "Re&fresh Index", "refresh", "F5", "refreshAction", "Refresh the index"),
    ActionSpec("&File", "&Settings…", "dialogs.edit_settings", "Ctrl+,", "settingsAction", "Settings"),
    ActionSpec("&File", "&Quit", "close", QKeySequence.StandardKey.Quit, "quitAction", ""),
    ActionSpec("&Edit", "&Find", "focus_search", "Ctrl+L", "focusSearchAction", "Focus the search field"),
    ActionSpec(
        "&Edit",
        "Next &Pane",
        "focus_next_pane",
        "F6",
        "nextPaneAction",
        "Next pane (search, results, explanation, prompt settings, prompt); Tab moves on too",
    ),
    ActionSpec("&Edit", "Previous Pane", "focus_previous_pane", "Shift+F6", "previousPaneAction", "Previous pane"),
    ActionSpec("&Edit", "Copy &Prompt", "copy_prompt", "Ctrl+Shift+C", "copyPromptAction", "Copy the prompt"),
    ActionSpec(
        "&Edit",
        "Copy &Explanation",
        "flow.copy_explanation",
        "Ctrl+Shift+E",
        "copyExplanationAction",
        "Copy the selected result's explanation",
    ),
    ActionSpec(
        "&Edit",
        "P&in Result for Compare",
        "toggle_pin",
        "Ctrl+P",
        "pinAction",
        "Pin / unpin the selected result for comparison",
    ),
    ActionSpec(
        "&Edit",
        "&Why Not This Note?…",
        "dialogs.show_why_not",
        "Ctrl+J",
        "whyNotAction",
        "Why not this note? Pick the note you expected: its rank and every term beside the top hit's",
    ),
    ActionSpec("&Edit", "Prompt &Instructions…", "dialogs.edit_instructions", None, "instructionsAction", ""),
    ActionSpec(
        "&Tools",
        "&Evaluate on Questions…",
        "dialogs.show_evaluation",
        "Ctrl+Shift+V",
        "evaluateAction",
        "Evaluate retrieval on a questions file",
    ),
    ActionSpec(
        "&Tools",
        "What Was &Indexed…",
        "dialogs.show_index_report",
        "Ctrl+I",
        "indexReportAction",
        "What was indexed: every file with its status (also: click the file count in the status bar)",
    ),
    ActionSpec(
        "&Note",
        "&Open in Editor",
        "open_current_note",
        "Ctrl+Return",
        "openNoteAction",
        "Open the selected note in your editor, at the chunk",
    ),
    ActionSpec(
        "&Note",
        "&Reveal in Folder",
        "reveal_current_note",
        "Ctrl+Shift+R",
        "revealAction",
        "Reveal the selected note in its folder",
    ),
    ActionSpec("&Help", "&Keyboard Shortcuts", "dialogs.show_shortcuts", "F1", "shortcutsAction", "This list"),
    ActionSpec("&Help", "&Connect an Assistant…", "dialogs.show_connect_assistant", None, "connectAssistantAction", ""),
    ActionSpec("&Help", "&About ragdesk", "dialogs.show_about", None, "aboutAction", ""),
)

# Keys that act inside a widget, not through a menu.
WIDGET_KEYS: tuple[tuple[str, str], ...] = (
    ("Up / Down", "Walk the results (also from the search field)"),
    ("Enter", "Search now (in the search field); open the note at the chunk (in the results)"),
    ("Space", "Tick or untick the selected result's Use (include it in the prompt)"),
)


def key_text(shortcut: Key) -> str:
    """How a shortcut reads on this platform ("Ctrl+O")."""
    return QKeySequence(shortcut).toString(QKeySequence.SequenceFormat.NativeText) if shortcut is not None else ""


def build_menus(window: QMainWindow) -> dict[str, QMenu]:
    """Add ACTIONS to the window's menu bar, each calling the window's method its `slot` names."""
    menus: dict[str, QMenu] = {}
    for spec in ACTIONS:
        menu = menus.get(spec.menu)
        if menu is None:
            menu = menus[spec.menu] = window.menuBar().addMenu(spec.menu)
        act = QAction(spec.text, window)
        act.setObjectName(spec.name)
        if spec.shortcut is not None:
            act.setShortcut(QKeySequence(spec.shortcut))
        slot = attrgetter(spec.slot)(window)
        act.triggered.connect(lambda _checked=False, slot=slot: slot())
        menu.addAction(act)
    return menus


def shortcuts_html() -> str:
    """The F1 help: the widget keys, then every action with a shortcut and a help line."""
    rows = list(WIDGET_KEYS) + [(key_text(a.shortcut), a.help) for a in ACTIONS if a.shortcut and a.help]
    return f"<table>{_rows(rows)}</table><h4>In the search field</h4><table>{_rows(SYNTAX)}</table>"


def _rows(rows: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    return "".join(f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
