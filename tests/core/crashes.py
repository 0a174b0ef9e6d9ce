"""Crash rounds: `ragdesk index` killed (SIGKILL) at random moments, the index left compared with the
old and the new state. The unit suite runs a few (test_crash_consistency.py), the benchmark 40
(tests/benchmarks/crash_consistency.py)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ragdesk.core import store
from ragdesk.core.analyzers import AnalyzerConfig
from ragdesk.core.reader import IndexReader

QUERIES = ("apples pears", "note 17", "edited plums", "the quick brown fox")


def write_folder(folder: Path, n: int, edited: bool) -> None:
    """n notes; `edited` changes a fifth of them (a refresh) or, with n // 2 extra notes, enough for a full build."""
    folder.mkdir(parents=True, exist_ok=True)
    filler = " ".join(f"w{i % 97}" for i in range(300))
    for i in range(n):
        text = f"# Note {i}\n\nnote {i} about apples and pears. {filler}\n"
        if edited and i % 5 == 0:
            text += f"\nedited plums {i}\n"
        (folder / f"n{i:04d}.md").write_text(text, encoding="utf-8")


def signature(folder: Path, index: Path) -> str:
    """What the index answers: its notes, chunk count and the top hits of a few queries, with scores."""
    lib = IndexReader.open(folder, index, verify=True)
    out = {"notes": len(lib.note_paths), "chunks": lib.n_chunks}
    for q in QUERIES:
        out[q] = [(h.path, h.start_line, round(h.score, 9)) for h in lib.search(q, analyzer=AnalyzerConfig(), k=5).hits]
    return json.dumps(out, sort_keys=True)


def run_index(folder: Path, index: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "ragdesk", "index", str(folder), "--index-dir", str(index)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def first_write(index: Path, before: set[str], proc: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    """Wait until the build writes its first new entry into `index` (a generation or a temporary)."""
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        if any(p.name not in before and not p.name.startswith("LOCK") for p in index.iterdir()):
            return
        time.sleep(0.001)


def crash_rounds(
    work: Path, kills: int, notes: int, seed: int, say: bool = True, at_first_write: bool = False
) -> dict[str, int]:
    """Run the kills (after a random delay, or `at_first_write`: as soon as the build writes into the
    index folder, before it can have published); returns how many rounds left the old state and the
    new one, and how many of them the new generation was published in (CURRENT changed).
    Every round's state must agree with CURRENT: the old index where it did not change."""
    rng = random.Random(seed)
    folder, old_index, new_index, index = work / "notes", work / "old", work / "new", work / "idx"
    write_folder(folder, notes, edited=False)
    assert run_index(folder, old_index).wait() == 0
    old = signature(folder, old_index)
    write_folder(folder, notes, edited=True)
    t0 = time.perf_counter()
    assert run_index(folder, new_index).wait() == 0  # a full build of the edited notes, timed
    duration = time.perf_counter() - t0
    new = signature(folder, new_index)
    assert old != new
    outcome = {"old": 0, "new": 0, "published": 0}
    for k in range(kills):
        shutil.rmtree(index, ignore_errors=True)
        shutil.copytree(old_index, index)
        if k % 2:  # every other round: a full build from nothing over the old index's folder
            for gen in index.glob("gen-*"):
                (gen / "manifest.json").unlink()  # the old generation is incomplete: rebuilt in full
        before = {p.name for p in index.iterdir()}
        current = (index / store.CURRENT).read_text()
        proc = run_index(folder, index)
        if at_first_write:
            first_write(index, before, proc)
        else:
            time.sleep(rng.uniform(0.0, duration * 0.9))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        try:
            got = signature(folder, index)
        except store.IndexDamaged:
            got = "missing" if k % 2 else "damaged"  # a killed full build leaves no index: that is the old state
        state = "old" if got in (old, "missing") else "new" if got == new else "third"
        if state == "third":
            raise AssertionError(f"round {k}: the index is neither the old nor the new one: {got[:300]}")
        outcome[state] += 1
        published = (index / store.CURRENT).read_text() != current
        outcome["published"] += published
        if published != (state == "new"):
            raise AssertionError(f"round {k}: CURRENT {'changed' if published else 'unchanged'}, index {state}")
        # The next build finds a clean folder: no temporaries of the dead process survive it.
        assert run_index(folder, index).wait() == 0
        assert signature(folder, index) == new
        leftovers = [p for p in index.rglob("*") if ".tmp" in p.name]
        assert not leftovers, leftovers
        if say:
            how = "killed" if proc.returncode == -signal.SIGKILL else "finished before the kill"
            print(f"round {k + 1:3d} ({'full build' if k % 2 else 'refresh'}): {how}, left the {state} index")
    return outcome
