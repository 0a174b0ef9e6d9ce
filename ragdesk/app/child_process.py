"""A build or an evaluation runs in a spawned process (killed with the window, never on its GUI
thread); this is how the window starts one ahead of need, relays its messages and says its failures."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from multiprocessing import get_context
from queue import Empty
from typing import Any

from ..core.embeddings import MeaningIndexUnwritable
from ..core.errors import RagdeskError
from ..core.jobs import (
    Cancelled,
)
from ..core.orphans import serve_one
from ..core.store import IndexFolderRefused
from ..core.walk import IgnoreFileUnreadable


class BuildProcessDied(RagdeskError, RuntimeError):
    """The build process ended without saying why (killed, or crashed in native code)."""


def describe(error: BaseException) -> str:
    """An exception as the status bar shows it: its type (when it tells something) and its text."""
    written_for_people = (BuildProcessDied, IndexFolderRefused, IgnoreFileUnreadable, MeaningIndexUnwritable)
    if isinstance(error, written_for_people) or type(error) is RuntimeError:
        return str(error)
    return f"{type(error).__name__}: {error}"


SPARE_DELAY_S = 1.0  # the process kept for the next build imports the core this long after it starts


POLL_S = 0.01  # how often the waiting build thread looks at Cancel: a refresh stops embedding this fast


class ChildProcess:
    """A spawned process waiting for one task (core.orphans.serve_one). Started ahead of need, it has
    imported the core by the time a refresh comes: a cold start costs about a second, most of what
    an edit used to wait for before it showed."""

    def __init__(self, name: str, delay_s: float = 0.0, prepare: tuple[Any, ...] = ()) -> None:
        ctx = get_context("spawn")
        self.tasks: Any = ctx.Queue()
        self.queue: Any = ctx.Queue()
        self.cancel = ctx.Event()
        self.proc = ctx.Process(
            target=serve_one,
            args=(self.tasks, self.queue, self.cancel, os.getpid(), "ragdesk.core.jobs", delay_s, prepare),
            name=name,
        )
        self.proc.start()

    def stop(self) -> None:
        """End the process if it still waits or works (it holds nothing that needs a clean exit)."""
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()


def run_in_child(
    target: Callable[[Any, Any, Any], None],
    job: Any,
    cancel: threading.Event,
    handle: Callable[[Any], bool],
    name: str,
    killable: Callable[[], bool] = lambda: False,
    child: ChildProcess | None = None,
) -> BuildProcessDied | None:
    """Run `target(job, queue, cancel_event)` in `child` (a process started ahead, or a new one) and
    pass each message it queues to `handle` (on this thread) until `handle` says it was the last.
    `cancel` (set from any thread) is forwarded to the child; when `killable()` says the child's work
    may be cut anywhere, the child is killed at once instead and `handle` gets Cancelled. Returns the
    error when the child died without a last message."""
    if child is None or not child.proc.is_alive():
        child = ChildProcess(name)
    proc = child.proc
    child.tasks.put((target, job, dict(os.environ)))
    killed = False
    try:
        while True:
            if cancel.is_set():
                child.cancel.set()
                if killable():
                    # not waited for: its exit (unmapping the model and the index) took 30-40 ms that an
                    # edit waited for; multiprocessing reaps it when it next starts a process
                    proc.kill()
                    killed = True
                    handle(Cancelled())
                    return None
            try:
                msg = child.queue.get(timeout=POLL_S)
            except Empty:
                if not proc.is_alive() and child.queue.empty():
                    return BuildProcessDied(f"the {name} process stopped unexpectedly (exit code {proc.exitcode})")
                continue
            if handle(msg):
                return None
    finally:
        if not killed:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
