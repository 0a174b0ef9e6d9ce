"""Child processes that do not outlive their parent.

A build's worker processes wait on a queue; when the parent is killed (kill -9, a crash) nothing
tells them, and they stayed alive for minutes with the resource tracker. Each child calls
`exit_with_parent` first: on Linux the kernel sends it SIGKILL when the parent dies
(PR_SET_PDEATHSIG); elsewhere a daemon thread notices the new parent pid within a second.
`serve_one` is the entry point of a child started before it has work (the window's next build).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import queue as queues
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from .heap import share_one_heap

PARENT_POLL_S = 0.5
_PR_SET_PDEATHSIG = 1


_WATCHED: set[int] = set()


def exit_with_parent(parent_pid: int) -> None:
    """Make this process end when `parent_pid` does (a pool initializer, or a child's first call;
    calling it again for the same parent does nothing)."""
    if parent_pid in _WATCHED:
        return
    _WATCHED.add(parent_pid)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before we got here
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of spawned worker processes that exit when this process dies."""
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=get_context("spawn"), initializer=exit_with_parent, initargs=(os.getpid(),)
    )


def serve_one(
    tasks: Any, queue: Any, cancel: Any, parent_pid: int, preload: str, delay_s: float, prepare: tuple[Any, ...] = ()
) -> None:
    """Child-process entry point of a process started ahead of need. After `delay_s` (not competing
    for the CPU with the work that just finished) it imports `preload`, about a second of a cold start
    that an edit should not wait for, and calls `preload.prepare(*prepare)` when `prepare` is given
    (what the coming task can start from; a failure there is the task's to meet); then it runs the one
    `(target, job, environ)` it is given, `target(job, queue, cancel)` in the parent's environment as
    it is now (as a process spawned now would inherit it: the cache folder, say), and exits (None:
    exit at once)."""
    share_one_heap()  # before any thread: the build embeds texts side by side (core/e5_onnx.py)
    exit_with_parent(parent_pid)
    try:
        task = tasks.get(timeout=delay_s)
    except queues.Empty:
        module = importlib.import_module(preload)
        if prepare:
            with contextlib.suppress(Exception):
                module.prepare(*prepare)
        task = tasks.get()
    if task is not None:
        target, job, environ = task
        os.environ.clear()
        os.environ.update(environ)
        target(job, queue, cancel)
