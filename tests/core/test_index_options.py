"""The options an index was built with have one home (its manifest's settings): every command starts
from them and changes only the options it is given, says in one line when those differ, and
`--no-refresh` never builds. After `index --max-mb 20`, a `search --no-refresh` rebuilt with the
defaults, dropped the large note and answered that no query term occurs (issue 52)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core import store
from ragdesk.core.params import IndexSettings, setting_changes
from ragdesk.core.reader import IndexReader

from ..conftest import write_notes

NOTES = {"a.md": "# A\n\nsmall note about apples\n", "big.md": "# Big\n\n" + "zebra stripes " * 700}  # ~10 KB


@pytest.fixture
def built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    folder = write_notes(tmp_path / "n", NOTES)
    idx = tmp_path / "idx"
    assert main(["index", str(folder), "--index-dir", str(idx), "--max-mb", "0.05", "--chunk-size", "60"]) == 0
    capsys.readouterr()
    return folder, idx


def _search(folder: Path, idx: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[list[str], str]:
    assert main(["search", str(folder), "zebra", "--index-dir", str(idx), "--json", *extra]) == 0
    out = capsys.readouterr()
    return [h["path"] for h in json.loads(out.out)["hits"]], out.err


@pytest.mark.parametrize("refresh", [[], ["--no-refresh"]])
def test_a_command_without_index_options_uses_the_index_as_built(built, capsys, refresh: list[str]) -> None:  # type: ignore[no-untyped-def]
    folder, idx = built
    before = store.current_generation(idx)
    hits, err = _search(folder, idx, capsys, *refresh)
    assert set(hits) == {"big.md"} and err == ""
    assert store.current_generation(idx) == before  # nothing rebuilt
    settings = IndexReader.open(folder, idx).settings
    assert (settings.load.max_bytes, settings.chunk.size) == (int(0.05 * 1024 * 1024), 60)
    assert main(["index", str(folder), "--index-dir", str(idx)]) == 0  # a plain index keeps them too
    assert capsys.readouterr().out.startswith("already current: 2 files")


def test_options_that_differ_are_said_and_no_refresh_never_builds(built, capsys) -> None:  # type: ignore[no-untyped-def]
    folder, idx = built
    before = store.current_generation(idx)
    hits, err = _search(folder, idx, capsys, "--no-refresh", "--max-mb", "0.001")
    assert set(hits) == {"big.md"} and store.current_generation(idx) == before
    assert err == (
        "ragdesk: the index was built with other options (size limit 51.2 KB → 1.02 KB): "
        "--no-refresh searches it as it is\n"
    )
    hits, err = _search(folder, idx, capsys, "--max-mb", "0.001")  # asked, and refreshing: rebuilt as asked
    assert hits == [] and err.startswith("ragdesk: the index was built with other options (size limit 51.2 KB")
    assert err.endswith(": rebuilding it with those given\n")


def test_no_refresh_without_an_index_builds_nothing(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "n", NOTES)
    assert main(["search", str(folder), "zebra", "--index-dir", str(tmp_path / "idx"), "--no-refresh"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "ragdesk: error: no index to use as it is (none is stored): --no-refresh never builds; run `ragdesk index`\n"
    )
    assert not (tmp_path / "idx").exists()


@pytest.mark.parametrize("value", ["inf", "1e300", "nan"])
def test_a_size_limit_beyond_any_file_is_one_line(tmp_path: Path, capsys, value: str) -> None:  # type: ignore[no-untyped-def]
    """`--max-mb inf` ended in OverflowError's traceback."""
    folder = write_notes(tmp_path / "n", NOTES)
    assert main(["index", str(folder), "--index-dir", str(tmp_path / "idx"), "--max-mb", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ragdesk: error: --max-mb must be ")


def test_setting_changes_name_each_option_that_differs() -> None:
    from dataclasses import replace

    base = IndexSettings()
    other = IndexSettings(replace(base.load, extensions=(".md",)), replace(base.chunk, size=60, context=False))
    assert setting_changes(base, other) == [
        "extensions .md,.markdown,.txt,.rst,.org,.pdf → .md",
        "chunk size 80 → 60",
        "context True → False",
    ]
    assert setting_changes(other, other) == []
