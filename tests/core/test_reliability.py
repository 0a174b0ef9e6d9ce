"""Nothing lost, nothing leaked: concurrent builds, odd file names, private caches, stale and damaged files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from ragdesk.cli import main
from ragdesk.core import fileio, locks, store
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.build import build_index
from ragdesk.core.reader import IndexReader

from ..conftest import write_notes

APPLES = {f"normal{i}.md": f"note {i} about apples\n" for i in range(5)}


def _search_json(folder: Path, index: Path, query: str, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["search", str(folder), query, "--index-dir", str(index), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_newline_in_a_file_name_shifts_no_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_notes(tmp_path / "notes", {**APPLES, "bad\nname.md": "a note whose name has a newline\n"})
    index = tmp_path / "idx"
    data = _search_json(folder, index, "Normal 4", capsys)
    assert data["hits"][0]["path"] == "normal4.md"
    assert "note 4 about apples" in data["hits"][0]["text"]
    lib = IndexReader.open(folder, index)
    assert lib.note_paths == sorted(["bad\nname.md", *APPLES])
    # Refreshing, verifying and searching again all work (they crashed with IndexError before).
    (folder / "normal2.md").write_text("note 2 about pears\n", encoding="utf-8")
    assert main(["index", str(folder), "--index-dir", str(index), "--verify"]) == 0
    capsys.readouterr()
    data = _search_json(folder, index, "newline", capsys)
    assert data["hits"][0]["path"] == "bad\nname.md"
    assert _search_json(folder, index, "pears", capsys)["hits"][0]["path"] == "normal2.md"


def test_path_count_is_checked_against_the_note_count(tmp_path: Path) -> None:
    folder = write_notes(tmp_path / "notes", APPLES)
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    blob = lib.generation / "paths.blob"
    paths = json.loads(blob.read_bytes())
    blob.write_bytes(json.dumps(paths[:-1]).encode())  # one path short, same manifest
    manifest = json.loads((lib.generation / "manifest.json").read_text())
    manifest["files"]["paths.blob"] = fileio.file_info(blob)  # even with a size and checksum that fit
    (lib.generation / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(store.IndexDamaged, match="do not match its 5 notes"):
        IndexReader.open(folder, tmp_path / "idx")


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="file names are bytes only on Linux/BSD")
def test_file_name_that_is_not_utf8_is_indexed(
    tmp_path: Path, text_kernel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_notes(tmp_path / "notes", APPLES)
    with open(os.path.join(os.fsencode(folder), b"caf\xe9 latin1.md"), "wb") as fh:
        fh.write(b"espresso and croissants\n")
    index = tmp_path / "idx"
    lib, report = build_index(folder, index, workers=1)
    assert report.files == 6 and not report.skipped
    name = "caf\udce9 latin1.md"  # kept losslessly (the undecodable byte as its escape) ...
    assert name in lib.note_paths
    assert Path(folder / name).read_bytes() == b"espresso and croissants\n"
    data = _search_json(folder, index, "espresso", capsys)
    assert data["hits"][0]["path"] == "caf\ufffd latin1.md"  # ... and shown with a replacement character
    assert main(["search", str(folder), "croissants", "--index-dir", str(index)]) == 0
    assert "caf\ufffd latin1.md" in capsys.readouterr().out


def test_index_is_private_whatever_the_umask(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write_notes(folder, APPLES)
    old = os.umask(0o022)
    try:
        lib, _ = build_index(folder, tmp_path / "cache" / "idx", workers=1, warm=AnalyzerConfig())
        lib.term_index(AnalyzerConfig("words"))  # derived on first use, published beside the others
    finally:
        os.umask(old)
    root = tmp_path / "cache" / "idx"
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]}
    assert any(p.name.startswith("terms-words") for p in modes)
    assert {oct(m) for p, m in modes.items() if p.is_dir()} == {"0o700"}
    assert {oct(m) for p, m in modes.items() if p.is_file()} == {"0o600"}


def test_builds_of_one_index_wait_for_each_other(tmp_path: Path) -> None:
    """A build that finds the lock held waits (and says so), then finds the index current."""
    folder = write_notes(tmp_path / "notes", APPLES)
    index = tmp_path / "idx"
    first, _ = build_index(folder, index, workers=1)
    (folder / "normal1.md").write_text("note 1 about plums\n", encoding="utf-8")
    waited = threading.Event()
    outcome: dict[str, object] = {}
    with locks.build_lock(index):
        t = threading.Thread(
            target=lambda: outcome.update(zip(("lib", "report"), build_index(folder, index, waiting=waited.set)))
        )
        t.start()
        assert waited.wait(10)
        assert store.current_generation(index) == first.generation  # nothing written while it waits
    t.join(30)
    assert outcome["report"].rebuilt and outcome["report"].changed == 1  # type: ignore[attr-defined]


def test_prune_never_touches_a_newer_generation(tmp_path: Path) -> None:
    root = tmp_path / "idx"
    older, published, newer = (root / f"gen-{t:x}-1" for t in (100, 200, 300))
    index = store.claim_root(root)
    for g in (older, published, newer):
        g.mkdir(parents=True)
        store.mark_generation(g, index)  # written by ragdesk (it prunes nothing else)
    store.publish(root, published)
    assert not older.exists() and published.exists() and newer.exists()


def test_open_follows_a_generation_published_while_it_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that read CURRENT just before another process published and pruned that generation
    opens the new one instead of failing on a vanished file (seen once in CI: `ragdesk index` twice at
    once, the second opening the stored index outside the build lock for its meaning rows)."""
    folder = write_notes(tmp_path / "n", {"a.md": "# A\n\nalpha", "b.md": "# B\n\nbeta"})
    first, _ = build_index(folder, tmp_path / "idx", workers=1)
    (folder / "a.md").write_text("# A\n\nalpha again", encoding="utf-8")
    second, _ = build_index(folder, tmp_path / "idx", workers=1)
    assert not first.generation.exists() and second.generation.exists()  # pruned
    real = store.current_generation
    stale = [first.generation]  # what CURRENT said a moment before the other process published

    def current(root: Path) -> Path | None:
        return stale.pop() if stale else real(root)

    monkeypatch.setattr(store, "current_generation", current)
    assert IndexReader.open(folder, tmp_path / "idx").generation == second.generation
    monkeypatch.setattr(store, "current_generation", lambda root: first.generation)  # CURRENT itself is stale
    with pytest.raises(store.IndexDamaged, match="no manifest"):
        IndexReader.open(folder, tmp_path / "idx")


