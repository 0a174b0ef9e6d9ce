"""Starting ragdesk the way a user (or a package's check) does."""

from __future__ import annotations

import os
import subprocess
import sys


def test_smoke_test_runs_the_real_window_offscreen() -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(
        [sys.executable, "-m", "ragdesk", "--smoke-test"], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("smoke test ok: ragdesk 0.1.0, ")
    assert "top: en/git-undo.md" in out.stdout


def test_help_and_version_need_no_display() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    for args in (["--version"], ["--help"], ["search", "--help"]):
        out = subprocess.run([sys.executable, "-m", "ragdesk", *args], capture_output=True, text=True, env=env)
        assert out.returncode == 0, out.stderr
    assert "index" in out.stdout or "QUERY" in out.stdout.upper()
