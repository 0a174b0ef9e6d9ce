"""Every chunk of every note under ../shared/data: the negatives the detectors are judged on (none of
these notes holds a real secret or an instruction aimed at a model)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
EXTENSIONS = (".md", ".texy", ".txt", ".rst", ".org")
CACHE = Path.home() / ".cache" / "ragdesk-bench" / "chunks.pickle"  # benchmarks only: tests read afresh


def shared_chunks(root: Path = SHARED) -> list[tuple[str, str, str]]:
    """(path, heading, text) of every chunk, chunked as the index chunks notes."""
    from ragdesk.core.chunking import ChunkOptions, chunk_note
    from ragdesk.core.loader import LoadOptions, read_note
    from ragdesk.core.walk import walk_notes

    files, _ = walk_notes(root, LoadOptions(extensions=EXTENSIONS))
    out = []
    for f in files:
        note, _ = read_note(f)
        if note is not None:
            out += [(c.path, c.heading, c.text) for c in chunk_note(note, ChunkOptions())]
    return out


def cached_shared_chunks() -> list[tuple[str, str, str]]:
    """shared_chunks(), kept between benchmark runs in CACHE (0600 in a 0700 folder)."""
    if CACHE.exists():
        return pickle.loads(CACHE.read_bytes())
    out = shared_chunks()
    CACHE.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    CACHE.write_bytes(pickle.dumps(out))
    os.chmod(CACHE, 0o600)
    return out


PROBE_SEED = 59  # the injection probe's chunks: a seeded shuffle, even places to fit it, odd ones to judge it


def probe_split(texts: list[str]) -> tuple[list[str], list[str]]:
    """(chunks the injection probe is fitted on, chunks it is judged on): alternate places of a seeded
    shuffle of `texts` (tests/benchmarks/train_injection_probe.py and the tests split alike)."""
    import random

    shuffled = list(texts)
    random.Random(PROBE_SEED).shuffle(shuffled)
    return shuffled[0::2], shuffled[1::2]
