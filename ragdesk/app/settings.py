"""Persistent user settings on top of QSettings (created on demand, never at import time)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings

from ..core.analyzers import DEFAULT_ANALYZER, AnalyzerConfig
from ..core.bm25 import DEFAULT_B, DEFAULT_K1
from ..core.chunking import ChunkOptions
from ..core.dense import DEFAULT_EMBEDDER, meaning_index_default
from ..core.languages import DEFAULT_QUERY_LANGUAGE
from ..core.loader import DEFAULT_EXTENSIONS, DEFAULT_MAX_BYTES, LoadOptions
from ..core.params import IndexSettings
from ..core.prompt import DEFAULT_INSTRUCTIONS

MAX_RECENT = 8


class AppSettings:
    """Typed access to the settings file; `path` selects an INI file (tests use a temporary one)."""

    def __init__(self, path: str | None = None) -> None:
        if path:
            self.qs = QSettings(path, QSettings.Format.IniFormat)
        else:
            self.qs = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "ragdesk", "ragdesk")

    @property
    def file_name(self) -> str:
        return self.qs.fileName()

    def get(self, key: str, default: Any, kind: type = str) -> Any:
        value = self.qs.value(key, default)
        if value is None:
            return default
        try:
            if kind is bool:
                return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes")
            if kind is list:
                if isinstance(value, str):
                    return [value] if value else []
                return list(value)
            return kind(value)
        except (TypeError, ValueError):
            return default

    def set(self, key: str, value: Any) -> None:
        self.qs.setValue(key, value)

    def sync(self) -> None:
        self.qs.sync()

    # ---- folders -------------------------------------------------------------------
    @property
    def last_folder(self) -> str:
        return self.get("folders/last", "")

    def remember_folder(self, folder: str) -> None:
        recent = [f for f in self.recent_folders if f != folder]
        self.set("folders/recent", [folder, *recent][:MAX_RECENT])
        self.set("folders/last", folder)

    @property
    def recent_folders(self) -> list[str]:
        return [str(f) for f in self.get("folders/recent", [], list)]

    # ---- search --------------------------------------------------------------------
    def analyzer(self) -> AnalyzerConfig:
        try:
            name = self.get("search/analyzer", DEFAULT_ANALYZER)
            return AnalyzerConfig(
                name,
                self.get("search/stem_length", 5, int),
                self.get("search/fold_accents", False, bool),
                query_language=self.get("search/query_language", DEFAULT_QUERY_LANGUAGE),
            )
        except ValueError:
            return AnalyzerConfig()

    def k1(self) -> float:
        return self.get("search/k1", DEFAULT_K1, float)

    def b(self) -> float:
        return self.get("search/b", DEFAULT_B, float)

    # ---- index ---------------------------------------------------------------------
    def index_settings(self) -> IndexSettings:
        exts = tuple(self.get("index/extensions", list(DEFAULT_EXTENSIONS), list)) or DEFAULT_EXTENSIONS
        ignore = tuple(self.get("index/ignore", [], list))
        max_bytes = int(self.get("index/max_mb", DEFAULT_MAX_BYTES / 1024 / 1024, float) * 1024 * 1024)
        try:
            d = ChunkOptions()
            chunk = ChunkOptions(
                self.get("index/chunker", d.chunker),
                self.get("index/chunk_size", d.size, int),
                self.get("index/overlap", d.overlap, int),
                self.get("index/context", d.context, bool),
                self.get("index/min_fill", d.min_fill, float),
            )
        except ValueError:
            chunk = ChunkOptions()
        follow = self.get("index/follow_outside_links", False, bool)
        return IndexSettings(LoadOptions(exts, max_bytes, ignore, follow), chunk)

    def set_index_settings(self, s: IndexSettings) -> None:
        self.set("index/extensions", list(s.load.extensions))
        self.set("index/ignore", list(s.load.ignore))
        self.set("index/max_mb", s.load.max_bytes / 1024 / 1024)
        self.set("index/follow_outside_links", s.load.follow_outside_links)
        self.set("index/chunker", s.chunk.chunker)
        self.set("index/chunk_size", s.chunk.size)
        self.set("index/overlap", s.chunk.overlap)
        self.set("index/context", s.chunk.context)
        self.set("index/min_fill", s.chunk.min_fill)

    # ---- prompt --------------------------------------------------------------------
    @property
    def instructions(self) -> str:
        return self.get("prompt/instructions", DEFAULT_INSTRUCTIONS)

    def instruction_templates(self) -> dict[str, str]:
        """The user's named instruction templates (stored as JSON: names and texts of any kind)."""
        import json

        try:
            data = json.loads(self.get("prompt/templates", "{}"))
        except (TypeError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def set_instruction_templates(self, templates: dict[str, str]) -> None:
        import json

        self.set("prompt/templates", json.dumps(templates, ensure_ascii=False))

    @property
    def embedder(self) -> str:
        """The embedding model of meaning search: "e5" (default), "wordllama" or "model2vec:/local/folder"."""
        return self.get("dense/embedder", DEFAULT_EMBEDDER) or DEFAULT_EMBEDDER

    @property
    def meaning_index(self) -> bool:
        """Whether builds go on to compute the meaning index (embeddings) for auto/hybrid search (on
        unless turned off here, or by RAGDESK_MEANING_INDEX=off as for the CLI)."""
        return self.get("dense/meaning_index", meaning_index_default(), bool)

    @property
    def editor_command(self) -> str:
        return self.get("editor/command", "")
