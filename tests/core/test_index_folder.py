"""ragdesk only ever removes what it created: an index folder given with --index-dir is checked
before anything is written (not empty text, not a file, not the notes folder or inside it, empty or
already an index), its mode is left alone, and pruning removes only generations it marked."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core import store

from ..conftest import write_notes

NOTES = {"a.md": "# Alpha\n\nrebase and merge\n", "gen-ai/ideas.md": "# Ideas\n\nrebase later\n",
         "gen-z/slang.md": "# Slang\n\nno cap\n"}  # fmt: skip


def index(folder: Path, index_dir: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["index", str(folder), "--index-dir", index_dir])
    return code, capsys.readouterr().err


def test_the_notes_folder_or_a_folder_inside_it_is_refused(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "notes", NOTES)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    for index_dir in (folder, folder / "gen-ai", folder / "idx"):
        code, err = index(folder, str(index_dir), capsys)
        assert code == 2 and f"is inside the notes folder {folder}: choose one outside it" in err
        assert err.count("\n") == 1
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before  # nothing deleted or added


def test_a_folder_of_yours_is_never_written_in_pruned_or_chmodded(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "notes", NOTES)
    shared = write_notes(tmp_path / "shared", {"gen-backup/photo.txt": "x", "gen-1/a.txt": "y", "readme.txt": "z"})
    os.chmod(shared, 0o1777)
    code, err = index(folder, str(shared), capsys)
    assert code == 2 and "is not empty and is not a ragdesk index folder" in err
    assert sorted(p.name for p in shared.iterdir()) == ["gen-1", "gen-backup", "readme.txt"]
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


def test_empty_text_and_a_file_are_refused(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "notes", NOTES)
    here = write_notes(tmp_path / "cwd", {"gen-photos/1.jpg": "jpeg"})
    monkeypatch.chdir(here)
    code, err = index(folder, "", capsys)
    assert code == 2 and "the index folder is empty text (an unset variable?)" in err
    assert sorted(p.name for p in here.iterdir()) == ["gen-photos"]
    assert main(["search", str(folder), "rebase", "--index-dir", ""]) == 2
    assert "empty text" in capsys.readouterr().err
    assert main(["--index-dir", " "]) == 2 and "--index-dir is empty text" in capsys.readouterr().err
    a_file = tmp_path / "idx.txt"
    a_file.write_text("mine", encoding="utf-8")
    code, err = index(folder, str(a_file), capsys)
    assert code == 2 and f"the index folder {a_file} is a file, not a folder" in err and "Errno" not in err
    assert a_file.read_text(encoding="utf-8") == "mine"


def test_an_empty_folder_becomes_an_index_and_only_marked_generations_are_pruned(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "notes", NOTES)
    idx = tmp_path / "idx"
    idx.mkdir(mode=0o755)
    os.chmod(idx, 0o755)
    assert index(folder, str(idx), capsys)[0] == 0
    assert (idx / store.ROOT_MARKER).is_file() and stat.S_IMODE(idx.stat().st_mode) == 0o755
    first = store.current_generation(idx)
    assert first is not None and (first / store.GENERATION_MARKER).is_file()
    write_notes(idx, {"gen-mine/keep.txt": "a folder someone put here"})
    (folder / "b.md").write_text("# Beta\n\nnew\n", encoding="utf-8")
    assert main(["index", str(folder), "--index-dir", str(idx), "--chunk-size", "60"]) == 0  # a new base
    current = store.current_generation(idx)
    assert current is not None and current != first and not first.exists()  # ours: pruned
    assert (idx / "gen-mine" / "keep.txt").read_text(encoding="utf-8") == "a folder someone put here"


def test_an_index_written_before_the_markers_is_still_ours(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "notes", NOTES)
    idx = tmp_path / "idx"
    assert index(folder, str(idx), capsys)[0] == 0
    old = store.current_generation(idx)
    assert old is not None
    (idx / store.ROOT_MARKER).unlink()
    (old / store.GENERATION_MARKER).unlink()
    assert main(["index", str(folder), "--index-dir", str(idx), "--chunk-size", "60"]) == 0  # a new base
    assert not old.exists() and (idx / store.ROOT_MARKER).is_file()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--max-mb", "-1"], "--max-mb must be more than 0 (got -1): every file would be skipped"),
        (["--max-mb", "0"], "--max-mb must be more than 0 (got 0)"),
        (["--extensions", "*"], "--extensions: '*' is not a file ending; give endings such as .md,.txt (no globs)"),
        (["--extensions", "md,*.txt"], "--extensions: '*.txt' is not a file ending"),
        (["--extensions", ""], "--extensions: '' is not a file ending"),
    ],
)
def test_options_that_would_index_nothing_say_why(tmp_path: Path, capsys, extra: list[str], says: str) -> None:  # type: ignore[no-untyped-def]
    folder = write_notes(tmp_path / "notes", NOTES)
    assert main(["index", str(folder), "--index-dir", str(tmp_path / "idx"), *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert not (tmp_path / "idx").exists()


def test_eval_on_a_missing_folder_names_the_folder(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    questions = tmp_path / "q.tsv"
    questions.write_text("rebase\ta.md\n", encoding="utf-8")
    assert main(["eval", str(tmp_path / "nowhere"), str(questions)]) == 2
    assert f"notes folder not found: {tmp_path / 'nowhere'}" in capsys.readouterr().err


def test_a_file_named_like_the_marker_is_not_the_marker(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A folder of the user's with a hand-written RAGDESK-INDEX was adopted: its CURRENT overwritten and
    a generation-like folder holding a web app's manifest.json deleted at the second build (issue 52)."""
    folder = write_notes(tmp_path / "notes", NOTES)
    mine = write_notes(
        tmp_path / "mine",
        {
            store.ROOT_MARKER: "my own notes about ragdesk's index\n",
            "CURRENT": "release 4.2\n",
            "gen-18c0ffee-1/manifest.json": '{"name": "my web app", "icons": []}',
        },
    )
    before = {p.relative_to(mine): p.read_bytes() for p in mine.rglob("*") if p.is_file()}
    for _ in range(2):
        code, err = index(folder, str(mine), capsys)
        assert code == 2 and err.count("\n") == 1
        assert f"{mine} holds a file named RAGDESK-INDEX that ragdesk did not write" in err
    assert {p.relative_to(mine): p.read_bytes() for p in mine.rglob("*") if p.is_file()} == before


