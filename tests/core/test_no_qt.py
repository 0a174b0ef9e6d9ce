"""ragdesk.core must import and work without Qt (and must not import it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CODE = r"""
import sys, importlib, pkgutil
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6'):
            raise ImportError('Qt is blocked for this test')
sys.meta_path.insert(0, Block())
import ragdesk.core
for m in pkgutil.iter_modules(ragdesk.core.__path__):
    importlib.import_module('ragdesk.core.' + m.name)
from ragdesk.core.build import build_index
lib, _ = build_index(sys.argv[1], sys.argv[2], workers=1)
assert lib.search('hello').hits
assert not any(k.startswith('PySide6') for k in sys.modules)
print('ok')
"""


def test_core_without_qt(tmp_path: Path) -> None:
    notes = tmp_path / "n"
    notes.mkdir()
    (notes / "a.md").write_text("hello world")
    out = subprocess.run([sys.executable, "-c", CODE, str(notes), str(tmp_path / "i")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_no_qt_imports_in_core_sources() -> None:
    core = Path(__file__).resolve().parents[2] / "ragdesk" / "core"
    for path in core.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "PySide6" not in text and "shiboken6" not in text, path


def test_no_unit_test_imports_a_benchmark_script() -> None:
    """Benchmarks may use the tests' helpers (tests/core/pdfs.py, crashes.py), never the other way:
    a benchmark script is free to change its output and options."""
    import ast

    tests = Path(__file__).resolve().parents[1]
    importers = []
    for path in [*tests.glob("core/*.py"), *tests.glob("app/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any("benchmarks" in n.split(".") for n in names):
                importers.append(path.name)
    assert importers == []


def test_the_searcher_reads_the_index_only_through_what_it_declares() -> None:
    """core/search.py's Searcher reads its index only through members SearchableIndex declares (no
    hidden contract), and reaches nothing else of the index's object."""
    import ast

    source = (Path(__file__).resolve().parents[2] / "ragdesk" / "core" / "search.py").read_text(encoding="utf-8")
    classes = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}
    proto = classes["SearchableIndex"]
    declared = {n.name for n in proto.body if isinstance(n, ast.FunctionDef)}
    declared |= {n.target.id for n in proto.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    read = {
        n.attr
        for n in ast.walk(classes["Searcher"])
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Attribute)
        and n.value.attr == "index"
        and isinstance(n.value.value, ast.Name)
        and n.value.value.id == "self"
    }
    assert read and read - declared == set()