def test_two_processes_building_at_once_keep_the_index(tmp_path: Path) -> None:
    """The issue's repro: edit 30 notes, then two `ragdesk index` at the same moment, several times.
    Before the lock, about one run in five lost the index (CURRENT named a deleted generation) and
    the losing process printed a raw FileNotFoundError."""
    notes = {f"n{i:03d}.md": f"# Note {i}\n\nword{i} " + "filler text " * 60 for i in range(120)}
    folder = write_notes(tmp_path / "notes", notes)
    index = tmp_path / "idx"
    cmd = [sys.executable, "-m", "ragdesk", "index", str(folder), "--index-dir", str(index), "--json"]
    assert subprocess.run(cmd, capture_output=True, timeout=60).returncode == 0
    for round_ in range(4):
        for i in range(30):
            with open(folder / f"n{i:03d}.md", "a", encoding="utf-8") as fh:
                fh.write(f"\nround{round_} appended\n")
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        outs = [p.communicate(timeout=60) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], [o[1].decode()[-300:] for o in outs]
        reports = [json.loads(o[0]) for o in outs]
        assert sorted(r["rebuilt"] for r in reports) == [False, True]  # one built, the other found it current
        lib = IndexReader.open(folder, index, verify=True)
        assert len(lib.note_paths) == 120
        assert [p.name for p in index.glob("gen-*")] == [lib.generation.name]  # nothing left half-written
        hits = lib.search(f"round{round_}", analyzer=AnalyzerConfig(), k=40).hits
        assert len({h.path for h in hits}) == 30


def test_stale_temporaries_are_removed_on_open(tmp_path: Path) -> None:
    folder = write_notes(tmp_path / "notes", APPLES)
    lib, _ = build_index(folder, tmp_path / "idx", workers=1)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = lib.generation / f".tmp-terms-stems5-{pid}-18c0ffee"
    stale.mkdir()
    (stale / "docs.npy").write_bytes(b"x" * 1000)
    stale_manifest = lib.root / f".CURRENT.{pid}-18c0ffee.tmp"
    stale_manifest.write_text("gen-0")
    mine = lib.generation / f".tmp-terms-stems5-{os.getpid()}-18c0ffee"  # a live writer's: kept
    mine.mkdir()
    IndexReader.open(folder, tmp_path / "idx")
    assert not stale.exists() and not stale_manifest.exists() and mine.exists()