def test_only_generations_holding_this_index_id_are_pruned(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A generation-like folder with a manifest.json, or with a marker of another index (copied in from
    elsewhere), is not this index's: kept through builds that prune the index's own old ones."""
    folder = write_notes(tmp_path / "notes", NOTES)
    idx = tmp_path / "idx"
    assert index(folder, str(idx), capsys)[0] == 0
    own = store.index_id(idx)
    first = store.current_generation(idx)
    assert own is not None and len(own) == 32 and first is not None
    assert (first / store.GENERATION_MARKER).read_text() == own
    assert json.loads((first / store.MANIFEST).read_text())["index_id"] == own
    web = write_notes(idx, {"gen-1-2/manifest.json": '{"name": "app", "format": 7}'}) / "gen-1-2"
    other = write_notes(idx, {"gen-2-3/.ragdesk-generation": "0" * 32, "gen-2-3/x.npy": "x"}) / "gen-2-3"
    empty = write_notes(idx, {"gen-3-4/.ragdesk-generation": ""}) / "gen-3-4"
    for size in ("60", "70"):  # two new bases: each prunes what is older and this index's
        (folder / f"n{size}.md").write_text(f"# N{size}\n\nnew\n", encoding="utf-8")
        assert main(["index", str(folder), "--index-dir", str(idx), "--chunk-size", size]) == 0
    assert not first.exists() and web.is_dir() and other.is_dir() and empty.is_dir()
    marked = [g for g in idx.glob("gen-*") if (g / store.GENERATION_MARKER).is_file()]
    assert len([g for g in marked if (g / store.GENERATION_MARKER).read_text() == own]) == 1


def test_an_index_marked_before_ids_is_adopted_and_pruned_as_before(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Markers written by an earlier ragdesk (the root's text without an id, generations' empty): the
    folder stays an index, its generations get the new id, and an old one is pruned."""
    folder = write_notes(tmp_path / "notes", NOTES)
    idx = tmp_path / "idx"
    assert index(folder, str(idx), capsys)[0] == 0
    old = store.current_generation(idx)
    assert old is not None
    (idx / store.ROOT_MARKER).write_text(store.MARKER_TEXT, encoding="utf-8")
    (old / store.GENERATION_MARKER).write_text("", encoding="utf-8")
    assert main(["index", str(folder), "--index-dir", str(idx), "--chunk-size", "60"]) == 0
    own = store.index_id(idx)
    assert own is not None and not old.exists()
