"""The compiled kernels, chosen in one place: which are present, and a switch to the Python twins.

`_kernel.c` ranks (top k, postings, frequencies) and `_text.c` reads (word counting, markdown
chunking, folder walk); both are optional (built at install when a C compiler is there) and each
function has a Python or numpy twin tested equal to it. Callers read `RANKING` / `TEXT` at call
time, so `python_only()` (tests, benchmarks) switches every caller at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType

try:
    from . import _kernel as _ranking
except ImportError:  # pragma: no cover - depends on the install
    _ranking = None
try:
    from . import _text as _reading
except ImportError:  # pragma: no cover - depends on the install
    _reading = None

RANKING: ModuleType | None = _ranking
TEXT: ModuleType | None = _reading


def ranking_name() -> str:
    """Which top-k implementation ranks chunks here: "compiled" or "numpy" (same results)."""
    return "numpy" if RANKING is None else "compiled"


def text_name() -> str:
    """Which word counting, markdown chunking and folder walk run here: "compiled" or "python" (same results)."""
    return "python" if TEXT is None else "compiled"


def has_walk() -> bool:
    """Whether the compiled folder walk is there (the text kernel is built without it on Windows)."""
    return TEXT is not None and hasattr(TEXT, "walk_tree")


@contextlib.contextmanager
def python_only(ranking: bool = True, text: bool = True) -> Iterator[None]:
    """Run the block on the Python/numpy twins (all, or only the ranking or the text ones)."""
    global RANKING, TEXT
    saved = RANKING, TEXT
    if ranking:
        RANKING = None
    if text:
        TEXT = None
    try:
        yield
    finally:
        RANKING, TEXT = saved
