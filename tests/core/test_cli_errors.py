"""Clear errors instead of tracebacks: full and read-only storage, and odd input on the command line."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pytest

from ragdesk.cli import main
from ragdesk.core import build as build_mod
from ragdesk.core import fileio, store
from ragdesk.core.reader import IndexReader

from ..conftest import write_notes

NOTES = {f"n{i}.md": f"# Note {i}\n\nnote {i} about apples and pears\n" for i in range(12)}


@pytest.fixture
def built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    folder = write_notes(tmp_path / "notes", NOTES)
    index = tmp_path / "idx"
    assert main(["index", str(folder), "--index-dir", str(index)]) == 0
    capsys.readouterr()
    return folder, index


def _fail_writes(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(fileio, "save_array", refuse)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_full_or_read_only_storage(
    built: tuple[Path, Path], code: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, index = built
    before = store.current_generation(index)
    (folder / "n3.md").write_text("# Note 3\n\nnote 3 about plums\n", encoding="utf-8")
    _fail_writes(monkeypatch, code)
    # index: one line naming the folder and the cause, exit 2, the previous index intact
    assert main(["index", str(folder), "--index-dir", str(index)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot write the index in {index}: {os.strerror(code)}" in err
    assert store.current_generation(index) == before
    assert [p.name for p in index.glob("gen-*")] == [before.name]  # nothing half-written left
    IndexReader.open(folder, index, verify=True)
    # search and prompt answer from the stored index, with a one-line warning
    assert main(["search", str(folder), "pears", "--index-dir", str(index), "--json"]) == 0
    out = capsys.readouterr()
    assert len(json.loads(out.out)["hits"]) == 10
    assert out.err == f"ragdesk: warning: index is stale: cannot write the index in {index}: {os.strerror(code)}\n"
    assert main(["prompt", str(folder), "pears", "--index-dir", str(index)]) == 0
    out = capsys.readouterr()
    assert "[1]" in out.out and out.err.startswith("ragdesk: warning: index is stale:")


def test_no_stored_index_and_no_space_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_notes(tmp_path / "notes", NOTES)
    _fail_writes(monkeypatch, errno.ENOSPC)
    assert main(["search", str(folder), "pears", "--index-dir", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err
    assert err == f"ragdesk: error: cannot write the index in {tmp_path / 'idx'}: No space left on device\n"


def test_a_first_build_on_a_full_disk_keeps_no_previous_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "(the previous index is kept)" where there was none (issue 52)."""
    folder = write_notes(tmp_path / "notes", NOTES)
    _fail_writes(monkeypatch, errno.ENOSPC)
    assert main(["index", str(folder), "--index-dir", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err
    idx = tmp_path / "idx"
    assert err == f"ragdesk: error: cannot write the index in {idx}: No space left on device (nothing was stored)\n"


def test_batch_queries_survive_bad_lines(built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder, index = built
    queries = folder.parent / "q.jsonl"
    queries.write_text(
        '{"id": 1, "query": "apples"}\n'
        '{"id": 2, "query": "pears"}\n'
        '{"id": 3, "query": "bad \\ud800 surrogate"}\n'
        '{"id": 4, "query": null}\n'
        "not json\n"
        '{"id": 6, "query": "note 7"}\n',
        encoding="utf-8",
    )
    assert main(["search", str(folder), "--queries", str(queries), "--index-dir", str(index)]) == 2
    out = capsys.readouterr()
    lines = [json.loads(line) for line in out.out.splitlines()]
    assert [(d.get("id"), "hits" in d) for d in lines] == [
        (1, True),
        (2, True),
        (3, False),
        (4, False),
        (None, False),
        (6, True),
    ]
    assert lines[2]["error"] == "query is not valid Unicode text"
    assert lines[3]["error"] == "query must be a string, not NoneType"
    assert lines[4]["line"] == 5
    assert out.err == "ragdesk: error: 3 of 6 queries failed (see their error lines)\n"


def test_files_that_are_not_utf8(built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder, index = built
    bad = folder.parent / "q.jsonl"
    bad.write_bytes('{"id": 1, "query": "café"}\n'.encode("latin-1"))
    assert main(["search", str(folder), "--queries", str(bad), "--index-dir", str(index)]) == 2
    assert capsys.readouterr().err == f"ragdesk: error: {bad} is not UTF-8 text (byte 23); save it as UTF-8\n"
    assert main(["eval", str(folder), str(bad), "--index-dir", str(index)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["search", "{f}", "apples", "--k1", "inf"],
            "--k1 must be at least 0 and --b between 0 and 1, both finite (got inf",
        ),
        (
            ["search", "{f}", "apples", "--k1", "nan"],
            "--k1 must be at least 0 and --b between 0 and 1, both finite (got nan",
        ),
        (["prompt", "{f}", "apples", "-k", "0"], "-k must be at least 1"),
        (["prompt", "{f}", "apples", "-k", "-3"], "-k must be at least 1"),
        (["prompt", "{f}", "apples", "--budget-tokens", "0"], "--budget-tokens must be at least 1"),
    ],
)
def test_out_of_range_options(
    built: tuple[Path, Path], argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, index = built
    assert main([a.replace("{f}", str(folder)) for a in argv] + ["--index-dir", str(index)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragdesk: error: {message}") and err.count("\n") == 1


def test_budget_that_drops_everything_says_so(built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder, index = built
    assert main(["prompt", str(folder), "apples", "--budget-tokens", "120", "--index-dir", str(index), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["excerpts"] == [] and len(data["dropped_for_budget"]) == 12
    assert "(no excerpt fits the token budget: 12 matched, each too long for what is left)" in data["prompt"]
    assert "no excerpts matched" not in data["prompt"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "q.jsonl holds no questions"),
        ('{"id": "a", "question": "q", "expected": "n1.md", "lines": [5, 1]}\n', "1 <= first <= last (got 5, 1)"),
    ],
)
def test_eval_rejects_empty_and_backwards_questions(
    built: tuple[Path, Path], content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, index = built
    questions = folder.parent / "q.jsonl"
    questions.write_text(content, encoding="utf-8")
    assert main(["eval", str(folder), str(questions), "--index-dir", str(index)]) == 2
    assert message in capsys.readouterr().err


def test_reason_for_a_huge_query_is_capped(built: tuple[Path, Path]) -> None:
    folder, index = built
    from ragdesk.core.analyzers import AnalyzerConfig

    words = " ".join(f"zzq{i}" for i in range(15000))
    result = IndexReader.open(folder, index).search("apples " + words, analyzer=AnalyzerConfig("words"))
    assert result.reason is not None and result.reason.endswith(" and 14980 more")
    assert len(result.reason) < 400


def test_note_too_deep_to_reach_is_reported(tmp_path: Path, text_kernel: str) -> None:
    """A folder whose path exceeds the system's limit was missing from the index and the skipped list."""
    folder = write_notes(tmp_path / "notes", {"top.md": "apples"})
    here = os.getcwd()
    try:
        os.chdir(folder)
        for _ in range(20):  # 20 x 251 characters: past PATH_MAX (4096)
            os.mkdir("d" * 250)
            os.chdir("d" * 250)
        Path("deep.md").write_text("deep apples", encoding="utf-8")
    finally:
        os.chdir(here)
    lib, report = build_mod.build_index(folder, tmp_path / "idx", workers=1)
    assert lib.note_paths == ["top.md"]
    (skip,) = report.skipped
    assert skip.path.startswith("d" * 250) and skip.reason == "folder cannot be read: File name too long"


def test_short_write_of_numpy_is_a_full_disk(
    built: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a full disk numpy raises OSError("79065 requested and 56288 written") with no errno (seen on
    a full tmpfs): it is reported as the full disk it is, and search falls back to the stored index."""
    import numpy as np

    folder, index = built
    (folder / "n3.md").write_text("# Note 3\n\nnote 3 about plums\n", encoding="utf-8")

    def short_write(*_args: object, **_kwargs: object) -> None:
        raise OSError("79065 requested and 56288 written")

    monkeypatch.setattr(np, "save", short_write)
    assert main(["index", str(folder), "--index-dir", str(index)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"ragdesk: error: cannot write the index in {index}: No space left on device "
        "(79065 requested and 56288 written) (the previous index is kept)\n"
    )
    assert main(["search", str(folder), "pears", "--index-dir", str(index)]) == 0
    assert capsys.readouterr().err.startswith("ragdesk: warning: index is stale: ")


def test_derived_postings_reserve_their_space(tmp_path: Path) -> None:
    """Postings written through a memory map are reserved first (a sparse map on a full disk kills the
    process with SIGBUS): the file has its full size on disk before anything is written."""
    arr = fileio.preallocated_array(tmp_path / "docs.npy", np.int32, (1000,))
    arr[:] = np.arange(1000)
    arr.flush()
    del arr
    st = (tmp_path / "docs.npy").stat()
    assert st.st_blocks * 512 >= 4000 and stat_mode(st) == 0o600
    assert np.array_equal(np.load(tmp_path / "docs.npy"), np.arange(1000))
    assert fileio.preallocated_array(tmp_path / "empty.npy", np.int32, (0,)).shape == (0,)
    assert np.load(tmp_path / "empty.npy").shape == (0,)


def stat_mode(st: os.stat_result) -> int:
    import stat

    return stat.S_IMODE(st.st_mode)


def test_verify_on_a_folder_never_indexed_says_nothing_is_damaged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`index --verify` before any index exists builds one; it said "stored index was damaged (no index
    yet …); rebuilt it", since a missing index is a kind of damaged one and was caught as such."""
    folder = write_notes(tmp_path / "notes", NOTES)
    assert main(["index", str(folder), "--index-dir", str(tmp_path / "idx"), "--verify", "--no-dense"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("built: 12 files, 12 chunks") and "damaged" not in out


def test_a_deeply_nested_query_line_is_that_lines_error(built: tuple[Path, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    """One such line ended the whole batch with RecursionError's traceback (issue 52)."""
    folder, index = built
    queries = folder.parent / "deep.jsonl"
    queries.write_text('{"id": 1, "query": ' + "[" * 100_000 + "]" * 100_000 + '}\n{"id": 2, "query": "pears"}\n')
    assert main(["search", str(folder), "--queries", str(queries), "--index-dir", str(index)]) == 2
    out = capsys.readouterr()
    lines = [json.loads(line) for line in out.out.splitlines()]
    assert lines[0] == {"id": None, "line": 1, "error": "nested too deeply to read as a JSON line"}
    assert lines[1]["id"] == 2 and lines[1]["hits"]
    assert out.err == "ragdesk: error: 1 of 2 queries failed (see their error lines)\n"


def test_terminal_escapes_in_notes_are_shown_not_obeyed(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A note's `ESC]0;…BEL` retitled the terminal and `ESC[2J` cleared it when printed by search or prompt."""
    folder = write_notes(tmp_path / "n", {"e.md": "# Esc\n\nhello \x1b]0;pwned\x07 world \x1b[2J cleared \x9b river\n"})
    common = ["--index-dir", str(tmp_path / "idx")]
    assert main(["search", str(folder), "river", *common]) == 0
    searched = capsys.readouterr().out
    assert main(["prompt", str(folder), "river", *common]) == 0
    prompted = capsys.readouterr().out
    for out in (searched, prompted):
        assert "hello \\u001b]0;pwned\\u0007 world \\u001b[2J cleared \\u009b river" in out
        assert not any(c in out for c in "\x1b\x07\x9b")
    assert main(["search", str(folder), "river", "--json", *common]) == 0
    out = capsys.readouterr().out
    assert "hello \x1b]0;pwned\x07 world \x1b[2J cleared \x9b river" in json.loads(out)["hits"][0]["text"]
    assert not any(c in out for c in "\x1b\x07\x9b")  # JSON as it is printed: escaped, read back exactly


@pytest.mark.parametrize(
    "command", [["index"], ["search", "", "pears"], ["prompt", "", "pears"], ["eval", "", "q.jsonl"], ["mcp", ""]]
)
def test_a_notes_folder_given_as_empty_text_is_refused(tmp_path: Path, monkeypatch, capsys, command) -> None:  # type: ignore[no-untyped-def]
    """It silently meant the current folder, which was then indexed."""
    here = write_notes(tmp_path / "cwd", {"private.md": "# Mine\n\npears\n"})
    monkeypatch.chdir(here)
    argv = [*command, *([""] if command == ["index"] else []), "--index-dir", str(tmp_path / "idx")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == "ragdesk: error: the notes folder is empty text (an unset variable?): give a folder\n"
    assert not (tmp_path / "idx").exists()


def test_a_query_starting_with_a_dash_after_double_dash(built: tuple[Path, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    """`search F -k 3 -- -pears` was refused ("unrecognized arguments"): argparse had filled QUERY at F."""
    folder, index = built
    assert main(["search", str(folder), "-k", "3", "--index-dir", str(index), "--json", "--", "-oranges pears"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["query"] == "-oranges pears" and len(data["hits"]) == 3  # "-word" leaves a word out (docs/query.md)
    assert data["parsed"]["excluded"] == [{"text": "oranges", "phrase": False}]
    assert main(["prompt", str(folder), "-k", "2", "--index-dir", str(index), "--", "-oranges pears"]) == 0
    assert "Question: pears" in capsys.readouterr().out
