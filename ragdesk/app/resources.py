"""Bundled resources located through importlib.resources (works installed, editable and frozen)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from PySide6.QtGui import QIcon


def resource_path(*parts: str) -> Path:
    """A bundled file or folder as a real path (the package is installed as plain files)."""
    return Path(str(resources.files("ragdesk.resources").joinpath(*parts)))


def sample_notes_folder() -> Path:
    return resource_path("sample_notes")


def app_icon() -> QIcon:
    icon = QIcon()
    for size in (16, 32, 48, 64, 128, 256):
        png = resource_path("icons", f"ragdesk-{size}.png")
        if png.is_file():
            icon.addFile(str(png))
    svg = resource_path("icons", "ragdesk.svg")
    if svg.is_file():
        icon.addFile(str(svg))
    return icon
