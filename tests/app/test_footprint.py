"""Nothing leaves the machine unasked (issue 59, item 5): `index` (with the meaning index), `search`,
`prompt` and the window, run as a person runs them with a fresh home folder, write nothing outside
ragdesk's own cache and config folders (onnxruntime wrote a device id and a queued telemetry database
under ~/.cache/Microsoft/DeveloperTools) and connect no Internet socket."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragdesk.core.dense import DenseUnavailable, load_embedder

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "sample_notes"
# Loaded into every process through PYTHONPATH: records each Internet connection a process attempts.
SITECUSTOMIZE = """
import os, socket
_connect = socket.socket.connect
def _record(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        with open(os.environ["RAGDESK_TEST_SOCKETS"], "a") as fh:
            fh.write(repr(address) + "\\n")
    return _connect(self, address)
socket.socket.connect = _record
"""


def _run(home: Path, hook: Path, *args: str) -> str:
    """`ragdesk ARGS` as a person runs it, with `home` as the home folder (no XDG_* set: the defaults)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), PYTHONPATH=f"{hook}{os.pathsep}{ROOT}", TMPDIR=str(home.parent / "tmp"))
    env.update(
        RAGDESK_TEST_SOCKETS=str(home.parent / "sockets"), RAGDESK_MEANING_INDEX="on", QT_QPA_PLATFORM="offscreen"
    )
    done = subprocess.run(
        [sys.executable, "-m", "ragdesk", *args], env=env, timeout=300, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_nothing_is_written_outside_ragdesks_folders_and_no_socket_connects(tmp_path: Path) -> None:
    try:
        load_embedder(None)
    except DenseUnavailable:
        pytest.skip("the meaning model (and onnxruntime with it) is not installed here")
    home, hook = tmp_path / "home", tmp_path / "hook"
    for folder in (home, hook, tmp_path / "tmp"):
        folder.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    _run(home, hook, "index", str(SAMPLES))  # BM25, then the meaning index: onnxruntime loaded
    assert "mode: hybrid" in _run(home, hook, "search", str(SAMPLES), "undo a commit", "--mode", "hybrid")
    _run(home, hook, "prompt", str(SAMPLES), "how do I undo a commit?")
    # the window: the sample notes opened, indexed, the meaning index computed and a hybrid search shown
    assert "hybrid search in" in _run(home, hook, "--smoke-test")
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    ours = (".cache/ragdesk/", ".config/ragdesk/", ".local/share/ragdesk/")
    assert [w for w in written if not w.startswith(ours)] == []
    assert any(w.startswith(".cache/ragdesk/indexes/") and "/dense-" in w for w in written)  # the model ran here
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "sockets").exists()
