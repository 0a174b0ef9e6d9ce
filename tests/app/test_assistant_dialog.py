"""Help › Connect an assistant…: each client's configuration holds this installation's absolute command
for the open folder, Copy puts it on the clipboard, and a client configured with it lists the tools."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QDialog

from ragdesk.app.window import MainWindow


def test_each_client_gets_the_absolute_command_and_copy_copies_it(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    action = next(a for a in window.findChildren(QAction) if a.objectName() == "connectAssistantAction")
    assert action.text() == "&Connect an Assistant…"
    action.trigger()
    dialog = window.findChild(QDialog, "connectAssistantDialog")
    assert dialog is not None and dialog.isVisible()
    folder = window.folder
    assert folder is not None
    texts = {}
    for i in range(dialog.client_combo.count()):
        dialog.client_combo.setCurrentIndex(i)
        texts[dialog.client_combo.currentText()] = dialog.config.toPlainText()
        assert dialog.where.text().startswith("Where: ")
    assert list(texts) == ["Claude Desktop", "Claude Code", "VS Code", "Cursor", "LM Studio"]
    desktop = json.loads(texts["Claude Desktop"])["mcpServers"]["ragdesk"]
    assert desktop == {"command": sys.executable, "args": ["-m", "ragdesk", "mcp", folder]}
    assert Path(desktop["command"]).is_absolute()
    assert json.loads(texts["VS Code"])["servers"]["ragdesk"] == {"type": "stdio", **desktop}
    assert json.loads(texts["Cursor"]) == json.loads(texts["LM Studio"]) == json.loads(texts["Claude Desktop"])
    assert shlex.split(texts["Claude Code"]) == ["claude", "mcp", "add", "--scope", "user", "ragdesk", "--",
                                                 sys.executable, "-m", "ragdesk", "mcp", folder]  # fmt: skip
    dialog.client_combo.setCurrentIndex(2)
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == texts["VS Code"]
    assert dialog.copied.text() == "Copied the VS Code configuration."


def test_a_client_configured_as_shown_lists_the_five_tools(window: MainWindow, tmp_path: Path) -> None:
    """The Claude Desktop configuration, started as a client starts it (no shell, its own environment)."""
    anyio = pytest.importorskip("anyio")
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    dialog = window.dialogs.show_connect_assistant()
    entry = json.loads(dialog.config.toPlainText())["mcpServers"]["ragdesk"]
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "RAGDESK_MEANING_INDEX": "off"}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    names: list[str] = []

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names.extend(t.name for t in (await session.list_tools()).tools)
            result = await session.call_tool("search_notes", {"query": "rebase", "k": 1})
            names.append(result.content[0].text.split("\n")[2])

    anyio.run(main)
    assert names[:5] == ["search_notes", "read_note", "list_notes", "build_prompt", "why_not"]
    assert names[5] == "[1] (git.md › Git › Rebase, lines 1–5)"
