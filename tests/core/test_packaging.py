"""`pip install .` (the README's first command) installs every package of ragdesk: pyproject.toml
lists them by hand, so a new package missing there works in the editable install the tests use and
is absent from a real one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_under_ragdesk_is_listed_for_installation() -> None:
    listed = re.search(r"^packages = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert listed, "pyproject.toml's [tool.setuptools] packages line"
    packages = set(re.findall(r'"([\w.]+)"', listed.group(1)))
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "ragdesk").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found <= packages, f"not installed by `pip install .`: {sorted(found - packages)}"
    assert "ragdesk.cli" in found