def test_damaged_derived_index_is_replaced_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_notes(tmp_path / "notes", APPLES)
    lib, _ = build_index(folder, tmp_path / "idx", workers=1, warm=AnalyzerConfig())
    (sub,) = lib.generation.glob("terms-stems*")
    with open(sub / "docs.npy", "r+b") as fh:
        fh.truncate(sub.joinpath("docs.npy").stat().st_size - 4)
    from ragdesk.core import segment as segment_mod

    derived: list[str] = []
    real = segment_mod.derive_term_index
    monkeypatch.setattr(segment_mod, "derive_term_index", lambda *a, **kw: derived.append("x") or real(*a, **kw))
    reopened = IndexReader.open(folder, tmp_path / "idx")
    hits = reopened.search("apples", analyzer=AnalyzerConfig("stems"), k=5).hits
    assert len(hits) == 5 and derived == ["x"]
    fileio.check_files(sub, store.read_manifest(sub)["files"], verify_crc=True)  # the folder was replaced
    again = IndexReader.open(folder, tmp_path / "idx")
    assert len(again.search("apples", analyzer=AnalyzerConfig("stems"), k=5).hits) == 5
    assert derived == ["x"]  # loaded from disk this time
    assert np.array_equal(
        again.term_index(AnalyzerConfig("stems")).docs, reopened.term_index(AnalyzerConfig("stems")).docs
    )


