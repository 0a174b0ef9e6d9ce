"""How a chat assistant is told to start `ragdesk mcp`: the absolute command of this installation and
each client's configuration around it (Help › Connect an assistant… and docs/assistants.md)."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass


def server_command(folder: str) -> list[str]:
    """The absolute command that serves `folder`: the bundle itself when frozen (PyInstaller), else this
    Python with `-m ragdesk` (a client starts it without the user's shell, PATH or virtual environment)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "mcp", folder]
    return [sys.executable, "-m", "ragdesk", "mcp", folder]


@dataclass(frozen=True)
class ClientSetup:
    """One assistant's configuration: its name, where it goes, and the text to paste there."""

    client: str
    where: str
    text: str


def client_setups(command: list[str]) -> list[ClientSetup]:
    """The configuration of each assistant that runs local MCP servers, for `command`."""
    entry = {"command": command[0], "args": command[1:]}
    servers = json.dumps({"mcpServers": {"ragdesk": entry}}, indent=2, ensure_ascii=False)
    return [
        ClientSetup(
            "Claude Desktop",
            "Settings › Developer › Edit Config (claude_desktop_config.json), then restart Claude",
            servers,
        ),
        ClientSetup(
            "Claude Code",
            "a terminal (adds it for your user)",
            "claude mcp add --scope user ragdesk -- " + shlex.join(command),
        ),
        ClientSetup(
            "VS Code",
            ".vscode/mcp.json in a workspace, or MCP: Open User Configuration",
            json.dumps({"servers": {"ragdesk": {"type": "stdio", **entry}}}, indent=2, ensure_ascii=False),
        ),
        ClientSetup("Cursor", "~/.cursor/mcp.json (or .cursor/mcp.json in a project)", servers),
        ClientSetup("LM Studio", "Program › Install › Edit mcp.json", servers),
    ]
