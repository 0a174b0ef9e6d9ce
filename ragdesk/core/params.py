"""The parameter sets of building and searching, each validated once, with their defaults.

The CLI's argparse defaults, the window's Settings defaults and the core's keyword defaults all
read these, so a default is spelled in one place.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .analyzers import AnalyzerConfig
from .bm25 import DEFAULT_B, DEFAULT_K1, check_params
from .chunking import ChunkOptions
from .fusion import DEFAULT_FUSION, FUSIONS
from .loader import LoadOptions
from .modes import MODES, Mode

DEFAULT_K = 10  # results of a search
SORTS = ("relevance", "newest")  # a contract (--sort, the window's Sort box): newest = the notes' dates
DEFAULT_PROMPT_K = 4  # excerpts in a prompt: 4 x 80 words beat 16 x 20 and 1 x 320 in a 320-word budget


@dataclass(frozen=True)
class IndexSettings:
    """Everything that decides which chunks exist (analyzers are chosen per query)."""

    load: LoadOptions = field(default_factory=LoadOptions)
    chunk: ChunkOptions = field(default_factory=ChunkOptions)

    def to_json(self) -> dict[str, Any]:
        return {"load": asdict(self.load), "chunk": asdict(self.chunk)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IndexSettings:
        load = dict(data.get("load", {}))
        for key in ("extensions", "ignore"):
            if key in load:
                load[key] = tuple(load[key])
        return cls(LoadOptions(**load), ChunkOptions(**data.get("chunk", {})))


def _shown(key: str, value: Any) -> str:
    if key == "max_bytes":
        for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
            if value >= size:
                return f"{value / size:.3g} {unit}"
        return f"{value} bytes"
    if isinstance(value, tuple):
        return ",".join(value) or "none"
    return str(value)


_LABELS = {"max_bytes": "size limit", "size": "chunk size"}  # the others: their field's name, spaced


def setting_changes(built: IndexSettings, asked: IndexSettings) -> list[str]:
    """Each option on which `asked` differs from the settings an index was `built` with, as "label
    built → asked" (what a command or the window says before it rebuilds, or when it will not)."""
    changes = []
    for part in ("load", "chunk"):
        old, new = asdict(getattr(built, part)), asdict(getattr(asked, part))
        for key in old:
            if old[key] != new[key]:
                label = _LABELS.get(key, key.replace("_", " "))
                changes.append(f"{label} {_shown(key, old[key])} → {_shown(key, new[key])}")
    return changes


@dataclass(frozen=True)
class SearchParams:
    """How one query is ranked: analyzer, BM25's k1 and b, how many results, and the mode
    (bm25, dense or hybrid; the last two need an embedder at search time)."""

    analyzer: AnalyzerConfig = field(default_factory=AnalyzerConfig)
    k1: float = DEFAULT_K1
    b: float = DEFAULT_B
    k: int = DEFAULT_K
    mode: Mode = Mode.BM25  # a string naming one is taken too ("hybrid")
    fusion: str = DEFAULT_FUSION  # dense and hybrid: see core.fusion.FUSIONS ("plain": RRF c = 60, ungrouped)
    group: bool | None = None  # dense and hybrid: group by note or not (None: as the fusion does)
    sort: str = "relevance"  # or "newest": the matches ordered by their notes' dates (see SORTS)

    def __post_init__(self) -> None:
        check_params(self.k1, self.b)
        if self.sort not in SORTS:
            raise ValueError(f"unknown sort {self.sort!r}; choose one of {', '.join(SORTS)}")
        if self.fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {self.fusion!r}; choose one of {', '.join(FUSIONS)}")
        if self.k < 1:
            raise ValueError(f"the number of results must be at least 1 (got {self.k})")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose one of {', '.join(MODES)}")
        object.__setattr__(self, "mode", Mode(self.mode))
