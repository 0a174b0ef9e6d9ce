"""Shared fixtures: small note folders written per test, and the shared corpora when present."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# `ragdesk index` (in process and in subprocesses) builds BM25 only unless a test asks for the meaning
# index: embedding every fixture with the real model would add minutes (tests/core/test_meaning.py covers it).
os.environ["RAGDESK_MEANING_INDEX"] = "off"

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def write_notes(root: Path, notes: dict[str, str | bytes]) -> Path:
    """Create `root` with the given relative paths and contents."""
    for rel, content in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not available")
    return SHARED_DATA


@pytest.fixture(scope="session")
def shared_chunks() -> list[tuple[str, str, str]]:
    """(path, heading, text) of every chunk of ../shared/data, chunked once for the session: the
    negatives the secret and injection detectors are judged on."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not available")
    from .data.negatives import shared_chunks as chunk_all

    return chunk_all(SHARED_DATA)


@pytest.fixture(params=["compiled", "python"])
def text_kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the compiled text kernel (ragdesk/core/_text.c) and with its Python twins."""
    from ragdesk.core import kernels

    if request.param == "compiled":
        if kernels.TEXT is None:
            pytest.skip("the compiled text kernel is not built here")
    else:
        monkeypatch.setattr(kernels, "TEXT", None)
    return str(request.param)