def test_links_out_of_the_folder_are_not_followed(
    tmp_path: Path, text_kernel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shared vault's `deploy-key.md -> ~/.ssh/id_ed25519` put the key into a prompt; `x -> /`
    indexed the whole machine. Links that stay inside the folder are still followed."""
    secret = write_notes(tmp_path / "home" / ".ssh", {"id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY----- sekrit\n"})
    outside = write_notes(tmp_path / "elsewhere", {"far.md": "far away apples\n"})
    folder = write_notes(tmp_path / "notes", {**APPLES, "sub/in.md": "inside apples\n"})
    (folder / "deploy-key.md").symlink_to(secret / "id_ed25519")
    (folder / "x").symlink_to(outside, target_is_directory=True)
    (folder / "zlink").symlink_to(folder / "sub", target_is_directory=True)  # inside: followed (once: a loop)
    (folder / "alias.md").symlink_to(folder / "normal1.md")
    index = tmp_path / "idx"
    lib, report = build_index(folder, index, workers=1)
    assert sorted(lib.note_paths) == sorted([*APPLES, "sub/in.md", "alias.md"])
    reason = "links outside the notes folder (not followed; Settings or --follow-outside-links to follow)"
    assert [(s.path, s.reason) for s in report.skipped] == [("deploy-key.md", reason), ("x", reason)]
    assert not lib.search("sekrit", analyzer=AnalyzerConfig()).hits
    # Asked for explicitly, they are followed.
    assert main(["index", str(folder), "--index-dir", str(index), "--follow-outside-links", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["skipped"] == [] and data["files"] == 9
    # A search without the option uses the index as it was built (issue 52); --no-… turns it off again.
    assert _search_json(folder, index, "far away", capsys)["hits"][0]["path"] == "x/far.md"
    off = ["--json", "--no-follow-outside-links"]
    assert main(["search", str(folder), "far away", "--index-dir", str(index), *off]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["hits"] == []
    assert "(follow outside links True → False): rebuilding it with those given" in out.err


def _descendants(pid: int) -> set[int]:
    """Every live process below `pid` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(entry))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(pid)
        except OSError:
            pass
    return alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_exit_when_a_build_is_killed(tmp_path: Path) -> None:
    """kill -9 of `ragdesk index` left both workers and the resource tracker alive for minutes."""
    import signal
    import time

    body = " ".join(f"word{i}" for i in range(1500))
    folder = write_notes(tmp_path / "notes", {f"n{i:04d}.md": f"# Note {i}\n\n{body}\n" for i in range(700)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragdesk", "index", str(folder), "--index-dir", str(tmp_path / "idx")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    below: set[int] = set()
    while len(below) < 3 and time.monotonic() < deadline and proc.poll() is None:  # two workers and the tracker
        below = _descendants(proc.pid)
        time.sleep(0.02)
    assert len(below) >= 3, "the build finished before its workers were seen"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while _alive(below) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(below)
    assert store.current_generation(tmp_path / "idx") is None  # nothing was published half-way


CHECKSUMMED = [  # values that only a checksum can tell from right ones (files under CRC_ON_OPEN_BYTES)
    ("terms-stems_5/doc_len.npy", lambda a: a * 3 + 7),
    ("terms-stems_5/bounds.npy", lambda a: a / 10),
]
STRUCTURAL = [  # values that break the structure: found without any checksum
    ("terms-stems_5/indptr.npy", lambda a: np.where(np.arange(len(a)) == len(a) // 2, a[-1] + 999, a)),
    ("terms-stems_5/tfs.npy", lambda a: a - a.max()),
    ("terms-stems_5/docs.npy", lambda a: a + 10_000),
    ("chunk_note.npy", lambda a: a[::-1]),
    ("chunk_span.npy", lambda a: a[:, ::-1] - 1),
    ("note_off.npy", lambda a: a * 2),
    ("fwd_ptr.npy", lambda a: a + 5),
]


@pytest.mark.parametrize(
    ("name", "alter", "small_files_checksummed"),
    [(*a, True) for a in CHECKSUMMED + STRUCTURAL] + [(*a, False) for a in STRUCTURAL],
    ids=[f"{a[0]}-crc" for a in CHECKSUMMED + STRUCTURAL] + [f"{a[0]}-structure" for a in STRUCTURAL],
)
def test_altered_index_bytes_never_rank_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, alter, small_files_checksummed: bool
) -> None:  # type: ignore[no-untyped-def]
    """Values altered in place (sizes kept): a search either answers exactly as before (the damaged
    analyzer index was noticed and derived again) or raises IndexDamaged; never a wrong ranking or a
    raw IndexError. Without the checksums on open, the structural checks and the query path catch them."""
    notes = {f"n{i:02d}.md": f"# Note {i}\n\nalpha beta {'gamma ' * (i % 5)} delta{i}\n" for i in range(40)}
    folder = write_notes(tmp_path / "notes", notes)
    lib, _ = build_index(folder, tmp_path / "idx", workers=1, warm=AnalyzerConfig("stems"))
    stems = AnalyzerConfig("stems")
    expected = [(h.chunk_id, h.score) for h in lib.search("gamma alpha delta7", analyzer=stems, k=10).hits]
    path = lib.generation / name
    arr = np.load(path)
    np.save(path, alter(arr).astype(arr.dtype))
    assert path.stat().st_size == fileio.file_info(path)["size"]
    if not small_files_checksummed:
        monkeypatch.setattr(fileio, "CRC_ON_OPEN_BYTES", 0)
    try:
        hits = IndexReader.open(folder, tmp_path / "idx").search("gamma alpha delta7", analyzer=stems, k=10).hits
    except store.IndexDamaged:
        return
    assert [(h.chunk_id, h.score) for h in hits] == expected


def test_stale_temporaries_are_found_while_a_build_prunes_a_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ragdesk index` opens the stored index (which looks for dead writers' temporaries) while another
    process may prune an old generation: on Python < 3.12 glob then raised FileNotFoundError, and CI
    saw "ragdesk: error: [Errno 2] No such file or directory: '…/gen-…'" (1 run in ~10)."""
    root = tmp_path / "idx"
    index = store.claim_root(root)
    for gen in ("gen-1", "gen-2"):
        (root / gen).mkdir(parents=True)
        store.mark_generation(root / gen, index)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = root / "gen-2" / f".tmp-terms-stems5-{int(dead.stdout)}-18c0ffee"
    stale.mkdir()
    real_scandir = os.scandir

    def pruned_meanwhile(path):  # type: ignore[no-untyped-def]
        if not isinstance(path, int) and os.fspath(path).endswith("gen-1"):  # listed, then removed meanwhile
            raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", pruned_meanwhile)
    store.remove_stale_temporaries(root)
    assert not stale.exists()


def test_pieces_written_one_after_another_load_as_their_concatenation(tmp_path: Path) -> None:
    """The forward index and the note texts are written piece by piece, never joined in memory (a scale
    build held each twice): the file is exactly the joined array, private, and its CRC the file's."""
    ids = [np.array([3, 1, 2], np.int32), np.zeros(0, np.int32), np.asarray(np.arange(5, dtype=np.int32)[1:])]
    info = fileio.write_pieces(tmp_path / "ids.npy", ids, np.int32)
    loaded = np.load(tmp_path / "ids.npy")
    assert loaded.dtype == np.int32 and loaded.tolist() == [3, 1, 2, 1, 2, 3, 4]
    texts = [b"caf\xc3\xa9 ", np.frombuffer(b"note two", np.uint8)[5:]]
    fileio.write_pieces(tmp_path / "notes.npy", texts, np.uint8)
    assert fileio.load_array(tmp_path, "notes").tobytes() == "café two".encode()
    assert info == fileio.file_info(tmp_path / "ids.npy")
    assert stat.S_IMODE((tmp_path / "ids.npy").stat().st_mode) == 0o600
