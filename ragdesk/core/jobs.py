"""Running a build in its own process, reporting through a queue.

A desktop app should not tokenize in the process that paints its window: CPU-bound Python in
any thread makes the GUI thread wait for the GIL at every event (tens of milliseconds each).
The app starts `build_job` in a child process; the child reads, chunks, indexes, derives the
analyzer's indexes and publishes them on disk, and the app then maps the result.

Messages put on the queue (all picklable):
    ("opened",)                                  the stored index is current enough to search now
    ("progress", done, total, chunks, current)   files done of total, chunks so far, current file;
                                                 chunks = -1: chunks embedded of total (dense modes)
    ("done", BuildReport, damaged_reason_or_None)
    ("cancelled",) | ("failed", message)
"""

from __future__ import annotations

import os
import time
import traceback
from typing import Any

from .analyzers import AnalyzerConfig
from .dense import load_embedder
from .library import BuildCancelled, IndexSettings, Library, build_index
from .orphans import exit_with_parent
from .store import IndexDamaged, IndexMissing

PROGRESS_INTERVAL_S = 0.05
WAITING = "waiting for another ragdesk process to finish indexing this folder…"


def build_job(
    folder: str,
    index_dir: str | None,
    settings: IndexSettings,
    analyzer: AnalyzerConfig,
    queue: Any,
    cancel: Any,
    embedder_spec: str | None = None,
    verify: bool = False,
    parent_pid: int | None = None,
) -> None:
    """Child-process entry point: build or refresh `folder`'s index, reporting on `queue`.

    With `embedder_spec` (see core.dense.load_embedder), the chunks' embeddings are computed too.
    With `verify`, every stored file's checksum is checked first; a damaged index is rebuilt in full.
    """
    if parent_pid is not None:  # the window: a killed window must not leave its build running
        exit_with_parent(parent_pid)
    last = 0.0

    def progress(done: int, total: int, chunks: int, current: str) -> None:
        nonlocal last
        now = time.monotonic()
        if done == total or now - last >= PROGRESS_INTERVAL_S:
            last = now
            queue.put(("progress", done, total, chunks, current))

    damaged = None
    try:
        embedder = load_embedder(embedder_spec) if embedder_spec else None
        previous = None
        previous_rows = None
        try:
            previous = Library.open(folder, index_dir, verify=verify)
            if previous.settings == settings:
                previous.warm(analyzer)
                queue.put(("opened",))
            if embedder is not None:  # mapped now: publishing the refreshed index deletes the old generation
                previous_rows = previous.stored_dense(embedder.name)
        except IndexMissing:
            pass
        except IndexDamaged as exc:
            damaged = str(exc)
        library, report = build_index(
            folder,
            index_dir,
            settings,
            progress=progress,
            cancelled=cancel.is_set,
            previous=previous,
            reuse_stored=damaged is None,
            warm=analyzer,
            waiting=lambda: queue.put(("progress", 0, 0, 0, WAITING)),
        )
        if embedder is not None:  # embeddings for dense and hybrid search, here rather than in the window's process
            library.dense_matrix(
                embedder,
                previous=previous,
                previous_rows=previous_rows,
                progress=lambda done, total: queue.put(("progress", done, total, -1, "")),
            )
    except BuildCancelled:
        queue.put(("cancelled",))
        if parent_pid is not None:
            _exit_now(queue)
        return
    except Exception as exc:  # reported to the user; the previous index stays in use
        traceback.print_exc()
        queue.put(("failed", f"{type(exc).__name__}: {exc}"))
        return
    queue.put(("done", report, damaged))


def _exit_now(queue: Any) -> None:
    """End the build process at once, its message delivered: a cancelled pool can take many seconds
    to wind down (workers finish their batch, one may block writing a result nobody reads), and the
    window's next build (another folder, say) waits for this one. The workers exit with it (orphans)."""
    queue.close()
    queue.join_thread()
    os._exit(0)
